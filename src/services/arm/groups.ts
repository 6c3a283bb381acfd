/**
 * Migrations of the resource-group surface (issue 27) on the hierarchy tables: a group's
 * `managedBy`, and the indexes the generic resource listing and the resource-group delete read
 * through (`arm_resources` by subscription and group, and by subscription alone, in id order),
 * and a tenant's subscriptions (`GET /subscriptions`).
 */
import type { Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';

/** The migrations, merged into `armMigrations` (names `arm_0027_…`: issue 27). */
export const groupMigrations: Migrations = {
  arm_0027_resource_groups: {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('arm_resource_groups').addColumn('managed_by', 'text').execute();
      await db.schema.createIndex('arm_resources_group').on('arm_resources').columns(['subscription_id', 'resource_group_lower', 'id_lower']).execute();
      await db.schema.createIndex('arm_resources_in_subscription').on('arm_resources').columns(['subscription_id', 'id_lower']).execute();
    },
  },
  /** `GET /subscriptions` reads a tenant's subscriptions in id order. */
  arm_0027_subscriptions_by_tenant: {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('arm_subscriptions_tenant').on('arm_subscriptions').columns(['tenant_id', 'subscription_id']).execute();
    },
  },
};

/**
 * The ids (lower case) of the tracked resources of resource group `groupName` of
 * `subscriptionId`, as a subquery (through the `arm_resources_group` index), optionally of one
 * `type` (case-insensitive): what an area's `deleteResourceGroup` narrows its own rows with.
 */
export function groupResourceIds(db: Kysely<Database>, subscriptionId: string, groupName: string, type?: string) {
  let q = db.selectFrom('arm_resources').select('id_lower').where('subscription_id', '=', subscriptionId.toLowerCase()).where('resource_group_lower', '=', groupName.toLowerCase());
  if (type !== undefined) q = q.where('type_lower', '=', type.toLowerCase());
  return q;
}
