/**
 * One write of role definitions or role assignments: in one transaction, nothing partial left
 * behind by a failure. The caches learn of it by themselves: the tables' triggers bump the
 * `arm` version in the transaction (`core/cache-tables.ts`).
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import type { Database } from '../../store/database.ts';

/** Runs `fn` in one transaction of the app's store and returns its result. */
export function roleWrite<T>(ctx: AppContext, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return ctx.store.transaction(fn);
}
