/**
 * Queries built and compiled once, run many times (issue 9: "prepares each statement once").
 * Kysely builds an immutable query tree and compiles it to SQL on every call; for the reads of
 * the request path that is most of their cost. A prepared query is built once per database
 * handle with {@link param} placeholders where the values go, compiled once, and each call
 * only substitutes its arguments and executes — the SQL text is the same every time, so the
 * driver's statement cache (SQLite) and named statements (PostgreSQL) apply too.
 *
 * Usage:
 * ```ts
 * const webhookById = prepared((db: Kysely<Database>) =>
 *   db.selectFrom('automation_webhooks').selectAll().where('id_lower', '=', param(0)));
 * const rows = await webhookById(ctx.store.db, id.toLowerCase());
 * ```
 */
import type { CompiledQuery, Compilable, Kysely } from 'kysely';

/**
 * A synchronous reader of the embedded store's single connection (better-sqlite3), registered
 * for the root `Kysely` instance by `openStore`. `busy()` is true while a caller holds the
 * connection (an open transaction awaiting between its statements, or callers queued for it):
 * then a read goes through Kysely and waits its turn, so it never sees a transaction's
 * uncommitted rows. A short write transaction may run on it too, in one synchronous section,
 * when it is not busy ({@link directConnection}; the mail PATCH of `isRead`, issue 31).
 */
export interface DirectReader {
  busy(): boolean;
  /**
   * The number of the shared read transaction open now (`read-snapshot.ts`: one a turn, numbered
   * from 1 as they open), 0 when none is: reads that see the same number see the same rows.
   */
  snapshot(): number;
  /** The prepared statement of a read's SQL text (better-sqlite3; cached by text). */
  statement(sql: string): DirectStatement;
}

/** What {@link DirectReader.statement} returns (a better-sqlite3 statement). */
export interface DirectStatement {
  /** True while an iteration of this statement is in progress (it cannot run again meanwhile). */
  readonly busy: boolean;
  all(parameters: readonly unknown[]): unknown[];
  /** Runs a statement that returns no rows (a write, `begin`, `commit`). */
  run(parameters: readonly unknown[]): { changes: number };
}

const directReaders = new WeakMap<object, DirectReader>();

/** Registers the direct reader of a root `Kysely` instance (SQLite only; see {@link DirectReader}). */
export function registerDirectReader(db: object, reader: DirectReader): void {
  directReaders.set(db, reader);
}

/** The {@link DirectReader} of a root SQLite `Kysely` instance; undefined for PostgreSQL and transactions. */
export function directConnection(db: object): DirectReader | undefined {
  return directReaders.get(db);
}

const markerPrefix = '\u0000stratus:param:';

/**
 * Placeholder for the `index`-th argument of a {@link prepared} query (typed as the column
 * value it stands for; it is a marker string until the call substitutes it).
 */
export function param<T = string>(index: number): T {
  return `${markerPrefix}${index}\u0000` as unknown as T;
}

function slotOf(value: unknown): number | undefined {
  if (typeof value !== 'string' || !value.startsWith(markerPrefix)) return undefined;
  return Number(value.slice(markerPrefix.length, -1));
}

/**
 * A compiled query run many times with different arguments ({@link template}, {@link runTemplate};
 * what {@link prepared} keeps per database handle).
 */
export interface Template<O> {
  query: CompiledQuery<O>;
  /** For each parameter of the SQL: the argument index that fills it, or undefined for a constant. */
  slots: (number | undefined)[];
  /** A `select` (may run on the {@link DirectReader}). */
  reader: boolean;
  /** Its statement on the {@link DirectReader}, once prepared there. */
  statement?: DirectStatement;
}

/**
 * A {@link Template} of a query compiled with {@link param} placeholders where its arguments go
 * (every other value is a constant of the template).
 */
export function template<O>(query: CompiledQuery<O>): Template<O> {
  return { query, slots: query.parameters.map(slotOf), reader: query.query.kind === 'SelectQueryNode' };
}

/**
 * Runs a {@link Template} with `args` filling its placeholders, on `db` (the handle it was
 * compiled for): SQLite with the connection free runs the statement at once (no mutex and
 * promise hops of the driver); PostgreSQL, a transaction, or a busy connection go through Kysely.
 */
export async function runTemplate<DB, O>(db: Kysely<DB>, c: Template<O>, args: readonly unknown[]): Promise<O[]> {
  const { query, slots } = c;
  const parameters = slots.map((s, i) => (s === undefined ? query.parameters[i] : args[s]));
  const direct = directReaders.get(db);
  if (direct !== undefined && c.reader && !direct.busy()) {
    let stmt = c.statement;
    if (stmt === undefined || stmt.busy) stmt = c.statement = direct.statement(query.sql);
    return stmt.all(parameters) as O[];
  }
  return (await db.executeQuery<O>({ ...query, parameters })).rows;
}

/**
 * A query compiled once per database handle (a `Kysely` instance or a transaction).
 * @param build makes the query; every value that varies is `param(i)`; everything else is constant.
 * @returns `(db, ...args) => rows`; `args[i]` fills `param(i)`.
 * @throws Error at first use when the query has no placeholder for an argument index used later (a programming error).
 */
export function prepared<DB, O, A extends unknown[] = unknown[]>(build: (db: Kysely<DB>) => Compilable<O>): (db: Kysely<DB>, ...args: A) => Promise<O[]> {
  const byDb = new WeakMap<Kysely<DB>, Template<O>>();
  // Not an async function: the promise of runTemplate is returned as it is (no further hops).
  return (db, ...args) => {
    let c = byDb.get(db);
    if (!c) {
      try {
        c = template(build(db).compile());
      } catch (e) {
        return Promise.reject(e);
      }
      byDb.set(db, c);
    }
    return runTemplate(db, c, args);
  };
}
