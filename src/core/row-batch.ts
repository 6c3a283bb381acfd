/**
 * PostgreSQL: reads of single rows by key, made by the requests of one event-loop turn, sent in
 * the turn's one statement (`tick-batch.ts`, {@link TurnTrip}) instead of one statement each
 * (issue 31: the 90/10 mix on PostgreSQL).
 *
 * Each statement sent wakes a database backend, and on a machine whose cores are all busy (the
 * database, Stratus and the clients on one host) that wake-up costs the sender its core for a
 * while: in the CPU profile of the mix, the socket writes of `pg`'s queries held a third of
 * Stratus's busy samples, a message or webhook row read (a cache miss) being most of them. A
 * turn's misses now share one statement: the keys go in as arrays (`unnest … with ordinality`),
 * so the text is the same for any number of keys and runs as one named prepared statement, and
 * each row comes back as a JSON array of its columns (`v1`) plus one long text column left as
 * it is (`v2`: a message's stored document is not escaped into JSON and parsed twice).
 *
 * **One plan.** PostgreSQL plans a named statement again at every execution while its custom
 * plans look cheaper than the generic one (`plan_cache_mode = auto`), and for `unnest` of an
 * array parameter they always do: a custom plan counts the array's elements (1–3 keys), the
 * generic one assumes 10 rows. So this statement was planned on every turn: measured on the
 * bench's store, 3,000 executions of the message read of 1–3 keys took 337–360 µs of the
 * backend's CPU each, 3,000 custom plans. Each array is therefore passed as a scalar subquery,
 * `unnest((select $1::text[]))`, whose length no plan knows: custom and generic plans cost the
 * same, the server keeps the generic plan after its first five executions (2,995 of 3,000), and
 * an execution took 137–140 µs. The plan itself is unchanged (the keys' index lookups).
 *
 * The rule of every turn batch holds: a caller shares only a statement sent after it asked, so
 * it sees every write committed before it asked. Only for reads on the store's root handle
 * (never inside a transaction: its statements must run on its own connection, in order).
 */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { TickBatch, turnTrip, type TripPart, type TripRow } from './tick-batch.ts';

/** One kind of row read by key: its table, the key columns, the columns returned. */
export interface RowRead {
  /** A name for diagnostics. */
  name: string;
  /** How many text values make a key (the arrays passed to `unnest`, as `q.k1`, `q.k2`, …). */
  keyParts: number;
  /**
   * The lateral subquery for one key (`q.k1`… are the key's parts): a `select` of at most one
   * row whose columns are {@link columns} and, when {@link longColumn} is set, that one last.
   */
  lookup: RawBuilder<unknown>;
  /** The columns of the row, in the order the subquery returns them (without {@link longColumn}). */
  columns: readonly string[];
  /** A long text column returned apart (not inside the JSON array). */
  longColumn?: string;
}

/** A row as read: column name → value (JSON-decoded: text, number, boolean or null). */
export type BatchedRow = Record<string, unknown>;

const separator = '\u0000';

function part(read: RowRead): TripPart<string, BatchedRow> {
  const parts = Array.from({ length: read.keyParts }, (_, i) => `k${i + 1}`);
  const cols = sql.raw(read.columns.map((c) => `r.${c}`).join(', '));
  const long = read.longColumn ? sql.raw(`r.${read.longColumn}`) : sql.raw('null::text');
  return {
    branch(keys) {
      const arrays: string[][] = parts.map(() => []);
      for (const k of keys.keys()) {
        const values = k.split(separator);
        for (let i = 0; i < parts.length; i++) arrays[i]!.push(values[i]!);
      }
      // Each array as a scalar subquery: see the module note, "one plan".
      const unnest = sql.join(arrays.map((a) => sql`(select ${a}::text[])`));
      return sql`select q.i::text as k1, null::text as k2, json_build_array(${cols})::text as v1, ${long} as v2 from unnest(${unnest}) with ordinality as q(${sql.raw(parts.join(', '))}, i) cross join lateral (${read.lookup}) as r`;
    },
    decode(rows: TripRow[], keys) {
      const list = [...keys.keys()];
      const out = new Map<string, BatchedRow>();
      for (const r of rows) {
        const values = JSON.parse(r.v1!) as unknown[];
        const row: BatchedRow = {};
        for (let i = 0; i < read.columns.length; i++) row[read.columns[i]!] = values[i];
        if (read.longColumn) row[read.longColumn] = r.v2;
        out.set(list[Number(r.k1) - 1]!, row);
      }
      return out;
    },
  };
}

const batches = new WeakMap<object, Map<RowRead, TickBatch<string, BatchedRow>>>();

/**
 * The row of `read` for the key `parts` (each a text), read in this turn's statement on
 * PostgreSQL; undefined when there is none. Returns undefined without reading on SQLite and on a
 * transaction's handle: the caller reads there as before.
 * @throws the database error of the turn's statement
 */
export function rowInTurn<DB>(db: Kysely<DB>, read: RowRead, parts: readonly string[]): Promise<BatchedRow | undefined> | undefined {
  // A transaction's reads stay on its own connection, in order.
  const trip = db.isTransaction ? undefined : turnTrip(db);
  if (!trip) return undefined;
  let byRead = batches.get(db);
  if (!byRead) batches.set(db, (byRead = new Map()));
  let batch = byRead.get(read);
  if (!batch) {
    byRead.set(read, (batch = new TickBatch<string, BatchedRow>(() => Promise.reject(new Error(`${read.name}: PostgreSQL only`)), { trip, part: part(read) })));
  }
  return batch.get(parts.join(separator));
}
