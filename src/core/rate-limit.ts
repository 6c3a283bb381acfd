/**
 * Per-caller request budgets in fixed windows (design: "rate-limit.ts"), counted without a
 * durable commit per request (issue 9, item 1):
 *
 * - **SQLite** (one process owns the file): counted in memory. Changed windows are written
 *   behind to `rate_limits` at most once per {@link flushIntervalMs} (one transaction for
 *   all of them, off the request path) and at shutdown, and read back at start, so a window
 *   survives a restart. A `kill -9` can forget the counts of the last second at most.
 * - **PostgreSQL** (several instances share one database): atomic upserts on `rate_limits`,
 *   which is an UNLOGGED table. A transaction that writes only unlogged tables writes no WAL,
 *   so its commit does not wait for a WAL flush (no fsync, no replication wait): one round
 *   trip of ~0.1 ms. The hits of one bucket in one event-loop turn are counted by one upsert
 *   (`count + n`, a {@link TickBatch}; each request then gets its own place in the
 *   returned count): 50 concurrent requests of one caller no longer queue on the row's lock
 *   one by one. Every instance counts on the same row, so the limits hold across instances
 *   exactly (tolerance 0). An unlogged table is emptied by crash recovery of the database
 *   server: budgets restart after a PostgreSQL crash.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres, type Migrations } from '../store/db.ts';
import { nowMs } from './clock.ts';
import type { RateLimitDatabase } from './tables.ts';
import { TickBatch } from './tick-batch.ts';

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
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('rate_limits')
        .addColumn('bucket', 'varchar(512)', (c) => c.primaryKey())
        .addColumn('window_start_ms', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .execute();
    },
  },
  core_0003_rate_limits_unlogged: {
    async up(db: Kysely<unknown>) {
      // Counters are not worth a WAL record and a commit flush per request (see the module note).
      if (isPostgres(db)) await sql`alter table rate_limits set unlogged`.execute(db);
    },
  },
};

/** How often (ms) the SQLite counters changed in memory are written behind to the table. */
export const flushIntervalMs = 1000;

interface Window {
  start: number;
  count: number;
  /** Window length of the last hit, to drop expired windows from memory. */
  windowMs: number;
}

function decision(start: number, count: number, limit: number, windowMs: number, now: number): RateDecision {
  return {
    allowed: count <= limit,
    remaining: Math.max(0, limit - count),
    retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - now) / 1000)),
    limit,
  };
}

/** A bucket's window after one turn's upsert (PostgreSQL): its start, its count with the turn's hits, and the time used. */
interface TurnCount {
  start: number;
  count: number;
  now: number;
}

/** Fixed-window counters: in memory on SQLite, in the shared unlogged `rate_limits` table on PostgreSQL. */
export class RateLimiter {
  private readonly shared: boolean;
  /** SQLite: the windows, loaded from the table on first use. */
  private windows?: Map<string, Window>;
  private loading?: Promise<Map<string, Window>>;
  private readonly dirty = new Set<string>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /** PostgreSQL: the hits of one event-loop turn, by window length and bucket (`windowMs NUL bucket`). */
  private readonly turns = new TickBatch<string, TurnCount>((keys) => this.countTurn(keys));

  constructor(private readonly db: Kysely<RateLimitDatabase>) {
    this.shared = isPostgres(db);
  }

