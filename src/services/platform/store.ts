/**
 * Storage of the data platform area (spec analytics-platform-mail-wopi §2.2, §3; reference
 * §2, §3): workspaces, workspace role assignments, folders, sensitivity labels, items
 * (eventstreams) with their definitions, and long-running operations. Every row carries its
 * tenant and every query is scoped by it; the hot paths run through the indexes created
 * here; list paging is keyset paging in SQL.
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import { fromJson, isPostgres, type Migrations } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';
import type { PlatformDatabase } from './tables.ts';

/** Migrations of the platform tables. */
export const platformMigrations: Migrations = {
  platform_0001_items: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('platform_workspaces')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('id', 'varchar(36)', (c) => c.notNull())
        .addColumn('display_name', 'varchar(256)', (c) => c.notNull())
        .addColumn('description', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('platform_workspaces_pk', ['tenant_id', 'id'])
        .execute();
      await db.schema
        .createTable('platform_role_assignments')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('principal_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('principal_type', 'varchar(32)', (c) => c.notNull())
        .addColumn('role', 'varchar(16)', (c) => c.notNull())
        .addPrimaryKeyConstraint('platform_role_assignments_pk', ['tenant_id', 'workspace_id', 'principal_id'])
        .execute();
      await db.schema
        .createTable('platform_folders')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('id', 'varchar(36)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('display_name', 'varchar(256)', (c) => c.notNull())
        .addColumn('parent_folder_id', 'varchar(36)')
        .addPrimaryKeyConstraint('platform_folders_pk', ['tenant_id', 'id'])
        .execute();
      await db.schema.createIndex('platform_folders_workspace').on('platform_folders').columns(['tenant_id', 'workspace_id']).execute();
      await db.schema
        .createTable('platform_sensitivity_labels')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('id', 'varchar(36)', (c) => c.notNull())
        .addColumn('name', 'varchar(256)', (c) => c.notNull())
        // JSON array of principal object ids the label is published to; null = everyone.
        .addColumn('published_to', 'text')
        .addPrimaryKeyConstraint('platform_sensitivity_labels_pk', ['tenant_id', 'id'])
        .execute();
      await db.schema
        .createTable('platform_items')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('id', 'varchar(36)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('type', 'varchar(64)', (c) => c.notNull())
        .addColumn('display_name', 'varchar(256)', (c) => c.notNull())
        // Lower-cased display name: uniqueness per (workspace, type) is case-insensitive.
        // Byte-order collation on PostgreSQL, as SQLite's BINARY: the same list order on both stores.
        .addColumn('name_key', isPostgres(db) ? sql`varchar(256) collate "C"` : 'varchar(256)', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('folder_id', 'varchar(36)')
        .addColumn('sensitivity_label_id', 'varchar(36)')
        .addColumn('tags', 'text', (c) => c.notNull())
        .addColumn('default_identity', 'text', (c) => c.notNull())
        // JSON `{parts:[{path,payload,payloadType}], logicalId}`.
        .addColumn('definition', 'text', (c) => c.notNull())
        // 'Provisioning' while its create operation runs (hidden from reads), then 'Active'.
        .addColumn('state', 'varchar(16)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .addPrimaryKeyConstraint('platform_items_pk', ['tenant_id', 'id'])
        .execute();
      await db.schema.createIndex('platform_items_name').on('platform_items').columns(['tenant_id', 'workspace_id', 'type', 'name_key']).unique().execute();
      await db.schema.createIndex('platform_items_list').on('platform_items').columns(['tenant_id', 'workspace_id', 'type', 'state', 'name_key', 'id']).execute();
      await db.schema
        .createTable('platform_operations')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('id', 'varchar(36)', (c) => c.notNull())
        .addColumn('caller_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('kind', 'varchar(32)', (c) => c.notNull())
        .addColumn('workspace_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('item_id', 'varchar(36)')
        .addColumn('created_ms', 'bigint', (c) => c.notNull())
        .addColumn('complete_ms', 'bigint', (c) => c.notNull())
        // The outcome decided at the start ('Succeeded' | 'Failed') and the error of a failure.
        .addColumn('outcome', 'varchar(16)', (c) => c.notNull())
        .addColumn('error', 'text')
        // Null while running; the final status once materialized.
        .addColumn('status', 'varchar(16)')
        .addPrimaryKeyConstraint('platform_operations_pk', ['tenant_id', 'id'])
        .execute();
    },
  },
  platform_0002_pending_operations: {
    async up(db: Kysely<unknown>) {
      // Pending operations of a workspace, settled before its items are read.
      await db.schema.createIndex('platform_operations_pending').on('platform_operations').columns(['tenant_id', 'workspace_id', 'status', 'complete_ms']).execute();
    },
  },
  platform_0003_principal_workspaces: {
    async up(db: Kysely<unknown>) {
      // Workspaces of a principal (GET /v1/workspaces).
      await db.schema.createIndex('platform_role_assignments_principal').on('platform_role_assignments').columns(['tenant_id', 'principal_id', 'workspace_id']).execute();
    },
  },
};

/** The platform tables, children first (cleared by the control-plane reset). */
export const platformTables: (keyof PlatformDatabase)[] = ['platform_operations', 'platform_items', 'platform_sensitivity_labels', 'platform_folders', 'platform_role_assignments', 'platform_workspaces'];

/** Workspace roles, weakest first (reference §2.5; spec §5). */
export const workspaceRoles = ['Viewer', 'Contributor', 'Member', 'Admin'] as const;
/** One of {@link workspaceRoles}. */
export type WorkspaceRole = (typeof workspaceRoles)[number];

/** A stored workspace. */
export interface WorkspaceRow {
  tenant_id: string;
  id: string;
  display_name: string;
  description: string;
}

/** A stored item (eventstream). JSON columns as text. */
export interface ItemRow {
  tenant_id: string;
  id: string;
  workspace_id: string;
  type: string;
  display_name: string;
  name_key: string;
  description: string | null;
  folder_id: string | null;
  sensitivity_label_id: string | null;
  tags: string;
  default_identity: string;
  definition: string;
  state: 'Provisioning' | 'Active';
  created_at: string;
  updated_at: string;
}

/** A stored long-running operation; times in epoch milliseconds. */
export interface OperationRow {
  tenant_id: string;
  id: string;
  caller_id: string;
  kind: string;
  workspace_id: string;
  item_id: string | null;
  created_ms: number | string;
  complete_ms: number | string;
  outcome: 'Succeeded' | 'Failed';
  error: string | null;
  status: 'Succeeded' | 'Failed' | null;
}

/** The stored definition of an item: its parts as given (base64 payloads) and the `.platform` logical id. */
export interface StoredDefinition {
  parts: { path: string; payload: string; payloadType: string }[];
  logicalId: string;
}

/** A workspace of the tenant, or undefined. */
export async function getWorkspace(db: Kysely<Database>, tenantId: string, id: string): Promise<WorkspaceRow | undefined> {
  return (await db.selectFrom('platform_workspaces').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()) as WorkspaceRow | undefined;
}

/**
 * One page of the workspaces where `principalId` holds a role, ordered by id after `afterId`;
 * returns up to `limit + 1` rows (with the caller's role) so the caller knows whether more follow.
 */
export async function listWorkspacesFor(db: Kysely<Database>, tenantId: string, principalId: string, limit: number, afterId?: string): Promise<(WorkspaceRow & { role: WorkspaceRole })[]> {
  let q = db
    .selectFrom('platform_role_assignments as ra')
    .innerJoin('platform_workspaces as w', (j) => j.onRef('w.tenant_id', '=', 'ra.tenant_id').onRef('w.id', '=', 'ra.workspace_id'))
    .select(['w.tenant_id', 'w.id', 'w.display_name', 'w.description', 'ra.role'])
    .where('ra.tenant_id', '=', tenantId)
    .where('ra.principal_id', '=', principalId);
  if (afterId) q = q.where('w.id', '>', afterId);
  return (await q.orderBy('w.id').limit(limit + 1).execute()) as (WorkspaceRow & { role: WorkspaceRole })[];
}

/** The folders of a workspace, ordered by id (a workspace holds few folders). */
export async function listFolders(db: Kysely<Database>, tenantId: string, workspaceId: string): Promise<{ id: string; display_name: string; parent_folder_id: string | null }[]> {
  return (await db
    .selectFrom('platform_folders')
    .select(['id', 'display_name', 'parent_folder_id'])
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .orderBy('id')
    .execute()) as { id: string; display_name: string; parent_folder_id: string | null }[];
}

/** The role of `principalId` in the workspace, or undefined when it holds none. */
export async function getRole(db: Kysely<Database>, tenantId: string, workspaceId: string, principalId: string): Promise<WorkspaceRole | undefined> {
  const r = await db
    .selectFrom('platform_role_assignments')
    .select('role')
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .where('principal_id', '=', principalId)
    .executeTakeFirst();
  return r?.role as WorkspaceRole | undefined;
}

/** True when the folder exists in that workspace of the tenant. */
export async function folderExists(db: Kysely<Database>, tenantId: string, workspaceId: string, folderId: string): Promise<boolean> {
  const r = await db
    .selectFrom('platform_folders')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', folderId)
    .executeTakeFirst();
  return r !== undefined;
}

/** A sensitivity label of the tenant: its name and the principals it is published to (undefined = everyone). */
export async function getLabel(db: Kysely<Database>, tenantId: string, id: string): Promise<{ id: string; name: string; publishedTo?: string[] } | undefined> {
  const r = await db.selectFrom('platform_sensitivity_labels').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!r) return undefined;
  return { id: r.id, name: r.name, publishedTo: r.published_to === null ? undefined : fromJson<string[]>(r.published_to) };
}

/** True when an item of `type` named `name` (case-insensitive) exists in the workspace, other than `exceptId`, provisioning ones included. */
export async function nameInUse(db: Kysely<Database>, tenantId: string, workspaceId: string, type: string, name: string, exceptId?: string): Promise<boolean> {
  let q = db
    .selectFrom('platform_items')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', type)
    .where('name_key', '=', name.toLowerCase());
  if (exceptId) q = q.where('id', '!=', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Inserts an item row. @throws the driver's unique-constraint error when the name is taken meanwhile. */
export async function insertItem(db: Kysely<Database>, row: ItemRow): Promise<void> {
  await db.insertInto('platform_items').values(row).execute();
}

/** An active item of the workspace (provisioning ones are not visible), or undefined. */
export async function getItem(db: Kysely<Database>, tenantId: string, workspaceId: string, type: string, id: string): Promise<ItemRow | undefined> {
  return (await db
    .selectFrom('platform_items')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', type)
    .where('id', '=', id)
    .where('state', '=', 'Active')
    .executeTakeFirst()) as ItemRow | undefined;
}

/** Any item of the tenant by id, whatever its state (operation results). */
export async function getItemById(db: Kysely<Database>, tenantId: string, id: string): Promise<ItemRow | undefined> {
  return (await db.selectFrom('platform_items').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()) as ItemRow | undefined;
}

/**
 * One page of the active items of `type` in a workspace, ordered by lower-cased display
 * name then id, after the keyset `after` (exclusive); returns up to `limit + 1` rows so the
 * caller knows whether a next page exists.
 */
export async function listItems(db: Kysely<Database>, tenantId: string, workspaceId: string, type: string, limit: number, after?: { k: string; id: string }): Promise<ItemRow[]> {
  let q = db
    .selectFrom('platform_items')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', type)
    .where('state', '=', 'Active');
  if (after) q = q.where((eb) => eb.or([eb('name_key', '>', after.k), eb.and([eb('name_key', '=', after.k), eb('id', '>', after.id)])]));
  return (await q.orderBy('name_key').orderBy('id').limit(limit + 1).execute()) as ItemRow[];
}

/** Updates the display name and/or description of an active item; returns false when it is gone. */
export async function updateItem(db: Kysely<Database>, tenantId: string, id: string, patch: { display_name?: string; name_key?: string; description?: string; definition?: string; updated_at: string }): Promise<boolean> {
  const r = await db.updateTable('platform_items').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).where('state', '=', 'Active').executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Deletes an active item; returns false when it is gone. */
export async function deleteItem(db: Kysely<Database>, tenantId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('platform_items').where('tenant_id', '=', tenantId).where('id', '=', id).where('state', '=', 'Active').executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Inserts an operation row. */
export async function insertOperation(db: Kysely<Database>, row: OperationRow): Promise<void> {
  await db.insertInto('platform_operations').values(row).execute();
}

/** An operation of the tenant, or undefined. */
export async function getOperation(db: Kysely<Database>, tenantId: string, id: string): Promise<OperationRow | undefined> {
  return (await db.selectFrom('platform_operations').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()) as OperationRow | undefined;
}

/**
 * Completes an operation whose time has come, in one transaction and idempotently: the
 * first caller flips `status` from null (a conditional update), and only that caller
 * activates the provisioned item (success) or removes it (failure). Safe to repeat, also
 * after a restart.
 */
export async function completeOperation(db: Kysely<Database>, op: OperationRow, at: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const r = await trx
      .updateTable('platform_operations')
      .set({ status: op.outcome })
      .where('tenant_id', '=', op.tenant_id)
      .where('id', '=', op.id)
      .where('status', 'is', null)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0 || !op.item_id) return;
    if (op.outcome === 'Succeeded') {
      await trx
        .updateTable('platform_items')
        .set({ state: 'Active', updated_at: at })
        .where('tenant_id', '=', op.tenant_id)
        .where('id', '=', op.item_id)
        .where('state', '=', 'Provisioning')
        .execute();
    } else {
      await trx.deleteFrom('platform_items').where('tenant_id', '=', op.tenant_id).where('id', '=', op.item_id).where('state', '=', 'Provisioning').execute();
    }
  });
}

/**
 * Completes every operation of the workspace whose time has come (`complete_ms <= nowMs`),
 * so that items created by operations nobody polled appear in reads; idempotent.
 */
export async function settleDueOperations(db: Kysely<Database>, tenantId: string, workspaceId: string, nowMs: number): Promise<void> {
  const due = (await db
    .selectFrom('platform_operations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .where('status', 'is', null)
    .where('complete_ms', '<=', nowMs)
    .execute()) as OperationRow[];
  for (const op of due) await completeOperation(db, op, new Date(Number(op.complete_ms)).toISOString());
}

/** Seeds rows (demo data). */
export async function seedRows<T extends keyof Database & string>(db: Kysely<Database>, table: T, rows: Insertable<Database[T]>[]): Promise<void> {
  if (rows.length) await db.insertInto(table).values(rows).execute();
}
