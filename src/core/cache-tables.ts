/**
 * How a write keeps every cache right, structurally (issue 27): the tables whose rows the
 * cached areas (`cache.ts`) hold, and the database triggers that bump an area's version row in
 * the transaction of EVERY insert, update or delete of such a table — whichever code path,
 * process or tool writes it. No write path calls anything for its caches.
 *
 * - SQLite: one row trigger per table and event, `UPDATE stratus_cache_versions SET version =
 *   version + 1 WHERE area IN (…)`. Every request reads the version rows first
 *   (`CacheHub.sync`), so the next request on any process sees the write. A keyed table's
 *   trigger logs the written keys instead ({@link CachedTable.keyed}, `cache-keys.ts`).
 * - PostgreSQL: one statement trigger per table and event over its transition table (a
 *   statement that changed no row bumps nothing): the same increment, and
 *   `pg_notify('stratus_cache_<schema>', '0 <areas>')` for the live instances
 *   (`cache-presence.ts`), delivered at commit in commit order. The instance that wrote sees
 *   the write statement pass through its store (`Store.onCachedWrite`, set by the hub): it
 *   empties its own caches of the areas at once and, before answering, sends a marker and waits
 *   until every live instance acknowledged it (`CacheHub.markWritten` / `settle`) — by then
 *   each has applied the trigger's notification, which committed before the marker.
 *
 * The one rule left to a developer: a table whose rows a cache (or a kept answer of a `keep`
 * route) holds is listed here, under the area of that cache. `test/cache-triggers.test.ts`
 * checks that every listed table has its triggers on both dialects and that a raw write, by any
 * connection, decides the next request.
 *
 * Not listed: the `seeded` area's tables (billing, analytics dataflows), written only by the
 * bulk seeders in large batches (a row trigger per row would cost SQLite seconds per million
 * rows); their one writer bumps `seeded` once per transaction (`bumpCacheVersions`).
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import { isPostgres, type Store } from '../store/db.ts';
import type { CacheArea } from './cache.ts';
import { presenceChannelPrefix } from './cache-presence.ts';

/** A write event a trigger fires on. */
export type WriteEvent = 'insert' | 'update' | 'delete';

/** One cached table: the areas its writes change, and on which events (default all three). */
export interface CachedTable {
  areas: readonly CacheArea[];
  events?: readonly WriteEvent[];
  /**
   * A table of one area whose rows only one cache holds (a `CacheHub.shared` name), by the text
   * of `column`: a write drops only the written rows' entries (`#<cache>|<key>`), not the whole
   * area (issue 31: a webhook write no longer empties every webhook row cached).
   * - PostgreSQL: the trigger's notification names the keys (up to 20 rows; else the whole
   *   area), and a live instance drops only those entries.
   * - SQLite: the trigger appends the keys to `stratus_cache_keys` and bumps the `#keys` version
   *   row instead of the area's; `CacheHub.sync` reads them (`cache-keys.ts`).
   */
  keyed?: { cache: string; column: string };
}

/** The cached tables by name (see the file comment). */
export const cachedTables: Readonly<Record<string, CachedTable>> = {
  // The resource-manager hierarchy and authorization (gateway.ts CachedArmStore; policies; registrations).
  arm_management_groups: { areas: ['arm'] },
  arm_subscriptions: { areas: ['arm'] },
  arm_resource_groups: { areas: ['arm'] },
  arm_role_assignments: { areas: ['arm'] },
  arm_role_definitions: { areas: ['arm'] },
  authz_role_management_policies: { areas: ['arm'] },
  resources_registrations: { areas: ['arm'] },
  resources_group_deletions: { areas: ['arm'] },
  resources_subscription_tags: { areas: ['arm'] },
  // Tracked resources and the areas' kept pages and answers.
  arm_resources: { areas: ['resources'] },
  automation_webhooks: { areas: ['resources'], keyed: { cache: 'automation.webhooks', column: 'id_lower' } },
  automation_jobs: { areas: ['resources'] },
  datashare_invitations: { areas: ['resources'] },
  datashare_synchronizations: { areas: ['resources'] },
  // The directory (users by id and name; group membership also decides authorization).
  tenants: { areas: ['directory'] },
  directory_users: { areas: ['directory'] },
  directory_apps: { areas: ['directory'] },
  app_role_grants: { areas: ['directory'] },
  app_password_credentials: { areas: ['directory'] },
  app_key_credentials: { areas: ['directory'] },
  directory_groups: { areas: ['directory', 'arm'] },
  directory_group_members: { areas: ['directory', 'arm'] },
  // The data platform: workspaces, workspace roles, and the next due operation (new operations only:
  // completing one is found by the next look, `platform/access.ts`).
  platform_workspaces: { areas: ['platform'] },
  platform_role_assignments: { areas: ['platform'] },
  platform_operations: { areas: ['platform'], events: ['insert'] },
};

