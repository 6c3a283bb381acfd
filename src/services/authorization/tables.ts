/**
 * The tables of the authorization area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */

/** A row of `authz_role_management_policies` (created by migration `authorization_0001_role_management_policies`). */
export interface AuthzRoleManagementPoliciesTable {
  tenant_id: string;
  scope_lower: string;
  role_definition_id: string;
  name: string;
  scope: string;
  rules: string;
  last_modified_by: string;
  last_modified_at: string;
}

export interface AuthorizationDatabase {
  authz_role_management_policies: AuthzRoleManagementPoliciesTable;
}
