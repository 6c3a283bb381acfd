/**
 * Reads (or counts) batched per event-loop turn (issue 9: "looks nothing up twice"). Requests
 * that need the same kind of small database round trip in one turn of the event loop — a
 * mailbox's version, a rate-limit count — share one: the first caller opens a batch, the
 * callers that arrive before it is sent join it, and it is sent from `setImmediate` (after the
 * turn's I/O callbacks ran). A batch is never shared with a caller that arrived after it was
 * sent, so every caller sees what was committed before it asked — the rule
 * {@link CacheHub.sync} follows for the cache versions.
 *
 * **One round trip per turn on PostgreSQL** ({@link TurnTrip}). A batch made with a
 * {@link TripPart} on a PostgreSQL handle is not sent alone: every such batch opened in the same
 * turn (the cache versions, the rate-limit counts, the mailbox versions…) goes to the database
 * in one statement, each part a branch of one `UNION ALL` (a part that writes — the counters —
 * puts its upserts in data-modifying `WITH` items, which run exactly once). One statement sees
 * one snapshot, sent after every caller of every part arrived, so the rule above holds for each
 * part. A mail read thus costs one round trip per turn where it cost three in sequence (its
 * request waits once, not three times, and the database parses and answers one statement).
 * SQLite has no round trip to save: there each batch runs its own `load`.
 */
import { sql, type Kysely, type QueryExecutorProvider, type RawBuilder } from 'kysely';
import { isPostgres } from '../store/db.ts';

/** What {@link TickBatch.join} resolves to: the key's value and the caller's place among the batch's callers of that key. */
export interface BatchShare<V> {
  /** The key's value as loaded (undefined when `load` left it out). */
  value: V | undefined;
  /** 0 for the first caller of the key in the batch, 1 for the next… */
  place: number;
  /** How many callers of the key the batch had. */
  of: number;
}

interface Waiter<V> {
  resolve: (share: BatchShare<V>) => void;
  reject: (e: unknown) => void;
}

/** A row of a {@link TurnTrip} statement: a part's branch yields text columns (null when unused). */
export interface TripRow {
  k1: string | null;
  k2: string | null;
  v1: string | null;
  v2: string | null;
}

/**
 * One kind of batch as a branch of the turn's PostgreSQL statement.
 * @typeParam K the batch's keys; V their values.
 */
export interface TripPart<K, V> {
  /**
   * The branch for the batch's keys (with how many callers asked for each): a `select` whose
   * columns are `k1`, `k2`, `v1`, `v2`, all `text` (cast them; `null::text` for an unused one).
   * A part that writes declares each data-modifying statement with `cte(body)`, which adds it
   * as a `WITH` item and returns the item's name to select from.
   */
  branch(keys: Map<K, number>, cte: (body: RawBuilder<unknown>) => string): RawBuilder<unknown>;
  /** The values of the batch's keys from the branch's rows; a key left out reads as `undefined`. */
  decode(rows: TripRow[], keys: Map<K, number>): Map<K, V>;
}

/** A batch handed to a {@link TurnTrip}: its part, and what the trip calls when it sends the turn's statement. */
interface Enlisted {
  part: TripPart<any, any>;
  /** Closes the batch to new callers; returns its keys with their callers' counts. */
  take: () => Map<any, number>;
  settle: (values: Map<any, any>) => void;
  fail: (e: unknown) => void;
}

/**
 * The PostgreSQL round trip of one event-loop turn, shared by every {@link TickBatch} made with
 * a {@link TripPart} on the same database handle (see the module note). Get it with
 * {@link turnTrip}.
 */
export class TurnTrip {
  private pending: Enlisted[] | undefined;

  constructor(private readonly db: QueryExecutorProvider) {}

  /** Adds a batch to this turn's statement (sent from `setImmediate`, after the turn's callers arrived). */
  enlist(batch: Enlisted): void {
    let list = this.pending;
    if (!list) {
      const l = (list = this.pending = []);
      setImmediate(() => {
        if (this.pending === l) this.pending = undefined;
        void this.send(l);
      });
    }
    list.push(batch);
  }

