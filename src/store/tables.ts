/**
 * The store's own table, declared like the areas' tables (see columns.ts): `stratus_migrations`,
 * made by `Store.migrate` (db.ts) before any migration runs.
 */
import { defineTables, text, type Tables } from './columns.ts';

/** The columns of the store's own table: one row per applied migration. */
export const storeColumns = defineTables({
  stratus_migrations: {
    /** Migration name `<area>_<NNNN>_<what>`. */
    name: text(),
    /** ISO 8601 UTC time it was applied. */
    applied_at: text(),
  },
});

/** The store's own table as Kysely sees it. */
export type StoreTables = Tables<typeof storeColumns>;
