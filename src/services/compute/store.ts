/**
 * The compute SKU catalog (spec: resource-manager §2.2, §4.3; reference §3): the shipped
 * catalog (`data/skus.json`, one record per SKU and location, as the real service lists them)
 * is static data, held in memory from its first use: each record as JSON text in both shapes
 * (with and without the extended-location entries), so a page is assembled without parsing
 * or serializing, and the sequence numbers of each listing (all, plain, per location) so a
 * page starts with a binary search. Nothing of it is written to the store.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Migrations } from '../../store/db.ts';
import type { ResourceSku } from './model.ts';
import { shapeSku } from './rules.ts';

/** Tables of the area: none now (the catalog is static data served from memory). */
export const computeTables: never[] = [];

/** Migrations of the area. */
export const computeMigrations: Migrations = {
  // The catalog used to be loaded into a `compute_skus` table at seed time (10 MB written into
  // every new store: most of a fresh start's time). It is static data, read from the shipped
  // file on first use now; these two migrations are kept as no-ops so that stores that ran
  // them and new stores agree on the applied list, and the third drops the old table.
  compute_0001_skus: { async up() {} },
  compute_0002_skus_extended: { async up() {} },
  compute_0003_skus_in_memory: {
    async up(db) {
      await db.schema.dropTable('compute_skus').ifExists().execute();
    },
  },
};

/** Path of the shipped catalog (`data/skus.json`, made by `scripts/gen-skus.ts`: one record per line). */
const catalogFile = (): string => fileURLToPath(new URL('./data/skus.json', import.meta.url));

let catalogCache: ResourceSku[] | undefined;
/** The shipped catalog as records (`data/skus.json`), read once (tests and tools; the server keeps the text). */
export function loadCatalog(): ResourceSku[] {
  catalogCache ??= JSON.parse(fs.readFileSync(catalogFile(), 'utf8')) as ResourceSku[];
  return catalogCache;
}

/** A record of the served catalog: its position, the columns a listing selects by, its JSON text. */
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
 * Rows of the catalog text, in catalog order (`seq` from 1). Each line of the
 * generated file is one record as `JSON.stringify` wrote it, so a record without an extended
 * location is kept as its line, its columns read from the line's head; only the few records
 * with an extended location (their plain shape differs) are parsed. Parsing all 8,530 records
 * and serializing them again takes several times as long (bench/README.md, twelfth pass), and
 * keeps far more memory.
 * test/compute.test.ts checks the rows against the parsed catalog's.
 */
export function catalogRows(text: string): CatalogRow[] {
  const rows: CatalogRow[] = [];
  for (const raw of text.split('\n')) {
    // A checkout with CRLF line ends has a carriage return after each comma.
    const trimmed = raw.trimEnd();
    const line = trimmed.endsWith(',') ? trimmed.slice(0, -1) : trimmed;
    if (!line.startsWith('{')) continue;
    const head = recordHead.exec(line);
    const seq = rows.length + 1;
    if (!head || line.includes('"extendedLocations"') || line.includes('"EdgeZone"')) rows.push(rowOf(JSON.parse(line) as ResourceSku, seq));
    else rows.push({ seq, location_lower: head[3]!.toLowerCase(), resource_type: head[1]!, name: head[2]!, extended_only: 0, body: line, body_plain: null });
  }
  return rows;
}

/** The rows of the shipped catalog (read from the file each time it is called). */
export function shippedCatalogRows(): CatalogRow[] {
  return catalogRows(fs.readFileSync(catalogFile(), 'utf8'));
}

/** The catalog as served: its rows, and the sequence numbers of each listing, ascending. */
interface ServedCatalog {
  rows: CatalogRow[];
  /** Sequence numbers of every record. */
  all: number[];
  /** Sequence numbers of the records listed without extended locations (not extended-only). */
  plain: number[];
  /** Per location (lower case): every record's sequence number, and those listed without extended locations. */
  byLocation: Map<string, { all: number[]; plain: number[] }>;
}

let served: ServedCatalog | undefined;

/** The served catalog, built from the shipped file on first use (about 10 MB of text: kept, not parsed). */
function servedCatalog(): ServedCatalog {
  if (served) return served;
  const rows = shippedCatalogRows();
  const all: number[] = [];
  const plain: number[] = [];
  const byLocation = new Map<string, { all: number[]; plain: number[] }>();
  for (const r of rows) {
    let at = byLocation.get(r.location_lower);
    if (!at) byLocation.set(r.location_lower, (at = { all: [], plain: [] }));
    at.all.push(r.seq);
    all.push(r.seq);
    if (!r.extended_only) {
      plain.push(r.seq);
      at.plain.push(r.seq);
    }
  }
  served = { rows, all, plain, byLocation };
  return served;
}

/** Index of the first entry of the ascending `seqs` greater than `after` (binary search). */
function firstAfter(seqs: readonly number[], after: number): number {
  let lo = 0;
  let hi = seqs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (seqs[mid]! > after) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Records after sequence `after`, in catalog order, at most `limit`: in `location` (lower
 * case, when given), without the extended-only records unless `includeExtended`; each as
 * serialized JSON in the shape asked for. Reads the in-memory catalog (loaded on first call).
 */
export function skuPage(opts: { after: number; location?: string; includeExtended: boolean; limit: number }): { seq: number; json: string }[] {
  const catalog = servedCatalog();
  let seqs: readonly number[];
  if (opts.location !== undefined) {
    const at = catalog.byLocation.get(opts.location);
    seqs = !at ? [] : opts.includeExtended ? at.all : at.plain;
  } else seqs = opts.includeExtended ? catalog.all : catalog.plain;
  const out: { seq: number; json: string }[] = [];
  for (let i = firstAfter(seqs, opts.after); i < seqs.length && out.length < opts.limit; i++) {
    const row = catalog.rows[seqs[i]! - 1]!;
    out.push({ seq: row.seq, json: opts.includeExtended || row.body_plain == null ? row.body : row.body_plain });
  }
  return out;
}
