/**
 * The tables of the platform area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). PlatformDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, bigint, nullable, text, type Tables } from '../../store/columns.ts';

/** The columns of the platform tables, by table (see the file comment). */
export const platformColumns = defineTables({
  /** Created by `platform_0001_items`. */
  platform_folders: {
    tenant_id: text(),
    id: text(),
    workspace_id: text(),
    display_name: text(),
    parent_folder_id: nullable(text()),
  },
  /** Created by `platform_0001_items`. */
  platform_items: {
    tenant_id: text(),
    id: text(),
    workspace_id: text(),
    type: text(),
    display_name: text(),
    name_key: text(),
    description: nullable(text()),
    folder_id: nullable(text()),
    sensitivity_label_id: nullable(text()),
    tags: text(),
    default_identity: text(),
    definition: text(),
    state: text(),
    created_at: text(),
    updated_at: text(),
  },
  /** Created by `platform_0001_items`. */
  platform_operations: {
    tenant_id: text(),
    id: text(),
    caller_id: text(),
    kind: text(),
    workspace_id: text(),
    item_id: nullable(text()),
    created_ms: bigint(),
    complete_ms: bigint(),
    outcome: text(),
    error: nullable(text()),
    status: nullable(text()),
  },
  /** Created by `platform_0001_items`. */
  platform_role_assignments: {
    tenant_id: text(),
    workspace_id: text(),
    principal_id: text(),
    principal_type: text(),
    role: text(),
  },
  /** Created by `platform_0001_items`. */
  platform_sensitivity_labels: {
    tenant_id: text(),
    id: text(),
    name: text(),
    published_to: nullable(text()),
  },
  /** Created by `platform_0001_items`. */
  platform_workspaces: {
    tenant_id: text(),
    id: text(),
    display_name: text(),
    description: text(),
  },
});

/** The platform tables as Kysely sees them. */
export type PlatformDatabase = Tables<typeof platformColumns>;
