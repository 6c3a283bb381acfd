/**
 * The version rows of the cached areas (`cache.ts`): the increment every
 * write makes in its transaction, and the cache key of several parts. Kept apart from
 * `cache.ts` so writers without a hub (the CLI's bulk seeders) need only this.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../store/db.ts';
import { presenceChannelPrefix } from './cache-presence.ts';
import type { CacheDatabase } from './tables.ts';
import type { CacheArea } from './cache.ts';
import { prepared } from '../store/prepared.ts';
import type { TripPart } from './tick-batch.ts';

/** The version rows, compiled once (a prepared read on SQLite: no query building per read). */
export const versionRows = prepared((db: Kysely<CacheDatabase>) => db.selectFrom('stratus_cache_versions').select(['area', 'version']));

/**
 * The version rows as a branch of the turn's PostgreSQL statement (`tick-batch.ts`): area in
 * `k1`, version in `v1`. @param sent called when the branch is sent
 */
export function versionPart(sent: () => void): TripPart<'all', Map<string, string>> {
  return {
    branch() {
      sent();
      return sql`select area::text as k1, null::text as k2, version::text as v1, null::text as v2 from stratus_cache_versions`;
    },
    decode(rows) {
      return new Map([['all', new Map(rows.map((r) => [r.k1!, r.v1!]))]]);
    },
  };
}

/**
 * Increments the version rows of `areas` through `db` (pass the write's transaction): every
 * instance empties its caches of those areas at its next {@link CacheHub.sync}. On PostgreSQL it
 * also takes the write's sequence number (the `*` row) and notifies the live instances
 * (`cache-presence.ts`; delivered at commit). For writers without a hub (the bulk seeders of the
 * CLI); {@link CacheHub.changed} also empties this instance's caches at once.
 * @returns the sequence number on PostgreSQL, else undefined.
 */
export async function bumpCacheVersions(db: Kysely<CacheDatabase>, areas: readonly CacheArea[]): Promise<number | undefined> {
  for (const area of areas) {
    await sql`insert into stratus_cache_versions (area, version) values (${area}, 1) on conflict (area) do update set version = stratus_cache_versions.version + 1`.execute(db);
  }
  if (!isPostgres(db)) return undefined;
  const { rows } = await sql<{ seq: string }>`
    with s as (update stratus_cache_versions set version = version + 1 where area = '*' returning version)
    select version::text as seq, pg_notify(${presenceChannelPrefix} || current_schema(), version::text || ' ' || ${areas.join(',')}) from s`.execute(db);
  return rows[0] ? Number(rows[0].seq) : undefined;
}

/**
 * A cache key of several parts (a tenant, an id, a query's options): the parts joined with NUL,
 * which no part holds (ids and query texts are checked text); an undefined part is empty.
 */
export function cacheKey(...parts: (string | number | boolean | undefined)[]): string {
  return parts.map((p) => (p === undefined ? '' : String(p))).join('\u0000');
}
