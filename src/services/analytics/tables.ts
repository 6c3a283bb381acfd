/**
 * The tables of the analytics area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). AnalyticsDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, text, type Tables } from '../../store/columns.ts';

/** The columns of the analytics tables, by table (see the file comment). */
export const analyticsColumns = defineTables({
  /** Created by `analytics_0001_dataflows`. */
  analytics_dataflows: {
    tenant_id: text(),
    object_id: text(),
    workspace_id: text(),
    name: text(),
    description: text(),
    model_url: text(),
    configured_by: text(),
    modified_at: text(),
  },
  /** Created by `analytics_0001_dataflows`. */
  analytics_workspaces: {
    tenant_id: text(),
    id: text(),
    name: text(),
  },
});

/** The analytics tables as Kysely sees them. */
export type AnalyticsDatabase = Tables<typeof analyticsColumns>;