/** The names of the keyed tables' caches ({@link CachedTable.keyed}). */
export const keyedCacheNames: readonly string[] = Object.values(cachedTables).flatMap((c) => (c.keyed ? [c.keyed.cache] : []));

/** The areas of the keyed tables (dropped whole when their key log missed entries: `cache-keys.ts`). */
export function keyedAreas(): CacheArea[] {
  return [...new Set(Object.values(cachedTables).flatMap((c) => (c.keyed ? c.areas : [])))];
}

/** The cached areas a table's writes change, by table (for `Store.onCachedWrite`). */
export function cachedAreasByTable(): Map<string, readonly CacheArea[]> {
  return new Map(Object.entries(cachedTables).map(([t, c]) => [t, c.areas]));
}

const eventCode: Record<WriteEvent, string> = { insert: 'i', update: 'u', delete: 'd' };

/** The trigger name of a table's event: the areas (and on PostgreSQL the key) are hashed into it, so a changed list makes a new trigger. */
export function triggerName(table: string, event: WriteEvent, areas: readonly CacheArea[], dialect: 'sqlite' | 'postgres', keyed?: CachedTable['keyed']): string {
  const key = keyed ? `|${keyed.cache}|${keyed.column}` : '';
  // A SQLite keyed trigger logs its keys (`|k1`): a store of an older version has area triggers under the same key.
  // A PostgreSQL keyed trigger bumps a shard row (`|s1`, {@link keyedVersionShards}): its function is made again with the new trigger.
  const h = createHash('sha1').update(`${dialect}|${areas.join(',')}|v1${key}${dialect === 'sqlite' && keyed ? '|k1' : ''}${dialect === 'postgres' && keyed ? '|s1' : ''}`).digest('hex').slice(0, 8);
  return `stratus_cv_${table}_${eventCode[event]}_${h}`;
}

interface WantedTrigger {
  table: string;
  event: WriteEvent;
  areas: readonly CacheArea[];
  keyed?: CachedTable['keyed'];
}

/** Every trigger the cached tables need, by name. */
function wanted(dialect: 'sqlite' | 'postgres'): Map<string, WantedTrigger> {
  const out = new Map<string, WantedTrigger>();
  for (const [table, c] of Object.entries(cachedTables)) {
    for (const event of c.events ?? (['insert', 'update', 'delete'] as const)) out.set(triggerName(table, event, c.areas, dialect, c.keyed), { table, event, areas: c.areas, keyed: c.keyed });
  }
  return out;
}

/** PostgreSQL: how many version rows a keyed area's writes are spread over (`<area>#<n>`, see {@link keyedFunction}). */
export const keyedVersionShards = 16;

/**
 * Whether one of `area`'s shard rows (`<area>#<n>`, {@link keyedVersionShards}) moved between two
 * reads of the version rows (a row that appeared counts as moved). Rows of the key log (`#keys`,
 * SQLite) and of other areas are not the area's.
 */
export function shardMoved(area: string, before: ReadonlyMap<string, string>, now: ReadonlyMap<string, string>): boolean {
  for (const [row, version] of now) {
    if (row.length > area.length && row.charCodeAt(area.length) === 35 /* # */ && row.startsWith(area) && before.get(row) !== version) return true;
  }
  return false;
}

/**
 * PostgreSQL: the trigger function of a keyed table's event (`name`: the trigger's own name): a
 * notification naming the keys of the rows written (old and new ones of an update), or the whole
 * area for more than 20 rows or a key that is empty, longer than 200 characters or holds a comma;
 * and for the instances that are not live (they read the versions every turn) a version bump —
 * not of the area's own row but of one of {@link keyedVersionShards} rows `<area>#<n>`, chosen by
 * the writer's backend (`CacheHub.sync` drops the area when any of them moved). One row for every
 * writer was a lock each write held through its commit (the WAL flush): measured in the 90/10
 * mix, the trigger took 1.5 ms a call and webhook writes queued behind each other on it. The
 * key query is written out per table (static SQL, planned once per connection): the one generic
 * function built it with `execute format(…)`, planned again at every call (246 µs a call).
 */
