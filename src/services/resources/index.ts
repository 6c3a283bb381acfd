/**
 * The resources area (issue 27; reference resource-manager-base): the resource manager's base
 * surface on the ARM kernel — subscriptions, tenants and locations; resource providers and
 * their registration per subscription (checked by the kernel on every namespaced PUT);
 * resource groups with the long-running delete that removes everything inside them through
 * every area's `deleteResourceGroup` hook; the generic resource listing over every area's
 * `listedResources`; tags at scope.
 *
 * `routes.ts` (the route table) → `subscriptions.ts`, `resource-groups.ts`, `listing.ts`,
 * `tags.ts` (the rules; `providers.ts` the served namespaces, `locations.ts` the regions) →
 * `store.ts` (registrations, deletes, subscription tags, the listings).
 */
import type { ServiceModule } from '../../context.ts';
import { onNamespacedPut } from '../arm/operations.ts';
import { registrationCheck } from './providers.ts';
import { registerResourcesRoutes } from './routes.ts';
import { resourcesMigrations, resourcesTables } from './store.ts';

/** The resources module. */
export const resourcesModule: ServiceModule = {
  name: 'resources',
  migrations: resourcesMigrations,
  tables: resourcesTables,
  async register(app, ctx) {
    // The area list is read when the app registers (services/index.ts imports this module).
    const { modules } = await import('../index.ts');
    registerResourcesRoutes(app, ctx, modules);
    onNamespacedPut(ctx, registrationCheck(ctx));
  },
};
