/**
 * Cache invalidations pushed to every instance sharing a PostgreSQL database, so that a read
 * needs no version read of its own (issue 9 items 3 and 9: "a write on one is read on the other
 * at once", without a round trip per turn on every read), and acknowledgements pushed back so
 * that a writer waits without a statement of its own (issue 31 item 3).
 *
 * **The protocol** (docs/storage.md, "Live instances"). Every instance holds one connection
 * ({@link CachePresence}) that `LISTEN`s on `stratus_cache_<schema>` (and on the signal bus's
 * `stratus_<schema>`, whose notifications it relays: `cache-bus.ts`), and a row of
 * `stratus_instances` with a lease (`lease_until`, the database's clock) renewed every third of
 * the lease. PostgreSQL delivers a database's notifications from one queue, in commit order, to
 * every listener alike. Payloads: `<seq> <entry,…>` a write's invalidations (`0` from triggers;
 * a sequence number from an explicit bump or a polled marker, also acknowledged in the row's
 * `acked`); `m <id> <k>` instance `<id>`'s marker `k`, sent on its listening connection after a
 * request's write committed; `a <id> <w>:<k>,…` instance `<id>` applied every notification up to
 * `<w>`'s marker `k`; `j <id> <k>` a join (in the registration's transaction; also a marker);
 * `l <id>` a leave; `w <id> <k>` a write marker (`cache-write-markers.ts`).
 *
 * **A write is answered** once its instance saw its own marker come back (so it applied its own
 * notifications, kept versions included) and every peer it knows (`cache-peers.ts`: from the
 * registration's and the heartbeat's lists of running leases and from joins) acknowledged it — a
 * wait in memory; a peer that does not answer is waited for until the database says its lease
 * ran out. Without its connection a writer polls instead (`cache-fallback.ts`).
 *
 * **When an instance is live**, and why a writer need not know an instance that is joining: `cache-peers.ts`.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { listeningClient, signalChannel } from './cache-bus.ts';
import { WriteMarkerWaiters } from './cache-write-markers.ts';
import { dbNowSql as now, leaseMargin, PeerView, presenceChannel, presenceChannelSql as channelSql, type PresenceOptions } from './cache-peers.ts';

export { presenceChannel, presenceChannelPrefix, type PresenceOptions } from './cache-peers.ts';

/** What a notification may name as an instance (ours are UUIDs): anything else is ignored. */
const instanceId = /^[0-9A-Za-z-]{1,64}$/;

