/**
 * The compute area: the SKU catalog (spec: resource-manager §2.2, §4.3; reference §3).
 * `routes.ts` (the route table) → `rules.ts` (filter, extended locations, paging) →
 * `store.ts` (the `compute_skus` table, loaded from `data/skus.json`); the record type is
 * in `model.ts`.
 */
import type { ServiceModule } from '../../context.ts';
import { registerComputeRoutes } from './routes.ts';
import { catalogLoaded, computeMigrations, computeTables, loadSkuCatalog } from './store.ts';

export type { ResourceSku, ResourceSkuLocationInfo } from './model.ts';
export { isExtendedEntry, parseLocationFilter, shapeSku, skuPageSize } from './rules.ts';
export { catalogRows, loadCatalog, shippedCatalogRows } from './store.ts';
export { skuApiVersions } from './routes.ts';

/** The compute SKU module. */
export const computeModule: ServiceModule = {
  name: 'compute',
  migrations: computeMigrations,
  tables: computeTables,
  seed: loadSkuCatalog,
  async register(app, ctx) {
    // The catalog is static reference data: a store seeded before a migration rebuilt the
    // table (or by an older catalog) gets it back at start, not only after a reset.
    if (ctx.config.seed && !(await catalogLoaded(ctx))) await loadSkuCatalog(ctx);
    registerComputeRoutes(app, ctx);
  },
};
