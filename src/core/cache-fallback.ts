/**
 * The polled acknowledgement path (PostgreSQL), kept for a writer that has no listening
 * connection of its own (its presence connection is down or being made again, the CLI's
 * commands, an instance with `STRATUS_INSTANCE_LEASE_MS=0`): it takes a sequence number from the
 * `*` row of `stratus_cache_versions`, notifies it, and reads `stratus_instances` until every
 * other instance whose lease runs has written an `acked` at least as high (every live instance
 * writes its `acked` after applying a sequence-numbered notification, `cache-presence.ts`).
 * A live instance with its connection up waits in memory instead (`cache-peers.ts`).
 */
import { sql, type Kysely } from 'kysely';
import { dbNowSql, presenceChannelPrefix } from './cache-peers.ts';
import type { CacheDatabase } from './tables.ts';

const dbNowMs = sql.raw(dbNowSql);

/**
 * Whether every other live instance has applied the writes committed up to `seq` (those
 * committed yet; a sequence number whose write is not committed — still running or rolled
 * back — is waited for up to what is committed). One statement.
 * @returns the sequence number now known applied everywhere (≤ `seq`), or undefined while an instance lags.
 * @throws the database error of the read.
 */
export async function appliedEverywhere(db: Kysely<CacheDatabase>, self: string, seq: number): Promise<number | undefined> {
  const { rows } = await sql<{ upto: string; lagging: string }>`
    select least(${seq}::bigint, (select version from stratus_cache_versions where area = '*'))::text as upto,
      (select count(*) from stratus_instances i where i.id <> ${self} and i.lease_until > ${dbNowMs}
        and i.acked < least(${seq}::bigint, (select version from stratus_cache_versions where area = '*')))::text as lagging`.execute(db);
  const r = rows[0]!;
  return Number(r.lagging) === 0 ? Number(r.upto) : undefined;
}

/**
 * A marker: takes the next sequence number (the `*` row, for this statement only) and notifies
 * it with no area. Sent after a write committed, it is delivered after the write's
 * notifications (PostgreSQL delivers in commit order), so an instance that acknowledged the
 * marker applied the write. One statement.
 * @returns the marker's sequence number, and how many other instances hold a running lease.
 * @throws the database error of the statement.
 */
export async function sendMarker(db: Kysely<CacheDatabase>, self: string): Promise<{ seq: number; others: number }> {
  const { rows } = await sql<{ seq: string; others: string }>`
    with s as (update stratus_cache_versions set version = version + 1 where area = '*' returning version)
    select version::text as seq, pg_notify(${presenceChannelPrefix} || current_schema(), version::text || ' '),
      (select count(*) from stratus_instances i where i.id <> ${self} and i.lease_until > ${dbNowMs})::text as others from s`.execute(db);
  const r = rows[0];
  return r ? { seq: Number(r.seq), others: Number(r.others) } : { seq: 0, others: 0 };
}