function pgKeyedFunction(name: string, t: WantedTrigger, keyed: NonNullable<CachedTable['keyed']>): string {
  const area = ident(t.areas[0]!);
  const col = ident(keyed.column);
  const old = t.event === 'update' ? ` union select ${col}::text from stratus_cache_old` : '';
  return `create or replace function ${ident(name)}() returns trigger language plpgsql as $f$
declare keys text; shard text := '${area}#' || (pg_backend_pid() % ${keyedVersionShards});
begin
  if exists (select 1 from stratus_cache_rows) then
    insert into stratus_cache_versions (area, version) values (shard, 1) on conflict (area) do update set version = stratus_cache_versions.version + 1;
    select case when count(*) > 20 or bool_or(k is null or k = '' or length(k) > 200 or strpos(k, ',') > 0) then null else string_agg('#${keyed.cache}|' || k, ',') end
      into keys from (select ${col}::text as k from stratus_cache_rows${old}) s;
    perform pg_notify('${presenceChannelPrefix}' || current_schema(), '0 ' || coalesce(keys, '${area}'));
  end if;
  return null;
end $f$`;
}

/** Entries of `stratus_cache_keys` kept (older ones are deleted by the next keyed write). */
export const keptKeyEntries = 1000;

/**
 * SQLite: the trigger of a keyed table's event (see {@link CachedTable.keyed}). It bumps the
 * `#keys` version row instead of the area's, and appends `#<cache>|<key>` of the written row
 * (an update whose key changed: the old key too) to `stratus_cache_keys`, deleting entries
 * older than the last {@link keptKeyEntries}. `CacheHub.sync` reads the entries a moved `#keys`
 * version stands for and drops only those cache entries (the whole area when it missed some).
 */
function sqliteKeyedTrigger(name: string, table: string, event: WriteEvent, keyed: NonNullable<CachedTable['keyed']>): string {
  if (!/^[a-z][a-z0-9_.]*$/i.test(keyed.cache)) throw new Error(`keyed cached table ${table}: a plain cache name`);
  const col = ident(keyed.column);
  const entry = (row: 'new' | 'old') => `'#${keyed.cache}|' || ${row}.${col}`;
  const rows =
    event === 'insert'
      ? `insert into stratus_cache_keys (entry) values (${entry('new')});`
      : event === 'delete'
        ? `insert into stratus_cache_keys (entry) values (${entry('old')});`
        : `insert into stratus_cache_keys (entry) values (${entry('new')}); insert into stratus_cache_keys (entry) select ${entry('old')} where old.${col} is not new.${col};`;
  return `create trigger ${ident(name)} after ${event} on ${ident(table)} begin
  update stratus_cache_versions set version = version + 1 where area = '#keys';
  ${rows}
  delete from stratus_cache_keys where seq <= (select max(seq) from stratus_cache_keys) - ${keptKeyEntries};
end`;
}

const ident = (s: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(s)) throw new Error(`not a plain SQL name: ${s}`);
  return s;
};

/**
 * Makes the triggers of {@link cachedTables} exist (after the migrations, at every start): the
 * missing ones are created, those of an older list dropped. On PostgreSQL under the schema's
 * advisory lock (instances starting together), with the one trigger function.
 * @throws the database error when a listed table does not exist (a wrong list fails the start).
 */
