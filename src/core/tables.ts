/**
 * The core's tables, declared once (directory and grants of the identity provider, cache
 * versions, rate-limit windows): the columns the core migrations create, in migration order.
 * Core code types its database with the narrowest of these interfaces ({@link CoreDatabase}
 * for the directory, which also bumps cache versions); services use the merged `Database`
 * of src/store/database.ts. test/database-types.test.ts compares the declarations with the
 * migrated schema on both dialects.
 */
import { autoKey, defineTables, bigint, integer, nullable, text, withDefault, type Tables } from '../store/columns.ts';

/** The columns of the identity tables, by table. */
export const identityColumns = defineTables({
  /** Created by `core_0001_directory`. */
  app_role_grants: {
    app_id: text(),
    audience: text(),
    role: text(),
  },
  /** Created by `core_0001_directory`. */
  directory_apps: {
    app_id: text(),
    object_id: text(),
    tenant_id: text(),
    display_name: text(),
    kind: text(),
    secret_hash: nullable(text()),
    redirect_uris: withDefault(text()),
    /** Added by `core_0010_directory_objects`: the application object's id (none for managed identities). */
    application_id: nullable(text()),
    /** Added by `core_0010_directory_objects`: 1 while the service principal exists. */
    has_sp: withDefault(integer()),
    /** Added by `core_0010_directory_objects`: how many password and key credentials the application has. */
    credentials: withDefault(integer()),
    /** Added by `core_0010_directory_objects`. */
    created_at: nullable(text()),
    /** Added by `core_0010_directory_objects`: the other application properties (JSON). */
    props: withDefault(text()),
  },
  /** Created by `core_0010_directory_objects`: client secrets of an application (several each). */
  app_password_credentials: {
    key_id: text(),
    app_id: text(),
    secret_hash: text(),
    hint: text(),
    display_name: nullable(text()),
    start_at: text(),
    end_at: text(),
  },
  /** Created by `core_0010_directory_objects`: certificates of an application (client assertions). */
  app_key_credentials: {
    key_id: text(),
    app_id: text(),
    type: text(),
    usage: text(),
    key_der: text(),
    thumbprint: text(),
    thumbprint256: text(),
    display_name: nullable(text()),
    start_at: text(),
    end_at: text(),
  },
  /** Created by `core_0010_directory_objects`. */
  directory_groups: {
    id: text(),
    tenant_id: text(),
    display_name: text(),
    mail_nickname: text(),
    security_enabled: withDefault(integer()),
    mail_enabled: withDefault(integer()),
    created_at: text(),
    props: withDefault(text()),
  },
  /** Created by `core_0010_directory_objects`: direct members (users, groups, service principals). */
  directory_group_members: {
    group_id: text(),
    member_id: text(),
    member_type: text(),
  },
  /** Created by `core_0001_directory`. */
  directory_users: {
    id: text(),
    tenant_id: text(),
    upn_lower: text(),
    upn: text(),
    display_name: text(),
    mail: text(),
    password_hash: text(),
    is_tenant_admin: withDefault(integer()),
    /** Added by `core_0010_directory_objects`. */
    account_enabled: withDefault(integer()),
    /** Added by `core_0010_directory_objects`. */
    mail_nickname: nullable(text()),
    /** Added by `core_0010_directory_objects`. */
    created_at: nullable(text()),
    /** Added by `core_0010_directory_objects`: the other user properties (JSON). */
    props: withDefault(text()),
  },
  /** Created by `core_0001_directory`. */
  signing_keys: {
    kid: text(),
    private_jwk: text(),
    public_jwk: text(),
    created_at: text(),
  },
  /** Created by `core_0001_directory`. */
  stratus_meta: {
    key: text(),
    value: text(),
  },
  /** Created by `core_0001_directory`. */
  tenants: {
    id: text(),
    domain: text(),
    display_name: text(),
  },
  /** Created by `core_0002_oidc_grants`. */
  auth_codes: {
    code_hash: text(),
    user_id: text(),
    app_id: text(),
    redirect_uri: text(),
    scope: text(),
    resource: nullable(text()),
    nonce: nullable(text()),
    code_challenge: nullable(text()),
    challenge_method: nullable(text()),
    expires_at: bigint(),
    /** Added by `core_0020_grant_binding`: the tenant the code was issued for (the path's, or the user's for `common`). */
    tenant_path: nullable(text()),
    /** Added by `core_0020_grant_binding`: when it was redeemed (kept to recognise a replay). */
    redeemed_at: nullable(bigint()),
    /** Added by `core_0020_grant_binding`: the refresh-token family issued from it. */
    family_id: nullable(text()),
  },
  /** Created by `core_0002_oidc_grants`. */
  device_codes: {
    code_hash: text(),
    user_code: text(),
    app_id: text(),
    tenant_id: nullable(text()),
    scope: text(),
    resource: nullable(text()),
    status: text(),
    user_id: nullable(text()),
    last_poll_at: bigint(),
    expires_at: bigint(),
  },
  /** Created by `core_0002_oidc_grants`. */
  refresh_tokens: {
    token_hash: text(),
    user_id: text(),
    app_id: text(),
    scope: text(),
    expires_at: bigint(),
    /** Added by `core_0020_grant_binding`: the family (one sign-in's rotations). */
    family_id: nullable(text()),
    /** Added by `core_0020_grant_binding`: when it was rotated (kept to recognise a replay). */
    used_at: nullable(bigint()),
  },
  /** Created by `core_0021_sign_in_lockouts`: failed password / client-secret attempts per account and per client. */
  sign_in_lockouts: {
    subject: text(),
    failures: integer(),
    window_ends: bigint(),
    locked_until: bigint(),
  },
});

/** The identity tables as Kysely sees them. */
export type IdentityDatabase = Tables<typeof identityColumns>;

/** The columns of the cache tables, by table. */
export const cacheColumns = defineTables({
  /** Created by `core_0002_cache_versions`. */
  stratus_cache_versions: {
    area: text(),
    version: bigint(),
  },
  /** Created by `core_0006_cache_instances` (PostgreSQL instances in live mode: `cache-presence.ts`). */
  stratus_instances: {
    id: text(),
    acked: bigint(),
    lease_until: bigint(),
  },
  /**
   * Created by `core_0032_cache_keys` (SQLite: the keys the keyed tables' triggers wrote, `#<cache>|<key>`,
   * the last 1,000; `cache-tables.ts`).
   */
  stratus_cache_keys: {
    seq: autoKey(),
    entry: text(),
  },
});

/** The cache tables as Kysely sees them. */
export type CacheDatabase = Tables<typeof cacheColumns>;

/** The columns of the rate-limit tables, by table. */
export const rateLimitColumns = defineTables({
  /** Created by `core_0002_rate_limits`. */
  rate_limits: {
    bucket: text(),
    window_start_ms: bigint(),
    count: integer(),
  },
});

/** The rate-limit tables as Kysely sees them. */
export type RateLimitDatabase = Tables<typeof rateLimitColumns>;

/** Every core table, by name: the run-time declarations. */
export const coreColumns = { ...identityColumns, ...cacheColumns, ...rateLimitColumns };

/** Every table of the core. */
export type CoreDatabase = Tables<typeof coreColumns>;