/** One instance's place in the protocol (see the module note). */
export class CachePresence {
  /** This instance's row id. */
  readonly id = randomUUID();
  private client: pg.Client | undefined;
  /** The client being registered (its notifications are applied too). */
  private connecting: pg.Client | undefined;
  /** `performance.now()` until which this instance is live. */
  private deadline = 0;
  /** Highest sequence number applied, and the highest written to the row's `acked`. */
  private applied = 0;
  private ackedRow = 0;
  /** Callers of {@link whenApplied} waiting for a sequence number. */
  private waiters: { seq: number; resolve: () => void }[] = [];
  /** The peers known on the current connection. */
  private peers = new PeerView(() => this.ownSeen);
  /** Markers numbered so far (joins included), and the highest of them seen back on the connection. */
  private marks = 0;
  private ownSeen = 0;
  /** The latest join's marker: live only once it was seen. */
  private joinK = 0;
  /** A join to send with the next flush (after a renewal found the lease had run out). */
  private joinDue = false;
  /** This turn's marker, not yet sent (joined by the turn's writers). */
  private nextMark: { k: number; seen: Promise<boolean> } | undefined;
  private markWaiters: { k: number; resolve: (ok: boolean) => void }[] = [];
  private readonly writes = new WriteMarkerWaiters(this.id); // write markers not yet seen back (`cache-write-markers.ts`)
  /** Acknowledgements to send: writer → highest marker received. */
  private ackOut = new Map<string, number>();
  private flushQueued = false;
  private flushing = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private lagTimer: NodeJS.Timeout | undefined;
  /** Callers of {@link renew} waiting for the renewal in flight. */
  private renewing: (() => void)[] | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: PresenceOptions) {}

  /** Whether caches may be used without a version read (connected, lease running on this side, own join seen). */
  live(): boolean {
    return this.client !== undefined && performance.now() < this.deadline && this.ownSeen >= this.joinK;
  }

  /** The ids of the peers this instance knows now (tests, diagnostics). */
  peerIds = (): string[] => (this.client ? this.peers.ids() : []);

  /** Connects, listens and registers (retried every second after a failure); resolves after the first attempt. */
  async start(): Promise<void> {
    await this.connect().catch((e) => this.lost(undefined, e));
    // Live once the own join came back (a few ms); not waited for beyond a lease.
    if (this.client) await this.applied0(this.joinK);
  }

  private async connect(): Promise<void> {
    this.peers.fail();
    const peers = (this.peers = new PeerView(() => this.ownSeen));
    // Its own commits (acknowledgements, markers, the row) need no flush to disk; it also listens on the relayed signal bus's channel (`cache-bus.ts`).
    const signals = this.opts.signals;
    let busChannel: string | undefined;
    const channels = (schema: string) => {
      busChannel = signals ? signalChannel(schema) : undefined;
      return busChannel ? [presenceChannel(schema), busChannel] : [presenceChannel(schema)];
    };
    const client = await listeningClient(this.opts.databaseUrl, this.opts.databaseSchema, channels, (c) => {
      // Notifications may arrive before the registration's answer is handled: applied too.
      this.connecting = c;
      c.on('error', (e) => this.lost(c, e));
      c.on('end', () => this.lost(c));
      c.on('notification', (n) => {
        if (n.channel === busChannel) {
          if (c === this.client || c === this.connecting) signals!.deliver(n.payload);
        } else this.notified(c, n.payload);
      });
    }, '-c synchronous_commit=off');
    try {
      if (this.closed) throw new Error('closed');
      const k = (this.joinK = ++this.marks);
      const sent = performance.now();
      const L = Math.floor(this.opts.leaseMs);
      // One transaction: the row, the list of running leases, and the join (delivered at commit).
      const r = (await client.query(
        `delete from stratus_instances where lease_until < ${now} - 3600000;
         insert into stratus_instances (id, acked, lease_until) select '${this.id}', version, ${now} + ${L} from stratus_cache_versions where area = '*'
           on conflict (id) do update set acked = excluded.acked, lease_until = excluded.lease_until returning acked::text as acked;
         select id, (lease_until - ${now})::float8 as remaining from stratus_instances where id <> '${this.id}' and lease_until > ${now};
         select pg_notify(${channelSql}, 'j ${this.id} ${k}')`,
      )) as unknown as pg.QueryResult[];
      const registered = Number(r[1]?.rows[0]?.acked ?? 0);
      this.applied = Math.max(this.applied, registered);
      this.ackedRow = registered;
      peers.listed((r[2]?.rows ?? []) as { id: string; remaining: number }[], sent);
      this.client = client;
      this.connecting = undefined;
      // Everything cached before the row existed may be older than a write that did not wait for us.
      this.opts.invalidate(undefined);
      this.deadline = sent + this.opts.leaseMs - leaseMargin(this.opts.leaseMs);
      this.heartbeat = setInterval(() => this.renew(), Math.max(1, Math.floor(this.opts.leaseMs / 3))).unref();
      // What arrived while registering (a sequence number, others' markers) is acknowledged too.
      this.queueFlush();
      // Signals sent while this connection was away: the bus's listeners look again.
      signals?.listening();
    } catch (e) {
      this.connecting = undefined;
      await client.end().catch(() => undefined);
      if (!this.closed) throw e;
    }
  }

  /** Resolves once own marker `k` was seen, the connection is lost, or a lease passed. */
  private applied0(k: number): Promise<void> {
    if (this.ownSeen >= k || !this.client) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, this.opts.leaseMs).unref();
      this.markWaiters.push({ k, resolve: () => (clearTimeout(t), resolve()) });
    });
  }

  /** A notification (module note): applies it, records markers and acknowledgements. */
  private notified(client: pg.Client, payload: string | undefined): void {
    if ((client !== this.client && client !== this.connecting) || !payload) return;
    const c = payload.charCodeAt(0);
    if (c >= 48 && c <= 57) { // `<seq> <entry,…>`
      const space = payload.indexOf(' ');
      const seq = Number(payload.slice(0, space));
      this.opts.invalidate(payload.slice(space + 1).split(','));
      if (seq > this.applied) {
        this.applied = seq;
        if (this.waiters.length) this.wake();
        this.queueFlush();
      }
      return;
    }
    const [kind, from, rest] = payload.split(' ');
    if (!from || !instanceId.test(from)) return;
    if (kind === 'a') {
      for (const part of (rest ?? '').split(',')) {
        const colon = part.lastIndexOf(':');
        if (part.slice(0, colon) === this.id) this.peers.acked(from, Number(part.slice(colon + 1)));
      }
    } else if (kind === 'm' || kind === 'j') {
      const k = Number(rest);
      if (!(k > 0)) return;
      if (from === this.id) {
        if (k > this.ownSeen) this.ownSeen = k;
        this.wakeMarks();
        return;
      }
      if (kind === 'j') this.peers.seen(from, this.opts.leaseMs, true);
      if (k > (this.ackOut.get(from) ?? 0)) this.ackOut.set(from, k);
      this.queueFlush();
    } else if (kind === 'l') this.peers.drop(from);
    else if (kind === 'w' && from === this.id) this.writes.seen(Number(rest));
  }

  /** A write marker (`cache-write-markers.ts`) while connected, else undefined; {@link dropWriteMarker} forgets one whose write failed. */
  writeMarker = () => (this.client ? this.writes.issue() : undefined);
  dropWriteMarker = (k: number) => this.writes.drop(k);
  /** How many peers this instance knows now (0 when not connected). */
  peerCount = () => (this.client ? this.peers.size : 0);

  /**
   * Sends what is due — the row's `acked`, acknowledgements, a marker, a join — in one statement
   * on the listening connection: at once (after the current callback) when none is in flight,
   * else when the one in flight is answered (what came meanwhile goes together). Under load a
   * turn of the event loop lasts milliseconds; waiting for its end (`setImmediate`) at both ends
   * of every hop doubled a write's wait for its acknowledgements.
   */
  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    if (!this.flushing) queueMicrotask(() => this.runFlush());
  }

  private runFlush(): void {
    this.flushQueued = false;
    const sent = this.flush();
    if (!sent) return;
    this.flushing = true;
    void sent.then(() => {
      this.flushing = false;
      if (this.flushQueued) this.runFlush();
    });
  }

  /** @returns the statement's completion (never rejects), or undefined when nothing was due or there is no connection. */
  private flush(): Promise<void> | undefined {
    const client = this.client;
    if (!client) return undefined;
    const payloads: string[] = [];
    if (this.ackOut.size) payloads.push(`a ${this.id} ${[...this.ackOut].map(([w, k]) => `${w}:${k}`).join(',')}`);
    this.ackOut.clear();
    if (this.nextMark) payloads.push(`m ${this.id} ${this.nextMark.k}`);
    this.nextMark = undefined;
    if (this.joinDue) payloads.push(`j ${this.id} ${this.joinK}`);
    this.joinDue = false;
    const notify = payloads.map((p) => `pg_notify(${channelSql}, '${p}')`);
    let text: string;
    if (this.applied > this.ackedRow) {
      const upto = (this.ackedRow = this.applied);
      text = `with u as (update stratus_instances set acked = greatest(acked, ${upto}) where id = '${this.id}' returning 1) select (select count(*) from u)${notify.map((n) => `, ${n}`).join('')}`;
    } else if (notify.length) text = `select ${notify.join(', ')}`;
    else return undefined;
    return client.query(text).then(
      () => undefined,
      (e) => this.lost(client, e),
    );
  }

  /**
   * Waits until every live instance applied the writes this instance committed so far: sends a
   * marker (shared by this turn's callers), waits until it comes back on this instance's
   * connection and every known peer acknowledged it — in memory. Gives up after `giveUpMs`
   * (the caller answers anyway, as the polled path does, without recording it confirmed).
   * @returns `lost` when this instance has no connection or lost it meanwhile (then poll, `cache-fallback.ts`).
   */
  async confirmWrites(giveUpMs: number): Promise<'confirmed' | 'gave-up' | 'lost'> {
    if (!this.client) return 'lost';
    let m = this.nextMark;
    if (!m) {
      const k = ++this.marks;
      m = this.nextMark = { k, seen: new Promise<boolean>((resolve) => this.markWaiters.push({ k, resolve })) };
      this.queueFlush();
    }
    if (!(await m.seen)) return 'lost';
    const peers = this.peers;
    if (peers.confirmed(m.k)) return 'confirmed';
    const wait = peers.wait(m.k).then((ok): 'confirmed' | 'lost' => (ok ? 'confirmed' : 'lost'));
    this.scheduleLag();
    let timer: NodeJS.Timeout | undefined;
    const out = await Promise.race([wait, new Promise<'gave-up'>((resolve) => (timer = setTimeout(() => resolve('gave-up'), giveUpMs)))]);
    clearTimeout(timer);
    return out;
  }

  /** While a writer waits for a peer whose lease should have ended, reads the leases again (a heartbeat). */
  private scheduleLag(): void {
    if (this.lagTimer || !this.client) return;
    const k = this.peers.lowestWaited();
    if (k === undefined) return;
    const at = this.peers.lagUntil(k);
    if (at === Infinity) return;
    this.lagTimer = setTimeout(() => {
      this.lagTimer = undefined;
      if (!this.peers.waiting) return;
      if (this.peers.lagUntil(this.peers.lowestWaited()!) <= performance.now()) this.renew(() => this.scheduleLag());
      else this.scheduleLag();
    }, Math.max(1, Math.ceil(at - performance.now()) + 1)).unref();
  }

  private wakeMarks(): void {
    this.markWaiters = this.markWaiters.filter((w) => (w.k <= this.ownSeen ? (w.resolve(true), false) : true));
  }

  /**
   * Resolves once this instance has applied the notifications committed up to `seq` (a polled
   * marker's, `cache-fallback.ts`), or once it is not connected (then its caches are not used
   * without a version read). Never rejects.
   */
  whenApplied(seq: number): Promise<void> {
    if (this.applied >= seq || !this.client) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /** Resolves the waiters whose sequence number is applied (all of them when `all`). */
  private wake(all = false): void {
    this.waiters = this.waiters.filter((w) => (all || w.seq <= this.applied ? (w.resolve(), false) : true));
  }

  /**
   * Renews the lease on the listening connection and learns the running leases of the others
   * (one statement); a renewal that finds this instance's lease had already run out joins again.
   */
  private renew(then?: () => void): void {
    const client = this.client;
    if (!client) return;
    if (this.renewing) {
      if (then) this.renewing.push(then);
      return;
    }
    const after = (this.renewing = then ? [then] : []);
    const sent = performance.now();
    const L = Math.floor(this.opts.leaseMs);
    client
      .query<{ found: number; continuous: boolean; peers: { id: string; remaining: number }[] }>(
        `with old as (select lease_until from stratus_instances where id = $1),
           upd as (update stratus_instances set lease_until = ${now} + ${L} where id = $1 returning id)
         select (select count(*) from upd)::int as found, coalesce((select lease_until from old) > ${now}, false) as continuous,
           (select coalesce(json_agg(json_build_object('id', id, 'remaining', lease_until - ${now})), '[]'::json)
              from stratus_instances where id <> $1 and lease_until > ${now}) as peers`,
        [this.id],
      )
      .then((r) => {
        this.renewing = undefined;
        if (client !== this.client) return;
        const row = r.rows[0]!;
        // The row was removed (by another instance's clean-up after a long pause): register again.
        if (!row.found) return this.lost(client, new Error('instance row missing'));
        this.peers.listed(row.peers, sent);
        if (!row.continuous) {
          // Others may have dropped this instance meanwhile: not live until its new join came back.
          this.joinK = ++this.marks;
          this.joinDue = true;
          this.queueFlush();
        }
        this.deadline = Math.max(this.deadline, sent + this.opts.leaseMs - leaseMargin(this.opts.leaseMs));
        for (const fn of after) fn();
      })
      .catch((e) => {
        this.renewing = undefined;
        this.lost(client, e);
      });
  }

  /** Leaves live mode (caches emptied), drops the connection and retries in a second. */
  private lost(client: pg.Client | undefined, e?: unknown): void {
    if (client && client !== this.client) return;
    const was = this.client;
    this.client = undefined;
    this.deadline = 0;
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    if (this.lagTimer) clearTimeout(this.lagTimer);
    this.lagTimer = undefined;
    this.nextMark = undefined;
    this.ackOut.clear();
    was?.end().catch(() => undefined);
    if (was) this.opts.invalidate(undefined);
    this.wake(true);
    this.failMarks();
    if (e) this.opts.onError?.(e);
    if (!this.closed && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.connect().catch((err) => this.lost(undefined, err));
      }, 1000).unref();
    }
  }

  private failMarks(): void {
    for (const w of this.markWaiters.splice(0)) w.resolve(false);
    this.writes.fail();
    this.peers.fail();
  }

  /** Leaves: the row is removed and the others told, so that no writer waits for this instance; idempotent. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.lagTimer) clearTimeout(this.lagTimer);
    const c = this.client;
    this.client = undefined;
    this.deadline = 0;
    this.wake(true);
    this.failMarks();
    if (c) {
      await c.query(`with d as (delete from stratus_instances where id = $1) select pg_notify(${channelSql}, 'l ' || $1::text)`, [this.id]).catch(() => undefined);
      await c.end().catch(() => undefined);
    }
  }
}
