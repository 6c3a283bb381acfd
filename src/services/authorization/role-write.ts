/**
 * One write of role definitions or role assignments: in one transaction, nothing partial left
 * behind by a failure.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import type { Database } from '../../store/database.ts';

/** Runs `fn` in one transaction of the app's store and returns its result. */
export async function roleWrite<T>(ctx: AppContext, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  const out = await ctx.store.transaction(async (trx) => {
    const r = await fn(trx);
    await ctx.cache.changed(trx, 'arm');
    return r;
  });
  // Again once committed: a read that overlapped the write does not keep the old rows.
  ctx.cache.invalidate('arm');
  return out;
}
