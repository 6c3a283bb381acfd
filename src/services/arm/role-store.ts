/**
 * Stored role definitions (custom roles, `arm_role_definitions`) and the queries of role
 * assignments (`arm_role_assignments`) that the role-assignment API needs beyond the
 * gateway's look-up by principal (`store.ts` `assignmentsOf`): by id, by scope (at, above and
 * below), the duplicate check, writes. Reference resource-manager-base §7.
 *
 * Every write goes through these functions with the write's transaction; the version of the
 * `arm` cache area moves with the commit (docs/contributing.md "How a write keeps every cache right").
 */
import { sql, type Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import { fromJson, toJson } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';
import type { RoleDefinition } from './roles.ts';
import type { RoleAssignment } from './store.ts';

/** A role assignment with what the API shows of it (reference §7.1). */
export interface RoleAssignmentRecord extends RoleAssignment {
  description: string | null;
  condition: string | null;
  conditionVersion: string | null;
  createdOn: string | null;
  updatedOn: string | null;
  createdBy: string | null;
  updatedBy: string | null;
}

/** Migrations of custom role definitions and the role-assignment details. */
export const roleMigrations: Migrations = {
  arm_0027_role_definitions: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('arm_role_definitions')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('role_name', 'varchar(512)', (c) => c.notNull())
        .addColumn('role_name_lower', 'varchar(512)', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_on', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_on', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_by', 'varchar(64)', (c) => c.notNull())
        .addColumn('updated_by', 'varchar(64)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('arm_role_definitions_name').on('arm_role_definitions').columns(['tenant_id', 'role_name_lower']).unique().execute();
    },
  },
  arm_0027_role_assignment_details: {
    async up(db: Kysely<unknown>) {
      for (const col of ['description', 'condition', 'condition_version', 'created_on', 'updated_on', 'created_by', 'updated_by']) {
        await db.schema.alterTable('arm_role_assignments').addColumn(col, 'text').execute();
      }
      await db.schema.createIndex('arm_role_assignments_scope').on('arm_role_assignments').columns(['tenant_id', 'scope_lower', 'id']).execute();
      await db.schema.createIndex('arm_role_assignments_unique').on('arm_role_assignments').columns(['tenant_id', 'scope_lower', 'role_definition_id', 'principal_id']).unique().execute();
    },
  },
};

type AssignmentRow = Database['arm_role_assignments'];

function toAssignment(r: AssignmentRow): RoleAssignmentRecord {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    scope: r.scope,
    roleDefinitionId: r.role_definition_id,
    principalId: r.principal_id,
    principalType: r.principal_type,
    description: r.description,
    condition: r.condition,
    conditionVersion: r.condition_version,
    createdOn: r.created_on,
    updatedOn: r.updated_on,
    createdBy: r.created_by,
    updatedBy: r.updated_by,
  };
}

function toDefinition(r: Database['arm_role_definitions']): RoleDefinition {
  const b = fromJson<{ description: string; permissions: Omit<RoleDefinition, 'id'>; assignableScopes: string[] }>(r.body)!;
  return {
    id: r.id,
    roleName: r.role_name,
    description: b.description,
    type: 'CustomRole',
    actions: b.permissions.actions,
    notActions: b.permissions.notActions,
    dataActions: b.permissions.dataActions,
    notDataActions: b.permissions.notDataActions,
    assignableScopes: b.assignableScopes,
    tenantId: r.tenant_id,
    createdOn: r.created_on,
    updatedOn: r.updated_on,
    createdBy: r.created_by,
    updatedBy: r.updated_by,
  };
}

/** A scope as stored for matching: lower case, no trailing slash, `/` for the root. */
export function scopeKey(scope: string): string {
  return scope.toLowerCase().replace(/\/+$/, '') || '/';
}

