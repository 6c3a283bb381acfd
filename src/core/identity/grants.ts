/**
 * The OpenID Connect provider's pending and long-lived grants (issue 10 item 1): refresh tokens
 * (rotated on every use, revoked on a password or client-secret change), authorization codes
 * (single use, PKCE) and device codes (RFC 8628). Only SHA-256 hashes of the secrets are stored;
 * the codes and tokens themselves are random (32 bytes, base64url) and are never written down.
 * Times are Stratus clock seconds ({@link nowSeconds}), so `/_stratus/clock` expires them.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import { nowSeconds } from '../clock.ts';
import { newUuid, randomToken } from '../ids.ts';
import type { IdentityDatabase } from '../tables.ts';

/** Refresh-token lifetime, seconds (90 days, the real provider's inactivity window). */
export const refreshTokenLifetimeSeconds = 90 * 86400;
/** Authorization-code lifetime, seconds (10 minutes). */
export const authCodeLifetimeSeconds = 600;
/** Device-code lifetime, seconds (15 minutes). */
export const deviceCodeLifetimeSeconds = 900;
/** Minimum seconds between two polls of one device code; faster polls get `slow_down`. */
export const deviceCodeIntervalSeconds = 5;

/** Expired codes are purged this long after expiry (until then a late poll still answers `expired_token`). */
const purgeAfterSeconds = 3600;

