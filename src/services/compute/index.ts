/**
 * Compute SKU catalog (spec: resource-manager §2.2, §4.3; reference §3):
 * `GET /subscriptions/{subscriptionId}/providers/Vendor.Compute/skus?api-version=2021-07-01`
 * with `$filter=location eq '<location>'` (the only filter the service supports; any other
 * filter is ignored and every SKU is returned, as the real service does) and
 * `includeExtendedLocations=true` (EdgeZone entries of `locationInfo` appear only then).
 *
 * The catalog (`data/skus.json`, one record per SKU and location, as the real service
 * lists them) is loaded into `compute_skus` at seed time; listing pages through it by
 * its sequence number, narrowed by the location index.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { AppContext, ServiceModule } from '../../context.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { armErrors, armRoute } from '../arm/gateway.ts';
import { firstValue } from '../../core/input.ts';

/** api-versions of the SKU listing (spec §9). */
export const skuApiVersions = ['2021-07-01'];
/** Records per page; the last page has `nextLink: null`. */
export const skuPageSize = 500;

/** A ResourceSku record (spec §2.2) as shipped in `data/skus.json`. */
export interface ResourceSku {
  resourceType: string;
  name: string;
  tier?: string;
  size?: string;
  family?: string;
  kind?: string;
  capacity?: { minimum: number; maximum: number; default: number; scaleType: 'Automatic' | 'Manual' | 'None' };
  locations: string[];
  locationInfo: ResourceSkuLocationInfo[];
  apiVersions?: string[];
  costs?: { meterID: string; quantity: number; extendedUnit: string }[];
  capabilities: { name: string; value: string }[];
  restrictions: {
    type: 'Location' | 'Zone';
    values: string[];
    restrictionInfo: { locations?: string[]; zones?: string[] };
    reasonCode: 'QuotaId' | 'NotAvailableForSubscription';
  }[];
}

/** ResourceSkuLocationInfo (spec §2.2): a region entry (zones) or an extended-location entry (`type: EdgeZone`, no zones). */
export interface ResourceSkuLocationInfo {
  location: string;
  zones?: string[];
  zoneDetails?: { name: string[]; capabilities: { name: string; value: string }[] }[];
  extendedLocations?: string[];
  type?: 'EdgeZone';
}

/**
 * Parses `location eq '<x>'` (keyword and operator case-insensitive, any spacing, the value
 * matched without case and spaces, so `'West US'` is `westus`); undefined for anything else
 * (reference §3.3: other filters are ignored and every SKU is listed).
 */
export function parseLocationFilter(filter: string | undefined): string | undefined {
  if (!filter) return undefined;
  const m = /^\s*location\s+eq\s+'([^']*)'\s*$/i.exec(filter);
  return m ? m[1]!.toLowerCase().replace(/\s+/g, '') : undefined;
}

/** Whether an entry of `locationInfo` describes an extended location (spec §4.3). */
export function isExtendedEntry(l: ResourceSkuLocationInfo): boolean {
  return l.extendedLocations !== undefined || l.type !== undefined;
}

/**
 * The record as listed without `includeExtendedLocations=true`: the extended-location
 * entries of `locationInfo` removed; undefined when nothing else is left (a SKU offered only
 * in an edge zone is not listed then).
 */
export function shapeSku(sku: ResourceSku, includeExtended: boolean): ResourceSku | undefined {
  if (includeExtended) return sku;
  const locationInfo = sku.locationInfo.filter((l) => !isExtendedEntry(l));
  if (locationInfo.length === 0) return undefined;
  return locationInfo.length === sku.locationInfo.length ? sku : { ...sku, locationInfo };
}

let catalogCache: ResourceSku[] | undefined;
/** The shipped catalog (`data/skus.json`, made by `scripts/gen-skus.ts`), read once. */
export function loadCatalog(): ResourceSku[] {
  if (!catalogCache) {
    const file = fileURLToPath(new URL('./data/skus.json', import.meta.url));
    catalogCache = JSON.parse(fs.readFileSync(file, 'utf8')) as ResourceSku[];
  }
  return catalogCache;
}


