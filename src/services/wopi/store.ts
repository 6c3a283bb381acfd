/**
 * Storage of the document host (spec analytics §2.4, §4.4; reference §6): each user's root
 * container, and the host's WOPI access tokens. A WOPI access token is an opaque random
 * string handed out inside `EcosystemUrl`, `ContainerPointer.Url` and `AccessTokenInfo`;
 * the store keeps only its SHA-256, with the user, the resource it opens (the ecosystem or
 * one container) and its expiry, so that every instance accepts it and a restart keeps it.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { randomToken, stableUuid } from '../../core/ids.ts';
import type { Database } from '../../store/database.ts';
import type { WopiDatabase } from './tables.ts';

/** Lifetime of a WOPI access token, seconds (10 hours, the customary WOPI token lifetime). */
export const wopiTokenLifetimeSeconds = 36_000;

/** Name given to every user's root container. */
export const rootContainerName = 'My Files';

/** Migrations of the document host's tables. */
export const wopiMigrations: Migrations = {
  wopi_0001_containers_tokens: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('wopi_root_containers')
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('container_id', 'varchar(36)', (c) => c.notNull().unique())
        .addColumn('name', 'varchar(256)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addPrimaryKeyConstraint('wopi_root_containers_pk', ['tenant_id', 'user_id'])
        .execute();
      await db.schema
        .createTable('wopi_access_tokens')
        .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('resource_kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('resource_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('wopi_access_tokens_expiry').on('wopi_access_tokens').column('expires_at_ms').execute();
    },
  },
};

/** The document host's tables, children first. */
export const wopiTables: (keyof WopiDatabase)[] = ['wopi_access_tokens', 'wopi_root_containers'];

/** A user's root container. */
export interface RootContainer {
  tenantId: string;
  userId: string;
  /** Container id (the `{container_id}` of `/wopi/containers/{container_id}`). */
  id: string;
  name: string;
}

/** What a WOPI access token opens: the ecosystem of a user, or one container. */
export type WopiResource = { kind: 'ecosystem' } | { kind: 'container'; id: string };

/** A verified WOPI access token. */
export interface WopiGrant {
  tenantId: string;
  userId: string;
  resource: WopiResource;
  /** Expiry, milliseconds since the epoch. */
  expiresAtMs: number;
}

function hash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The stable id of a user's root container: a UUID derived from tenant and user (lower-case), so a re-seed or a second instance derives the same one. */
export function rootContainerId(tenantId: string, userId: string): string {
  return stableUuid('stratus-wopi-root-container', tenantId.toLowerCase(), userId.toLowerCase());
}

/**
 * The user's root container (spec §2.4 `RootContainerInfo`), created on first use with the
 * name {@link rootContainerName} (idempotent, safe under concurrent calls: the insert ignores a conflict).
 */
export async function ensureRootContainer(db: Kysely<Database>, tenantId: string, userId: string): Promise<RootContainer> {
  const found = await findRootContainerOf(db, tenantId, userId);
  if (found) return found;
  await db
    .insertInto('wopi_root_containers')
    .values({ tenant_id: tenantId, user_id: userId, container_id: rootContainerId(tenantId, userId), name: rootContainerName, created_at: nowIso() })
    .onConflict((oc) => oc.doNothing())
    .execute();
  return (await findRootContainerOf(db, tenantId, userId))!;
}

/** The user's root container, if it exists (through the `(tenant_id, user_id)` primary key). */
export async function findRootContainerOf(db: Kysely<Database>, tenantId: string, userId: string): Promise<RootContainer | undefined> {
  const r = await db.selectFrom('wopi_root_containers').selectAll().where('tenant_id', '=', tenantId).where('user_id', '=', userId).executeTakeFirst();
  return r ? { tenantId: r.tenant_id, userId: r.user_id, id: r.container_id, name: r.name } : undefined;
}

/** Container ids are lower-case UUIDs ({@link rootContainerId}); anything else names no container. */
const containerIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A container by id (any case), scoped to its tenant; undefined when unknown or when `id` is
 * not a UUID (checked before the query, so no stray byte such as NUL reaches the database).
 */
export async function findContainer(db: Kysely<Database>, tenantId: string, id: string): Promise<RootContainer | undefined> {
  if (!containerIdPattern.test(id)) return undefined;
  const r = await db.selectFrom('wopi_root_containers').selectAll().where('container_id', '=', id.toLowerCase()).where('tenant_id', '=', tenantId).executeTakeFirst();
  return r ? { tenantId: r.tenant_id, userId: r.user_id, id: r.container_id, name: r.name } : undefined;
}

/**
 * Issues a WOPI access token for `resource`, valid {@link wopiTokenLifetimeSeconds}; drops
 * expired tokens on the way (through the expiry index).
 * @returns the raw token (never stored) and its expiry in milliseconds since the epoch
 */
export async function issueWopiToken(db: Kysely<Database>, tenantId: string, userId: string, resource: WopiResource): Promise<{ token: string; expiresAtMs: number }> {
  const now = nowMs();
  const token = randomToken(32);
  const expiresAtMs = now + wopiTokenLifetimeSeconds * 1000;
  await db.deleteFrom('wopi_access_tokens').where('expires_at_ms', '<', now).execute();
  await db
    .insertInto('wopi_access_tokens')
    .values({
      token_hash: hash(token),
      tenant_id: tenantId,
      user_id: userId,
      resource_kind: resource.kind,
      resource_id: resource.kind === 'container' ? resource.id : '',
      expires_at_ms: expiresAtMs,
      created_at: nowIso(),
    })
    .execute();
  return { token, expiresAtMs };
}

/**
 * The grant of a raw WOPI access token (reference §6.5: the `access_token` of every `/wopi/*`
 * call), looked up by its SHA-256; undefined when empty, longer than 512 characters, unknown or expired.
 */
export async function verifyWopiToken(db: Kysely<Database>, token: string): Promise<WopiGrant | undefined> {
  if (!token || token.length > 512) return undefined;
  const r = await db.selectFrom('wopi_access_tokens').selectAll().where('token_hash', '=', hash(token)).executeTakeFirst();
  if (!r) return undefined;
  const expiresAtMs = Number(r.expires_at_ms);
  if (expiresAtMs <= nowMs()) return undefined;
  return {
    tenantId: r.tenant_id,
    userId: r.user_id,
    resource: r.resource_kind === 'container' ? { kind: 'container', id: r.resource_id } : { kind: 'ecosystem' },
    expiresAtMs,
  };
}