/** Migrations of the grant tables (both dialects). */
export const grantMigrations: Migrations = {
  core_0002_oidc_grants: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('refresh_tokens')
        .addColumn('token_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('refresh_tokens_user').on('refresh_tokens').column('user_id').execute();
      await db.schema.createIndex('refresh_tokens_app').on('refresh_tokens').column('app_id').execute();
      await db.schema
        .createTable('auth_codes')
        .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('user_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('resource', 'text')
        .addColumn('nonce', 'text')
        .addColumn('code_challenge', 'varchar(128)')
        .addColumn('challenge_method', 'varchar(8)')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('device_codes')
        .addColumn('code_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('user_code', 'varchar(16)', (c) => c.notNull().unique())
        .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('tenant_id', 'varchar(64)')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('resource', 'text')
        .addColumn('status', 'varchar(16)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(64)')
        .addColumn('last_poll_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  // Issue 30 rows 10 and 11: codes bound to the tenant they were issued for; a redeemed code
  // is kept (marked) until it is purged so that its replay revokes the refresh tokens issued from
  // it; a rotated refresh token is kept (marked used) so that its replay revokes its family.
  core_0020_grant_binding: {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('auth_codes').addColumn('tenant_path', 'varchar(64)').execute();
      await db.schema.alterTable('auth_codes').addColumn('redeemed_at', 'bigint').execute();
      await db.schema.alterTable('auth_codes').addColumn('family_id', 'varchar(64)').execute();
      await db.schema.alterTable('refresh_tokens').addColumn('family_id', 'varchar(64)').execute();
      await db.schema.alterTable('refresh_tokens').addColumn('used_at', 'bigint').execute();
      await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').column('family_id').execute();
    },
  },
  // Issue 30 row 8: failed client-secret and password attempts per account and per client (smart lockout).
  core_0021_sign_in_lockouts: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sign_in_lockouts')
        .addColumn('subject', 'varchar(320)', (c) => c.primaryKey())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('window_ends', 'bigint', (c) => c.notNull())
        .addColumn('locked_until', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

/** Grant tables cleared by a reset. */
export const grantTables: (keyof IdentityDatabase)[] = ['refresh_tokens', 'auth_codes', 'device_codes', 'sign_in_lockouts'];

/** SHA-256 (hex) of a high-entropy secret; the form codes and tokens are stored and looked up in. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A stored refresh token's grant: whose, for which client, the scope string it was asked with. */
export interface RefreshGrant {
  userId: string;
  appId: string;
  scope: string;
  /** The refresh-token family: every token rotated from one sign-in shares it (reuse detection revokes the family). */
  familyId?: string;
}

/** A redeemed authorization code's request. */
export interface CodeGrant {
  userId: string;
  appId: string;
  redirectUri: string;
  scope: string;
  resource?: string;
  nonce?: string;
  codeChallenge?: string;
  challengeMethod?: string;
  /**
   * The tenant the code was issued for: the tenant of the path it was issued at, or the user's
   * for `common`/`organizations` (issue 30 row 10); undefined for codes issued before it was kept.
   */
  tenantPath?: string;
  /** The refresh-token family the tokens issued from this code belong to. */
  familyId: string;
  expired: boolean;
}

/** A device-code request as stored. */
export interface DeviceGrant {
  codeHash: string;
  userCode: string;
  appId: string;
  /** Tenant the user must belong to; undefined for `common`/`organizations`. */
  tenantId?: string;
  scope: string;
  resource?: string;
  status: 'pending' | 'approved' | 'denied';
  userId?: string;
  lastPollAt: number;
  expiresAt: number;
}

/** Outcome of polling a device code: the RFC 8628 §3.5 states, or the approved grant. */
export type DevicePoll = { state: 'unknown' | 'pending' | 'too_soon' | 'expired' | 'denied' } | { state: 'approved'; grant: DeviceGrant };

const userCodeAlphabet = 'BCDFGHJKLMNPQRSTVWXZ23456789';

function toDevice(r: any): DeviceGrant {
  return {
    codeHash: r.code_hash,
    userCode: r.user_code,
    appId: r.app_id,
    tenantId: r.tenant_id ?? undefined,
    scope: r.scope,
    resource: r.resource ?? undefined,
    status: r.status,
    userId: r.user_id ?? undefined,
    lastPollAt: Number(r.last_poll_at),
    expiresAt: Number(r.expires_at),
  };
}

/** Queries over the grant tables. */
export class Grants {
  constructor(private readonly db: Kysely<IdentityDatabase>) {}

  /** Stores a new refresh token for (user, client, scope string) in family `g.familyId` (a new family when none) and returns it. */
  async issueRefreshToken(g: RefreshGrant): Promise<string> {
    const token = randomToken(48);
    await this.db.deleteFrom('refresh_tokens').where('user_id', '=', g.userId).where('expires_at', '<=', nowSeconds()).execute(); // the user's expired ones
    await this.db
      .insertInto('refresh_tokens')
      .values({ token_hash: secretHash(token), user_id: g.userId, app_id: g.appId, scope: g.scope, expires_at: nowSeconds() + refreshTokenLifetimeSeconds, family_id: g.familyId ?? newUuid(), used_at: null })
      .execute();
    return token;
  }

  /**
   * Redeems a refresh token: marks it used (each token is good for one use — rotation) and
   * returns its grant; `undefined` when unknown, revoked or expired. A token used before is a
   * replay (RFC 6819 §5.2.2.3, OAuth 2.0 Security BCP §4.14.2): every token of its family is
   * revoked and `undefined` returned. A used token stays until it expires, to recognise a replay.
   */
  async redeemRefreshToken(token: string): Promise<RefreshGrant | undefined> {
    const hash = secretHash(token);
    const row = await this.db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', hash).executeTakeFirst();
    if (!row || Number(row.expires_at) <= nowSeconds()) return undefined;
    if (row.used_at !== null && row.used_at !== undefined) {
      await this.revokeFamily(row.family_id);
      return undefined;
    }
    const used = await this.db.updateTable('refresh_tokens').set({ used_at: nowSeconds() }).where('token_hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) {
      // A concurrent use took it first: a replay all the same.
      await this.revokeFamily(row.family_id);
      return undefined;
    }
    return { userId: row.user_id, appId: row.app_id, scope: row.scope, familyId: row.family_id ?? undefined };
  }

  /** Revokes every refresh token of a family (no-op for tokens issued before families were kept). */
  async revokeFamily(familyId: string | null | undefined): Promise<number> {
    if (!familyId) return 0;
    const r = await this.db.deleteFrom('refresh_tokens').where('family_id', '=', familyId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Revokes every refresh token of a user (password change). */
  async revokeUser(userId: string): Promise<number> {
    const r = await this.db.deleteFrom('refresh_tokens').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Revokes every refresh token issued to a client (client-secret change). */
  async revokeApp(appId: string): Promise<number> {
    const r = await this.db.deleteFrom('refresh_tokens').where('app_id', '=', appId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Stores an authorization code for a signed-in user and returns it. */
  async issueCode(g: Omit<CodeGrant, 'expired' | 'familyId'>): Promise<string> {
    const code = randomToken(32);
    await this.db.deleteFrom('auth_codes').where('expires_at', '<=', nowSeconds() - purgeAfterSeconds).execute(); // expired codes, redeemed or not
    await this.db
      .insertInto('auth_codes')
      .values({
        code_hash: secretHash(code),
        user_id: g.userId,
        app_id: g.appId,
        redirect_uri: g.redirectUri,
        scope: g.scope,
        resource: g.resource ?? null,
        nonce: g.nonce ?? null,
        code_challenge: g.codeChallenge ?? null,
        challenge_method: g.challengeMethod ?? null,
        expires_at: nowSeconds() + authCodeLifetimeSeconds,
        tenant_path: g.tenantPath ?? null,
        redeemed_at: null,
        family_id: null,
      })
      .execute();
    return code;
  }

  /**
   * Redeems an authorization code (single use: marked redeemed and kept until purged, so that a
   * replay is recognised); `undefined` when unknown, `'replayed'` when redeemed before — then
   * the refresh tokens issued from it are revoked (RFC 6749 §4.1.2).
   */
  async redeemCode(code: string): Promise<CodeGrant | 'replayed' | undefined> {
    const hash = secretHash(code);
    const r = await this.db.selectFrom('auth_codes').selectAll().where('code_hash', '=', hash).executeTakeFirst();
    if (!r) return undefined;
    if (r.redeemed_at !== null && r.redeemed_at !== undefined) {
      await this.revokeFamily(r.family_id);
      return 'replayed';
    }
    const familyId = newUuid();
    const taken = await this.db.updateTable('auth_codes').set({ redeemed_at: nowSeconds(), family_id: familyId }).where('code_hash', '=', hash).where('redeemed_at', 'is', null).executeTakeFirst();
    if (Number(taken.numUpdatedRows) !== 1) return 'replayed';
    return {
      userId: r.user_id,
      appId: r.app_id,
      redirectUri: r.redirect_uri,
      scope: r.scope,
      resource: r.resource ?? undefined,
      nonce: r.nonce ?? undefined,
      codeChallenge: r.code_challenge ?? undefined,
      challengeMethod: r.challenge_method ?? undefined,
      tenantPath: r.tenant_path ?? undefined,
      familyId,
      expired: Number(r.expires_at) <= nowSeconds(),
    };
  }

  /** Starts a device-code request; returns the device code (secret) and the user code (`ABCD-EFGH`-free 9 characters). */
  async startDevice(g: { appId: string; tenantId?: string; scope: string; resource?: string }): Promise<{ deviceCode: string; userCode: string }> {
    const deviceCode = randomToken(48);
    await this.db.deleteFrom('device_codes').where('expires_at', '<=', nowSeconds() - purgeAfterSeconds).execute(); // abandoned codes (a poller still gets expired_token for an hour)
    for (;;) {
      const userCode = Array.from({ length: 9 }, () => userCodeAlphabet[randomInt(userCodeAlphabet.length)]).join('');
      const clash = await this.db.selectFrom('device_codes').select('code_hash').where('user_code', '=', userCode).executeTakeFirst();
      if (clash) continue;
      await this.db
        .insertInto('device_codes')
        .values({
          code_hash: secretHash(deviceCode),
          user_code: userCode,
          app_id: g.appId,
          tenant_id: g.tenantId ?? null,
          scope: g.scope,
          resource: g.resource ?? null,
          status: 'pending',
          user_id: null,
          last_poll_at: 0,
          expires_at: nowSeconds() + deviceCodeLifetimeSeconds,
        })
        .execute();
      return { deviceCode, userCode };
    }
  }

  /** The pending, unexpired device request of a user code (case and dashes ignored), or undefined. */
  async findUserCode(userCode: string): Promise<DeviceGrant | undefined> {
    const code = userCode.replace(/[\s-]/g, '').toUpperCase();
    if (!code || code.length > 16) return undefined;
    const r = await this.db.selectFrom('device_codes').selectAll().where('user_code', '=', code).executeTakeFirst();
    if (!r) return undefined;
    const g = toDevice(r);
    return g.status === 'pending' && g.expiresAt > nowSeconds() ? g : undefined;
  }

  /** Records the user's answer on the device page: approved by `userId`, or denied. */
  async answerDevice(codeHash: string, answer: { userId: string } | 'denied'): Promise<void> {
    await this.db
      .updateTable('device_codes')
      .set(answer === 'denied' ? { status: 'denied' } : { status: 'approved', user_id: answer.userId })
      .where('code_hash', '=', codeHash)
      .where('status', '=', 'pending')
      .execute();
  }

  /**
   * Polls a device code of client `appId` at the path of tenant `pathTenantId` (RFC 8628 §3.4/§3.5): `unknown` (also another client's code, or another tenant's), `pending` (and records the poll), `too_soon` (answered `slow_down`) when
   * polled sooner than the interval, `expired`, `denied` (both final: the row is deleted), or
   * `approved` with the grant (single use: deleted).
   */
  async pollDevice(deviceCode: string, appId: string, pathTenantId?: string): Promise<DevicePoll> {
    const hash = secretHash(deviceCode);
    const r = await this.db.selectFrom('device_codes').selectAll().where('code_hash', '=', hash).executeTakeFirst();
    // Bound to the client and to the tenant it was started at (issue 30 row 10): polled at another
    // tenant's path (`pathTenantId`; undefined for `common`/`organizations`) it is unknown there.
    if (!r || r.app_id !== appId || (r.tenant_id && pathTenantId !== undefined && r.tenant_id !== pathTenantId)) return { state: 'unknown' };
    const g = toDevice(r);
    const now = nowSeconds();
    if (g.expiresAt <= now) {
      await this.db.deleteFrom('device_codes').where('code_hash', '=', hash).execute();
      return { state: 'expired' };
    }
    if (g.status === 'denied') {
      await this.db.deleteFrom('device_codes').where('code_hash', '=', hash).execute();
      return { state: 'denied' };
    }
    if (g.status === 'approved') {
      const del = await this.db.deleteFrom('device_codes').where('code_hash', '=', hash).executeTakeFirst();
      return Number(del.numDeletedRows) === 1 ? { state: 'approved', grant: g } : { state: 'unknown' };
    }
    // One second of tolerance: clients wait `interval` seconds between polls measured on their own clock.
    const tooSoon = g.lastPollAt > 0 && now - g.lastPollAt < deviceCodeIntervalSeconds - 1;
    await this.db.updateTable('device_codes').set({ last_poll_at: now }).where('code_hash', '=', hash).execute();
    return { state: tooSoon ? 'too_soon' : 'pending' };
  }
}
