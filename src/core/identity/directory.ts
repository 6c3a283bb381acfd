/**
 * The directory: tenants, users, applications (service principals, managed identities,
 * public clients), their application-role grants per audience, and the token signing keys.
 * Tables are owned by the identity provider (spec: resource-manager §5).
 */
import { scrypt, timingSafeEqual, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import { bool, fromJson } from '../../store/db.ts';
import type { AreaCache, CacheHub } from '../cache.ts';
import { grantMigrations, grantTables } from './grants.ts';
import { directoryObjectMigrations, seededApplicationId } from './directory-schema.ts';
import { nowIso } from '../clock.ts';
import type { CoreDatabase, IdentityDatabase } from '../tables.ts';

/** A directory user (a person who signs in). */
export interface DirectoryUser {
  /** Object id (`oid`). */
  id: string;
  tenantId: string;
  userPrincipalName: string;
  displayName: string;
  mail: string;
  /** Holds the tenant administrator directory role. */
  isTenantAdmin: boolean;
  /** False when the account may not sign in (`accountEnabled`); undefined reads as true. */
  accountEnabled?: boolean;
}

/** Kinds of application principal. */
export type AppKind = 'ServicePrincipal' | 'ManagedIdentity' | 'PublicClient';

/** An application registration with its service principal. */
export interface DirectoryApp {
  /** Client id (`appid`). */
  appId: string;
  /** Service principal object id (`oid` of app tokens). */
  objectId: string;
  tenantId: string;
  displayName: string;
  kind: AppKind;
  redirectUris: string[];
  /** The client must authenticate: it has a client secret or a certificate (a confidential client). */
  hasSecret: boolean;
  /** The service principal exists (app tokens need it); undefined reads as true. */
  hasServicePrincipal?: boolean;
  /** The application object's id (`/applications/{id}`); undefined for managed identities. */
  applicationId?: string;
}

/** A tenant of the directory. */
export interface Tenant {
  id: string;
  domain: string;
  displayName: string;
}

/** Migrations of the directory tables. */
export const directoryMigrations: Migrations = {
  core_0001_directory: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('tenants')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('domain', 'varchar(255)', (c) => c.notNull().unique())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('directory_users')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('upn_lower', 'varchar(255)', (c) => c.notNull().unique())
        .addColumn('upn', 'varchar(255)', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('mail', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('is_tenant_admin', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createTable('directory_apps')
        .addColumn('app_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('object_id', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('kind', 'varchar(32)', (c) => c.notNull())
        .addColumn('secret_hash', 'text')
        .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
        .execute();
      await db.schema
        .createTable('app_role_grants')
        .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('audience', 'varchar(64)', (c) => c.notNull())
        .addColumn('role', 'varchar(128)', (c) => c.notNull())
        .addPrimaryKeyConstraint('app_role_grants_pk', ['app_id', 'audience', 'role'])
        .execute();
      await db.schema
        .createTable('signing_keys')
        .addColumn('kid', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('private_jwk', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('stratus_meta')
        .addColumn('key', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  ...grantMigrations,
  ...directoryObjectMigrations,
};

/** Tables of the directory cleared by a reset (signing keys and meta are kept). */
export const directoryTables: (keyof IdentityDatabase)[] = [...grantTables, 'directory_group_members', 'directory_groups', 'app_password_credentials', 'app_key_credentials', 'app_role_grants', 'directory_apps', 'directory_users', 'tenants'];

/** scrypt of `secret` (Node's defaults: N = 16384, r = 8, p = 1), computed on the libuv thread pool, not the event loop. */
function scryptAsync(secret: string, salt: Buffer, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(secret, salt, length, (e, key) => (e ? reject(e) : resolve(key))));
}

/**
 * scrypt hash `scrypt$<salt>$<hash>` of a password or client secret. Computed on the thread
 * pool (~50–100 ms of CPU each): the event loop serves other requests meanwhile, and several
 * hashes (the demo data set's five) run at once.
 */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(secret, salt, 32);
  return `scrypt$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** True when `secret` matches a {@link hashSecret} value (constant time; computed on the thread pool). */
export async function verifySecret(secret: string, stored: string | null | undefined): Promise<boolean> {
  if (!stored) return false;
  const [scheme, saltB64, hashB64] = stored.split('$');
  if (scheme !== 'scrypt' || !saltB64 || !hashB64) return false;
  const expected = Buffer.from(hashB64, 'base64');
  const actual = await scryptAsync(secret, Buffer.from(saltB64, 'base64'), expected.length);
  return timingSafeEqual(expected, actual);
}

function toUser(r: any): DirectoryUser {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    userPrincipalName: r.upn,
    displayName: r.display_name,
    mail: r.mail,
    isTenantAdmin: bool(r.is_tenant_admin),
    accountEnabled: r.account_enabled === undefined ? true : bool(r.account_enabled),
  };
}

function toApp(r: any): DirectoryApp {
  return {
    appId: r.app_id,
    objectId: r.object_id,
    tenantId: r.tenant_id,
    displayName: r.display_name,
    kind: r.kind,
    redirectUris: fromJson<string[]>(r.redirect_uris) ?? [],
    hasSecret: !!r.secret_hash || Number(r.credentials ?? 0) > 0,
    hasServicePrincipal: r.has_sp === undefined ? true : bool(r.has_sp),
    applicationId: r.application_id ?? undefined,
  };
}

/**
 * Queries over the directory tables. With a {@link CacheHub}, {@link findUser} (looked up by
 * every mail request) is served from the `directory` cache, checked for writes of other
 * instances first (`sync`), and the writes here invalidate it.
 */
export class Directory {
  private readonly users?: AreaCache<DirectoryUser | undefined>;

  constructor(
    private readonly db: Kysely<CoreDatabase>,
    private readonly cache?: CacheHub,
  ) {
    this.users = cache?.cache('directory');
  }

  /** The tenant named by id or domain (case-insensitive), or undefined. */
  async findTenant(idOrDomain: string): Promise<Tenant | undefined> {
    const v = idOrDomain.toLowerCase();
    const r = await this.db.selectFrom('tenants').selectAll().where((eb) => eb.or([eb('id', '=', v), eb('domain', '=', v)])).executeTakeFirst();
    return r ? { id: r.id, domain: r.domain, displayName: r.display_name } : undefined;
  }

  /** All tenants. */
  async listTenants(): Promise<Tenant[]> {
    const rows = await this.db.selectFrom('tenants').selectAll().orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, domain: r.domain, displayName: r.display_name }));
  }

  /** A user by object id or user principal name (case-insensitive), or undefined. */
  async findUser(idOrUpn: string): Promise<DirectoryUser | undefined> {
    if (!this.cache || !this.users) return this.readUser(idOrUpn);
    await this.cache.sync();
    return this.users.get(idOrUpn.toLowerCase(), async () => {
      const u = await this.readUser(idOrUpn);
      return u ? Object.freeze(u) : undefined;
    });
  }

  private async readUser(idOrUpn: string): Promise<DirectoryUser | undefined> {
    const v = idOrUpn.toLowerCase();
    const r = await this.db.selectFrom('directory_users').selectAll().where((eb) => eb.or([eb('id', '=', v), eb('upn_lower', '=', v)])).executeTakeFirst();
    return r ? toUser(r) : undefined;
  }

  /** Users of a tenant, by user principal name. */
  async listUsers(tenantId: string): Promise<DirectoryUser[]> {
    const rows = await this.db.selectFrom('directory_users').selectAll().where('tenant_id', '=', tenantId).orderBy('upn_lower').execute();
    return rows.map(toUser);
  }

  /** The user when `password` is right, else undefined. */
  async checkPassword(upn: string, password: string): Promise<DirectoryUser | undefined> {
    const r = await this.db.selectFrom('directory_users').selectAll().where('upn_lower', '=', upn.toLowerCase()).executeTakeFirst();
    if (!r || !(await verifySecret(password, r.password_hash))) return undefined;
    // A disabled account does not sign in (the directory API's `accountEnabled: false`).
    if (!bool(r.account_enabled ?? 1)) return undefined;
    return toUser(r);
  }

  /** An application by client id or service principal object id, or undefined. */
  async findApp(appIdOrObjectId: string): Promise<DirectoryApp | undefined> {
    const v = appIdOrObjectId.toLowerCase();
    const r = await this.db.selectFrom('directory_apps').selectAll().where((eb) => eb.or([eb('app_id', '=', v), eb('object_id', '=', v)])).executeTakeFirst();
    return r ? toApp(r) : undefined;
  }

  /** The application when `secret` is its client secret, else undefined. */
  async checkClientSecret(appId: string, secret: string): Promise<DirectoryApp | undefined> {
    const r = await this.db.selectFrom('directory_apps').selectAll().where('app_id', '=', appId.toLowerCase()).executeTakeFirst();
    if (!r) return undefined;
    if (await verifySecret(secret, r.secret_hash)) return toApp(r);
    // The secrets added through the directory API (`addPassword`): unexpired, looked up by their hint (the first three characters).
    const added = await this.db
      .selectFrom('app_password_credentials')
      .select(['secret_hash', 'end_at'])
      .where('app_id', '=', r.app_id)
      .where('hint', '=', secret.slice(0, 3))
      .execute();
    const now = nowIso();
    for (const c of added) if (c.end_at > now && (await verifySecret(secret, c.secret_hash))) return toApp(r);
    return undefined;
  }

  /** Sets a user's password (by object id). @returns false when there is no such user. */
  async setPassword(userId: string, password: string): Promise<boolean> {
    const r = await this.db.updateTable('directory_users').set({ password_hash: await hashSecret(password) }).where('id', '=', userId.toLowerCase()).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Sets (or, with `undefined`, removes) an application's client secret. @returns false when there is no such app. */
  async setClientSecret(appId: string, secret: string | undefined): Promise<boolean> {
    const r = await this.db.updateTable('directory_apps').set({ secret_hash: secret ? await hashSecret(secret) : null }).where('app_id', '=', appId.toLowerCase()).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The certificate key credentials of an application valid at the current time: DER (base64) and base64url SHA-1 / SHA-256 thumbprints. */
  async keyCredentials(appId: string): Promise<{ keyId: string; der: string; thumbprint: string; thumbprint256: string }[]> {
    const now = nowIso();
    const rows = await this.db.selectFrom('app_key_credentials').select(['key_id', 'key_der', 'thumbprint', 'thumbprint256', 'start_at', 'end_at']).where('app_id', '=', appId.toLowerCase()).execute();
    return rows.filter((r) => r.start_at <= now && r.end_at > now).map((r) => ({ keyId: r.key_id, der: r.key_der, thumbprint: r.thumbprint, thumbprint256: r.thumbprint256 }));
  }

  /** Application roles granted to `appId` on `audience` (family name). */
  async appRoles(appId: string, audience: string): Promise<string[]> {
    const rows = await this.db.selectFrom('app_role_grants').select('role').where('app_id', '=', appId).where('audience', '=', audience).orderBy('role').execute();
    return rows.map((r) => r.role as string);
  }

  /** Adds a tenant. */
  async addTenant(t: Tenant): Promise<void> {
    await this.db.insertInto('tenants').values({ id: t.id.toLowerCase(), domain: t.domain.toLowerCase(), display_name: t.displayName }).execute();
  }

  /** Adds a user with a password (`passwordHash`: its {@link hashSecret} value when already known). */
  async addUser(u: DirectoryUser, password: string, passwordHash?: string): Promise<void> {
    await this.db
      .insertInto('directory_users')
      .values({
        id: u.id.toLowerCase(),
        tenant_id: u.tenantId,
        upn_lower: u.userPrincipalName.toLowerCase(),
        upn: u.userPrincipalName,
        display_name: u.displayName,
        mail: u.mail,
        password_hash: passwordHash ?? (await hashSecret(password)),
        is_tenant_admin: u.isTenantAdmin ? 1 : 0,
        created_at: nowIso(),
      })
      .execute();
  }

  /** Adds an application (secret optional for public clients; `secretHash`: its {@link hashSecret} value when already known) and its role grants. */
  async addApp(a: Omit<DirectoryApp, 'hasSecret'>, secret: string | undefined, grants: { audience: string; role: string }[] = [], secretHash?: string): Promise<void> {
    await this.db
      .insertInto('directory_apps')
      .values({
        app_id: a.appId.toLowerCase(),
        object_id: a.objectId.toLowerCase(),
        tenant_id: a.tenantId,
        display_name: a.displayName,
        kind: a.kind,
        secret_hash: secret ? (secretHash ?? (await hashSecret(secret))) : null,
        redirect_uris: JSON.stringify(a.redirectUris),
        application_id: a.kind === 'ManagedIdentity' ? null : (a.applicationId ?? seededApplicationId(a.appId)),
        created_at: nowIso(),
      })
      .execute();
    for (const g of grants) {
      await this.db.insertInto('app_role_grants').values({ app_id: a.appId.toLowerCase(), audience: g.audience, role: g.role }).execute();
    }
  }

  /** Reads a meta value. */
  async getMeta(key: string): Promise<string | undefined> {
    const r = await this.db.selectFrom('stratus_meta').select('value').where('key', '=', key).executeTakeFirst();
    return r?.value as string | undefined;
  }

  /** Writes a meta value. */
  async setMeta(key: string, value: string): Promise<void> {
    await this.db
      .insertInto('stratus_meta')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
      .execute();
  }
}

