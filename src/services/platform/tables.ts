/**
 * The tables of the platform area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */
import type { Int8 } from '../../store/tables.ts';

/** A row of `platform_folders` (created by migration `platform_0001_items`). */
export interface PlatformFoldersTable {
  tenant_id: string;
  id: string;
  workspace_id: string;
  display_name: string;
  parent_folder_id: string | null;
}

/** A row of `platform_items` (created by migration `platform_0001_items`). */
export interface PlatformItemsTable {
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
  state: string;
  created_at: string;
  updated_at: string;
}

/** A row of `platform_operations` (created by migration `platform_0001_items`). */
export interface PlatformOperationsTable {
  tenant_id: string;
  id: string;
  caller_id: string;
  kind: string;
  workspace_id: string;
  item_id: string | null;
  created_ms: Int8;
  complete_ms: Int8;
  outcome: string;
  error: string | null;
  status: string | null;
}

/** A row of `platform_role_assignments` (created by migration `platform_0001_items`). */
export interface PlatformRoleAssignmentsTable {
  tenant_id: string;
  workspace_id: string;
  principal_id: string;
  principal_type: string;
  role: string;
}

/** A row of `platform_sensitivity_labels` (created by migration `platform_0001_items`). */
export interface PlatformSensitivityLabelsTable {
  tenant_id: string;
  id: string;
  name: string;
  published_to: string | null;
}

/** A row of `platform_workspaces` (created by migration `platform_0001_items`). */
export interface PlatformWorkspacesTable {
  tenant_id: string;
  id: string;
  display_name: string;
  description: string;
}

export interface PlatformDatabase {
  platform_folders: PlatformFoldersTable;
  platform_items: PlatformItemsTable;
  platform_operations: PlatformOperationsTable;
  platform_role_assignments: PlatformRoleAssignmentsTable;
  platform_sensitivity_labels: PlatformSensitivityLabelsTable;
  platform_workspaces: PlatformWorkspacesTable;
}
