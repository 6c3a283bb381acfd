/**
 * The resource-manager hierarchy as a service module: its tables (the demo management groups,
 * subscriptions, resource groups and role assignments are in the demo world file).
 */
import type { ServiceModule } from '../../context.ts';
import { armMigrations, armTables, ArmStore } from './store.ts';

/** Built-in role definition ids (the demo world's assignments use them). */
export const roleIds = {
  owner: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635',
  contributor: 'b24988ac-6180-42a0-ab88-20f7382dd24c',
  reader: 'acdd72a7-3385-48ef-bd42-f606fba81ae7',
  userAccessAdministrator: '18d7d88d-d35e-4fb5-a5c3-7773c20a72d9',
} as const;

/** The ARM hierarchy module. */
export const armModule: ServiceModule = {
  name: 'arm',
  migrations: armMigrations,
  tables: armTables,
  // The demo hierarchy (management groups, subscriptions, groups, assignments) is in the demo world file (src/world/worlds/demo.yaml).
  register() {},
  // Runs last of the group delete's hooks (modules in reverse order): the other areas' rows below
  // the group's resources are gone when these rows go.
  async deleteResourceGroup(ctx, trx, subscriptionId, groupName) {
    await new ArmStore(trx, ctx.cache).deleteResourceGroupRows(subscriptionId, groupName);
  },
  listedResources(db, subscriptionId, groupName) {
    let q = db.selectFrom('arm_resources').select(['id', 'id_lower', 'type_lower', 'name', 'resource_group_lower', 'body', 'created_at', 'updated_at']).where('subscription_id', '=', subscriptionId.toLowerCase());
    if (groupName !== undefined) q = q.where('resource_group_lower', '=', groupName.toLowerCase());
    return q;
  },
};
