/**
 * What the compute SKU listing means (spec: resource-manager §2.2, §4.3; reference §3):
 * `$filter=location eq '<location>'` (the only filter the service supports; any other filter
 * is ignored and every SKU is returned, as the real service does),
 * `includeExtendedLocations=true` (EdgeZone entries of `locationInfo` appear only then), and
 * `$skiptoken` paging with `nextLink: null` on the last page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { queryValue, skipToken } from '../arm/input.ts';
import type { ResourceSku, ResourceSkuLocationInfo } from './model.ts';
import { skuPage } from './store.ts';

/** Records per page; the last page has `nextLink: null`. */
export const skuPageSize = 500;

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

/** The SKU listing operation (handler of `routes.ts`). */
export function computeRules(ctx: AppContext) {
  return {
    /**
     * One page of the catalog as JSON text.
     * @throws 400 `InvalidParameter` (target `$skiptoken`) for a skip token that does not decode.
     */
    async listSkus(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const filter = queryValue(req, '$filter');
      const location = parseLocationFilter(filter);
      const extendedParam = queryValue(req, 'includeExtendedLocations');
      const includeExtended = (extendedParam ?? '').trim().toLowerCase() === 'true';
      const invalid = (token: string) => errors.arm.invalidParameter({ message: `The value '${token}' of the '$skiptoken' query parameter is not valid.` }, { target: '$skiptoken' });
      const after = skipToken<{ s: number }>(req, ['$skiptoken'], (t) => Number.isSafeInteger(t.s) && t.s >= 0, invalid)?.s ?? 0;
      reply.type('application/json; charset=utf-8');
      // No region name holds a control character (and PostgreSQL refuses U+0000 in a query): an unknown location.
      if (location !== undefined && /[\u0000-\u001f\u007f]/.test(location)) return '{"value":[],"nextLink":null}';
      const rows = skuPage({ after, location, includeExtended, limit: skuPageSize + 1 });
      const page = rows.slice(0, skuPageSize);
      const nextLink =
        rows.length > skuPageSize
          ? absoluteUrl(ctx.origin(), `/subscriptions/${call.subscription!.subscriptionId}/providers/Vendor.Compute/skus`, {
              'api-version': call.apiVersion,
              $filter: filter,
              includeExtendedLocations: extendedParam,
              $skiptoken: encodeToken({ s: page[page.length - 1]!.seq }),
            })
          : null;
      return `{"value":[${page.map((r) => r.json).join(',')}],"nextLink":${JSON.stringify(nextLink)}}`;
    },
  };
}
