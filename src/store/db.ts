/**
 * The store: one Kysely database over better-sqlite3 (embedded default, WAL, one file in
 * the data folder) or PostgreSQL (`pg`, set by a database URL), with versioned migrations
 * applied at start (design: "Storage").
 *
 * Conventions every area follows so that one query runs on both dialects:
 * - times are ISO 8601 UTC strings with milliseconds (`TEXT`), which sort as times;
 * - booleans are integers 0/1; JSON documents are `TEXT` (see {@link toJson}/{@link fromJson});
 * - every row carries its tenant (and subscription or mailbox where that applies).
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Migration, type SqliteDatabase, type SqliteDialectConfig, type SqliteStatement } from 'kysely';
import type pg from 'pg';
import type { StoreTables } from './tables.ts';
import { registerDirectReader, type DirectStatement } from './prepared.ts';
import { nameStatements, writeText, type StatementHooks } from './statements.ts';
import { inSnapshot, ReadSnapshot } from './read-snapshot.ts';
import { boundLimitOf, limitInlined } from './sqlite-limits.ts';
import { servingCheckpointPages, startCheckpointer, type Checkpointer } from './checkpointer.ts';

/** Which SQL dialect the store runs on. */
export type DialectName = 'sqlite' | 'postgres';

/** Migrations keyed by a globally unique name `<area>_<NNNN>_<what>`; they run in name order. */
export type Migrations = Record<string, Migration>;

/** Options of {@link openStore}. */
export interface StoreOptions {
  /** `postgres://…` for PostgreSQL; otherwise SQLite. */
  databaseUrl?: string;
  /** PostgreSQL schema (created if missing) that every connection uses as its search_path. */
  databaseSchema?: string;
  /** SQLite file; `:memory:` for a throwaway store. */
  sqliteFile?: string;
  /** SQLite `synchronous` mode of the WAL journal (default `NORMAL`; see {@link SqliteSynchronous}). */
  sqliteSynchronous?: SqliteSynchronous;
}

/**
 * SQLite's `synchronous` pragma in WAL mode (`STRATUS_SQLITE_SYNCHRONOUS`):
 * - `NORMAL` (default): a commit is in the WAL file before it is acknowledged, the WAL is
 *   fsynced at checkpoints. Every acknowledged write survives a process crash (`kill -9`);
 *   a power loss or OS crash may lose the last transactions (never corrupts the file).
 * - `FULL` / `EXTRA`: the WAL is fsynced at every commit (~0.3 ms each on this machine kind);
 *   acknowledged writes also survive a power loss.
 * - `OFF`: no fsync at all; survives a process crash, a power loss may corrupt the file.
 */
export type SqliteSynchronous = 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';

/** Distinct SQL texts whose prepared statements are kept (per SQLite database / per pg connection). */
export const statementCacheSize = 1000;

/**
 * Wraps a better-sqlite3 database so that `prepare` returns a cached statement for a SQL text
 * already seen (bounded LRU of {@link statementCacheSize}); Kysely's SqliteDialect prepares
 * anew otherwise (~10 µs per small select against ~0.4 µs to run it). A statement still
 * being iterated (busy) is not shared: a fresh one is prepared for that call. `hooks.onWrite`
 * hears every write text prepared (Kysely prepares each statement it runs). With `snapshot`, a
 * statement that is not a select ends the shared read transaction before it runs.
 */
