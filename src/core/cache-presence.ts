/**
 * Cache invalidations pushed to every instance sharing a PostgreSQL database, so that a read
 * needs no version read of its own (issue 9 items 3 and 9: "a write on one is read on the other
 * at once", without a round trip per turn on every read).
 *
 * **The protocol.**
 * - Every write of a cached table sends `pg_notify('stratus_cache_<schema>', '0 <area,…>')` in
 *   its transaction, from the table's trigger (`cache-tables.ts`; `0`: no sequence number), and
 *   its writer answers after a marker (below). An explicit bump (`bumpCacheVersions`: a world
 *   loaded) increments the `*` row of `stratus_cache_versions` (the write's *sequence number*:
 *   the row lock orders writers, so sequence order is commit order) and sends
 *   `pg_notify('stratus_cache_<schema>', '<seq> <area,…>')`. Either is delivered at commit, in
 *   commit order, to every listener.
 * - Each instance ({@link CachePresence}) holds one dedicated connection that `LISTEN`s, and a row
 *   of `stratus_instances`: its id, the highest sequence number it has *applied* (`acked`), and a
 *   lease (`lease_until`, the database's clock). On a notification it empties the named areas'
 *   caches at once, then acknowledges (`acked`) on the same connection, which also renews the
 *   lease; a heartbeat renews it every third of the lease.
 * - A request that wrote answers only after every other instance whose lease is running has
 *   acknowledged the write's sequence number ({@link settled}); an instance whose lease ran out
 *   is not waited for.
 * - An instance serves from its caches without a version read only while it is *live*: its
 *   connection is up and its lease, as measured on its own monotonic clock from *before* the
 *   renewing statement was sent, has not run out (less a margin). So an instance that stopped
 *   (paused, partitioned, event loop blocked) stops trusting its caches before any writer stops
 *   waiting for it. Otherwise it reads the versions every turn (`CacheHub.sync`), as before.
 * - Entering live mode empties every cache after the instance's row is registered; notifications
 *   of later commits arrive on the connection that was listening before.
 *
 * The acknowledgement rides the connection that receives the notifications, so a heartbeat that
 * succeeds proves the notifications committed before it were delivered (PostgreSQL sends them
 * before the statement's answer) and applied (the handler runs first, synchronously).
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { listeningClient } from './cache-bus.ts';
import type { CacheDatabase } from './tables.ts';

/** The database clock in ms since the epoch (`lease_until` is stored so), as SQL text. */
const dbNowSql = '(extract(epoch from clock_timestamp()) * 1000)::bigint';
const dbNowMs = sql.raw(dbNowSql);

/** Options of {@link CachePresence}. */
export interface PresenceOptions {
  /** `postgres://…` of the store. */
  databaseUrl: string;
  /** PostgreSQL schema of the store. */
  databaseSchema?: string;
  /** Lease length, ms (`STRATUS_INSTANCE_LEASE_MS`); renewed every third of it. */
  leaseMs: number;
  /** Empties the caches of `areas` (every area when undefined: on entering and leaving live mode). */
  invalidate: (areas: string[] | undefined) => void;
  /** Called with errors of the dedicated connection (logged by the caller). */
  onError?: (e: unknown) => void;
}

/** The ms taken off a lease on this side (the statement's trip, timer lateness). */
const leaseMargin = (leaseMs: number) => Math.min(1000, Math.floor(leaseMs / 4));

/** The prefix of the notification channel; the schema's name follows. */
export const presenceChannelPrefix = 'stratus_cache_';
/** The channel of the store's schema. */
export const presenceChannel = (schema: string) => presenceChannelPrefix + schema;

