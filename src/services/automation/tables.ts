/**
 * The tables of the automation area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */
import type { Int8, Int8Key } from '../../store/tables.ts';

/** A row of `automation_jobs` (created by migration `automation_0001_tables`). */
export interface AutomationJobsTable {
  seq: Int8Key;
  job_id: string;
  tenant_id: string;
  account_id_lower: string;
  runbook_name: string;
  webhook_name: string;
  run_on: string | null;
  parameters: string;
  creation_time: string;
  completes_at: string;
}

/** A row of `automation_webhooks` (created by migration `automation_0001_tables`). */
export interface AutomationWebhooksTable {
  id_lower: string;
  id: string;
  tenant_id: string;
  account_id_lower: string;
  name: string;
  runbook_name: string;
  is_enabled: number;
  expiry_time: string;
  creation_time: string;
  last_invoked_time: string | null;
  token_hash: string;
  body: string;
}

export interface AutomationDatabase {
  automation_jobs: AutomationJobsTable;
  automation_webhooks: AutomationWebhooksTable;
}
