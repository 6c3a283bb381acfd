/**
 * The tables of the automation area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). AutomationDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, autoKey, integer, nullable, text, type Tables } from '../../store/columns.ts';

/** The columns of the automation tables, by table (see the file comment). */
export const automationColumns = defineTables({
  /** Created by `automation_0001_tables`. */
  automation_jobs: {
    seq: autoKey(),
    job_id: text(),
    tenant_id: text(),
    account_id_lower: text(),
    runbook_name: text(),
    webhook_name: text(),
    run_on: nullable(text()),
    parameters: text(),
    creation_time: text(),
    completes_at: text(),
  },
  /** Created by `automation_0001_tables`. */
  automation_webhooks: {
    id_lower: text(),
    id: text(),
    tenant_id: text(),
    account_id_lower: text(),
    name: text(),
    runbook_name: text(),
    is_enabled: integer(),
    expiry_time: text(),
    creation_time: text(),
    last_invoked_time: nullable(text()),
    token_hash: text(),
    body: text(),
  },
});

/** The automation tables as Kysely sees them. */
export type AutomationDatabase = Tables<typeof automationColumns>;