export function cachingSqlite(database: SQLite.Database, max = statementCacheSize, hooks: StatementHooks = {}, snapshot?: ReadSnapshot): SqliteDatabase {
  const cache = new LRUCache<string, SQLite.Statement>({ max });
  const plain = (text: string): SQLite.Statement => {
    let stmt = cache.get(text);
    if (stmt && !stmt.busy) return stmt;
    stmt = database.prepare(text);
    cache.set(text, stmt);
    return stmt;
  };
  return {
    close: () => {
      snapshot?.end();
      database.close();
    },
    prepare(text: string): SqliteStatement {
      // Kysely prepares every statement it runs (cached here): once per execution.
      snapshot?.beforeStatement(text);
      if (hooks.onWrite && writeText.test(text)) (hooks.onWrite(text) || undefined)?.(); // no instance waits for another on SQLite: ended at once
      const limit = boundLimitOf(text);
      return (limit ? limitInlined(limit, text, plain) : plain(text)) as unknown as SqliteStatement;
    },
  };
}

/**
 * Kysely's SQLite driver, counting the callers that hold or wait for its single connection
 * (`held`), so {@link registerDirectReader}'s reads know when the connection is free.
 */
class TrackedSqliteDriver extends SqliteDriver {
  /** Callers that acquired (or are waiting to acquire) the connection and have not released it. */
  held = 0;
  override async acquireConnection(): Promise<DatabaseConnection> {
    this.held++;
    try {
      return await super.acquireConnection();
    } catch (e) {
      this.held--;
      throw e;
    }
  }
  override async releaseConnection(): Promise<void> {
    this.held--;
    await super.releaseConnection();
  }
}

/** {@link SqliteDialect} with a {@link TrackedSqliteDriver}. */
class TrackedSqliteDialect extends SqliteDialect {
  driver: TrackedSqliteDriver | undefined;
  constructor(private readonly sqliteConfig: SqliteDialectConfig) {
    super(sqliteConfig);
  }
  override createDriver(): TrackedSqliteDriver {
    this.driver = new TrackedSqliteDriver(this.sqliteConfig);
    return this.driver;
  }
}

/**
 * An open database with its dialect; close it once at shutdown. `DB` is the tables it is
 * typed with: the app's store is a `Store<Database>` (src/store/database.ts); a bare store
 * knows only its own `stratus_migrations` table.
 */
export class Store<DB = StoreTables> {
  /** The Kysely instance, typed by `DB`. */
  readonly db: Kysely<DB>;
  readonly dialect: DialectName;
  /** The PostgreSQL schema every connection uses, when one was named. */
  readonly schema: string | undefined;
  private readonly closer: () => Promise<void>;
  private readonly afterMigrate: () => void;
  private readonly hooks: StatementHooks;
  private readonly writeWatchers: ((text: string) => (() => void) | void)[] = [];
  /** A SQLite file store's checkpoint worker (`checkpointer.ts`); undefined on PostgreSQL and in memory. */
  checkpointer: Checkpointer | undefined;

  constructor(db: Kysely<DB>, dialect: DialectName, closer: () => Promise<void>, schema?: string, afterMigrate: () => void = () => {}, hooks: StatementHooks = {}) {
    this.db = db;
    this.dialect = dialect;
    this.closer = closer;
    this.schema = schema;
    this.afterMigrate = afterMigrate;
    this.hooks = hooks;
  }

  /**
   * Calls `fn` with the text of every write statement this store runs (any connection of its
   * pool, in or out of a transaction), before it runs: the cache hub's view of this
   * instance's own writes (`core/cache-tables.ts`), and the embedded store's kept mailbox
   * versions (`services/mail/local-versions.ts`). Watchers are called in the order they came.
   * A watcher may return a callback, called once the write ended (`StatementHooks.onWrite`).
   */
  watchWrites(fn: (text: string) => (() => void) | void): void {
    const all = this.writeWatchers;
    all.push(fn);
    // One watcher is called directly (the usual case: the cache hub alone).
    this.hooks.onWrite = all.length > 1 ? (text) => {
      const ends = all.map((w) => w(text)).filter((e): e is () => void => typeof e === 'function');
      return ends.length ? () => ends.forEach((e) => e()) : undefined;
    } : fn;
  }

