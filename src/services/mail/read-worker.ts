/**
 * Long mailbox reads off the event loop (issue 9: "no single request holds the event loop
 * longer than a few milliseconds"): on a SQLite file store, `$search` pages and counts that
 * the folder counters cannot answer run on a worker thread with its own read-only connection
 * (WAL lets it read beside the writer; it sees every committed write). A search for a common
 * word over a million messages then costs that request its time, not every other request's.
 * PostgreSQL and in-memory stores run the query in place.
 *
 * The worker keeps the last results of small reads (at most {@link maxKeptRows} rows: search
 * pages, counts) with the database's `data_version` when they were read: its connection never
 * writes, so that version moves exactly when any other connection (this server, another
 * instance of the CLI) commits. The same query asked again before any commit is answered from
 * what it kept (a copy: rows are cloned to the caller); after a commit it runs again. The
 * version is read before the query: a result newer than the version it is kept under means a
 * commit came in between, the version has moved, and that result is never served.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { sql, type Compilable, type Kysely } from 'kysely';
import { isPostgres } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';

/** The worker keeps results of at most this many rows (a search page, a count)... */
const maxKeptRows = 100;
/** ...and at most this many of them, the most recently used. */
const maxKeptResults = 256;

const source = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
const statements = new Map();
const dataVersion = db.prepare('pragma data_version').pluck();
const results = new Map();
parentPort.on('message', ({ id, sql, params }) => {
  try {
    // This connection never writes: its data_version moves exactly when another connection commits.
    const version = dataVersion.get();
    const key = sql + '\u0000' + JSON.stringify(params);
    const kept = results.get(key);
    if (kept && kept.version === version) {
      results.delete(key);
      results.set(key, kept);
      parentPort.postMessage({ id, rows: kept.rows });
      return;
    }
    let st = statements.get(sql);
    if (!st) {
      st = db.prepare(sql);
      statements.set(sql, st);
      if (statements.size > 500) statements.delete(statements.keys().next().value);
    }
    const rows = st.all(...params);
    if (rows.length <= ${maxKeptRows}) {
      results.set(key, { version, rows });
      if (results.size > ${maxKeptResults}) results.delete(results.keys().next().value);
    } else results.delete(key);
    parentPort.postMessage({ id, rows });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

interface Reader {
  worker: Worker;
  next: number;
  pending: Map<number, { resolve: (rows: unknown[]) => void; reject: (e: Error) => void }>;
}

/** One reader per database file and inode. */
const readers = new Map<string, Reader | undefined>();
const stores = new WeakMap<Kysely<Database>, { file: string; key: string }>();

async function readerFor(db: Kysely<Database>): Promise<Reader | undefined> {
  if (isPostgres(db)) return undefined;
  let where = stores.get(db);
  if (where === undefined) {
    // Once per store: its file, and the reader's key (file and inode: a store made again at the same path gets a reader of its own).
    const r = await sql<{ file: string }>`select file from pragma_database_list where name = 'main'`.execute(db);
    const file = r.rows[0]?.file ?? '';
    let key = '';
    try {
      if (file) key = `${file}:${fs.statSync(file).ino}`;
    } catch {
      key = '';
    }
    where = { file, key };
    stores.set(db, where);
  }
  if (!where.key) return undefined;
  const { file, key } = where;
  if (!readers.has(key)) {
    const worker = new Worker(source, { eval: true, workerData: { file, driver: createRequire(import.meta.url).resolve('better-sqlite3') } });
    const reader: Reader = { worker, next: 1, pending: new Map() };
    worker.on('message', (m: { id: number; rows?: unknown[]; error?: string }) => {
      const p = reader.pending.get(m.id);
      reader.pending.delete(m.id);
      if (reader.pending.size === 0) worker.unref();
      if (m.error !== undefined) p?.reject(new Error(m.error));
      else p?.resolve(m.rows!);
    });
    const fail = (e: Error) => {
      for (const p of reader.pending.values()) p.reject(e);
      reader.pending.clear();
      readers.delete(key);
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('mail read worker exited')));
    // Referenced only while a query is out (adding a listener refs it again): an idle worker never keeps the process alive.
    worker.unref();
    readers.set(key, reader);
  }
  return readers.get(key);
}

/**
 * Runs a read-only query: on the worker thread of a SQLite file store, else on `db`.
 * @returns the rows as the driver returns them
 * @throws Error when the database reports one
 */
export async function readOffThread(db: Kysely<Database>, query: Compilable<any>): Promise<any[]> {
  const reader = await readerFor(db);
  const c = query.compile();
  if (!reader) return (await db.executeQuery(c)).rows as any[];
  const id = reader.next++;
  return new Promise<any[]>((resolve, reject) => {
    if (reader.pending.size === 0) reader.worker.ref();
    reader.pending.set(id, { resolve: resolve as (rows: unknown[]) => void, reject });
    reader.worker.postMessage({ id, sql: c.sql, params: c.parameters });
  });
}