  private async memory(): Promise<Map<string, Window>> {
    if (this.windows) return this.windows;
    this.loading ??= (async () => {
      const rows = await this.db.selectFrom('rate_limits').select(['bucket', 'window_start_ms', 'count']).execute();
      // The window length is not stored; a loaded window keeps counting until its next hit says how long it is.
      const m = new Map<string, Window>(rows.map((r: any) => [String(r.bucket), { start: Number(r.window_start_ms), count: Number(r.count), windowMs: Number.POSITIVE_INFINITY }]));
      this.windows = m;
      return m;
    })();
    return this.loading;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, flushIntervalMs);
    this.timer.unref();
  }

  /** Writes the windows changed since the last flush (SQLite), in one transaction; drops expired ones. */
  async flush(): Promise<void> {
    const run = async () => {
      if (!this.windows || this.dirty.size === 0) return;
      const now = nowMs();
      const rows: { bucket: string; window_start_ms: number; count: number }[] = [];
      const expired: string[] = [];
      for (const b of this.dirty) {
        const w = this.windows.get(b);
        if (!w || now - w.start >= w.windowMs) expired.push(b);
        else rows.push({ bucket: b, window_start_ms: w.start, count: w.count });
      }
      this.dirty.clear();
      for (const b of expired) this.windows.delete(b);
      await this.db.transaction().execute(async (trx) => {
        for (const r of rows) {
          await trx
            .insertInto('rate_limits')
            .values(r)
            .onConflict((oc) => oc.column('bucket').doUpdateSet({ window_start_ms: r.window_start_ms, count: r.count }))
            .execute();
        }
        for (let i = 0; i < expired.length; i += 500) await trx.deleteFrom('rate_limits').where('bucket', 'in', expired.slice(i, i + 500)).execute();
      });
    };
    this.flushing = this.flushing.then(run, run);
    return this.flushing;
  }

  /**
   * Counts one request against `bucket` (e.g. `analytics:<tenant>:<oid>`) with `limit`
   * requests per `windowSeconds`. A new window starts when the old one has expired.
   */
  hit(bucket: string, limit: number, windowSeconds: number): RateDecision | Promise<RateDecision> {
    if (!this.shared) {
      // In memory once loaded: answered at once (no promise on the request path).
      if (this.windows) return this.hitMemory(this.windows, bucket, limit, windowSeconds);
      return this.memory().then((m) => this.hitMemory(m, bucket, limit, windowSeconds));
    }
    return this.hitShared(bucket, limit, windowSeconds);
  }

  /** SQLite: counts in the loaded windows; written behind by {@link flush}. */
  private hitMemory(m: Map<string, Window>, bucket: string, limit: number, windowSeconds: number): RateDecision {
    const now = nowMs();
    const windowMs = windowSeconds * 1000;
    let w = m.get(bucket);
    if (!w || now - w.start >= windowMs) {
      w = { start: now, count: 1, windowMs };
      m.set(bucket, w);
    } else {
      w.count++;
      w.windowMs = windowMs;
    }
    this.dirty.add(bucket);
    this.schedule();
    return decision(w.start, w.count, limit, windowMs, now);
  }

  /** PostgreSQL: joins this turn's upsert of the bucket (see the module note); this request's count is its place among the turn's hits. */
  private async hitShared(bucket: string, limit: number, windowSeconds: number): Promise<RateDecision> {
    const windowMs = windowSeconds * 1000;
    const { value, place, of } = await this.turns.join(`${windowMs}\u0000${bucket}`);
    return decision(value!.start, value!.count - of + place + 1, limit, windowMs, value!.now);
  }

  /** PostgreSQL: one upsert per bucket of the turn (`count + n`), shared by every instance; a new window starts when the old one has expired. */
  private async countTurn(keys: Map<string, number>): Promise<Map<string, TurnCount>> {
    const now = nowMs();
    const out = new Map<string, TurnCount>();
    await Promise.all(
      [...keys].map(async ([key, n]) => {
        const cut = key.indexOf('\u0000');
        const windowMs = Number(key.slice(0, cut));
        const r = await sql<{ window_start_ms: string | number; count: string | number }>`
          INSERT INTO rate_limits (bucket, window_start_ms, count) VALUES (${key.slice(cut + 1)}, ${now}, ${n})
          ON CONFLICT (bucket) DO UPDATE SET
            count = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${windowMs} THEN ${n} ELSE rate_limits.count + ${n} END,
            window_start_ms = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${windowMs} THEN excluded.window_start_ms ELSE rate_limits.window_start_ms END
          RETURNING window_start_ms, count`.execute(this.db);
        const row = r.rows[0]!;
        out.set(key, { start: Number(row.window_start_ms), count: Number(row.count), now });
      }),
    );
    return out;
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
    let r: { window_start_ms: number | string; count: number | string } | undefined;
    if (!this.shared) {
      const w = (this.windows ?? (await this.memory())).get(bucket);
      r = w ? { window_start_ms: w.start, count: w.count } : undefined;
    } else {
      r = await this.db.selectFrom('rate_limits').select(['window_start_ms', 'count']).where('bucket', '=', bucket).executeTakeFirst();
    }
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
    if (!this.shared) {
      await this.flushing.catch(() => undefined);
      this.dirty.clear();
      this.windows = new Map();
      this.loading = undefined;
    }
    await this.db.deleteFrom('rate_limits').execute();
  }

  /** Writes the pending SQLite counters (call before the store closes). */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}