  private async send(list: Enlisted[]): Promise<void> {
    const keys = list.map((b) => b.take());
    try {
      const withs: RawBuilder<unknown>[] = [];
      const cte = (body: RawBuilder<unknown>) => {
        const name = `w${withs.length}`;
        withs.push(sql`${sql.raw(name)} as (${body})`);
        return name;
      };
      const branches = list.map((b, i) => sql`select ${sql.raw(String(i))} as p, k1, k2, v1, v2 from (${b.part.branch(keys[i]!, cte)}) as ${sql.raw(`b${i}`)}`);
      const body = sql.join(branches, sql` union all `);
      const statement = withs.length ? sql<TripRow & { p: number }>`with ${sql.join(withs)} ${body}` : sql<TripRow & { p: number }>`${body}`;
      const { rows } = await statement.execute(this.db);
      const byPart = list.map((): TripRow[] => []);
      for (const r of rows) byPart[Number(r.p)]!.push(r);
      list.forEach((b, i) => {
        try {
          b.settle(b.part.decode(byPart[i]!, keys[i]!));
        } catch (e) {
          b.fail(e);
        }
      });
    } catch (e) {
      for (const b of list) b.fail(e);
    }
  }
}

const trips = new WeakMap<object, TurnTrip>();

/** The {@link TurnTrip} of a PostgreSQL handle (one per handle), or undefined on SQLite. */
export function turnTrip<DB>(db: Kysely<DB>): TurnTrip | undefined {
  if (!isPostgres(db)) return undefined;
  let t = trips.get(db);
  if (!t) trips.set(db, (t = new TurnTrip(db)));
  return t;
}

/**
 * A batched loader of values by key.
 * @param load reads (or writes) the distinct keys of one batch at once, given how many callers
 *   asked for each; a key missing from its result reads as `undefined`. Its error rejects every caller of the batch.
 * @param via the {@link TurnTrip} that carries the batch (`turnTrip(db)`: undefined on SQLite)
 *   and the part it is there; with a trip, `load` is not used.
 */
export class TickBatch<K, V> {
  private pending: Map<K, Waiter<V>[]> | undefined;
  private readonly trip: TurnTrip | undefined;
  private readonly part: TripPart<K, V> | undefined;

  constructor(
    private readonly load: (keys: Map<K, number>) => Promise<Map<K, V>>,
    via?: { trip: TurnTrip | undefined; part: TripPart<K, V> },
  ) {
    this.trip = via?.trip;
    this.part = via?.part;
  }

  /** The value of `key` as loaded by this turn's batch. @throws what `load` throws. */
  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => this.add(key, { resolve: (share) => resolve(share.value), reject }));
  }

  /** The value of `key` and this caller's place among the batch's callers of it. @throws what `load` throws. */
  join(key: K): Promise<BatchShare<V>> {
    return new Promise((resolve, reject) => this.add(key, { resolve, reject }));
  }

  private add(key: K, waiter: Waiter<V>): void {
    let batch = this.pending;
    if (!batch) {
      const b = (batch = this.pending = new Map<K, Waiter<V>[]>());
      const settle = (values: Map<K, V>) => {
        for (const [k, waiters] of b) waiters.forEach((w, place) => w.resolve({ value: values.get(k), place, of: waiters.length }));
      };
      const fail = (e: unknown) => {
        for (const waiters of b.values()) for (const w of waiters) w.reject(e);
      };
      const take = () => {
        if (this.pending === b) this.pending = undefined;
        return new Map([...b].map(([k, waiters]) => [k, waiters.length]));
      };
      // On PostgreSQL sent with the turn's other batches, else alone; closed to new callers when sent.
      if (this.trip) this.trip.enlist({ part: this.part!, take, settle, fail });
      else setImmediate(() => void this.load(take()).then(settle, fail));
    }
    const waiters = batch.get(key);
    if (waiters) waiters.push(waiter);
    else batch.set(key, [waiter]);
  }
}

