/**
 * The analytics area: the tenant-admin dataflow listing (spec analytics §2.1, §4.1, §5, §8;
 * reference §1). `GET /v1.0/myorg/admin/dataflows` with `$filter`, `$top`, `$skip`, for a
 * tenant administrator (delegated `Tenant.Read.All` / `Tenant.ReadWrite.All`) or a service
 * principal without analytics application permissions; 200 requests per hour per caller.
 */
import type { ServiceModule } from '../../context.ts';
import { analyticsMigrations, analyticsTables } from './store.ts';
import { registerAnalyticsRoutes } from './routes.ts';

/** The analytics module. */
export const analyticsModule: ServiceModule = {
  name: 'analytics',
  migrations: analyticsMigrations,
  tables: analyticsTables,
  register: registerAnalyticsRoutes,
};
