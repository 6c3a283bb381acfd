/**
 * Statements compiled once per dialect and run on any handle of it, transactions included
 * (issue 31: "prepared statements for the write path, compiled once"). `prepared()` of
 * `prepared.ts` keeps its compiled query per `Kysely` instance, and every transaction is a new
 * instance: a write built with Kysely inside a transaction is compiled anew on every request
 * (a few µs to tens of µs for a wide `update`). A {@link compiledOnce} statement is compiled
 * the first time it runs on each dialect and then only has its arguments substituted; the SQL
 * text is the same every time, so the SQLite statement cache and PostgreSQL's named statements
 * apply as well.
 *
 * Usage:
 * ```ts
 * const setRead = compiledOnce((db: Kysely<Database>) =>
 *   db.updateTable('mail_messages').set({ is_read: param<number>(0) }).where('pk', '=', param<number>(1)));
 * await setRead(trx, 1, pk);
 * ```
 */
import type { Compilable, Kysely, QueryResult } from 'kysely';
import { isPostgres } from './db.ts';
import { template, type Template } from './prepared.ts';

/**
 * A statement compiled once per dialect (see the file comment).
 * @param build makes the statement; every value that varies is `param(i)` of `prepared.ts`.
 * @returns `(db, ...args) => result` on any handle (database or transaction); `args[i]` fills `param(i)`.
 *   The result carries `rows` (a `returning` or a select) and `numAffectedRows`.
 */
export function compiledOnce<DB, O = unknown>(build: (db: Kysely<DB>) => Compilable<O>): (db: Kysely<DB>, ...args: unknown[]) => Promise<QueryResult<O>> {
  const byDialect: { sqlite?: Template<O>; postgres?: Template<O> } = {};
  return (db, ...args) => {
    const dialect = isPostgres(db) ? 'postgres' : 'sqlite';
    let c = byDialect[dialect];
    if (!c) {
      try {
        c = byDialect[dialect] = template(build(db).compile());
      } catch (e) {
        return Promise.reject(e);
      }
    }
    const { query, slots } = c;
    return db.executeQuery<O>({ ...query, parameters: slots.map((s, i) => (s === undefined ? query.parameters[i] : args[s])) });
  };
}
