/**
 * The tables of the authorization area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). AuthorizationDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, text, type Tables } from '../../store/columns.ts';

/** The columns of the authorization tables, by table (see the file comment). */
export const authorizationColumns = defineTables({
  /** Created by `authorization_0001_role_management_policies`. */
  authz_role_management_policies: {
    tenant_id: text(),
    scope_lower: text(),
    role_definition_id: text(),
    name: text(),
    scope: text(),
    rules: text(),
    last_modified_by: text(),
    last_modified_at: text(),
  },
});

/** The authorization tables as Kysely sees them. */
export type AuthorizationDatabase = Tables<typeof authorizationColumns>;
