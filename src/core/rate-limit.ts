/**
 * Per-caller request budgets in fixed windows (design: "rate-limit.ts"), counted without a
 * durable commit per request (issue 9, item 1):
 *
 * - **SQLite** (one process owns the file): counted in memory. Changed windows are written
 *   behind to `rate_limits` at most once per {@link flushIntervalMs} (one transaction for
 *   all of them, off the request path) and at shutdown, and read back at start, so a window
 *   survives a restart. A `kill -9` can forget the counts of the last second at most.
 * - **PostgreSQL** (several instances share one database): the window's count lives in
 *   `rate_limits`, an UNLOGGED table (a transaction that writes only unlogged tables writes no
 *   WAL, so its commit waits for no flush). Every instance counts on the same row with atomic
 *   upserts, so a request is never admitted past the limit, whichever instance it reaches.
 *   - The hits of one bucket in one event-loop turn are counted by one upsert (`count + n`, a
 *     {@link TickBatch}), sent in the turn's one statement with the cache and mailbox versions
 *     (`tick-batch.ts`); each request gets its own place in the returned count.
 *   - **Leases.** An upsert also reserves a few more requests of the budget for this instance
 *     ({@link leaseFor}: {@link maxLease}, or about {@link leaseHorizonMs} ms of the bucket's
 *     traffic on this instance when that is more — {@link rateLease}, measured from the last
 *     lease's use, at most {@link maxRateLease} — but never more than 1/{@link leaseShare} of
 *     what was left at this instance's last count of the window — of the whole budget before
 *     its first — and none for a budget under {@link leaseShare} requests). The next
 *     hits are answered from the reservation at once, with no database round trip, until it
 *     is used up or its window ends; then the next turn counts again. A busy caller costs
 *     about ten upserts a second per instance, whatever its rate, instead of one per turn.
 *   - **Tolerance.** The limit is never exceeded. A reservation not yet used by one instance
 *     is not available to the others: near the end of a budget a caller may be refused up to
 *     that many requests early on another instance (per instance at most 64, or about 100 ms
 *     of that caller's traffic there when it sends more than 640 requests a second; never
 *     more than 1/16 of what was left), and an instance that stops holds its unused
 *     reservation until the window ends. One instance alone counts exactly. After
 *     `POST /_stratus/reset`, another instance may still use what it had reserved before it.
 *   - An unlogged table is emptied by crash recovery of the database server: budgets restart
 *     after a PostgreSQL crash.
 */
import { LRUCache } from 'lru-cache';
import { sql, type Kysely } from 'kysely';
import { isPostgres, type Migrations } from '../store/db.ts';
import { nowMs } from './clock.ts';
import type { RateLimitDatabase } from './tables.ts';
import { TickBatch, turnTrip, type TripPart } from './tick-batch.ts';
import { KeyInterner } from './keys.ts';
import { leaseFor, rateLease } from './rate-lease.ts';

export { leaseFor, leaseHorizonMs, leaseShare, maxLease, maxRateLease, rateLease } from './rate-lease.ts';

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

/** A bucket's window after one turn's upsert (PostgreSQL): its start, its count with the turn's hits and lease, the time used and the lease asked for. */
interface TurnCount {
  start: number;
  count: number;
  now: number;
  lease: number;
}

/** Requests of one window reserved by this instance (PostgreSQL): the count numbers `next`…`end` are its own. */
interface Lease {
  start: number;
  windowMs: number;
  limit: number;
  /** Reserved count ranges not yet used, oldest first. */
  ranges: { next: number; end: number }[];
  /** The window's count as last returned by the database (sizes the next lease). */
  seen: number;
  /** `performance.now()` of the last upsert, and how many requests it granted this instance (the turn's hits and its lease): the bucket's rate. */
  grantedAt: number;
  granted: number;
}

/** Splits a batch key `windowMs NUL limit NUL bucket`. */
function keyParts(key: string): { windowMs: number; limit: number; bucket: string } {
  const a = key.indexOf('\u0000');
  const b = key.indexOf('\u0000', a + 1);
  return { windowMs: Number(key.slice(0, a)), limit: Number(key.slice(a + 1, b)), bucket: key.slice(b + 1) };
}

/**
 * PostgreSQL: the turn's hits as a branch of the turn's one statement (`tick-batch.ts`). Each
 * bucket of the turn is one upsert (`count + n + lease`; a new window when the old one has
 * expired) in a data-modifying `WITH` item, shared by every instance; the branch yields the
 * key's index and the lease asked for in `k1`, the time used in `k2`, the window's start in
 * `v1` and its count in `v2`. The values are parameters, so the statement's text (and its
 * prepared statement) depends only on how many buckets the turn has.
 * @param leaseOf the lease to ask for a batch key.
 */
function countPart(leaseOf: (key: string) => number): TripPart<string, TurnCount> {
  return {
    branch(keys, cte) {
      const now = nowMs();
      const selects = [...keys].map(([key, n], i) => {
        const { windowMs, bucket } = keyParts(key);
        const add = n + leaseOf(key);
        const name = cte(sql`
          INSERT INTO rate_limits (bucket, window_start_ms, count) VALUES (${bucket}, ${now}, ${add})
          ON CONFLICT (bucket) DO UPDATE SET
            count = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${windowMs} THEN ${add} ELSE rate_limits.count + ${add} END,
            window_start_ms = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${windowMs} THEN excluded.window_start_ms ELSE rate_limits.window_start_ms END
          RETURNING window_start_ms, count`);
        return sql`select ${`${i} ${add - n}`}::text as k1, ${String(now)}::text as k2, window_start_ms::text as v1, count::text as v2 from ${sql.raw(name)}`;
      });
      return sql.join(selects, sql` union all `);
    },
    decode(rows, keys) {
      const list = [...keys.keys()];
      const out = new Map<string, TurnCount>();
      for (const r of rows) {
        const [i, lease] = r.k1!.split(' ');
        out.set(list[Number(i)]!, { start: Number(r.v1), count: Number(r.v2), now: Number(r.k2), lease: Number(lease) });
      }
      return out;
    },
  };
}

