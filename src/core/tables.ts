/**
 * The core's tables as Kysely sees them (directory and grants of the identity provider,
 * rate-limit windows, cache versions): one interface per table the core migrations create.
 * Core code types its database as {@link CoreDatabase} (or one of the narrower interfaces);
 * services use the merged `Database` of src/store/database.ts. test/database-types.test.ts
 * checks them against the migrated schema on both dialects.
 */
import type { Generated } from 'kysely';
import type { Int8 } from '../store/tables.ts';

/** A row of `app_role_grants` (created by migration `core_0001_directory`). */
export interface AppRoleGrantsTable {
  app_id: string;
  audience: string;
  role: string;
}

/** A row of `directory_apps` (created by migration `core_0001_directory`). */
export interface DirectoryAppsTable {
  app_id: string;
  object_id: string;
  tenant_id: string;
  display_name: string;
  kind: string;
  secret_hash: string | null;
  redirect_uris: Generated<string>;
}

/** A row of `directory_users` (created by migration `core_0001_directory`). */
export interface DirectoryUsersTable {
  id: string;
  tenant_id: string;
  upn_lower: string;
  upn: string;
  display_name: string;
  mail: string;
  password_hash: string;
  is_tenant_admin: Generated<number>;
}

/** A row of `signing_keys` (created by migration `core_0001_directory`). */
export interface SigningKeysTable {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: string;
}

/** A row of `stratus_meta` (created by migration `core_0001_directory`). */
export interface StratusMetaTable {
  key: string;
  value: string;
}

/** A row of `tenants` (created by migration `core_0001_directory`). */
export interface TenantsTable {
  id: string;
  domain: string;
  display_name: string;
}

/** A row of `auth_codes` (created by migration `core_0002_oidc_grants`). */
export interface AuthCodesTable {
  code_hash: string;
  user_id: string;
  app_id: string;
  redirect_uri: string;
  scope: string;
  resource: string | null;
  nonce: string | null;
  code_challenge: string | null;
  challenge_method: string | null;
  expires_at: Int8;
}

/** A row of `device_codes` (created by migration `core_0002_oidc_grants`). */
export interface DeviceCodesTable {
  code_hash: string;
  user_code: string;
  app_id: string;
  tenant_id: string | null;
  scope: string;
  resource: string | null;
  status: string;
  user_id: string | null;
  last_poll_at: Int8;
  expires_at: Int8;
}

/** A row of `refresh_tokens` (created by migration `core_0002_oidc_grants`). */
export interface RefreshTokensTable {
  token_hash: string;
  user_id: string;
  app_id: string;
  scope: string;
  expires_at: Int8;
}

export interface IdentityDatabase {
  app_role_grants: AppRoleGrantsTable;
  directory_apps: DirectoryAppsTable;
  directory_users: DirectoryUsersTable;
  signing_keys: SigningKeysTable;
  stratus_meta: StratusMetaTable;
  tenants: TenantsTable;
  auth_codes: AuthCodesTable;
  device_codes: DeviceCodesTable;
  refresh_tokens: RefreshTokensTable;
}

/** A row of `stratus_cache_versions` (created by migration `core_0002_cache_versions`). */
export interface StratusCacheVersionsTable {
  area: string;
  version: Int8;
}

export interface CacheDatabase {
  stratus_cache_versions: StratusCacheVersionsTable;
}

/** A row of `rate_limits` (created by migration `core_0002_rate_limits`). */
export interface RateLimitsTable {
  bucket: string;
  window_start_ms: Int8;
  count: number;
}

export interface RateLimitDatabase {
  rate_limits: RateLimitsTable;
}

/** Every table of the core. */
export interface CoreDatabase extends IdentityDatabase, CacheDatabase, RateLimitDatabase {}
