/**
 * The tables of the analytics area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */

/** A row of `analytics_dataflows` (created by migration `analytics_0001_dataflows`). */
export interface AnalyticsDataflowsTable {
  tenant_id: string;
  object_id: string;
  workspace_id: string;
  name: string;
  description: string;
  model_url: string;
  configured_by: string;
  modified_at: string;
}

/** A row of `analytics_workspaces` (created by migration `analytics_0001_dataflows`). */
export interface AnalyticsWorkspacesTable {
  tenant_id: string;
  id: string;
  name: string;
}

export interface AnalyticsDatabase {
  analytics_dataflows: AnalyticsDataflowsTable;
  analytics_workspaces: AnalyticsWorkspacesTable;
}
