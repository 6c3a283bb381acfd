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

/** A record of the served catalog: its position, the location its listing selects by, its JSON text. */
export interface CatalogRow {
  /** Position in catalog order, from 1 (what a `$skiptoken` carries). */
  seq: number;
  /** The record's location, lower case. */
  location: string;
  /** True for a record offered only in an extended location (listed only with `includeExtendedLocations=true`). */
  extendedOnly: boolean;
  /** The record as JSON text. */
  body: string;
  /** The record without its extended-location entries, when that differs from `body`. */
  bodyPlain: string | null;
}

/** The row of one parsed record. */
function rowOf(sku: ResourceSku, seq: number): CatalogRow {
  const plain = shapeSku(sku, false);
  return {
    seq,
    location: (sku.locations[0] ?? '').toLowerCase(),
    extendedOnly: !plain,
    body: JSON.stringify(sku),
    bodyPlain: plain && plain !== sku ? JSON.stringify(plain) : null,
  };
}

/** The head of a generated record line (resource type, name, …, locations): its first location. */
const recordHead = /^\{"resourceType":"[^"\\]*","name":"[^"\\]*",[^[]*"locations":\["([^"\\]*)"/;

/**
 * Rows of the catalog text, in catalog order (`seq` from 1). Each line of the
 * generated file is one record as `JSON.stringify` wrote it, so a record without an extended
 * location is kept as its line, its location read from the line's head; only the few records
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
    else rows.push({ seq, location: head[1]!.toLowerCase(), extendedOnly: false, body: line, bodyPlain: null });
  }
  return rows;
}

/** The rows of the shipped catalog (read from the file each time it is called). */
export function shippedCatalogRows(): CatalogRow[] {
  return catalogRows(fs.readFileSync(catalogFile(), 'utf8'));
}

/** The catalog as served: every row, and the rows of each other listing, in catalog order. */
interface ServedCatalog {
  all: CatalogRow[];
  /** The rows listed without extended locations (not extended-only). */
  plain: CatalogRow[];
  /** Per location (lower case): its rows, and those listed without extended locations. */
  byLocation: Map<string, { all: CatalogRow[]; plain: CatalogRow[] }>;
}

let served: ServedCatalog | undefined;

/** The served catalog, built from the shipped file on first use (about 10 MB of text: kept, not parsed). */
function servedCatalog(): ServedCatalog {
  if (served) return served;
  const all = shippedCatalogRows();
  const plain: CatalogRow[] = [];
  const byLocation = new Map<string, { all: CatalogRow[]; plain: CatalogRow[] }>();
  for (const r of all) {
    let at = byLocation.get(r.location);
    if (!at) byLocation.set(r.location, (at = { all: [], plain: [] }));
    at.all.push(r);
    if (!r.extendedOnly) {
      plain.push(r);
      at.plain.push(r);
    }
  }
  served = { all, plain, byLocation };
  return served;
}

/** Index of the first row of `rows` (ascending `seq`) after sequence `after` (binary search). */
function firstAfter(rows: readonly CatalogRow[], after: number): number {
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid]!.seq > after) hi = mid;
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
  let rows: readonly CatalogRow[];
  if (opts.location !== undefined) {
    const at = catalog.byLocation.get(opts.location);
    rows = !at ? [] : opts.includeExtended ? at.all : at.plain;
  } else rows = opts.includeExtended ? catalog.all : catalog.plain;
  const start = firstAfter(rows, opts.after);
  return rows.slice(start, start + opts.limit).map((r) => ({ seq: r.seq, json: opts.includeExtended || r.bodyPlain === null ? r.body : r.bodyPlain }));
}
