/**
 * Tables declared once, at run time, with their Kysely types derived from the declaration.
 *
 * Each area writes its tables as an `as const`-like object of column builders:
 * `{ mail_folders: { id: text(), parent_id: nullable(text()), … } }`; `Tables<typeof that>`
 * is the Kysely database interface (`{ mail_folders: { id: string; parent_id: string | null } }`).
 * The runtime half is what test/database-types.test.ts compares with the schema the
 * migrations make on both dialects, so a column renamed on one side fails a test instead of a
 * request. Nothing here is loaded by the server: areas import the types only.
 *
 * Dialect conventions (db.ts): times are ISO strings (`text`), booleans 0/1 (`integer`),
 * JSON documents `text`.
 */
import type { ColumnType, Generated } from 'kysely';

/**
 * The SQL type family of a column, as both dialects report it after migration:
 * `text` (varchar(n)/text), `integer` (32-bit), `bigint` (64-bit; `bigserial` on PostgreSQL,
 * `integer … autoincrement` on SQLite), `real` (double precision).
 */
export type ColumnKind = 'text' | 'integer' | 'bigint' | 'real';

/**
 * A `bigint` column. SQLite returns it as a number, `pg` as a decimal string (its int8 parser
 * keeps full precision): wrap reads in `Number()`. Written as a number (or string).
 */
export type Int8 = ColumnType<number | string, number | string, number | string>;

/** An auto-incrementing key ({@link autoKey}): filled in on insert, read like {@link Int8}. */
export type Int8Key = ColumnType<number | string, number | string | undefined, number | string>;

/** The run-time description of one column; `T` is its Kysely column type (compile time only). */
export interface Column<T> {
  readonly kind: ColumnKind;
  /** May hold SQL NULL. */
  readonly nullable: boolean;
  /** The database fills it in when an insert leaves it out (a default or an auto-increment). */
  readonly generated: boolean;
  /** Never set: carries `T` for {@link Tables}. */
  readonly type?: T;
}

const column = <T>(kind: ColumnKind, nullable = false, generated = false): Column<T> => ({ kind, nullable, generated });

/** A `varchar(n)` or `text` column (times, ids, JSON documents). */
export const text = (): Column<string> => column<string>('text');
/** A `varchar(n)` column holding one of the values `T` (a union of string literals). */
export const textOf = <T extends string>(): Column<T> => column<T>('text');
/** A 32-bit `integer` column (counts, sizes, booleans as 0/1). */
export const integer = (): Column<number> => column<number>('integer');
/** A `double precision` column. */
export const real = (): Column<number> => column<number>('real');
/** A 64-bit `bigint` column (milliseconds, sequence numbers, keys of other tables' auto keys). */
export const bigint = (): Column<Int8> => column<Int8>('bigint');
/** The auto-incrementing key of `autoIncrementKey` (db.ts): `bigserial` / `integer … autoincrement`. */
export const autoKey = (): Column<Int8Key> => column<Int8Key>('bigint', false, true);
/** The same column, nullable. */
export const nullable = <T>(c: Column<T>): Column<T | null> => column<T | null>(c.kind, true, c.generated);
/** The same column with a database default: an insert may leave it out. */
export const withDefault = <T>(c: Column<T>): Column<Generated<T>> => column<Generated<T>>(c.kind, c.nullable, true);

/** Column declarations by table name by column name. */
export type TableColumns = Record<string, Record<string, Column<unknown>>>;

/** The Kysely row type of one declared table. */
export type Table<S> = { [K in keyof S]: S[K] extends Column<infer T> ? T : never };

/** The Kysely database interface of declared tables. */
export type Tables<D> = { [N in keyof D]: Table<D[N]> };

/** Declares tables (identity at run time; checks the shape and keeps the literal types). */
export const defineTables = <D extends TableColumns>(tables: D): D => tables;
