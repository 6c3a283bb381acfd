/**
 * Per-instance read caches of what every request looks up (the resource-manager hierarchy,
 * directory users, data platform workspace roles) and their invalidation (issue 9 item 3).
 *
 * - Each cache is a bounded LRU (`lru-cache`) belonging to one {@link CacheArea}.
 * - A write of a table a cache holds changes its area's row of `stratus_cache_versions` in its
 *   transaction by trigger (`cache-tables.ts`: the list of cached tables; no write path calls
 *   anything), and this instance's caches of the area are emptied at once (the store passes
 *   every write statement's text to the hub). {@link CacheHub.changed}: writes that change everything (a world loaded), bulk seeders.
 * - A request calls {@link CacheHub.sync} before it uses a cache: one read of the (three-row)
 *   version table; an area whose version moved since the last read is emptied. So a write
 *   committed by another instance sharing the PostgreSQL database — or by another process on the
 *   SQLite file (`stratus reset` while serving) — is seen by the very next request (one version read a turn, shared).
 *
 * **Live instances (PostgreSQL).** No version read per turn while this instance is *live*
 * (`cache-presence.ts`): every write notifies the instances, each empties its caches and
 * acknowledges, and the writer answers only after every live instance acknowledged
 * ({@link CacheHub.settle}, from the app's `onSend` hook; a notification alone reaches another
 * instance after the answer may). An instance not live reads the versions every turn as above.
 *
 * Loads are tagged with the area's generation when they start; a load that overlapped an
 * invalidation is returned to its caller but not stored, so an old value is never cached after
 * the invalidation that should have removed it.
 */
import type { Kysely } from 'kysely';
import type { Store } from '../store/db.ts';
import { SignalBus } from './cache-bus.ts';
import { AreaCache } from './cache-area.ts';
import { CachePresence, type PresenceOptions } from './cache-presence.ts';
import { appliedEverywhere, sendMarker } from './cache-fallback.ts';
import { bumpCacheVersions, versionPart, versionRows } from './cache-versions.ts';
import { SharedValues, type SharedRow, type SharedWrite } from './shared-values.ts';
import { KeptVersions, keyOfEntry } from './kept-versions.ts';
import { keyedAreas, keyedCacheNames, shardMoved, tableWrite, watchOwnWrites } from './cache-tables.ts';
import { KeyLog } from './cache-keys.ts';
import { RequestWrites } from './cache-requests.ts';
import { TickBatch, turnTrip } from './tick-batch.ts';
import { KeyedDependencies } from './cache-keyed.ts';
import { RequestWriteMarkers } from './cache-write-markers.ts';
import type { CacheDatabase } from './tables.ts';

/**
 * The cached areas; each has one version row. `seeded` holds what only seeding writes (the
 * analytics dataflows, the billing records): its pages are kept whole.
 */
export const cacheAreas = ['arm', 'directory', 'platform', 'resources', 'seeded'] as const;
/** One of {@link cacheAreas}. */
export type CacheArea = (typeof cacheAreas)[number];

export { bumpCacheVersions, cacheKey } from './cache-versions.ts';
export type { KeyDependency } from './cache-keyed.ts';
export { AreaCache } from './cache-area.ts';

