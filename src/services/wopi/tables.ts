/**
 * The tables of the wopi area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */
import type { Int8 } from '../../store/tables.ts';

/** A row of `wopi_access_tokens` (created by migration `wopi_0001_containers_tokens`). */
export interface WopiAccessTokensTable {
  token_hash: string;
  tenant_id: string;
  user_id: string;
  resource_kind: string;
  resource_id: string;
  expires_at_ms: Int8;
  created_at: string;
}

/** A row of `wopi_root_containers` (created by migration `wopi_0001_containers_tokens`). */
export interface WopiRootContainersTable {
  tenant_id: string;
  user_id: string;
  container_id: string;
  name: string;
  created_at: string;
}

export interface WopiDatabase {
  wopi_access_tokens: WopiAccessTokensTable;
  wopi_root_containers: WopiRootContainersTable;
}