/** Queries of role definitions and assignments; `db` may be a transaction. */
export const roleStore = {
  /** A custom role definition by id (any tenant: callers check the tenant). */
  async definition(db: Kysely<Database>, id: string): Promise<RoleDefinition | undefined> {
    const r = await db.selectFrom('arm_role_definitions').selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst();
    return r ? toDefinition(r) : undefined;
  },

  /** The custom role definitions of a tenant, by name (through the tenant/name index). */
  async definitionsOf(db: Kysely<Database>, tenantId: string, roleNameLower?: string): Promise<RoleDefinition[]> {
    let q = db.selectFrom('arm_role_definitions').selectAll().where('tenant_id', '=', tenantId);
    if (roleNameLower !== undefined) q = q.where('role_name_lower', '=', roleNameLower);
    return (await q.orderBy('role_name_lower').limit(5000).execute()).map(toDefinition);
  },

  /** Inserts or replaces a custom role definition (`d.tenantId`, times and writers set). */
  async putDefinition(db: Kysely<Database>, d: RoleDefinition, scope: string, exists: boolean): Promise<void> {
    const values = {
      tenant_id: d.tenantId!,
      scope,
      role_name: d.roleName,
      role_name_lower: d.roleName.toLowerCase(),
      body: toJson({ description: d.description, permissions: { actions: d.actions, notActions: d.notActions, dataActions: d.dataActions, notDataActions: d.notDataActions }, assignableScopes: d.assignableScopes }),
      updated_on: d.updatedOn!,
      updated_by: d.updatedBy!,
    };
    if (exists) await db.updateTable('arm_role_definitions').set(values).where('id', '=', d.id).execute();
    else await db.insertInto('arm_role_definitions').values({ ...values, id: d.id, created_on: d.createdOn!, created_by: d.createdBy! }).execute();
  },

  /** Deletes a custom role definition; whether it existed. */
  async deleteDefinition(db: Kysely<Database>, id: string): Promise<boolean> {
    const r = await db.deleteFrom('arm_role_definitions').where('id', '=', id.toLowerCase()).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  },

  /** Whether any assignment names the role definition. */
  async definitionInUse(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
    return !!(await db.selectFrom('arm_role_assignments').select('id').where('tenant_id', '=', tenantId).where('role_definition_id', '=', id.toLowerCase()).limit(1).executeTakeFirst());
  },

  /** An assignment by its GUID name (any tenant: callers check the tenant). */
  async assignment(db: Kysely<Database>, id: string): Promise<RoleAssignmentRecord | undefined> {
    const r = await db.selectFrom('arm_role_assignments').selectAll().where('id', '=', id.toLowerCase()).executeTakeFirst();
    return r ? toAssignment(r) : undefined;
  },

  /** The assignment of `principalId` to `roleId` at exactly `scope`, if any. */
  async sameAssignment(db: Kysely<Database>, tenantId: string, scope: string, roleId: string, principalId: string): Promise<RoleAssignmentRecord | undefined> {
    const r = await db
      .selectFrom('arm_role_assignments')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('scope_lower', '=', scopeKey(scope))
      .where('role_definition_id', '=', roleId.toLowerCase())
      .where('principal_id', '=', principalId.toLowerCase())
      .executeTakeFirst();
    return r ? toAssignment(r) : undefined;
  },

  /**
   * Assignments of a tenant at `ancestors` (lower-case scope keys), and with `below` also at
   * every scope under `scope`; only those of `principalIds` when given; in id order after
   * `afterId`, at most `limit`; `lastId` is the last id read, `more` whether the limit was reached.
   */
  async assignmentsAt(
    db: Kysely<Database>,
    q: { tenantId: string; scope: string; ancestors: readonly string[]; below: boolean; principalIds?: readonly string[]; afterId?: string; limit: number },
  ): Promise<{ items: RoleAssignmentRecord[]; lastId?: string; more: boolean }> {
    const key = scopeKey(q.scope);
    let sel = db
      .selectFrom('arm_role_assignments')
      .selectAll()
      .where('tenant_id', '=', q.tenantId)
      .where((eb) => {
        const at = [eb('scope_lower', 'in', [...q.ancestors])];
        // substr, not LIKE: a name may hold `_` or `%`, LIKE wildcards.
        if (q.below && key !== '/') at.push(eb(sql<string>`substr(scope_lower, 1, ${key.length + 1})`, '=', `${key}/`));
        if (q.below && key === '/') at.push(eb('scope_lower', '<>', ''));
        return eb.or(at);
      });
    if (q.principalIds) sel = sel.where('principal_id', 'in', q.principalIds.map((p) => p.toLowerCase()));
    if (q.afterId) sel = sel.where('id', '>', q.afterId);
    const items = (await sel.orderBy('id').limit(q.limit).execute()).map(toAssignment);
    return { items, lastId: items.at(-1)?.id, more: items.length === q.limit };
  },

  /** Inserts an assignment. @throws the unique violation of a concurrent same assignment. */
  async insertAssignment(db: Kysely<Database>, a: RoleAssignmentRecord): Promise<void> {
    await db
      .insertInto('arm_role_assignments')
      .values({
        id: a.id.toLowerCase(),
        tenant_id: a.tenantId,
        scope_lower: scopeKey(a.scope),
        scope: a.scope,
        role_definition_id: a.roleDefinitionId.toLowerCase(),
        principal_id: a.principalId.toLowerCase(),
        principal_type: a.principalType,
        description: a.description,
        condition: a.condition,
        condition_version: a.conditionVersion,
        created_on: a.createdOn,
        updated_on: a.updatedOn,
        created_by: a.createdBy,
        updated_by: a.updatedBy,
      })
      .execute();
  },

  /** Updates what an assignment may change (description, condition), with its update time and writer. */
  async updateAssignment(db: Kysely<Database>, a: RoleAssignmentRecord): Promise<void> {
    await db
      .updateTable('arm_role_assignments')
      .set({ description: a.description, condition: a.condition, condition_version: a.conditionVersion, updated_on: a.updatedOn, updated_by: a.updatedBy, principal_type: a.principalType })
      .where('id', '=', a.id.toLowerCase())
      .execute();
  },

  /** Deletes an assignment by id; whether it existed. */
  async deleteAssignment(db: Kysely<Database>, id: string): Promise<boolean> {
    const r = await db.deleteFrom('arm_role_assignments').where('id', '=', id.toLowerCase()).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  },
};
