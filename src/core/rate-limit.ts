/**
 * Per-caller request budgets in fixed windows, kept in the store so that several
 * instances share them (design: "rate-limit.ts"). A window survives a restart and ends
 * only by its own expiry.
 */
import { sql, type Kysely } from 'kysely';
import type { Migrations } from '../store/db.ts';
import { nowMs } from './clock.ts';

/** Outcome of one {@link RateLimiter.hit}. */
export interface RateDecision {
  /** False when the budget was already spent (the caller gets 429). */
  allowed: boolean;
  /** Requests left in the window after this one (never below 0). */
  remaining: number;
  /** Whole seconds until the window ends (≥ 1). */
  retryAfterSeconds: number;
  /** The window's budget. */
  limit: number;
}

/** Migrations of the rate-limit table. */
export const rateLimitMigrations: Migrations = {
  core_0002_rate_limits: {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('rate_limits')
        .addColumn('bucket', 'varchar(512)', (c) => c.primaryKey())
        .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .execute();
    },
  },
};

/** Fixed-window counters in the `rate_limits` table. */
export class RateLimiter {
  constructor(private readonly db: Kysely<any>) {}

  /**
   * Counts one request against `bucket` (e.g. `analytics:<tenant>:<oid>`) with `limit`
   * requests per `windowSeconds`, in one atomic upsert.
   */
  async hit(bucket: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const now = nowMs();
    const windowMs = windowSeconds * 1000;
    // One atomic upsert on both dialects: a new window starts when the old one has expired.
    const r = await sql<{ window_start_ms: string | number; count: string | number }>`
      INSERT INTO rate_limits (bucket, window_start_ms, count) VALUES (${bucket}, ${now}, 1)
      ON CONFLICT (bucket) DO UPDATE SET
        count = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${windowMs} THEN 1 ELSE rate_limits.count + 1 END,
        window_start_ms = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${windowMs} THEN excluded.window_start_ms ELSE rate_limits.window_start_ms END
      RETURNING window_start_ms, count`.execute(this.db);
    const row = r.rows[0]!;
    const start = Number(row.window_start_ms);
    const count = Number(row.count);
    return {
      allowed: count <= limit,
      remaining: Math.max(0, limit - count),
      retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)),
      limit,
    };
  }

  /**
   * Reads `bucket`'s budget without counting a request (e.g. for the remainder header of a
   * response the gateway rejected). Same `limit` / `windowSeconds` as {@link hit}; a bucket
   * never hit, or whose window has expired, reports the full budget. `allowed` is false when
   * the next {@link hit} in this window would be refused; `retryAfterSeconds` is the time to
   * the window's end (the whole window when there is none).
   */
  async peek(bucket: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const now = nowMs();
    const windowMs = windowSeconds * 1000;
    const r = await this.db.selectFrom('rate_limits').select(['window_start_ms', 'count']).where('bucket', '=', bucket).executeTakeFirst();
    const start = r ? Number(r.window_start_ms) : now;
    const count = r && now - start < windowMs ? Number(r.count) : 0;
    return {
      allowed: count < limit,
      remaining: Math.max(0, limit - count),
      retryAfterSeconds: count === 0 ? Math.max(1, windowSeconds) : Math.max(1, Math.ceil((start + windowMs - now) / 1000)),
      limit,
    };
  }

  /** Forgets every window (control-plane reset). */
  async clear(): Promise<void> {
    await this.db.deleteFrom('rate_limits').execute();
  }
}
