/**
 * The tables of the wopi area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). WopiDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, bigint, text, type Tables } from '../../store/columns.ts';

/** The columns of the wopi tables, by table (see the file comment). */
export const wopiColumns = defineTables({
  /** Created by `wopi_0001_containers_tokens`. */
  wopi_access_tokens: {
    token_hash: text(),
    tenant_id: text(),
    user_id: text(),
    resource_kind: text(),
    resource_id: text(),
    expires_at_ms: bigint(),
    created_at: text(),
  },
  /** Created by `wopi_0001_containers_tokens`. */
  wopi_root_containers: {
    tenant_id: text(),
    user_id: text(),
    container_id: text(),
    name: text(),
    created_at: text(),
  },
});

/** The wopi tables as Kysely sees them. */
export type WopiDatabase = Tables<typeof wopiColumns>;
