/**
 * The tables of the datashare area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */
import type { Int8, Int8Key } from '../../store/tables.ts';

/** A row of `datashare_invitations` (created by migration `datashare_0001_tables`). */
export interface DatashareInvitationsTable {
  invitation_id: string;
  tenant_id: string;
  invitation_resource_id: string;
  share_id_lower: string;
  target_email_lower: string | null;
  target_tenant_id: string | null;
  target_object_id: string | null;
  status: string;
}

/** A row of `datashare_synchronizations` (created by migration `datashare_0001_tables`). */
export interface DatashareSynchronizationsTable {
  seq: Int8Key;
  tenant_id: string;
  share_id_lower: string;
  share_subscription_id_lower: string | null;
  synchronization_id: string;
  synchronization_mode: string;
  status: string;
  message: string | null;
  start_time: string;
  end_time: string | null;
  duration_ms: number | null;
  due_at: string | null;
  planned_duration_ms: number | null;
  consumer_name: string | null;
  consumer_email: string | null;
  consumer_tenant_name: string | null;
}

export interface DatashareDatabase {
  datashare_invitations: DatashareInvitationsTable;
  datashare_synchronizations: DatashareSynchronizationsTable;
}
