/**
 * Synchronous writes on the embedded store's single connection (issue 31): see {@link DirectWriter}.
 */

/** A better-sqlite3 statement as {@link DirectWriter} hands it out. */
export interface DirectWriteStatement {
  run(parameters: readonly unknown[]): { changes: number };
}

/**
 * Synchronous statements on the embedded store's single connection (SQLite root handles only;
 * see `registerDirectReader` of `prepared.ts` for the reads): a short write transaction run in
 * one synchronous section when no caller holds the connection (`busy()` false) — no driver
 * mutex and promise hops, and the connection is never held across an await (issue 31: the
 * mail PATCH of `isRead`, `src/services/mail/writes.ts`). Statements go through the store's
 * statement cache, so the cache hub hears the writes as it hears every other.
 */
export interface DirectWriter {
  busy(): boolean;
  statement(sql: string): DirectWriteStatement;
}
const directWriters = new WeakMap<object, DirectWriter>();

/** Registers the direct writer of a root SQLite `Kysely` instance (by `openStore`). */
export function registerDirectWriter(db: object, writer: DirectWriter): void {
  directWriters.set(db, writer);
}

/** The {@link DirectWriter} of a root SQLite `Kysely` instance; undefined for PostgreSQL and transactions. */
export function directWriter(db: object): DirectWriter | undefined {
  return directWriters.get(db);
}