/** The caches of one running app and their invalidation. */
export class CacheHub {
  private readonly gens = new Map<CacheArea, number>(cacheAreas.map((a) => [a, 0]));
  private readonly caches = new Map<CacheArea, AreaCache<any>[]>(cacheAreas.map((a) => [a, []]));
  private readonly named = new Map<string, AreaCache<any>>();
  /** Versions read last; undefined before the first read. */
  private seen: Map<string, string> | undefined;
  /** A version read that callers may still join (not yet sent). */
  private pending: Promise<void> | undefined;
  /** The version reads: one per turn, on PostgreSQL in the turn's one statement with the other batches. */
  private readonly versions: TickBatch<'all', Map<string, string>>;
  /** Wake-up signals for background workers (started and closed by the app). */
  readonly bus = new SignalBus();
  /** The shared clock offset and world generation (`shared-values.ts`), read and notified with the versions. */
  readonly sharedValues = new SharedValues();
  /** PostgreSQL: this instance's place among the live instances ({@link startPresence}). */
  private presence: CachePresence | undefined;
  /** PostgreSQL: the highest sequence number this instance wrote, and the highest known applied by every live instance. */
  private written = 0; private confirmed = 0;
  private readonly db: Kysely<CacheDatabase>;
  /** Live: the promise this turn's callers of {@link sync} share (resolved from `setImmediate`). */
  private turn: Promise<void> | undefined;
  /** PostgreSQL: writes with no sequence number of their own ({@link markWritten}); how many of them ended (committed or failed); how many are confirmed. */
  private marked = 0; private markedEnded = 0; private markedDone = 0;
  private readonly writeEnded = () => void this.markedEnded++;
  /** Kept versions by name (`kept-versions.ts`). */
  private readonly kept = new Map<string, KeptVersions<any>>();
  /** PostgreSQL: requests ({@link markRequest}) that send a marker before they are answered. */
  private readonly markedRequests = new WeakSet<object>();
  readonly requests = new RequestWrites(); // PostgreSQL: which requests wrote (`cache-requests.ts`)
  readonly writeMarkers = new RequestWriteMarkers(() => (this.presence?.live() && !this.presence.peerCount() ? this.presence : undefined)); // PostgreSQL, live, alone (`cache-write-markers.ts`)
  /** SQLite: where this hub reads the keyed tables' written keys (`cache-keys.ts`). */
  private readonly keyLog: KeyLog | undefined;

  constructor(/** The app's store (its writes are watched; readable for per-store caches). */ readonly store: Store) {
    const db = (this.db = store.db as unknown as Kysely<CacheDatabase>);
    const sent = () => {
      this.pending = undefined;
    };
    this.versions = new TickBatch(
      async () => {
        sent();
        // The read sees every keyed write this instance committed so far (SQLite runs it now).
        this.keyed.readSent();
        const rows = await versionRows(db);
        return new Map([['all', new Map(rows.map((r) => [r.area, String(r.version)]))]]);
      },
      { trip: turnTrip(db), part: versionPart(sent) },
    );
    this.keyLog = store.dialect === 'sqlite' ? new KeyLog(db) : undefined;
    watchOwnWrites(store, this.ownWrite);
  }

  /**
   * This instance's own write of cached tables, told before it is sent: its caches of `areas` are
   * emptied at once — of a keyed table while live (PostgreSQL) or on SQLite only derived answers
   * ({@link epoch}); the keys its notification or log entries name are dropped before the answer
   * (the marker comes back after it) or by the next sync (SQLite; a load of such a key under way
   * then is not stored, `AreaCache.delete`). On PostgreSQL the next answer waits for a marker
   * ({@link settle}). @returns the callback to call once the write ended (committed or failed).
   */
  private readonly ownWrite = (areas: readonly CacheArea[], keyed: boolean): (() => void) => {
    if (keyed && (this.live || this.keyLog)) {
      this.epoch++;
      if (!this.live) this.keyed.ownWrite();
    } else this.invalidate(...areas);
    this.markWritten(undefined, false);
    return this.writeEnded; // a settle counts a write once it ended, not when sent: one in flight may commit after the settle's marker
  };

  /**
   * Runs `write` with a write marker's payload for request `raw` (Node's) while live and alone (`cache-write-markers.ts`), else with none.
   * `table`: the cached table it writes through a function call (`select fn(…)`, unseen by the statement watch), told as a watched write.
   */
  async withWriteMarker<T>(raw: object, table: string | undefined, write: (marker?: string) => Promise<T>): Promise<T> {
    const m = this.writeMarkers.issue(this.markedEnded + (table ? 1 : 0)); // once back: every write ended before it, and this one
    if (!m) return write();
    const ended = table === undefined ? undefined : this.ownWrite(...tableWrite(table));
    try {
      return await this.writeMarkers.carry(raw, m, write);
    } finally {
      ended?.();
    }
  }

