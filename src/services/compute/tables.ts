/**
 * The tables of the compute area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). ComputeDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, integer, nullable, text, withDefault, type Tables } from '../../store/columns.ts';

/** The columns of the compute tables, by table (see the file comment). */
export const computeColumns = defineTables({
  /** Created by `compute_0001_skus`. */
  compute_skus: {
    seq: integer(),
    location_lower: text(),
    resource_type: text(),
    name: text(),
    extended_only: withDefault(integer()),
    body: text(),
    body_plain: nullable(text()),
  },
});

/** The compute tables as Kysely sees them. */
export type ComputeDatabase = Tables<typeof computeColumns>;
