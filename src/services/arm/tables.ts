/**
 * The tables of the arm area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */

/** A row of `arm_management_groups` (created by migration `arm_0001_hierarchy`). */
export interface ArmManagementGroupsTable {
  name_lower: string;
  name: string;
  tenant_id: string;
  display_name: string;
  parent_name_lower: string | null;
}

/** A row of `arm_resource_groups` (created by migration `arm_0001_hierarchy`). */
export interface ArmResourceGroupsTable {
  subscription_id: string;
  name_lower: string;
  name: string;
  location: string;
  tags: string;
}

/** A row of `arm_resources` (created by migration `arm_0001_hierarchy`). */
export interface ArmResourcesTable {
  id_lower: string;
  id: string;
  tenant_id: string;
  subscription_id: string;
  resource_group_lower: string;
  type_lower: string;
  name: string;
  parent_id_lower: string;
  body: string;
  created_at: string;
  updated_at: string;
}

/** A row of `arm_role_assignments` (created by migration `arm_0001_hierarchy`). */
export interface ArmRoleAssignmentsTable {
  id: string;
  tenant_id: string;
  scope_lower: string;
  scope: string;
  role_definition_id: string;
  principal_id: string;
  /** `User`, `ServicePrincipal` or `Group` (the `RoleAssignment.principalType` of store.ts). */
  principal_type: 'User' | 'ServicePrincipal' | 'Group';
}

/** A row of `arm_subscriptions` (created by migration `arm_0001_hierarchy`). */
export interface ArmSubscriptionsTable {
  subscription_id: string;
  tenant_id: string;
  display_name: string;
  state: string;
  management_group_lower: string;
}

export interface ArmDatabase {
  arm_management_groups: ArmManagementGroupsTable;
  arm_resource_groups: ArmResourceGroupsTable;
  arm_resources: ArmResourcesTable;
  arm_role_assignments: ArmRoleAssignmentsTable;
  arm_subscriptions: ArmSubscriptionsTable;
}
