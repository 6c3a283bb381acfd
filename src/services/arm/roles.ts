/**
 * The built-in role definitions (reference resource-manager-base §7.3, [ROLES]): their real
 * well-known ids, names, descriptions and permissions, with `Vendor.` namespaces. Every
 * built-in is `BuiltInRole` and assignable at `/`. Custom roles are stored
 * (`arm_role_definitions`, `role-store.ts`) and have the same shape.
 */

/** One permission block of a role definition (`Permission` of the 2022-04-01 contract). */
export interface RolePermission {
  actions: string[];
  notActions: string[];
  dataActions: string[];
  notDataActions: string[];
}

/** A role definition: a built-in or a tenant's custom role. */
export interface RoleDefinition {
  /** The role definition GUID (lower case; built-ins carry their standard ids). */
  id: string;
  roleName: string;
  description: string;
  /** `BuiltInRole` or `CustomRole`. */
  type: 'BuiltInRole' | 'CustomRole';
  /** Management-plane actions granted (wildcards `*`), of all permission blocks. */
  actions: string[];
  /** Actions taken away from {@link actions}. */
  notActions: string[];
  dataActions: string[];
  notDataActions: string[];
  /** Scopes the role may be assigned at (and below); `['/']` for built-ins. */
  assignableScopes: string[];
  /** Custom roles: the tenant that owns it. */
  tenantId?: string;
  /** Custom roles: creation and update times (ISO 8601) and the writer's object id. */
  createdOn?: string;
  updatedOn?: string;
  createdBy?: string;
  updatedBy?: string;
}

const builtIn = (id: string, roleName: string, description: string, actions: string[], notActions: string[] = [], dataActions: string[] = []): RoleDefinition => ({
  id,
  roleName,
  description,
  type: 'BuiltInRole',
  actions,
  notActions,
  dataActions,
  notDataActions: [],
  assignableScopes: ['/'],
});

/**
 * The built-in roles. The first five have role management policies (`authorization/policies.ts`);
 * the others are the roles the areas' operations are granted by (automation, billing, data
 * share, compute, storage).
 */
export const builtInRoles: readonly RoleDefinition[] = [
  builtIn('8e3af657-a8ff-443c-a75c-2fe8c4bcb635', 'Owner', 'Grants full access to manage all resources, including the ability to assign roles in RBAC.', ['*']),
  builtIn(
    'b24988ac-6180-42a0-ab88-20f7382dd24c',
    'Contributor',
    'Grants full access to manage all resources, but does not allow you to assign roles in RBAC, manage assignments in Blueprints, or share image galleries.',
    ['*'],
    [
      'Vendor.Authorization/*/Delete',
      'Vendor.Authorization/*/Write',
      'Vendor.Authorization/elevateAccess/Action',
      'Vendor.Blueprint/blueprintAssignments/write',
      'Vendor.Blueprint/blueprintAssignments/delete',
      'Vendor.Compute/galleries/share/action',
    ],
  ),
  builtIn('acdd72a7-3385-48ef-bd42-f606fba81ae7', 'Reader', 'View all resources, but does not allow you to make any changes.', ['*/read']),
  builtIn('18d7d88d-d35e-4fb5-a5c3-7773c20a72d9', 'User Access Administrator', 'Lets you manage user access to resources.', ['*/read', 'Vendor.Authorization/*', 'Vendor.Support/*']),
  builtIn(
    'f58310d9-a9f6-439a-9e8d-f62e7b41a168',
    'Role Based Access Control Administrator',
    'Manage access to resources by assigning roles using RBAC. This role does not allow you to manage access using other ways, such as Policy.',
    ['Vendor.Authorization/roleAssignments/write', 'Vendor.Authorization/roleAssignments/delete', '*/read', 'Vendor.Support/*'],
  ),
  builtIn('f353d9bd-d4a6-484e-a77a-8050b599b867', 'Automation Contributor', 'Manage automation resources and other resources using automation.', [
    'Vendor.Automation/automationAccounts/*',
    'Vendor.Authorization/*/read',
    'Vendor.Insights/alertRules/*',
    'Vendor.Insights/metrics/read',
    'Vendor.Resources/deployments/*',
    'Vendor.Resources/subscriptions/resourceGroups/read',
    'Vendor.Support/*',
  ]),
  builtIn('d3881f73-407a-4167-8283-e981cbba0404', 'Automation Operator', 'Automation Operators are able to start, stop, suspend, and resume jobs', [
    'Vendor.Authorization/*/read',
    'Vendor.Automation/automationAccounts/read',
    'Vendor.Automation/automationAccounts/jobs/read',
    'Vendor.Automation/automationAccounts/jobs/write',
    'Vendor.Automation/automationAccounts/runbooks/read',
    'Vendor.Automation/automationAccounts/webhooks/read',
    'Vendor.Resources/subscriptions/resourceGroups/read',
    'Vendor.Support/*',
  ]),
  builtIn('fa23ad8b-c56e-40d8-ac0c-ce449e1d2c64', 'Billing Reader', 'Allows read access to billing data', [
    'Vendor.Authorization/*/read',
    'Vendor.Billing/*/read',
    'Vendor.Commerce/*/read',
    'Vendor.Consumption/*/read',
    'Vendor.Management/managementGroups/read',
    'Vendor.CostManagement/*/read',
    'Vendor.Support/*',
  ]),
  builtIn('9980e02c-c2be-4d73-94e8-173b1dc7cf3c', 'Virtual Machine Contributor', 'Create and manage virtual machines, manage disks, install and run software, reset password of the root user of the virtual machine using VM extensions, and manage local user accounts using VM extensions. This role does not grant you management access to the virtual network or storage account the virtual machines are connected to. This role does not allow you to assign roles in RBAC.', [
    'Vendor.Authorization/*/read',
    'Vendor.Compute/availabilitySets/*',
    'Vendor.Compute/locations/*',
    'Vendor.Compute/virtualMachines/*',
    'Vendor.Compute/virtualMachineScaleSets/*',
    'Vendor.Compute/disks/write',
    'Vendor.Compute/disks/read',
    'Vendor.Compute/disks/delete',
    'Vendor.Compute/skus/read',
    'Vendor.Resources/subscriptions/resourceGroups/read',
    'Vendor.Support/*',
  ]),
  builtIn('17d1049b-9a84-46fb-8f53-869881c3d3ab', 'Storage Account Contributor', 'Permits management of storage accounts. Provides access to the account key, which can be used to access data via Shared Key authorization.', [
    'Vendor.Authorization/*/read',
    'Vendor.Insights/alertRules/*',
    'Vendor.Insights/diagnosticSettings/*',
    'Vendor.Network/virtualNetworks/subnets/joinViaServiceEndpoint/action',
    'Vendor.ResourceHealth/availabilityStatuses/read',
    'Vendor.Resources/deployments/*',
    'Vendor.Resources/subscriptions/resourceGroups/read',
    'Vendor.Storage/storageAccounts/*',
    'Vendor.Support/*',
  ]),
];

/** The built-in roles by lower-case id. */
const byId = new Map(builtInRoles.map((r) => [r.id, r]));

/** The built-in role with this GUID (case-insensitive), or undefined. */
export function builtInRole(id: string): RoleDefinition | undefined {
  return byId.get(id.toLowerCase());
}

/** The roles that have role management policies (the first five built-ins; spec resource-manager §4.1). */
export const policyRoles: readonly RoleDefinition[] = builtInRoles.slice(0, 5);
