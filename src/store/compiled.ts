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
import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import { isPostgres } from './db.ts';
import { template, type Template } from './prepared.ts';

/**
 * A statement compiled once per dialect (see the file comment).
 * @param build makes the statement; every value that varies is `param(i)` of `prepared.ts`.
 * @returns `(db, ...args) => result` on any handle (database or transaction); `args[i]` fills `param(i)`.
 *   The result carries `rows` (a `returning` or a select) and `numAffectedRows`.
 */
export function compiledOnce<DB, O = unknown>(build: (db: Kysely<DB>) => Compilable<O>): CompiledOnce<DB, O> {
  const byDialect: { sqlite?: Template<O>; postgres?: Template<O> } = {};
  const bind = (db: Kysely<DB>, args: readonly unknown[]): CompiledQuery<O> => {
    const dialect = isPostgres(db) ? 'postgres' : 'sqlite';
    const c = (byDialect[dialect] ??= template(build(db).compile()));
    const { query, slots } = c;
    return { ...query, parameters: slots.map((s, i) => (s === undefined ? query.parameters[i] : args[s])) };
  };
  const run = (db: Kysely<DB>, ...args: unknown[]): Promise<QueryResult<O>> => {
    let q: CompiledQuery<O>;
    try {
      q = bind(db, args);
    } catch (e) {
      return Promise.reject(e);
    }
    return db.executeQuery<O>(q);
  };
  return Object.assign(run, { bind });
}

/** What {@link compiledOnce} returns: run it on a handle, or `bind` it to get the SQL text and parameters (a direct write). */
export type CompiledOnce<DB, O> = ((db: Kysely<DB>, ...args: unknown[]) => Promise<QueryResult<O>>) & {
  /** The statement's SQL for `db`'s dialect and its parameters with `args` filled in. */
  bind(db: Kysely<DB>, args: readonly unknown[]): CompiledQuery<O>;
};
