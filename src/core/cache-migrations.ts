/**
 * Migrations of the cache invalidation tables (`cache.ts`, `cache-presence.ts`): the version
 * rows (one per cached area, and the `*` row of sequence numbers) and the live instances.
 */
import type { Kysely } from 'kysely';
import { autoIncrementKey, type Migrations } from '../store/db.ts';
import type { CacheDatabase } from './tables.ts';

/** Migration of the version table (one row per area). */
export const cacheMigrations: Migrations = {
  core_0002_cache_versions: {
    async up(db: Kysely<CacheDatabase>) {
      await db.schema
        .createTable('stratus_cache_versions')
        .addColumn('area', 'varchar(32)', (c) => c.primaryKey())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .execute();
      await db.insertInto('stratus_cache_versions').values(['arm', 'directory', 'platform'].map((area) => ({ area, version: 0 }))).execute();
    },
  },
  // The `resources` area (tracked resource-manager resources by id), added after the first three.
  core_0004_cache_area_resources: {
    async up(db: Kysely<CacheDatabase>) {
      await db.insertInto('stratus_cache_versions').values({ area: 'resources', version: 0 }).onConflict((oc) => oc.column('area').doNothing()).execute();
    },
  },
  // The `seeded` area (data only seeding writes), added after `resources`.
  core_0005_cache_area_seeded: {
    async up(db: Kysely<CacheDatabase>) {
      await db.insertInto('stratus_cache_versions').values({ area: 'seeded', version: 0 }).onConflict((oc) => oc.column('area').doNothing()).execute();
    },
  },
};

/**
 * Migration of the key log of keyed cached tables (`cache-tables.ts` `CachedTable.keyed`): on
 * SQLite their triggers append the written rows' keys here and bump the `#keys` version row, and
 * `CacheHub.sync` drops only those entries. Created on both dialects (one schema); PostgreSQL
 * carries the keys in its notifications instead.
 */
export const cacheKeyMigrations: Migrations = {
  core_0032_cache_keys: {
    async up(db: Kysely<CacheDatabase>) {
      await db.schema
        .createTable('stratus_cache_keys')
        .addColumn('seq', ...autoIncrementKey(db))
        .addColumn('entry', 'text', (c) => c.notNull())
        .execute();
      await db.insertInto('stratus_cache_versions').values({ area: '#keys', version: 0 }).onConflict((oc) => oc.column('area').doNothing()).execute();
    },
  },
};

/** Migration of the instance table and the sequence row (both dialects; used on PostgreSQL only). */
export const presenceMigrations: Migrations = {
  core_0006_cache_instances: {
    async up(db: Kysely<CacheDatabase>) {
      await db.schema
        .createTable('stratus_instances')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('acked', 'bigint', (c) => c.notNull())
        .addColumn('lease_until', 'bigint', (c) => c.notNull())
        .execute();
      await db.insertInto('stratus_cache_versions').values({ area: '*', version: 0 }).onConflict((oc) => oc.column('area').doNothing()).execute();
    },
  },
};
