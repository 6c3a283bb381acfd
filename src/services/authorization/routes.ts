/**
 * Routes of role management policies (api-version 2020-10-01; spec resource-manager §4.1,
 * §4.2, §5, §9; reference §2.1): list, get, update (PATCH) and delete, each at the four scope
 * shapes of §4.1 plus the `providers/Vendor.Subscription/subscriptions/{id}` form of the
 * published examples and child resources one level deep. A route table on the
 * resource-manager kernel; what each operation means is in `rules.ts`.
 *
 * Order of checks, all before the body is read: api-version → bearer → subscription →
 * resource group → the scope exists in the caller's tenant (404, `resolve`) → permission at
 * the scope (403 `AuthorizationFailed`).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { armArea } from '../arm/kernel.ts';
import { policyRules } from './rules.ts';

/** api-versions of the role management policy operations (spec §9). */
export const policyApiVersions = ['2020-10-01'];

/** RBAC actions (spec §4.1, §5; the write and delete actions of the real provider). */
export const policyActions = {
  read: 'Vendor.Authorization/roleAssignments/read',
  write: 'Vendor.Authorization/roleManagementPolicies/write',
  delete: 'Vendor.Authorization/roleManagementPolicies/delete',
} as const;

/** Route prefixes of the scope shapes (Fastify parameters named as `resolveScope` reads them). */
export const scopePrefixes = [
  '/providers/Vendor.Management/managementGroups/:managementGroupId',
  '/subscriptions/:subscriptionId',
  '/providers/Vendor.Subscription/subscriptions/:subscriptionId',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/:providerNamespace/:resourceType/:resourceName',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/:providerNamespace/:resourceType/:resourceName/:childType/:childName',
];

const collection = '/providers/Vendor.Authorization/roleManagementPolicies';

/** Registers the policy routes on `app`. */
export function registerPolicyRoutes(app: FastifyInstance, ctx: AppContext): void {
  const route = armArea(app, ctx, { apiVersions: policyApiVersions });
  const rules = policyRules(ctx);
  const { resolve } = rules;
  for (const prefix of scopePrefixes) {
    const one = `${prefix}${collection}/:roleManagementPolicyName`;
    route({ method: 'GET', url: prefix + collection, action: policyActions.read, resolve, handler: rules.list });
    route({ method: 'GET', url: one, action: policyActions.read, resolve, handler: rules.get });
    route({ method: 'PATCH', url: one, action: policyActions.write, resolve, handler: rules.patch });
    route({ method: 'DELETE', url: one, action: policyActions.delete, resolve, handler: rules.delete });
  }
}
