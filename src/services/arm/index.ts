/**
 * The resource-manager hierarchy as a service module: its tables and the demo management
 * groups, subscriptions, resource groups and role assignments.
 */
import type { ServiceModule } from '../../context.ts';
import { armMigrations, armTables, ArmStore } from './store.ts';
import { stableUuid } from '../../core/ids.ts';
import { demoAdmin, demoServicePrincipal, demoSubscription, demoTenant, otherSubscription, otherTenant, otherUser } from '../../seed/demo.ts';

/** Role ids used by the demo assignments. */
export const roleIds = {
  owner: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635',
  contributor: 'b24988ac-6180-42a0-ab88-20f7382dd24c',
  reader: 'acdd72a7-3385-48ef-bd42-f606fba81ae7',
  userAccessAdministrator: '18d7d88d-d35e-4fb5-a5c3-7773c20a72d9',
} as const;

/** The ARM hierarchy module. */
export const armModule: ServiceModule = {
  name: 'arm',
  migrations: armMigrations,
  tables: armTables,
  async seed(ctx) {
    const s = new ArmStore(ctx.store.db, ctx.cache);
    await s.addManagementGroup({ name: demoTenant.id, tenantId: demoTenant.id, displayName: 'Tenant Root Group' });
    await s.addManagementGroup({ name: 'stratus-platform', tenantId: demoTenant.id, displayName: 'Stratus Platform', parentName: demoTenant.id });
    await s.addSubscription({ subscriptionId: demoSubscription.id, tenantId: demoTenant.id, displayName: demoSubscription.displayName, state: 'Enabled', managementGroup: 'stratus-platform' });
    await s.addResourceGroup({ subscriptionId: demoSubscription.id, name: demoSubscription.resourceGroup, location: demoSubscription.location, tags: {} });
    await s.addResourceGroup({ subscriptionId: demoSubscription.id, name: 'stratus-network', location: 'westus2', tags: { env: 'dev' } });
    await s.addManagementGroup({ name: otherTenant.id, tenantId: otherTenant.id, displayName: 'Tenant Root Group' });
    await s.addSubscription({ subscriptionId: otherSubscription.id, tenantId: otherTenant.id, displayName: otherSubscription.displayName, state: 'Enabled', managementGroup: otherTenant.id });
    await s.addResourceGroup({ subscriptionId: otherSubscription.id, name: otherSubscription.resourceGroup, location: otherSubscription.location, tags: {} });
    const assign = async (tenantId: string, scope: string, role: string, principalId: string, principalType: 'User' | 'ServicePrincipal') =>
      s.addAssignment({ id: stableUuid('assignment', scope, role, principalId), tenantId, scope, roleDefinitionId: role, principalId, principalType });
    await assign(demoTenant.id, `/subscriptions/${demoSubscription.id}`, roleIds.owner, demoAdmin.id, 'User');
    await assign(demoTenant.id, `/providers/Vendor.Management/managementGroups/${demoTenant.id}`, roleIds.owner, demoAdmin.id, 'User');
    await assign(demoTenant.id, `/subscriptions/${demoSubscription.id}`, roleIds.contributor, demoServicePrincipal.objectId, 'ServicePrincipal');
    await assign(otherTenant.id, `/subscriptions/${otherSubscription.id}`, roleIds.owner, otherUser.id, 'User');
  },
  register() {},
  // Runs last of the group delete's hooks (modules in reverse order): the other areas' rows below
  // the group's resources are gone when these rows go.
  async deleteResourceGroup(ctx, trx, subscriptionId, groupName) {
    await new ArmStore(trx, ctx.cache).deleteResourceGroupRows(subscriptionId, groupName);
  },
  listedResources(db, subscriptionId, groupName) {
    let q = db.selectFrom('arm_resources').select(['id', 'id_lower', 'type_lower', 'name', 'resource_group_lower', 'body', 'created_at', 'updated_at']).where('subscription_id', '=', subscriptionId.toLowerCase());
    if (groupName !== undefined) q = q.where('resource_group_lower', '=', groupName.toLowerCase());
    return q;
  },
};