/** Fixed-window counters: in memory on SQLite, in the shared unlogged `rate_limits` table on PostgreSQL. */
export class RateLimiter {
  private readonly shared: boolean;
  /** The bucket names of {@link bucket}, made once per parts. */
  private readonly buckets = new KeyInterner(':');
  /** SQLite: the windows, loaded from the table on first use. */
  private windows?: Map<string, Window>;
  private loading?: Promise<Map<string, Window>>;
  private readonly dirty = new Set<string>();
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  /** PostgreSQL: the hits of one event-loop turn, by window length and bucket (`windowMs NUL bucket`). */
  private readonly turns: TickBatch<string, TurnCount>;
  /**
   * PostgreSQL: this instance's reservations by bucket (see the module note), the 10,000 buckets
   * used last: a bucket dropped loses its unused reservation (refused early at most by that,
   * as for a stopped instance) and its next lease is sized as for a first count.
   */
  private readonly leases = new LRUCache<string, Lease>({ max: 10_000 });

  constructor(private readonly db: Kysely<RateLimitDatabase>) {
    this.shared = isPostgres(db);
    // Used on PostgreSQL only, where every batch goes in the turn's one statement (never to `load`).
    this.turns = new TickBatch<string, TurnCount>(() => Promise.reject(new Error('rate-limit turns are counted in the turn statement')), {
      trip: turnTrip(db),
      part: countPart((key) => {
        const { limit, bucket } = keyParts(key);
        const l = this.leases.get(bucket);
        if (!l || l.limit !== limit) return leaseFor(limit, 0);
        return leaseFor(limit, l.seen, rateLease(l.granted, performance.now() - l.grantedAt));
      }),
    });
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
   * The bucket named by `parts` (`mail:<tenant>:<app>:<user>`), as the same string object for the
   * same parts (`core/keys.ts`): a request path that counts in a bucket per caller neither
   * concatenates nor hashes its name anew per request.
   */
  bucket(...parts: string[]): string {
    return this.buckets.key(...parts);
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

  /**
   * PostgreSQL: answered from this instance's lease when it holds one for the current window,
   * else joins this turn's upsert of the bucket (see the module note); this request's count is
   * its place among the turn's hits, and what the upsert reserved beyond them becomes the lease.
   */
  private hitShared(bucket: string, limit: number, windowSeconds: number): RateDecision | Promise<RateDecision> {
    const windowMs = windowSeconds * 1000;
    const l = this.leases.get(bucket);
    if (l !== undefined) {
      const now = nowMs();
      if (now - l.start >= windowMs || l.limit !== limit || l.windowMs !== windowMs) this.leases.delete(bucket);
      else {
        const range = l.ranges[0];
        if (range !== undefined) {
          const count = range.next++;
          if (range.next > range.end) l.ranges.shift();
          return decision(l.start, count, limit, windowMs, now);
        }
      }
    }
    return this.countShared(bucket, limit, windowMs);
  }

  private async countShared(bucket: string, limit: number, windowMs: number): Promise<RateDecision> {
    const { value, place, of } = await this.turns.join(`${windowMs}\u0000${limit}\u0000${bucket}`);
    const v = value!;
    if (place === 0) this.keepLease(bucket, limit, windowMs, v, of);
    return decision(v.start, v.count - v.lease - of + place + 1, limit, windowMs, v.now);
  }

  /** Records the lease an upsert reserved (the counts after the turn's `hits`, up to the limit) and when. */
  private keepLease(bucket: string, limit: number, windowMs: number, v: TurnCount, hits: number): void {
    let l = this.leases.get(bucket);
    if (l === undefined || l.start !== v.start || l.limit !== limit || l.windowMs !== windowMs) {
      l = { start: v.start, windowMs, limit, ranges: [], seen: v.count, grantedAt: 0, granted: 0 };
      this.leases.set(bucket, l);
    }
    l.seen = Math.max(l.seen, v.count);
    l.grantedAt = performance.now();
    l.granted = hits + v.lease;
    const next = v.count - v.lease + 1;
    const end = Math.min(v.count, limit);
    if (next <= end) l.ranges.push({ next, end });
  }

  /** PostgreSQL: the requests this instance reserved and has not used in `bucket`'s current window. */
  private unusedLease(bucket: string, start: number): number {
    const l = this.leases.get(bucket);
    if (l === undefined || l.start !== start) return 0;
    return l.ranges.reduce((sum, r) => sum + (r.end - r.next + 1), 0);
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
    // What this instance reserved and has not used is still available to its callers.
    const count = r && now - start < windowMs ? Number(r.count) - (this.shared ? this.unusedLease(bucket, start) : 0) : 0;
    return {
      allowed: count < limit,
      remaining: Math.max(0, limit - count),
      retryAfterSeconds: count === 0 ? Math.max(1, windowSeconds) : Math.max(1, Math.ceil((start + windowMs - now) / 1000)),
      limit,
    };
  }

  /** Gives up this instance's leases (another instance reset the counters). */
  forgetLeases(): void {
    this.leases.clear();
  }

  /** Forgets every window (control-plane reset). */
  async clear(): Promise<void> {
    this.leases.clear();
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
