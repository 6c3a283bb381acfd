/**
 * Storage of the analytics area: workspaces and admin dataflows (spec analytics §2.1),
 * every row keyed by its tenant. The listing runs in SQL: the OData filter compiles to a
 * WHERE clause over {@link dataflowFields}, `$skip`/`$top` become OFFSET/LIMIT, ordered by
 * name and id through the `(tenant_id, name, object_id)` index.
 */
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { isPostgres, type Migrations } from '../../store/db.ts';
import type { FieldMap } from '../../core/odata/index.ts';
import type { Database } from '../../store/database.ts';
import type { AnalyticsDatabase } from './tables.ts';

/** Migrations of the analytics tables. */
export const analyticsMigrations: Migrations = {
  analytics_0001_dataflows: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('analytics_workspaces')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('id', 'varchar(36)', (c) => c.notNull())
        .addColumn('name', 'varchar(256)', (c) => c.notNull())
        .addPrimaryKeyConstraint('analytics_workspaces_pk', ['tenant_id', 'id'])
        .execute();
      await db.schema
        .createTable('analytics_dataflows')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('object_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        // Byte-order collation on PostgreSQL, as SQLite's BINARY: the same order on both stores.
        .addColumn('name', isPostgres(db) ? sql`varchar(256) collate "C"` : 'varchar(256)', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addColumn('model_url', 'text', (c) => c.notNull())
        .addColumn('configured_by', 'varchar(320)', (c) => c.notNull())
        .addColumn('modified_at', 'varchar(32)', (c) => c.notNull())
        .addPrimaryKeyConstraint('analytics_dataflows_pk', ['tenant_id', 'object_id'])
        .execute();
      await db.schema.createIndex('analytics_dataflows_name').on('analytics_dataflows').columns(['tenant_id', 'name', 'object_id']).execute();
      await db.schema.createIndex('analytics_dataflows_workspace').on('analytics_dataflows').columns(['tenant_id', 'workspace_id']).execute();
      await db.schema.createIndex('analytics_dataflows_owner').on('analytics_dataflows').columns(['tenant_id', 'configured_by']).execute();
    },
  },
};

/** The analytics tables, children first (cleared by the control-plane reset). */
export const analyticsTables: (keyof AnalyticsDatabase)[] = ['analytics_dataflows', 'analytics_workspaces'];

/**
 * The `$filter` properties of an admin dataflow (issue 4: `name`, `description`,
 * `configuredBy`, `workspaceId`, `objectId`). Ids are stored lower-case; GUID literals are
 * lower-cased by the compiler. `modelUrl` and `users` are not filterable.
 */
export const dataflowFields: FieldMap = {
  name: { column: 'name', type: 'string' },
  description: { column: 'description', type: 'string' },
  configuredBy: { column: 'configured_by', type: 'string' },
  workspaceId: { column: 'workspace_id', type: 'guid' },
  objectId: { column: 'object_id', type: 'guid' },
};

/** An `AdminDataflow` as returned (spec §2.1: only these fields; `users` always empty). */
export interface AdminDataflow {
  objectId: string;
  name: string;
  description: string;
  modelUrl: string;
  configuredBy: string;
  users: [];
  workspaceId: string;
}

/**
 * Lists a tenant's dataflows (spec §4.1) matching `filter` (a compiled OData expression,
 * optional), skipping `skip` and returning at most `top` (all when undefined), ordered by
 * name then id; filter, order and paging all run in SQL.
 * @returns the `value` entries of `AdminDataflows`, `users` always `[]`
 */
export async function listDataflows(db: Kysely<Database>, tenantId: string, filter: Expression<SqlBool> | undefined, skip: number, top: number | undefined): Promise<AdminDataflow[]> {
  let q = db
    .selectFrom('analytics_dataflows')
    .select(['object_id', 'name', 'description', 'model_url', 'configured_by', 'workspace_id'])
    .where('tenant_id', '=', tenantId);
  if (filter) q = q.where(filter);
  q = q.orderBy('name').orderBy('object_id');
  if (top !== undefined) q = q.limit(top);
  if (skip > 0) q = top === undefined ? q.limit(2_147_483_647).offset(skip) : q.offset(skip);
  const rows = await q.execute();
  return rows.map((r) => ({
    objectId: r.object_id,
    name: r.name,
    description: r.description,
    modelUrl: r.model_url,
    configuredBy: r.configured_by,
    users: [],
    workspaceId: r.workspace_id,
  }));
}
