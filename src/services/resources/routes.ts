/**
 * The route table of the resource manager's base surface (issue 27; reference
 * resource-manager-base): subscriptions, tenants and locations (subscriptions api-versions),
 * providers, resource groups and their delete operations, the generic resource listing and
 * tags at scope (resources api-versions). HTTP shape only; what each operation means is in
 * `subscriptions.ts`, `resource-groups.ts`, `listing.ts` and `tags.ts`.
 *
 * Paths are matched case-insensitively (the app's router), so `resourcegroups` (the published
 * paths, what the clients send) and `resourceGroups` (the ids) reach the same routes. A GET
 * route answers HEAD too (the router's HEAD routes): the group's HEAD is check-existence.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext, ServiceModule } from '../../context.ts';
import { armArea } from '../arm/kernel.ts';
import { listingRules } from './listing.ts';
import { resourcesApiVersions, subscriptionsApiVersions } from './providers.ts';
import { groupRules } from './resource-groups.ts';
import { params } from './input.ts';
import { subscriptionRead, subscriptionRules } from './subscriptions.ts';
import { tagRules, tagScope } from './tags.ts';

const sub = '/subscriptions/:subscriptionId';
const group = `${sub}/resourcegroups/:resourceGroupName`;
/** The RBAC actions of the operations (the resources provider's, `Vendor.` namespace). */
const actions = {
  groupRead: 'Vendor.Resources/subscriptions/resourceGroups/read',
  groupWrite: 'Vendor.Resources/subscriptions/resourceGroups/write',
  groupDelete: 'Vendor.Resources/subscriptions/resourceGroups/delete',
  locations: 'Vendor.Resources/subscriptions/locations/read',
  providers: 'Vendor.Resources/subscriptions/providers/read',
  groupResources: 'Vendor.Resources/subscriptions/resourceGroups/resources/read',
  tags: { GET: 'Vendor.Resources/tags/read', PUT: 'Vendor.Resources/tags/write', PATCH: 'Vendor.Resources/tags/write', DELETE: 'Vendor.Resources/tags/delete' },
} as const;

/** Registers the routes; `modules` are the app's areas (group delete hooks, listed resources). */
export function registerResourcesRoutes(app: FastifyInstance, ctx: AppContext, modules: readonly ServiceModule[]): void {
  const subsRoute = armArea(app, ctx, { apiVersions: subscriptionsApiVersions });
  const route = armArea(app, ctx, { apiVersions: resourcesApiVersions });
  const s = subscriptionRules(ctx);
  const g = groupRules(ctx, modules);
  const list = listingRules(ctx, modules);
  const tags = tagRules(ctx);

  subsRoute({ method: 'GET', url: '/subscriptions', handler: s.listSubscriptions });
  subsRoute({ method: 'GET', url: sub, action: subscriptionRead, handler: s.getSubscription });
  subsRoute({ method: 'GET', url: `${sub}/locations`, action: actions.locations, handler: s.listLocations });
  subsRoute({ method: 'GET', url: '/tenants', handler: s.listTenants });

  const namespaceAction = (verb: string) => (req: FastifyRequest) => `${params(req).resourceProviderNamespace}/${verb}/action`;
  route({ method: 'GET', url: `${sub}/providers`, action: actions.providers, handler: s.listProviders });
  route({ method: 'GET', url: `${sub}/providers/:resourceProviderNamespace`, action: actions.providers, handler: s.getProvider });
  route({ method: 'POST', url: `${sub}/providers/:resourceProviderNamespace/register`, action: namespaceAction('register'), handler: s.setRegistration });
  route({ method: 'POST', url: `${sub}/providers/:resourceProviderNamespace/unregister`, action: namespaceAction('unregister'), handler: s.setRegistration });

  // The group routes check the group themselves (a PUT creates it; a deleting group reads `Deleting`).
  const own = { requireResourceGroup: false } as const;
  route({ method: 'PUT', url: group, action: actions.groupWrite, ...own, handler: g.put });
  route({ method: 'GET', url: group, action: actions.groupRead, ...own, handler: g.get });
  route({ method: 'PATCH', url: group, action: actions.groupWrite, ...own, handler: g.patch });
  route({ method: 'DELETE', url: group, action: actions.groupDelete, ...own, handler: g.delete });
  // The list checks the read itself: at the subscription, or per group for a caller with roles on groups only.
  route({ method: 'GET', url: `${sub}/resourcegroups`, handler: g.list });
  // Polled by whoever started the delete: the unguessable id is the capability (the subscription is checked against the caller's tenant).
  route({ method: 'GET', url: `${sub}/operationresults/:operationId`, handler: g.operationResult });

  // Checked by the listing itself: at the subscription, or per group (see access.ts).
  route({ method: 'GET', url: `${sub}/resources`, handler: list.list });
  route({ method: 'GET', url: `${group}/resources`, action: actions.groupResources, handler: list.list });

  const tagScopes = [sub, group, `${group}/providers/:providerNamespace/:resourceType/:resourceName`, `${group}/providers/:providerNamespace/:resourceType/:resourceName/:childType/:childName`];
  for (const scope of tagScopes) {
    const url = `${scope}/providers/Vendor.Resources/tags/default`;
    const resourceScope = scope.includes(':providerNamespace') ? { scope: tagScope } : {};
    route({ method: 'GET', url, action: actions.tags.GET, ...resourceScope, handler: tags.get });
    route({ method: 'PUT', url, action: actions.tags.PUT, ...resourceScope, handler: tags.put });
    route({ method: 'PATCH', url, action: actions.tags.PATCH, ...resourceScope, handler: tags.patch });
    route({ method: 'DELETE', url, action: actions.tags.DELETE, ...resourceScope, handler: tags.delete });
  }
}