async function register(app: FastifyInstance, ctx: AppContext) {
  armRoute(app, ctx, {
    method: 'GET',
    url: '/subscriptions/:subscriptionId/providers/Vendor.Compute/skus',
    apiVersions: skuApiVersions,
    action: 'Vendor.Compute/skus/read',
    handler: async (req, reply, call) => {
      const q = req.query as Record<string, unknown>;
      const filter = firstValue(q.$filter);
      const location = parseLocationFilter(filter);
      const extendedParam = firstValue(q.includeExtendedLocations);
      const includeExtended = (extendedParam ?? '').trim().toLowerCase() === 'true';
      const skiptoken = firstValue(q.$skiptoken);
      let after = 0;
      if (skiptoken !== undefined) {
        const t = decodeToken<{ s: number }>(skiptoken);
        if (!t || !Number.isSafeInteger(t.s) || t.s < 0) throw armErrors.invalidParameter('$skiptoken', `The value '${skiptoken}' of the '$skiptoken' query parameter is not valid.`);
        after = t.s;
      }
      reply.type('application/json; charset=utf-8');
      // No region name holds a control character (and PostgreSQL refuses U+0000 in a query): an unknown location.
      if (location !== undefined && /[\u0000-\u001f\u007f]/.test(location)) return '{"value":[],"nextLink":null}';
      const db = ctx.store.db;
      let query = db.selectFrom('compute_skus').select(['seq', 'body', 'body_plain']).where('seq', '>', after);
      if (location !== undefined) query = query.where('location_lower', '=', location);
      if (!includeExtended) query = query.where('extended_only', '=', 0);
      const rows = await query.orderBy('seq').limit(skuPageSize + 1).execute();
      const page = rows.slice(0, skuPageSize);
      // Bodies are stored as serialized JSON in both shapes; the page is assembled without re-parsing.
      const value = page.map((r) => (includeExtended || r.body_plain == null ? r.body : r.body_plain) as string);
      const nextLink =
        rows.length > skuPageSize
          ? absoluteUrl(ctx.origin(), `/subscriptions/${call.subscription!.subscriptionId}/providers/Vendor.Compute/skus`, {
              'api-version': call.apiVersion,
              $filter: filter,
              includeExtendedLocations: extendedParam,
              $skiptoken: encodeToken({ s: Number(page[page.length - 1]!.seq) }),
            })
          : null;
      return `{"value":[${value.join(',')}],"nextLink":${JSON.stringify(nextLink)}}`;
    },
  });
}

/** Rows of `compute_skus` for the catalog, in catalog order (`seq` from 1). */
function catalogRows(catalog: ResourceSku[]) {
  return catalog.map((sku, i) => {
    const plain = shapeSku(sku, false);
    return {
      seq: i + 1,
      location_lower: (sku.locations[0] ?? '').toLowerCase(),
      resource_type: sku.resourceType,
      name: sku.name,
      extended_only: plain ? 0 : 1,
      body: JSON.stringify(sku),
      body_plain: plain && plain !== sku ? JSON.stringify(plain) : null,
    };
  });
}

/** Rows per INSERT when loading the catalog (7 parameters each: well under SQLite's and PostgreSQL's limits). */
const seedBatch = 500;

/** The compute SKU module. */
export const computeModule: ServiceModule = {
  name: 'compute',
  migrations: {
    compute_0001_skus: {
      async up(db: Kysely<unknown>) {
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
      async up(db: Kysely<unknown>) {
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
  },
  tables: ['compute_skus'],
  seed: loadSkuCatalog,
  async register(app, ctx) {
    // The catalog is static reference data: a store seeded before a migration rebuilt the
    // table (or by an older catalog) gets it back at start, not only after a reset.
    if (ctx.config.seed) {
      const any = await ctx.store.db.selectFrom('compute_skus').select('seq').limit(1).executeTakeFirst();
      if (!any) await loadSkuCatalog(ctx);
    }
    await register(app, ctx);
  },
};

/**
 * Loads the shipped catalog into `compute_skus` in batches, in one transaction. Rows that
 * are already there (another instance loading at the same time) are left as they are.
 */
async function loadSkuCatalog(ctx: AppContext): Promise<void> {
  const rows = catalogRows(loadCatalog());
  await ctx.store.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += seedBatch) {
      await trx.insertInto('compute_skus').values(rows.slice(i, i + seedBatch)).onConflict((oc) => oc.column('seq').doNothing()).execute();
    }
  });
}