  /** Runs `fn` in one transaction; everything it writes commits together or not at all. */
  async transaction<T>(fn: (trx: Kysely<DB>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  /**
   * Applies every migration not yet applied, in name order, in one transaction, recording
   * each in `stratus_migrations`. On PostgreSQL an advisory lock on the schema serializes
   * instances starting together. Only the store's own schema is read: no catalog-wide
   * introspection, which races with other schemas being dropped on the same database.
   * Stores migrated by the earlier Kysely migrator (`kysely_migration`) are adopted.
   * @throws Error naming the failed migration; nothing of the run is applied then.
   */
  async migrate(migrations: Migrations): Promise<void> {
    const pg = this.dialect === 'postgres';
    // Every store has its own table, whatever else `DB` declares.
    const db = this.db as unknown as Kysely<StoreTables>;
    await db.transaction().execute(async (trx) => {
      if (pg) await sql`select pg_advisory_xact_lock(hashtext(current_schema()))`.execute(trx);
      await sql`create table if not exists stratus_migrations (name varchar(255) primary key, applied_at varchar(32) not null)`.execute(trx);
      const legacy = pg
        ? (await sql<{ r: string | null }>`select to_regclass('kysely_migration')::text as r`.execute(trx)).rows[0]?.r
        : (await sql<{ r: string }>`select name as r from sqlite_master where type = 'table' and name = 'kysely_migration'`.execute(trx)).rows[0]?.r;
      if (legacy) {
        await sql`insert into stratus_migrations (name, applied_at) select name, "timestamp" from kysely_migration where name not in (select name from stratus_migrations)`.execute(trx);
      }
      const done = new Set((await trx.selectFrom('stratus_migrations').select('name').execute()).map((r) => String(r.name)));
      for (const name of Object.keys(migrations).sort()) {
        if (done.has(name)) continue;
        try {
          await migrations[name]!.up(trx);
        } catch (e) {
          throw new Error(`migration ${name} failed: ${(e as Error).message ?? e}`);
        }
        await trx.insertInto('stratus_migrations').values({ name, applied_at: new Date().toISOString() }).execute();
      }
    });
    // The schema is final: PostgreSQL statements may be prepared by name from now on
    // (a `select *` prepared before a migration altered its table would fail to re-plan).
    this.afterMigrate();
  }

  /** Closes the connection(s); idempotent. */
  async close(): Promise<void> {
    await this.closer();
  }
}

/**
 * Opens the store named by the options, typed with the tables `DB` its migrations will make
 * (the app opens a `Store<Database>`; by default only the store's own table is known).
 * @throws Error when PostgreSQL cannot be reached or the SQLite file cannot be opened.
 */
export async function openStore<DB = StoreTables>(opts: StoreOptions): Promise<Store<DB>> {
  if (opts.databaseUrl) {
    // Loaded only for PostgreSQL: the embedded default starts without it.
    const { default: pg } = await import('pg');
    const schema = opts.databaseSchema;
    if (schema) {
      if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name '${schema}'`);
      const c = new pg.Client({ connectionString: opts.databaseUrl });
      await c.connect();
      await c.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await c.end();
    }
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: 10,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    let prepared = false;
    const hooks: StatementHooks = {};
    pool.on('connect', (client) => nameStatements(client, () => prepared, hooks, statementCacheSize));
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    await sql`select 1`.execute(db);
    let closed = false;
    return new Store(
      db,
      'postgres',
      async () => {
        if (closed) return;
        closed = true;
        await db.destroy();
      },
      schema,
      () => {
        prepared = true;
      },
      hooks,
    );
  }
  const file = opts.sqliteFile ?? ':memory:';
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  const synchronous = opts.sqliteSynchronous ?? 'NORMAL';
  if (!['OFF', 'NORMAL', 'FULL', 'EXTRA'].includes(synchronous)) throw new Error(`invalid SQLite synchronous mode '${synchronous}'`);
  database.pragma(`synchronous = ${synchronous}`);
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // Reads through a memory map (up to 256 MiB of the file) instead of a read() into the page
  // cache per page: a message row is 3-4 KB, so 10,000 distinct messages are far more than the
  // default 2 MB page cache (issue 31: message GET 85 -> 54 us of CPU a request, bench/README.md).
  database.pragma('mmap_size = 268435456');
  // Checkpoints on a worker thread, mostly not in a commit on the event loop (`checkpointer.ts`).
  const checkpointer = file !== ':memory:' ? startCheckpointer(file, synchronous) : undefined;
  if (checkpointer) database.pragma(`wal_autocheckpoint = ${servingCheckpointPages}`);
  const hooks: StatementHooks = {};
  const snapshot = new ReadSnapshot(database);
  const statements = cachingSqlite(database, statementCacheSize, hooks, snapshot);
  const dialect = new TrackedSqliteDialect({ database: statements });
  const db = new Kysely<DB>({ dialect });
  registerDirectReader(db, {
    busy: () => dialect.driver?.held !== 0,
    snapshot: () => snapshot.current(),
    statement: (text) => inSnapshot(statements.prepare(text) as unknown as DirectStatement & { reader: boolean }, snapshot),
  });
  let closed = false;
  const store = new Store(
    db,
    'sqlite',
    async () => {
      if (closed) return;
      closed = true;
      await checkpointer?.close();
      await db.destroy();
    },
    undefined,
    undefined,
    hooks,
  );
  store.checkpointer = checkpointer;
  return store;
}

/** Serializes a JSON document for a TEXT column. */
export function toJson(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** Parses a TEXT column written by {@link toJson}; `null`/`undefined` stay `null`. */
export function fromJson<T = unknown>(text: string | null | undefined): T {
  if (text === null || text === undefined) return null as T;
  return JSON.parse(text) as T;
}

/**
 * Defines `target[name]` as the document stored in `text`, parsed ({@link fromJson}) when first
 * read: most reads of a stored row never look at its document (an existence check, an answer
 * kept as text). An own enumerable accessor, so spreads, `structuredClone` and `JSON.stringify`
 * see it like a plain property; assigning replaces the parsed value. `onParse` is called with the
 * parsed value when it is parsed (not for an assigned one).
 */
export function lazyJson<T extends object, K extends keyof T>(target: T, name: K, text: string | null, onParse?: (value: T[K]) => void): T {
  let parsed: T[K] | undefined;
  Object.defineProperty(target, name, {
    enumerable: true,
    configurable: true,
    get: () => {
      if (parsed === undefined) {
        parsed = fromJson<T[K]>(text);
        onParse?.(parsed);
      }
      return parsed;
    },
    set: (v: T[K]) => {
      parsed = v;
    },
  });
  return target;
}

/** Converts a boolean column value (0/1, true/false) to a boolean. */
export function bool(v: unknown): boolean {
  return v === true || v === 1 || v === '1';
}

/** Whether `db` (a database, transaction or migration handle) runs on PostgreSQL. */
export function isPostgres<DB>(db: Kysely<DB>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Column type and builder for an auto-incrementing integer primary key on either dialect
 * (`bigserial` on PostgreSQL, `integer … autoincrement` on SQLite). Usage:
 * `.addColumn('seq', ...autoIncrementKey(db))`. Values come back as strings from `pg`: wrap in `Number()`.
 */
export function autoIncrementKey<DB>(db: Kysely<DB>): [any, (c: any) => any] {
  return isPostgres(db) ? ['bigserial', (c: any) => c.primaryKey()] : ['integer', (c: any) => c.primaryKey().autoIncrement()];
}

/** True when `e` is a unique-key violation on either dialect (e.g. a concurrent create won the race). */
export function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | undefined;
  return err?.code === '23505' || (typeof err?.code === 'string' && err.code.startsWith('SQLITE_CONSTRAINT')) || /UNIQUE constraint failed/.test(err?.message ?? '');
}