/** One instance's place in the protocol (see the module note). */
export class CachePresence {
  /** This instance's row id. */
  readonly id = randomUUID();
  private client: pg.Client | undefined;
  /** The client being registered (its notifications are applied too). */
  private connecting: pg.Client | undefined;
  /** `performance.now()` until which this instance is live. */
  private deadline = 0;
  /** Highest sequence number applied. */
  private applied = 0;
  private ackQueued = false;
  /** Callers of {@link whenApplied} waiting for a sequence number. */
  private waiters: { seq: number; resolve: () => void }[] = [];
  private heartbeat: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: PresenceOptions) {}

  /** Whether caches may be used without a version read (connected, lease running on this side). */
  live(): boolean {
    return this.client !== undefined && performance.now() < this.deadline;
  }

  /** Connects, listens and registers (retried every second after a failure); resolves after the first attempt. */
  async start(): Promise<void> {
    await this.connect().catch((e) => this.lost(undefined, e));
  }

  private async connect(): Promise<void> {
    const client = await listeningClient(this.opts.databaseUrl, this.opts.databaseSchema, presenceChannel, (c) => {
      // Notifications may arrive before the registration's answer is handled: applied too.
      this.connecting = c;
      c.on('error', (e) => this.lost(c, e));
      c.on('end', () => this.lost(c));
      c.on('notification', (n) => this.notified(c, n.payload));
    });
    try {
      if (this.closed) throw new Error('closed');
      await client.query(`delete from stratus_instances where lease_until < ${dbNowSql} - 3600000`);
      const sent = performance.now();
      const r = await client.query<{ acked: string }>(
        `insert into stratus_instances (id, acked, lease_until) select $1, version, ${dbNowSql} + $2 from stratus_cache_versions where area = '*'
         on conflict (id) do update set acked = excluded.acked, lease_until = excluded.lease_until returning acked`,
        [this.id, this.opts.leaseMs],
      );
      const registered = Number(r.rows[0]?.acked ?? 0);
      this.applied = Math.max(this.applied, registered);
      this.client = client;
      this.connecting = undefined;
      // Everything cached before the row existed may be older than a write that did not wait for us.
      this.opts.invalidate(undefined);
      this.deadline = sent + this.opts.leaseMs - leaseMargin(this.opts.leaseMs);
      this.heartbeat = setInterval(() => this.renew(), Math.max(1, Math.floor(this.opts.leaseMs / 3)));
      this.heartbeat.unref();
      // A write notified while registering waits for this acknowledgement.
      if (this.applied > registered) this.renew();
    } catch (e) {
      this.connecting = undefined;
      await client.end().catch(() => undefined);
      if (!this.closed) throw e;
    }
  }

  /** A notification: `<seq> <area,…>`; empties the areas, then acknowledges (once per turn). */
  private notified(client: pg.Client, payload: string | undefined): void {
    if ((client !== this.client && client !== this.connecting) || !payload) return;
    const space = payload.indexOf(' ');
    const seq = Number(payload.slice(0, space));
    this.opts.invalidate(payload.slice(space + 1).split(','));
    if (seq > this.applied) {
      this.applied = seq;
      if (this.waiters.length) this.wake();
    }
    if (!this.ackQueued) {
      this.ackQueued = true;
      setImmediate(() => {
        this.ackQueued = false;
        this.renew();
      });
    }
  }

  /**
   * Resolves once this instance has applied the notifications committed up to `seq` (those of
   * a marker, {@link sendMarker}, that this instance's own request sent), or once it is not live
   * (then its caches are not used without a version read). Never rejects.
   */
  whenApplied(seq: number): Promise<void> {
    if (this.applied >= seq || !this.client) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** Resolves the waiters whose sequence number is applied (all of them when `all`). */
  private wake(all = false): void {
    const still: typeof this.waiters = [];
    for (const w of this.waiters) (all || w.seq <= this.applied ? w.resolve() : still.push(w));
    this.waiters = still;
  }

  /** Acknowledges what was applied and renews the lease, on the listening connection. */
  private renew(): void {
    const client = this.client;
    if (!client) return;
    const sent = performance.now();
    client
      .query(`update stratus_instances set acked = greatest(acked, $2), lease_until = ${dbNowSql} + $3 where id = $1`, [this.id, this.applied, this.opts.leaseMs])
      .then((r) => {
        if (client !== this.client) return;
        // The row was removed (by another instance's clean-up after a long pause): register again.
        if (r.rowCount === 0) return this.lost(client, new Error('instance row missing'));
        this.deadline = Math.max(this.deadline, sent + this.opts.leaseMs - leaseMargin(this.opts.leaseMs));
      })
      .catch((e) => this.lost(client, e));
  }

  /** Leaves live mode (caches emptied), drops the connection and retries in a second. */
  private lost(client: pg.Client | undefined, e?: unknown): void {
    if (client && client !== this.client) return;
    const was = this.client;
    this.client = undefined;
    this.deadline = 0;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    was?.end().catch(() => undefined);
    if (was) this.opts.invalidate(undefined);
    this.wake(true);
    if (e) this.opts.onError?.(e);
    if (!this.closed && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.connect().catch((err) => this.lost(undefined, err));
      }, 1000);
      this.retry.unref();
    }
  }

  /** Leaves: the row is removed so that no writer waits for this instance; idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.heartbeat) clearInterval(this.heartbeat);
    const c = this.client;
    this.client = undefined;
    this.deadline = 0;
    this.wake(true);
    if (c) {
      await c.query('delete from stratus_instances where id = $1', [this.id]).catch(() => undefined);
      await c.end().catch(() => undefined);
    }
  }
}

/**
 * Whether every other live instance has applied the writes committed up to `seq` (those
 * committed yet; a sequence number whose write is not committed — still running or rolled
 * back — is waited for up to what is committed). One statement.
 * @returns the sequence number now known applied everywhere (≤ `seq`), or undefined while an instance lags.
 * @throws the database error of the read.
 */
export async function appliedEverywhere(db: Kysely<CacheDatabase>, self: string, seq: number): Promise<number | undefined> {
  const { rows } = await sql<{ upto: string; lagging: string }>`
    select least(${seq}::bigint, (select version from stratus_cache_versions where area = '*'))::text as upto,
      (select count(*) from stratus_instances i where i.id <> ${self} and i.lease_until > ${dbNowMs}
        and i.acked < least(${seq}::bigint, (select version from stratus_cache_versions where area = '*')))::text as lagging`.execute(db);
  const r = rows[0]!;
  return Number(r.lagging) === 0 ? Number(r.upto) : undefined;
}

/**
 * A marker: takes the next sequence number (the `*` row, for this statement only) and notifies
 * it with no area, for a write whose notifications carry no sequence number of their own (the
 * mailbox versions' triggers, `mail_0008_mailbox_version_notices`). Sent after that write
 * committed, it is delivered after the write's notifications (PostgreSQL delivers in commit
 * order), so an instance that acknowledged the marker applied the write. One statement.
 * @returns the marker's sequence number, and how many other instances hold a running lease.
 * @throws the database error of the statement.
 */
export async function sendMarker(db: Kysely<CacheDatabase>, self: string): Promise<{ seq: number; others: number }> {
  const { rows } = await sql<{ seq: string; others: string }>`
    with s as (update stratus_cache_versions set version = version + 1 where area = '*' returning version)
    select version::text as seq, pg_notify(${presenceChannelPrefix} || current_schema(), version::text || ' '),
      (select count(*) from stratus_instances i where i.id <> ${self} and i.lease_until > ${dbNowMs})::text as others from s`.execute(db);
  const r = rows[0];
  return r ? { seq: Number(r.seq), others: Number(r.others) } : { seq: 0, others: 0 };
}
