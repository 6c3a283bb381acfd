/**
 * The tables of worlds and snapshots (issue 28), their migrations (core numbers 0030–0039):
 * `stratus_snapshots` (one row per kept snapshot; its rows are copied into tables named
 * `snap_<tag>_<table>` of the same database) and the shared rows `clock` and `world` of
 * `stratus_cache_versions` (`src/core/shared-values.ts`).
 */
import type { Kysely } from 'kysely';
import type { CacheDatabase } from '../core/tables.ts';
import { bigint, defineTables, nullable, text, type Tables } from '../store/columns.ts';
import type { Migrations } from '../store/db.ts';

/** The columns of the world tables, by table. */
export const worldColumns = defineTables({
  /** Created by `core_0031_snapshots`. */
  stratus_snapshots: {
    /** The snapshot's name (`$world`: the world the store was loaded with). */
    name: text(),
    /** Short unique tag naming its tables (`snap_<tag>_<table>`). */
    tag: text(),
    /** When it was saved (Stratus clock, ISO). */
    created_at: text(),
    /** The Stratus clock to restore (epoch ms); null: the machine clock (offset 0). */
    clock_ms: nullable(bigint()),
    /** JSON array of the tables copied. */
    tables: text(),
    /** Rows copied, in all. */
    row_count: bigint(),
  },
});

/** The world tables as Kysely sees them. */
export type WorldDatabase = Tables<typeof worldColumns>;

/** Migrations of the world tables. */
export const worldMigrations: Migrations = {
  // The shared clock offset and world generation (`core/shared-values.ts`).
  core_0030_shared_clock: {
    async up(db: Kysely<CacheDatabase>) {
      await db.insertInto('stratus_cache_versions').values([{ area: 'clock', version: 0 }, { area: 'world', version: 0 }]).onConflict((oc) => oc.column('area').doNothing()).execute();
    },
  },
  core_0031_snapshots: {
    async up(db: Kysely<WorldDatabase>) {
      await db.schema
        .createTable('stratus_snapshots')
        .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tag', 'varchar(16)', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('clock_ms', 'bigint')
        .addColumn('tables', 'text', (c) => c.notNull())
        .addColumn('row_count', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};