  /** A new cache of `area` holding at most `max` entries. */
  cache<V>(area: CacheArea, max = 10_000): AreaCache<V> {
    const c = new AreaCache<V>(this, area, max);
    this.caches.get(area)!.push(c);
    return c;
  }

  /**
   * The app's one cache called `name` (made on first use, in `area`, at most `max` entries): for
   * stores that are constructed more than once per app but should share their cache.
   */
  shared<V>(name: string, area: CacheArea, max = 10_000): AreaCache<V> {
    let c = this.named.get(name) as AreaCache<V> | undefined;
    if (!c) this.named.set(name, (c = this.cache<V>(area, max)));
    return c;
  }

  /** The area's generation: incremented by every invalidation. */
  generation(area: CacheArea): number {
    return this.gens.get(area)!;
  }

  /**
   * Incremented by every invalidation of any area (this instance's, and those {@link sync} finds
   * another instance made): what is derived from several areas at once is current while this
   * number is the one read before it was derived.
   */
  epoch = 0;

  /** Incremented by every invalidation of a whole area ({@link epoch} also moves for one key's drop): see {@link keyed}. */
  areaEpoch = 0;

  /** What is derived from named rows of keyed tables, and when it is current (`cache-keyed.ts`). */
  readonly keyed = new KeyedDependencies((name) => this.named.get(name), () => (this.live ? 'live' : this.keyLog ? 'key-log' : 'none'), keyedCacheNames);

  /**
   * The app's kept versions called `name` (made on first use, at most `max` keys): used while
   * live, dropped by notifications `name:<tenant>/<id>` (`kept-versions.ts`).
   */
  keptVersions<V extends {} = string>(name: string, max = 10_000): KeptVersions<V> {
    let k = this.kept.get(name) as KeptVersions<V> | undefined;
    if (!k) this.kept.set(name, (k = new KeptVersions<V>(() => this.live, max)));
    return k;
  }

  /** Empties the caches of `areas` (all when none is named, the kept versions too) of this instance. */
  invalidate(...areas: CacheArea[]): void {
    this.epoch++;
    this.areaEpoch++;
    if (!areas.length) for (const k of this.kept.values()) k.clear();
    for (const a of areas.length ? areas : cacheAreas) {
      this.gens.set(a, this.gens.get(a)! + 1);
      for (const c of this.caches.get(a)!) c.clear();
    }
  }

  /**
   * A notification `#<cache>|<key>` (`cache-tables.ts` keyed tables): drops that one entry (a
   * load of it under way is not stored) and derived answers ({@link epoch}). Loads of other keys
   * and of the area's other caches are stored as usual: a keyed table's rows are held by its own
   * cache only.
   */
  private dropKey(entry: string): void {
    const bar = entry.indexOf('|');
    const c = this.named.get(entry.slice(1, bar));
    this.epoch++;
    c?.delete(entry.slice(bar + 1));
  }

  /**
   * Records that a write changed `areas` (all when none is named): increments their version
   * rows through `db` (pass the write's transaction so the increment commits with it) and
   * empties this instance's caches of those areas.
   */
  async changed(db: Kysely<CacheDatabase>, ...areas: CacheArea[]): Promise<void> {
    const list = areas.length ? areas : [...cacheAreas];
    const seq = await bumpCacheVersions(db, list);
    if (seq !== undefined && seq > this.written) this.written = seq;
    this.requests.noteWrite();
    this.invalidate(...list);
  }

  /**
   * Writes shared values (`shared-values.ts`: the clock offset, the world generation) through
   * `db`; every other instance applies them at its next request (the writer's answer waits for
   * the live ones, as for {@link changed}). @returns the values written.
   */
  async setShared(db: Kysely<CacheDatabase>, values: SharedWrite): Promise<Partial<Record<SharedRow, number>>> {
    const { values: written, seq } = await this.sharedValues.write(db, values);
    if (seq !== undefined && seq > this.written) this.written = seq;
    this.requests.noteWrite();
    return written;
  }

