/**
 * The tables of the datashare area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). DatashareDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, autoKey, integer, nullable, text, type Tables } from '../../store/columns.ts';

/** The columns of the datashare tables, by table (see the file comment). */
export const datashareColumns = defineTables({
  /** Created by `datashare_0001_tables`. */
  datashare_invitations: {
    invitation_id: text(),
    tenant_id: text(),
    invitation_resource_id: text(),
    share_id_lower: text(),
    target_email_lower: nullable(text()),
    target_tenant_id: nullable(text()),
    target_object_id: nullable(text()),
    status: text(),
  },
  /** Created by `datashare_0001_tables`. */
  datashare_synchronizations: {
    seq: autoKey(),
    tenant_id: text(),
    share_id_lower: text(),
    share_subscription_id_lower: nullable(text()),
    synchronization_id: text(),
    synchronization_mode: text(),
    status: text(),
    message: nullable(text()),
    start_time: text(),
    end_time: nullable(text()),
    duration_ms: nullable(integer()),
    due_at: nullable(text()),
    planned_duration_ms: nullable(integer()),
    consumer_name: nullable(text()),
    consumer_email: nullable(text()),
    consumer_tenant_name: nullable(text()),
  },
});

/** The datashare tables as Kysely sees them. */
export type DatashareDatabase = Tables<typeof datashareColumns>;
