/**
 * Routes of the compute area (spec: resource-manager §2.2, §4.3, §9; reference §3): the SKU
 * catalog, `GET /subscriptions/{subscriptionId}/providers/Vendor.Compute/skus`. A route
 * table on the resource-manager kernel; what the listing means is in `rules.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { armArea } from '../arm/kernel.ts';
import { computeRules } from './rules.ts';

/** api-versions of the SKU listing (spec §9). */
export const skuApiVersions = ['2021-07-01'];

/** Registers the compute routes. */
export function registerComputeRoutes(app: FastifyInstance, ctx: AppContext): void {
  const route = armArea(app, ctx, { apiVersions: skuApiVersions });
  const rules = computeRules(ctx);
  route({ method: 'GET', url: '/subscriptions/:subscriptionId/providers/Vendor.Compute/skus', action: 'Vendor.Compute/skus/read', handler: rules.listSkus });
}
