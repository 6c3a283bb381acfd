/**
 * The tables of the arm area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). ArmDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, nullable, text, textOf, type Tables } from '../../store/columns.ts';

/** The columns of the arm tables, by table (see the file comment). */
export const armColumns = defineTables({
  /** Created by `arm_0001_hierarchy`. */
  arm_management_groups: {
    name_lower: text(),
    name: text(),
    tenant_id: text(),
    display_name: text(),
    parent_name_lower: nullable(text()),
  },
  /** Created by `arm_0001_hierarchy`. */
  arm_resource_groups: {
    subscription_id: text(),
    name_lower: text(),
    name: text(),
    location: text(),
    tags: text(),
    /** Added by `arm_0027_resource_groups`. */
    managed_by: nullable(text()),
  },
  /** Created by `arm_0001_hierarchy`. */
  arm_resources: {
    id_lower: text(),
    id: text(),
    tenant_id: text(),
    subscription_id: text(),
    resource_group_lower: text(),
    type_lower: text(),
    name: text(),
    parent_id_lower: text(),
    body: text(),
    created_at: text(),
    updated_at: text(),
  },
  /** Created by `arm_0001_hierarchy`. */
  arm_role_assignments: {
    id: text(),
    tenant_id: text(),
    scope_lower: text(),
    scope: text(),
    role_definition_id: text(),
    principal_id: text(),
    principal_type: textOf<'User' | 'ServicePrincipal' | 'Group'>(),
    /** Added by `arm_0027_role_assignment_details`. */
    description: nullable(text()),
    condition: nullable(text()),
    condition_version: nullable(text()),
    created_on: nullable(text()),
    updated_on: nullable(text()),
    created_by: nullable(text()),
    updated_by: nullable(text()),
  },
  /** Created by `arm_0027_role_definitions`: custom role definitions. */
  arm_role_definitions: {
    id: text(),
    tenant_id: text(),
    scope: text(),
    role_name: text(),
    role_name_lower: text(),
    body: text(),
    created_on: text(),
    updated_on: text(),
    created_by: text(),
    updated_by: text(),
  },
  /** Created by `arm_0001_hierarchy`. */
  arm_subscriptions: {
    subscription_id: text(),
    tenant_id: text(),
    display_name: text(),
    state: text(),
    management_group_lower: text(),
  },
});

/** The arm tables as Kysely sees them. */
export type ArmDatabase = Tables<typeof armColumns>;