  /**
   * PostgreSQL: joins the live instances (`cache-presence.ts`), so that {@link sync} needs no
   * read while this instance is live. `leaseMs` 0 leaves it out (every turn reads the versions).
   */
  async startPresence(opts: Omit<PresenceOptions, 'invalidate'>): Promise<void> {
    if (!opts.leaseMs) return;
    this.presence = new CachePresence({
      ...opts,
      invalidate: (areas) => {
        if (!areas) {
          // Entering or leaving live mode: the next version read (if any) starts from nothing.
          this.seen = undefined;
          this.invalidate();
          return;
        }
        const known: CacheArea[] = [];
        for (const a of areas) {
          if ((cacheAreas as readonly string[]).includes(a)) known.push(a as CacheArea);
          else if (a.charCodeAt(0) === 35 /* # */) this.dropKey(a);
          else if (!this.sharedValues.notified(a)) {
            // `name:<tenant>/<id>` drops one kept version; `name` alone drops them all.
            const colon = a.indexOf(':');
            const k = this.kept.get(colon < 0 ? a : a.slice(0, colon));
            if (k) (colon < 0 ? k.clear() : k.drop(keyOfEntry(a.slice(colon + 1))));
          }
        }
        if (known.length) this.invalidate(...known);
      },
    });
    await this.presence.start();
  }

  /** Whether this instance is live now (PostgreSQL: no version read per turn; see `cache-presence.ts`). */
  get live(): boolean { return this.presence?.live() ?? false; }

  /** PostgreSQL: this instance's id among the live instances, and the other instances it knows now (tests, diagnostics). */
  get instanceId(): string | undefined { return this.presence?.id; }

  /** The ids of the other instances this one waits for (`cache-peers.ts`); empty when not connected. */
  peerIds = (): string[] => this.presence?.peerIds() ?? [];

  /** Leaves the live instances (PostgreSQL); idempotent. */
  async stopPresence(): Promise<void> {
    await this.presence?.close();
  }

  /**
   * PostgreSQL: records that this instance made a write whose notifications carry no sequence
   * number (a mailbox's first folders, written by whichever request first opened it): the next
   * {@link settle} of any request sends a marker.
   * @param raw the Node request object of a read (`GET`/`HEAD`) the write was made for: it then
   *   waits for the marker too (`cache-requests.ts`)
   * @param ended whether the write already ended (committed or failed); else `writeEnded` tells it
   */
  markWritten(raw?: object, ended = true): void {
    this.marked++;
    if (ended) this.markedEnded++;
    this.requests.mark(raw);
    this.requests.noteWrite();
  }

  /** PostgreSQL: request `raw` (Node's) may write rows whose notifications carry no sequence number (mailbox versions): it sends a marker and waits for it before it is answered ({@link settle}, the app's `onSend` hook). */
  markRequest(raw: object): void {
    this.markedRequests.add(raw);
  }

  /** Whether {@link markRequest} marked `raw`. */
  isMarked = (raw: object): boolean => this.markedRequests.has(raw);

  /** PostgreSQL: whether a write of this instance may not yet be applied by every live instance (then {@link settle} before answering). */
  unsettled(): boolean {
    return this.written > this.confirmed || this.marked > this.markedDone;
  }

