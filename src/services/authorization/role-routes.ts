/**
 * Routes of role definitions, role assignments and the permissions listing (api-version
 * 2022-04-01; reference resource-manager-base §7): each at every scope shape of
 * `role-scope.ts` (tenant root, management group, subscription, resource group, resource), the
 * by-id forms (`/{roleAssignmentId}`, `/{roleId}`) being the same paths. A route table on the
 * resource-manager kernel; what each operation means is in `assignments.ts` and `definitions.ts`.
 *
 * Order of checks: api-version → bearer → subscription → resource group → the scope (404 for
 * a management group not in the tenant) → the action at the scope (403 `AuthorizationFailed`;
 * the tenant root `/` is decided at the tenant's root management group).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { armArea } from '../arm/kernel.ts';
import { armReader, type ArmCall } from '../arm/gateway.ts';
import { rolesAt } from '../arm/rbac.ts';
import { assignmentActions, assignmentRules, type RoleCall } from './assignments.ts';
import { definitionActions, definitionRules } from './definitions.ts';
import { resolveRoleScope, roleScopePrefixes } from './role-scope.ts';

/** api-versions of role definitions, assignments and permissions (what `@azure/arm-authorization` 9 and `azure-mgmt-authorization` send). */
export const roleApiVersions = ['2022-04-01', '2020-10-01-preview'];

const provider = '/providers/Vendor.Authorization';

/** Registers the role routes on `app`. */
export function registerRoleRoutes(app: FastifyInstance, ctx: AppContext): void {
  const route = armArea(app, ctx, { apiVersions: roleApiVersions });
  const arm = armReader(ctx);
  const resolve = (req: FastifyRequest, call: ArmCall) => resolveRoleScope(arm, req, call);
  const assignments = assignmentRules(ctx);
  const definitions = definitionRules(ctx);
  for (const prefix of roleScopePrefixes) {
    const a = `${prefix}${provider}/roleAssignments`;
    route({ method: 'GET', url: a, resolve, handler: assignments.list });
    route({ method: 'GET', url: `${a}/:roleAssignmentName`, action: assignmentActions.read, resolve, handler: assignments.get });
    route({ method: 'PUT', url: `${a}/:roleAssignmentName`, action: assignmentActions.write, resolve, handler: assignments.put });
    route({ method: 'DELETE', url: `${a}/:roleAssignmentName`, action: assignmentActions.delete, resolve, handler: assignments.delete });
    // Role definitions are readable by every principal of the tenant; writes need the actions.
    const d = `${prefix}${provider}/roleDefinitions`;
    route({ method: 'GET', url: d, resolve, handler: definitions.list });
    route({ method: 'GET', url: `${d}/:roleDefinitionId`, resolve, handler: definitions.get });
    route({ method: 'PUT', url: `${d}/:roleDefinitionId`, action: definitionActions.write, resolve, handler: definitions.put });
    route({ method: 'DELETE', url: `${d}/:roleDefinitionId`, action: definitionActions.delete, resolve, handler: definitions.delete });
  }
  // The caller's own permissions at a resource group or a resource (reference §7.4): one entry per role held there.
  for (const prefix of roleScopePrefixes.filter((p) => p.includes(':resourceGroupName'))) {
    route({
      method: 'GET',
      url: `${prefix}${provider}/permissions`,
      resolve,
      handler: async (_req, _reply, call: RoleCall) => {
        const roles = await rolesAt(arm, call.principal, call.resolved.role.scope);
        return { value: roles.map((r) => ({ actions: r.actions, notActions: r.notActions, dataActions: r.dataActions, notDataActions: r.notDataActions })) };
      },
    });
  }
}
