/**
 * Tables and queries of the compute SKU catalog (spec: resource-manager §2.2, §4.3;
 * reference §3): the shipped catalog (`data/skus.json`, one record per SKU and location, as
 * the real service lists them) is loaded into `compute_skus` at seed time; a page is read by
 * its sequence number, narrowed by the location index. Each record is stored serialized in
 * both shapes (with and without the extended-location entries), so a page is assembled
 * without re-parsing.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AppContext } from '../../context.ts';
import type { Migrations } from '../../store/db.ts';
import type { ResourceSku } from './model.ts';
import { shapeSku } from './rules.ts';
import type { ComputeDatabase } from './tables.ts';

/** Tables of the area. */
export const computeTables: (keyof ComputeDatabase)[] = ['compute_skus'];

/** Migrations of the area. */
export const computeMigrations: Migrations = {
  compute_0001_skus: {
    async up(db) {
      await db.schema
        .createTable('compute_skus')
        .addColumn('seq', 'integer', (c) => c.primaryKey())
        .addColumn('location_lower', 'varchar(64)', (c) => c.notNull())
        .addColumn('resource_type', 'varchar(128)', (c) => c.notNull())
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('compute_skus_location').on('compute_skus').columns(['location_lower', 'seq']).execute();
    },
  },
  // The catalog is static data reloaded by the seed: the table is rebuilt with the
  // extended-only flag and the pre-shaped body (POST /_stratus/reset reloads it).
  compute_0002_skus_extended: {
    async up(db) {
      await db.schema.dropTable('compute_skus').execute();
      await db.schema
        .createTable('compute_skus')
        .addColumn('seq', 'integer', (c) => c.primaryKey())
        .addColumn('location_lower', 'varchar(64)', (c) => c.notNull())
        .addColumn('resource_type', 'varchar(128)', (c) => c.notNull())
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('extended_only', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('body_plain', 'text')
        .execute();
      await db.schema.createIndex('compute_skus_location').on('compute_skus').columns(['location_lower', 'extended_only', 'seq']).execute();
      await db.schema.createIndex('compute_skus_plain').on('compute_skus').columns(['extended_only', 'seq']).execute();
    },
  },
};

/** Path of the shipped catalog (`data/skus.json`, made by `scripts/gen-skus.ts`: one record per line). */
const catalogFile = (): string => fileURLToPath(new URL('./data/skus.json', import.meta.url));

let catalogCache: ResourceSku[] | undefined;
/** The shipped catalog as records (`data/skus.json`), read once (tests and tools; the seed reads the text). */
export function loadCatalog(): ResourceSku[] {
  catalogCache ??= JSON.parse(fs.readFileSync(catalogFile(), 'utf8')) as ResourceSku[];
  return catalogCache;
}

/** A row of `compute_skus` (see the migrations). */
export interface CatalogRow {
  seq: number;
  location_lower: string;
  resource_type: string;
  name: string;
  extended_only: number;
  /** The record as JSON text. */
  body: string;
  /** The record without its extended-location entries, when that differs from `body`. */
  body_plain: string | null;
}

/** The row of one parsed record. */
function rowOf(sku: ResourceSku, seq: number): CatalogRow {
  const plain = shapeSku(sku, false);
  return {
    seq,
    location_lower: (sku.locations[0] ?? '').toLowerCase(),
    resource_type: sku.resourceType,
    name: sku.name,
    extended_only: plain ? 0 : 1,
    body: JSON.stringify(sku),
    body_plain: plain && plain !== sku ? JSON.stringify(plain) : null,
  };
}

/** The head of a generated record line: its resource type, name and first location. */
const recordHead = /^\{"resourceType":"([^"\\]*)","name":"([^"\\]*)",[^[]*"locations":\["([^"\\]*)"/;

/**
 * Rows of `compute_skus` for the catalog text, in catalog order (`seq` from 1). Each line of the
 * generated file is one record as `JSON.stringify` wrote it, so a record without an extended
 * location is stored as its line, its columns read from the line's head; only the few records
 * with an extended location (their plain shape differs) are parsed. Parsing all 8,530 records
 * and serializing them again made most of a fresh start's time (bench/README.md, twelfth pass).
 * test/compute.test.ts checks the rows against the parsed catalog's.
 */
export function catalogRows(text: string): CatalogRow[] {
  const rows: CatalogRow[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.endsWith(',') ? raw.slice(0, -1) : raw;
    if (!line.startsWith('{')) continue;
    const head = recordHead.exec(line);
    const seq = rows.length + 1;
    if (!head || line.includes('"extendedLocations"') || line.includes('"EdgeZone"')) rows.push(rowOf(JSON.parse(line) as ResourceSku, seq));
    else rows.push({ seq, location_lower: head[3]!.toLowerCase(), resource_type: head[1]!, name: head[2]!, extended_only: 0, body: line, body_plain: null });
  }
  return rows;
}

/** The rows of the shipped catalog (read from the file each time: the seed runs once per store). */
export function shippedCatalogRows(): CatalogRow[] {
  return catalogRows(fs.readFileSync(catalogFile(), 'utf8'));
}

/** Rows per INSERT when loading the catalog (7 parameters each: well under SQLite's and PostgreSQL's limits). */
const seedBatch = 500;

/**
 * Loads the shipped catalog into `compute_skus` in batches, in one transaction. Rows that
 * are already there (another instance loading at the same time) are left as they are.
 */
export async function loadSkuCatalog(ctx: AppContext): Promise<void> {
  const rows = shippedCatalogRows();
  await ctx.store.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += seedBatch) {
      await trx.insertInto('compute_skus').values(rows.slice(i, i + seedBatch)).onConflict((oc) => oc.column('seq').doNothing()).execute();
    }
  });
}

/** Whether the catalog table holds any record. */
export async function catalogLoaded(ctx: AppContext): Promise<boolean> {
  return (await ctx.store.db.selectFrom('compute_skus').select('seq').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Records after sequence `after`, in order, at most `limit`: in `location` (lower case, when
 * given), without the extended-only records unless `includeExtended`; each as serialized JSON
 * in the shape asked for.
 */
export async function skuPage(ctx: AppContext, opts: { after: number; location?: string; includeExtended: boolean; limit: number }): Promise<{ seq: number; json: string }[]> {
  let query = ctx.store.db.selectFrom('compute_skus').select(['seq', 'body', 'body_plain']).where('seq', '>', opts.after);
  if (opts.location !== undefined) query = query.where('location_lower', '=', opts.location);
  if (!opts.includeExtended) query = query.where('extended_only', '=', 0);
  const rows = await query.orderBy('seq').limit(opts.limit).execute();
  return rows.map((r) => ({ seq: Number(r.seq), json: (opts.includeExtended || r.body_plain == null ? r.body : r.body_plain) as string }));
}
