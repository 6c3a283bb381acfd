/**
 * Column types shared by every area's table interfaces, and the store's own table.
 * See the conventions in db.ts: times are ISO strings, booleans 0/1 integers, JSON TEXT.
 */
import type { ColumnType } from 'kysely';

/**
 * A `bigint` column. SQLite returns it as a number, `pg` as a decimal string (its int8
 * parser keeps full precision): wrap reads in `Number()`. Written as a number (or string).
 */
export type Int8 = ColumnType<number | string, number | string, number | string>;

/**
 * An auto-incrementing key made by `autoIncrementKey` (db.ts) (`bigserial` on PostgreSQL,
 * `integer … autoincrement` on SQLite): filled in on insert, read like {@link Int8}.
 */
export type Int8Key = ColumnType<number | string, number | string | undefined, number | string>;

/** A row of `stratus_migrations`: one applied migration (created by `Store.migrate`). */
export interface StratusMigrationsTable {
  /** Migration name `<area>_<NNNN>_<what>`. */
  name: string;
  /** ISO 8601 UTC time it was applied. */
  applied_at: string;
}

/** The store's own tables. */
export interface StoreTables {
  stratus_migrations: StratusMigrationsTable;
}
