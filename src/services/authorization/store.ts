/**
 * Storage of role management policies. Policies are computed (every role at every scope
 * has one, spec resource-manager §1, §2.1); only a policy that was PATCHed is stored, keyed
 * by tenant, scope (lower case) and role definition GUID.
 */
import type { Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import { fromJson, isPostgres, toJson } from '../../store/db.ts';
import type { PolicyRule } from './defaults.ts';
import type { Database } from '../../store/database.ts';
import { param, prepared } from '../../store/prepared.ts';

/** `Principal` of `lastModifiedBy` (reference §2.4): all strings, null when unknown. */
export interface PolicyPrincipal {
  id: string | null;
  displayName: string | null;
  type: string | null;
  email: string | null;
}

/** A stored (changed) policy. */
export interface StoredPolicy {
  tenantId: string;
  /** The scope in its canonical casing, e.g. `/subscriptions/<id>/resourceGroups/stratus-rg`. */
  scope: string;
  /** Role definition GUID, lower case. */
  roleDefinitionId: string;
  /** The policy name (a stable GUID). */
  name: string;
  rules: PolicyRule[];
  /** The stored text of `rules`, when read from the store (spliced into answers as it is). */
  rulesJson?: string;
  lastModifiedBy: PolicyPrincipal;
  /** ISO 8601 UTC (`…Z`). */
  lastModifiedAt: string;
}

/** The table of changed policies. */
export const policyTable = 'authz_role_management_policies';

/** Migrations of the authorization area. */
export const authorizationMigrations: Migrations = {
  authorization_0001_role_management_policies: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable(policyTable)
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('scope_lower', 'varchar(1024)', (c) => c.notNull())
        .addColumn('role_definition_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('name', 'varchar(64)', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('rules', 'text', (c) => c.notNull())
        .addColumn('last_modified_by', 'text', (c) => c.notNull())
        .addColumn('last_modified_at', 'varchar(40)', (c) => c.notNull())
        .addPrimaryKeyConstraint('authz_role_management_policies_pk', ['tenant_id', 'scope_lower', 'role_definition_id'])
        .execute();
    },
  },
};

function toStored(r: any): StoredPolicy {
  return {
    tenantId: r.tenant_id,
    scope: r.scope,
    roleDefinitionId: r.role_definition_id,
    name: r.name,
    rules: fromJson<PolicyRule[]>(r.rules),
    rulesJson: r.rules,
    lastModifiedBy: fromJson<PolicyPrincipal>(r.last_modified_by),
    lastModifiedAt: r.last_modified_at,
  };
}

/** One role's changed policy at one scope (primary key), compiled once. */
const policyByKey = prepared((db: Kysely<Database>) =>
  db.selectFrom(policyTable).selectAll().where('tenant_id', '=', param(0)).where('scope_lower', '=', param(1)).where('role_definition_id', '=', param(2)),
);

/** Queries over stored policies; every query is scoped by tenant (primary-key lookups). */
export class PolicyStore {
  constructor(readonly db: Kysely<Database>) {}

  /** The changed policies of one scope (at most one per role), keyed by role GUID. */
  async listForScope(tenantId: string, scope: string, db: Kysely<Database> = this.db): Promise<Map<string, StoredPolicy>> {
    const rows = await db.selectFrom(policyTable).selectAll().where('tenant_id', '=', tenantId).where('scope_lower', '=', scope.toLowerCase()).execute();
    return new Map(rows.map((r) => [r.role_definition_id as string, toStored(r)]));
  }

  /** The changed policy of one role at one scope, if any. */
  async get(tenantId: string, scope: string, roleDefinitionId: string, db: Kysely<Database> = this.db): Promise<StoredPolicy | undefined> {
    const [r] = await policyByKey(db, tenantId, scope.toLowerCase(), roleDefinitionId.toLowerCase());
    return r ? toStored(r) : undefined;
  }

  /**
   * Inside a write transaction: the policy row of one role at one scope, locked against
   * concurrent writers (PostgreSQL `FOR UPDATE` after making sure the row exists; SQLite
   * serializes write transactions). A row made here for a computed policy holds `initial`
   * (the default rules) and is rolled back with the transaction if the write fails.
   * @returns the stored policy (on PostgreSQL also the row just made), or undefined when the
   *   policy is still computed.
   */
  async lockForUpdate(initial: StoredPolicy, trx: Kysely<Database>): Promise<StoredPolicy | undefined> {
    const existing = await this.get(initial.tenantId, initial.scope, initial.roleDefinitionId, trx);
    if (!isPostgres(trx)) return existing;
    if (!existing) {
      await trx
        .insertInto(policyTable)
        .values({ tenant_id: initial.tenantId, scope_lower: initial.scope.toLowerCase(), role_definition_id: initial.roleDefinitionId.toLowerCase(), name: initial.name, scope: initial.scope, rules: toJson(initial.rules), last_modified_by: toJson(initial.lastModifiedBy), last_modified_at: initial.lastModifiedAt })
        .onConflict((oc) => oc.columns(['tenant_id', 'scope_lower', 'role_definition_id']).doNothing())
        .execute();
    }
    const r = await trx
      .selectFrom(policyTable)
      .selectAll()
      .where('tenant_id', '=', initial.tenantId)
      .where('scope_lower', '=', initial.scope.toLowerCase())
      .where('role_definition_id', '=', initial.roleDefinitionId.toLowerCase())
      .forUpdate()
      .executeTakeFirstOrThrow();
    return toStored(r);
  }

  /** Inserts or replaces a changed policy. */
  async put(p: StoredPolicy, db: Kysely<Database> = this.db): Promise<void> {
    const values = { name: p.name, scope: p.scope, rules: toJson(p.rules), last_modified_by: toJson(p.lastModifiedBy), last_modified_at: p.lastModifiedAt };
    await db
      .insertInto(policyTable)
      .values({ tenant_id: p.tenantId, scope_lower: p.scope.toLowerCase(), role_definition_id: p.roleDefinitionId.toLowerCase(), ...values })
      .onConflict((oc) => oc.columns(['tenant_id', 'scope_lower', 'role_definition_id']).doUpdateSet(values))
      .execute();
  }

  /** Removes a changed policy (the role's policy at the scope is the default again); returns whether one was stored. */
  async remove(tenantId: string, scope: string, roleDefinitionId: string, db: Kysely<Database> = this.db): Promise<boolean> {
    const r = await db
      .deleteFrom(policyTable)
      .where('tenant_id', '=', tenantId)
      .where('scope_lower', '=', scope.toLowerCase())
      .where('role_definition_id', '=', roleDefinitionId.toLowerCase())
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }
}
