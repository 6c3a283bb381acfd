/**
 * What the store does with each statement on its connections: named prepared statements on
 * PostgreSQL ({@link nameStatements}) and the write hook the cache hub listens on
 * ({@link StatementHooks}, `Store.watchWrites`).
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';

/** What a store tells about the statements it runs (set by the cache hub: `Store.watchWrites`). */
export interface StatementHooks {
  /**
   * Called with the text of every write statement (insert, update, delete, `with`) before it
   * runs. It may return a callback, called once when the write has ended — committed or failed
   * (PostgreSQL: when the statement is answered outside a transaction, when the transaction's
   * `commit` or `rollback` is, or when the connection ends; SQLite: at once).
   */
  onWrite?: (text: string) => (() => void) | void;
}

/** A transaction's start and end as Kysely sends them (`begin`, `start transaction …`, `commit`, `rollback`; not `rollback to` a savepoint). */
const transactionStart = /^\s*(begin|start\s+transaction)\b/i;
const transactionEnd = /^\s*(commit|rollback|end)\s*;?\s*$/i;

/** Texts that may write (the hooks' filter; a `with` may end in a write). */
export const writeText = /^\s*(insert|update|delete|with)\b/i;

/** Statement names by SQL text (a name is a hash of the text, so it is the same on every connection and instance). */
const statementNames = new LRUCache<string, string>({ max: 10_000 });

/** Data statements are named (prepared once per connection); control and schema statements are not. */
const namedStatement = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Makes every data statement a `client` runs a named prepared statement (`{ name, text, values }`
 * with the name derived from a hash of the text), so PostgreSQL parses and plans each SQL
 * text once per connection; `pg` then sends only Bind/Execute. Statements with several
 * commands, control statements (`begin`, `set`) and DDL go unnamed. A connection keeps at
 * most `statementCacheSize` names; further new texts run unnamed on it.
 */
export function nameStatements(client: pg.PoolClient, enabled: () => boolean, hooks: StatementHooks, statementCacheSize: number): void {
  const query = client.query.bind(client) as (...args: any[]) => any;
  const named = new Set<string>();
  // Writes of the open transaction whose end is told at its commit or rollback (`onWrite`).
  let inTransaction = false;
  const open: (() => void)[] = [];
  client.on('end', () => open.splice(0).forEach((f) => f()));
  const run = (text: unknown, values?: unknown, cb?: unknown) => {
    if (typeof text !== 'string' || !Array.isArray(values) || typeof cb === 'function' || !enabled() || !namedStatement.test(text) || text.includes(';')) return query(text, values, cb);
    let name = statementNames.get(text);
    if (!name) {
      name = `s_${createHash('sha1').update(text).digest('base64url').slice(0, 22)}`;
      statementNames.set(text, name);
    }
    if (!named.has(name)) {
      if (named.size >= statementCacheSize) return query(text, values);
      named.add(name);
    }
    return query({ name, text, values });
  };
  (client as any).query = (text: unknown, values?: unknown, cb?: unknown) => {
    if (typeof text !== 'string') return run(text, values, cb);
    let ended = hooks.onWrite && writeText.test(text) ? hooks.onWrite(text) || undefined : undefined;
    if (transactionStart.test(text)) inTransaction = true;
    else if (inTransaction && transactionEnd.test(text)) {
      inTransaction = false;
      const ends = open.splice(0);
      if (ended) ends.push(ended);
      if (ends.length) ended = () => ends.forEach((f) => f());
    }
    if (!ended) return run(text, values, cb);
    if (inTransaction) {
      open.push(ended);
      return run(text, values, cb);
    }
    const end = ended;
    // The callback forms (`query(text, cb)`, `query(text, values, cb)`) answer through it.
    if (typeof cb === 'function') return run(text, values, (...a: unknown[]) => (end(), (cb as (...x: unknown[]) => void)(...a)));
    if (typeof values === 'function') return run(text, (...a: unknown[]) => (end(), (values as (...x: unknown[]) => void)(...a)));
    const r = run(text, values, cb);
    if (r && typeof r.then === 'function') r.then(end, end);
    else end();
    return r;
  };
}