export async function installCacheTriggers<DB>(db: Kysely<DB>): Promise<void> {
  const pg = isPostgres(db);
  const want = wanted(pg ? 'postgres' : 'sqlite');
  await db.transaction().execute(async (trx) => {
    if (pg) await sql`select pg_advisory_xact_lock(hashtext(current_schema()))`.execute(trx);
    const have = pg
      ? (await sql<{ name: string; tbl: string }>`select t.tgname as name, c.relname as tbl from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and t.tgname like 'stratus_cv_%'`.execute(trx)).rows
      : (await sql<{ name: string; tbl: string }>`select name, tbl_name as tbl from sqlite_master where type = 'trigger' and name like 'stratus_cv_%'`.execute(trx)).rows;
    const present = new Set(have.map((r) => r.name));
    for (const r of have) {
      if (!want.has(r.name)) {
        await sql.raw(pg ? `drop trigger if exists ${ident(r.name)} on ${ident(r.tbl)}` : `drop trigger if exists ${ident(r.name)}`).execute(trx);
        // A keyed trigger's own function (PostgreSQL) goes with it.
        if (pg) await sql.raw(`drop function if exists ${ident(r.name)}()`).execute(trx);
      }
    }
    if (pg && [...want.keys()].some((n) => !present.has(n))) {
      // `0`: the notification takes no sequence number (no lock beyond the version rows); the writer's marker orders it (file comment).
      await sql
        .raw(
          `create or replace function stratus_cache_touch() returns trigger language plpgsql as $f$
begin
  if exists (select 1 from stratus_cache_rows) then
    update stratus_cache_versions set version = version + 1 where area = any(TG_ARGV);
    perform pg_notify('${presenceChannelPrefix}' || current_schema(), '0 ' || array_to_string(TG_ARGV, ','));
  end if;
  return null;
end $f$`,
        )
        .execute(trx);
    }
    for (const [name, t] of want) {
      if (present.has(name)) continue;
      const areas = t.areas.map((a) => `'${ident(a)}'`).join(', ');
      if (pg && t.keyed) {
        if (t.areas.length !== 1 || !/^[a-z][a-z0-9_.]*$/i.test(t.keyed.cache)) throw new Error(`keyed cached table ${t.table}: one area and a plain cache name`);
        const ref = t.event === 'delete' ? 'old table as stratus_cache_rows' : t.event === 'update' ? 'old table as stratus_cache_old new table as stratus_cache_rows' : 'new table as stratus_cache_rows';
        await sql.raw(pgKeyedFunction(name, t, t.keyed)).execute(trx);
        await sql.raw(`create trigger ${ident(name)} after ${t.event} on ${ident(t.table)} referencing ${ref} for each statement execute function ${ident(name)}()`).execute(trx);
      } else if (pg) {
        const ref = t.event === 'delete' ? 'old table as stratus_cache_rows' : 'new table as stratus_cache_rows';
        await sql.raw(`create trigger ${ident(name)} after ${t.event} on ${ident(t.table)} referencing ${ref} for each statement execute function stratus_cache_touch(${areas})`).execute(trx);
      } else if (t.keyed) {
        await sql.raw(sqliteKeyedTrigger(name, t.table, t.event, t.keyed)).execute(trx);
      } else {
        await sql.raw(`create trigger ${ident(name)} after ${t.event} on ${ident(t.table)} begin update stratus_cache_versions set version = version + 1 where area in (${areas}); end`).execute(trx);
      }
    }
  });
}

/** Write statements' target tables (`insert into t`, `update t`, `delete from t`, also inside a `with`). */
const writeTarget = /\b(?:insert\s+into|update|delete\s+from)\s+"?([a-z_][a-z0-9_]*)"?/gi;

/** The cached areas a SQL text writes (empty for reads and for tables not in {@link cachedTables}). */
export function areasWrittenBy(text: string, byTable: ReadonlyMap<string, readonly CacheArea[]>): CacheArea[] {
  if (!/\b(insert|update|delete)\b/i.test(text)) return [];
  const out = new Set<CacheArea>();
  writeTarget.lastIndex = 0;
  for (let m = writeTarget.exec(text); m; m = writeTarget.exec(text)) for (const a of byTable.get(m[1]!.toLowerCase()) ?? []) out.add(a);
  return [...out];
}

/** Whether every cached table a SQL text writes is {@link CachedTable.keyed} (false when it writes none). */
export function keyedWrite(text: string): boolean {
  let any = false;
  writeTarget.lastIndex = 0;
  for (let m = writeTarget.exec(text); m; m = writeTarget.exec(text)) {
    const t = cachedTables[m[1]!.toLowerCase()];
    if (!t) continue;
    if (!t.keyed) return false;
    any = true;
  }
  return any;
}

/** The areas a write of cached `table` changes, and whether the table is keyed (`CacheHub.withWriteMarker`). @throws Error for a table not cached. */
export function tableWrite(table: string): [readonly CacheArea[], boolean] {
  const t = cachedTables[table];
  if (!t) throw new Error(`${table} is not a cached table (cache-tables.ts)`);
  return [t.areas, t.keyed !== undefined];
}

/**
 * Calls `wrote(areas, keyed)` before each write statement `store` runs on a cached table (the
 * areas it changes, and whether every cached table it writes is keyed; worked out once per SQL
 * text): the hub's view of its own instance's writes. The callback `wrote` returns is called
 * once the write ended (committed or failed: `Store.watchWrites`).
 */
export function watchOwnWrites<DB>(store: Store<DB>, wrote: (areas: readonly CacheArea[], keyed: boolean) => () => void): void {
  const byTable = cachedAreasByTable();
  const known = new LRUCache<string, { areas: CacheArea[]; keyed: boolean }>({ max: 2000 });
  store.watchWrites((text) => {
    let w = known.get(text);
    if (!w) known.set(text, (w = { areas: areasWrittenBy(text, byTable), keyed: keyedWrite(text) }));
    return w.areas.length ? wrote(w.areas, w.keyed) : undefined;
  });
}
