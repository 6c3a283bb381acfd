/**
 * The tables of the compute area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */
import type { Generated } from 'kysely';

/** A row of `compute_skus` (created by migration `compute_0001_skus`). */
export interface ComputeSkusTable {
  seq: number;
  location_lower: string;
  resource_type: string;
  name: string;
  extended_only: Generated<number>;
  body: string;
  body_plain: string | null;
}

export interface ComputeDatabase {
  compute_skus: ComputeSkusTable;
}
