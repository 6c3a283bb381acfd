/**
 * Guessing limits of the identity provider (issue 30 rows 8 and 9):
 *
 * - **Smart lockout.** Failed passwords are counted per account (the user name as typed,
 *   lower-cased, so unknown accounts are counted too) and failed client secrets per client, in
 *   `sign_in_lockouts` (shared by instances). {@link Settings.signInLockoutThreshold} failures
 *   within {@link Settings.signInLockoutSeconds} lock the account or client for that long (the
 *   real service's defaults: 10 failures, 60 s). A locked subject is refused before its secret
 *   is checked — one indexed read, no scrypt — with `AADSTS50053` and `Retry-After`. Times are
 *   Stratus clock seconds, so `POST /_stratus/clock` ends a lock.
 * - **Device-code starts.** Unauthenticated `…/devicecode` calls are counted per client and per
 *   caller address with the shared rate limiter; past the budget they answer 429 with `Retry-After`.
 */
import { sql, type Kysely } from 'kysely';
import type { Settings } from '../../config.ts';
import { nowSeconds } from '../clock.ts';
import { errors } from '../errors/index.ts';
import type { RateLimiter } from '../rate-limit.ts';
import type { IdentityDatabase } from '../tables.ts';
import { asOauth } from './delegation.ts';

/** The settings the limits read (a subset of {@link Settings}). */
export type ThrottleSettings = Pick<Settings, 'signInLockoutThreshold' | 'signInLockoutSeconds' | 'deviceCodeStartsPerClient' | 'deviceCodeStartsPerAddress' | 'deviceCodeStartWindowSeconds'>;

/** Lockout subject of an account (the user name as sent, lower-cased). */
export function accountSubject(userName: string): string {
  return `user:${userName.trim().toLowerCase().slice(0, 300)}`;
}

/** Lockout subject of a client (its client id, lower-cased). */
export function clientSubject(clientId: string): string {
  return `client:${clientId.trim().toLowerCase().slice(0, 300)}`;
}

/** The guessing limits of one app (see the file comment). */
export class SignInThrottle {
  constructor(
    private readonly db: Kysely<IdentityDatabase>,
    private readonly limiter: RateLimiter | undefined,
    private readonly settings: ThrottleSettings,
  ) {}

  /**
   * Refuses a locked subject before any secret is checked.
   * @throws ApiError 400 `invalid_grant` AADSTS50053 (accounts) or 401 `invalid_client` (clients), with `Retry-After`
   */
  async assertOpen(subject: string): Promise<void> {
    if (this.settings.signInLockoutThreshold <= 0) return;
    const row = await this.db.selectFrom('sign_in_lockouts').select('locked_until').where('subject', '=', subject).executeTakeFirst();
    const until = row ? Number(row.locked_until) : 0;
    const now = nowSeconds();
    if (until <= now) return;
    const seconds = Math.max(1, until - now);
    const options = { ...asOauth, headers: { 'Retry-After': String(seconds) } };
    throw subject.startsWith('client:') ? errors.oauth.clientLocked({ seconds: String(seconds) }, options) : errors.oauth.accountLocked({}, options);
  }

  /** Counts one failed attempt of `subject`; the threshold-th failure within the window locks it. */
  async failed(subject: string): Promise<void> {
    const { signInLockoutThreshold: threshold, signInLockoutSeconds: window } = this.settings;
    if (threshold <= 0) return;
    const now = nowSeconds();
    // One atomic upsert on both dialects: a new window starts when the last one has ended.
    await this.db
      .insertInto('sign_in_lockouts')
      .values({ subject, failures: 1, window_ends: now + window, locked_until: 0 })
      .onConflict((oc) =>
        oc.column('subject').doUpdateSet({
          failures: sql`CASE WHEN sign_in_lockouts.window_ends <= ${now} THEN 1 ELSE sign_in_lockouts.failures + 1 END`,
          window_ends: sql`CASE WHEN sign_in_lockouts.window_ends <= ${now} THEN ${now + window} ELSE sign_in_lockouts.window_ends END`,
        }),
      )
      .execute();
    await this.db.updateTable('sign_in_lockouts').set({ locked_until: now + window, failures: 0, window_ends: now }).where('subject', '=', subject).where('failures', '>=', threshold).execute();
  }

  /**
   * Counts one unauthenticated device-code start of client `appId` from `address`.
   * @throws ApiError 429 `temporarily_unavailable` with `Retry-After` past either budget
   */
  async deviceStart(appId: string, address: string): Promise<void> {
    if (!this.limiter) return;
    const s = this.settings;
    for (const [bucket, limit] of [
      [`devicecode:client:${appId.toLowerCase()}`, s.deviceCodeStartsPerClient],
      [`devicecode:address:${address}`, s.deviceCodeStartsPerAddress],
    ] as const) {
      if (limit <= 0) continue;
      const d = await this.limiter.hit(bucket, limit, s.deviceCodeStartWindowSeconds);
      if (!d.allowed) throw errors.oauth.deviceCodeStartsExceeded({ seconds: String(d.retryAfterSeconds) }, { ...asOauth, headers: { 'Retry-After': String(d.retryAfterSeconds) } });
    }
  }
}
