/**
 * The authorization area: role management policies (spec resource-manager §2.1, §4.1,
 * §4.2; api-version 2020-10-01). Every role definition at every scope has a policy; the
 * defaults are computed, only PATCHed policies are stored (`authz_role_management_policies`).
 *
 * Demo data of this area: a storage account `stratusdata` in `stratus-rg` and its child
 * `blobServices/default` (resource scopes for policies) and a Reader assignment for the managed identity on the default
 * subscription (a principal that may read policies but not change them).
 */
import { sql } from 'kysely';
import type { ServiceModule } from '../../context.ts';
import { nowIso } from '../../core/clock.ts';
import { stableUuid } from '../../core/ids.ts';
import { demoManagedIdentity, demoSubscription, demoTenant } from '../../seed/demo.ts';
import { ArmStore } from '../arm/store.ts';
import { registerPolicyRoutes } from './routes.ts';
import { registerRoleRoutes } from './role-routes.ts';
import { authorizationMigrations, policyTable } from './store.ts';

/** The demo resource used as a resource scope (documented in docs/coverage/authorization.md); its child `blobServices/default` is seeded too. */
export const demoStorageAccount = {
  name: 'stratusdata',
  type: 'Vendor.Storage/storageAccounts',
  id: `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Storage/storageAccounts/stratusdata`,
} as const;

/** Role id of Reader (standard built-in id). */
const readerRoleId = 'acdd72a7-3385-48ef-bd42-f606fba81ae7';

/** The authorization module. */
export const authorizationModule: ServiceModule = {
  name: 'authorization',
  migrations: authorizationMigrations,
  tables: [policyTable],
  async seed(ctx) {
    const arm = new ArmStore(ctx.store.db, ctx.cache);
    const at = nowIso();
    if (!(await arm.getResource(demoStorageAccount.id))) {
      await arm.putResource({
        id: demoStorageAccount.id,
        tenantId: demoTenant.id,
        subscriptionId: demoSubscription.id,
        resourceGroup: demoSubscription.resourceGroup,
        type: demoStorageAccount.type,
        name: demoStorageAccount.name,
        parentId: `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}`,
        body: {
          id: demoStorageAccount.id,
          name: demoStorageAccount.name,
          type: demoStorageAccount.type,
          location: demoSubscription.location,
          kind: 'StorageV2',
          sku: { name: 'Standard_LRS', tier: 'Standard' },
          properties: { provisioningState: 'Succeeded' },
        },
        createdAt: at,
        updatedAt: at,
      });
    }
    const child = `${demoStorageAccount.id}/blobServices/default`;
    if (!(await arm.getResource(child))) {
      await arm.putResource({
        id: child,
        tenantId: demoTenant.id,
        subscriptionId: demoSubscription.id,
        resourceGroup: demoSubscription.resourceGroup,
        type: `${demoStorageAccount.type}/blobServices`,
        name: 'default',
        parentId: demoStorageAccount.id,
        body: { id: child, name: 'default', type: `${demoStorageAccount.type}/blobServices`, properties: {} },
        createdAt: at,
        updatedAt: at,
      });
    }
    const scope = `/subscriptions/${demoSubscription.id}`;
    await arm.addAssignment({
      id: stableUuid('authorization-demo-assignment', scope, readerRoleId, demoManagedIdentity.objectId),
      tenantId: demoTenant.id,
      scope,
      roleDefinitionId: readerRoleId,
      principalId: demoManagedIdentity.objectId,
      principalType: 'ServicePrincipal',
    });
  },
  register(app, ctx) {
    registerPolicyRoutes(app, ctx);
    registerRoleRoutes(app, ctx);
  },
  // The policies changed at the group or below it go with the group (issue 27).
  async deleteResourceGroup(ctx, trx, subscriptionId, groupName) {
    const scope = `/subscriptions/${subscriptionId}/resourcegroups/${groupName}`.toLowerCase();
    await trx.deleteFrom(policyTable).where((eb) => eb.or([eb('scope_lower', '=', scope), eb(sql`substr(scope_lower, 1, ${scope.length + 1})`, '=', `${scope}/`)])).execute();
  },
};
