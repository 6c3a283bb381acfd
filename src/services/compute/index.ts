/**
 * The compute area: the SKU catalog (spec: resource-manager §2.2, §4.3; reference §3).
 * `routes.ts` (the route table) → `rules.ts` (filter, extended locations, paging) →
 * `store.ts` (the catalog, served from memory as `data/skus.json` holds it); the record type is
 * in `model.ts`.
 */
import type { ServiceModule } from '../../context.ts';
import { registerComputeRoutes } from './routes.ts';
import { computeMigrations, computeTables } from './store.ts';

export type { ResourceSku, ResourceSkuLocationInfo } from './model.ts';
export { isExtendedEntry, parseLocationFilter, shapeSku, skuPageSize } from './rules.ts';
export { catalogRows, loadCatalog, shippedCatalogRows } from './store.ts';
export { skuApiVersions } from './routes.ts';

/** The compute SKU module. */
export const computeModule: ServiceModule = {
  name: 'compute',
  migrations: computeMigrations,
  tables: computeTables,
  async register(app, ctx) {
    registerComputeRoutes(app, ctx);
  },
};
