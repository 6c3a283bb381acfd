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
import { fromJson } from '../../store/db.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { armErrors, armRoute } from '../arm/gateway.ts';

/** api-versions of the SKU listing (spec §9). */
export const skuApiVersions = ['2021-07-01'];
/** Records per page; the last page has `nextLink: null`. */
export const skuPageSize = 500;

/** A ResourceSku record (spec §2.2) as stored. */
export interface ResourceSku {
  resourceType: string;
  name: string;
  locations: string[];
  locationInfo: { location: string; zones?: string[]; zoneDetails?: unknown[]; extendedLocations?: string[]; type?: string }[];
  [k: string]: unknown;
}

/** Parses `location eq '<x>'` (case-insensitive keyword, any spacing); undefined for anything else. */
export function parseLocationFilter(filter: string | undefined): string | undefined {
  if (!filter) return undefined;
  const m = /^\s*location\s+eq\s+'([^']*)'\s*$/i.exec(filter);
  return m ? m[1]!.toLowerCase().replace(/\s+/g, '') : undefined;
}

/** Removes the extended-location entries of `locationInfo` unless asked for. */
export function shapeSku(sku: ResourceSku, includeExtended: boolean): ResourceSku {
  if (includeExtended) return sku;
  return { ...sku, locationInfo: sku.locationInfo.filter((l) => !l.extendedLocations) };
}

function loadCatalog(): ResourceSku[] {
  const file = fileURLToPath(new URL('./data/skus.json', import.meta.url));
  return JSON.parse(fs.readFileSync(file, 'utf8')) as ResourceSku[];
}

async function register(app: FastifyInstance, ctx: AppContext) {
  armRoute(app, ctx, {
    method: 'GET',
    url: '/subscriptions/:subscriptionId/providers/Vendor.Compute/skus',
    apiVersions: skuApiVersions,
    action: 'Vendor.Compute/skus/read',
    handler: async (req, _reply, call) => {
      const q = req.query as Record<string, string | undefined>;
      const location = parseLocationFilter(q.$filter);
      const includeExtended = (q.includeExtendedLocations ?? '').toLowerCase() === 'true';
      let after = 0;
      if (q.$skiptoken !== undefined) {
        const t = decodeToken<{ s: number }>(q.$skiptoken);
        if (!t || !Number.isInteger(t.s)) throw armErrors.invalidParameter('$skiptoken', `The value '${q.$skiptoken}' of the '$skiptoken' query parameter is not valid.`);
        after = t.s;
      }
      const db = ctx.store.db as Kysely<any>;
      let query = db.selectFrom('compute_skus').select(['seq', 'body']).where('seq', '>', after);
      if (location) query = query.where('location_lower', '=', location);
      const rows = await query.orderBy('seq').limit(skuPageSize + 1).execute();
      const page = rows.slice(0, skuPageSize);
      const value = page.map((r) => shapeSku(fromJson<ResourceSku>(r.body), includeExtended));
      const nextLink =
        rows.length > skuPageSize
          ? absoluteUrl(ctx.origin(), `/subscriptions/${call.subscription!.subscriptionId}/providers/Vendor.Compute/skus`, {
              'api-version': call.apiVersion,
              $filter: q.$filter,
              includeExtendedLocations: q.includeExtendedLocations,
              $skiptoken: encodeToken({ s: Number(page[page.length - 1]!.seq) }),
            })
          : null;
      return { value, nextLink };
    },
  });
}

/** The compute SKU module. */
export const computeModule: ServiceModule = {
  name: 'compute',
  migrations: {
    compute_0001_skus: {
      async up(db: Kysely<any>) {
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
  },
  tables: ['compute_skus'],
  async seed(ctx) {
    const catalog = loadCatalog();
    const rows = catalog.map((sku, i) => ({ seq: i + 1, location_lower: (sku.locations[0] ?? '').toLowerCase(), resource_type: sku.resourceType, name: sku.name, body: JSON.stringify(sku) }));
    for (let i = 0; i < rows.length; i += 200) await ctx.store.db.insertInto('compute_skus').values(rows.slice(i, i + 200)).execute();
  },
  register,
};