  /**
   * PostgreSQL: waits until every live instance, this one included, has applied this
   * instance's writes that are committed. With its presence connection up (`cache-presence.ts`):
   * a marker on that connection (one statement per turn, shared by the turn's callers) and a
   * wait in memory for the peers' pushed acknowledgements. Otherwise (`cache-fallback.ts`): with
   * `marker` (a request that may have written rows whose notifications carry no sequence number:
   * {@link markRequest}) or after {@link markWritten}, a polled marker first, then one statement
   * per look, every 1, 2, 4… 16 ms. Either gives up after twice the lease (by then an instance
   * that does not answer has lost its lease). A request `raw` whose write carried a marker: `cache-write-markers.ts`.
   * @throws the database error of a look (polled path).
   */
  async settle(leaseMs: number, marker = false, raw?: object): Promise<void> {
    const own = raw && this.writeMarkers.of(raw);
    if (own && this.presence?.peerCount() === 0 && (await own.seen) && this.presence.peerCount() === 0) return this.confirm(0, own.confirms);
    const marked = this.markedEnded;
    let target = this.written;
    const self = this.presence?.id ?? '';
    if (this.presence) {
      // Acknowledgements pushed to this instance's connection: a wait in memory (`cache-presence.ts`).
      this.requests.markersSent++;
      const out = await this.presence.confirmWrites(2 * leaseMs + 1000);
      if (out === 'confirmed') this.confirm(target, marked);
      if (out !== 'lost') return;
    }
    // No connection of its own (or lost meanwhile): the polled path (`cache-fallback.ts`).
    if (marker || marked > this.markedDone) {
      this.requests.markersSent++;
      const m = await sendMarker(this.db, self);
      target = Math.max(target, m.seq);
      if (this.presence) await this.presence.whenApplied(m.seq);
      if (m.others === 0) {
        // No other live instance: every sequence number below the marker is committed (the marker waited for its row lock).
        this.confirm(m.seq, marked);
        return;
      }
    }
    const until = performance.now() + 2 * leaseMs + 1000;
    for (let delay = 1; ; delay = Math.min(delay * 2, 16)) {
      const upto = await appliedEverywhere(this.db, self, target);
      if (upto !== undefined) {
        this.confirm(upto, upto >= target ? marked : this.markedDone);
        return;
      }
      if (performance.now() > until) return;
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** Records what {@link settle} found applied everywhere: sequence numbers up to `upto`, `marked` of the counted writes (those ended before it). */
  private confirm(upto: number, marked: number): void {
    if (upto > this.confirmed) this.confirmed = upto;
    if (marked > this.markedDone) this.markedDone = marked;
  }

  /** Brings the caches up to date with writes committed by other instances or processes: one version read, shared by the callers that arrived before it was sent. @throws the database error of the version read. */
  sync(): Promise<void> {
    // Live (PostgreSQL): every write reaches this instance's caches before its writer answers. The turn's callers still continue together, after
    // its I/O (`setImmediate`): their answers leave in one burst (answering each at once cost more CPU a request, waking the peers' readers per answer).
    if (this.presence?.live()) return (this.turn ??= new Promise<void>((resolve) => setImmediate(() => {
      this.turn = undefined;
      resolve();
    })));
    if (this.pending) return this.pending;
    // This turn's callers join; the read, sent after all arrived (clearing `pending`), drops the keys of this instance's keyed writes before it.
    const p = this.versions.get('all').then((now) => this.apply(now!)).then(() => this.keyed.readApplied());
    this.pending = p;
    return p;
  }

  /**
   * Empties the areas whose version moved since the last read (every area at the first read);
   * SQLite, when `#keys` moved: drops the entries the key log names (`cache-keys.ts`).
   * @throws the database error of the key log's read.
   */
  private apply(now: Map<string, string>): void | Promise<void> {
    if (now === this.seen) return;
    this.sharedValues.seen(now);
    const before = this.seen;
    this.seen = now;
    if (!before) {
      this.invalidate();
      return this.keyLog?.restart();
    }
    // An area's own row, or on PostgreSQL one of its keyed writes' shard rows (`cache-tables.ts`).
    const moved = cacheAreas.filter((a) => before.get(a) !== now.get(a) || shardMoved(a, before, now));
    if (moved.length) this.invalidate(...moved);
    if (this.keyLog && before.get('#keys') !== now.get('#keys')) {
      return this.keyLog.read().then((entries) => {
        if (entries === undefined) this.invalidate(...keyedAreas());
        else for (const e of new Set(entries)) this.dropKey(e);
      });
    }
  }
}
