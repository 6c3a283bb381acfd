/**
 * The scopes of role definitions and role assignments (reference resource-manager-base §7):
 * `/{scope}/providers/Vendor.Authorization/role…` where the scope is the tenant root `/`, a
 * management group, a subscription, a resource group or a resource (one or two levels), and the
 * `$filter` forms of the two lists.
 */
import type { FastifyRequest } from 'fastify';
import { errors } from '../../core/errors/index.ts';
import type { ArmCall } from '../arm/gateway.ts';
import type { ArmStore } from '../arm/store.ts';
import { hasControlCharacter } from './policies.ts';

/** Route prefixes of the scope shapes ('' is the tenant root `/`). */
export const roleScopePrefixes = [
  '',
  '/providers/Vendor.Management/managementGroups/:managementGroupId',
  '/subscriptions/:subscriptionId',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/:providerNamespace/:resourceType/:resourceName',
  '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/:providerNamespace/:resourceType/:resourceName/:childType/:childName',
];

/** A role scope of a request: `scope` as ids show it, `authScope` where the action is checked. */
export interface RoleScope {
  /** The scope as the caller wrote it (`/` for the tenant root; the resource group segment spelled `resourceGroups`). */
  scope: string;
  /** The scope the RBAC action is checked at: `scope`, or the tenant root management group for `/`. */
  authScope: string;
  /** The subscription id of the scope, when it is in one. */
  subscriptionId?: string;
}

/** The `Resolved` of a role route: the scope the action is checked at, and the role scope. */
export interface RoleResolved {
  scope: string;
  role: RoleScope;
}

/**
 * The role scope of a request from its route parameters, after the gateway checked the
 * subscription and resource group. A resource scope is any resource path (of any area, stored
 * or not): an assignment there is kept and decides access to that path.
 * @throws ApiError 404 `ManagementGroupNotFound` (missing or another tenant's), 400 `InvalidParameter`
 *   (a path segment with a control character).
 */
export async function resolveRoleScope(store: ArmStore, req: FastifyRequest, call: ArmCall): Promise<RoleResolved> {
  const p = req.params as Record<string, string>;
  // No stored scope holds a control character (and PostgreSQL refuses U+0000): refused alike on both dialects.
  for (const [k, v] of Object.entries(p)) {
    if (k !== 'managementGroupId' && hasControlCharacter(v)) throw errors.arm.invalidParameter({ message: `The scope path segment '${k}' holds a control character.` }, { target: k });
  }
  const tenantRoot = `/providers/Vendor.Management/managementGroups/${call.principal.tenantId}`;
  let role: RoleScope;
  if (p.managementGroupId !== undefined) {
    const mg = hasControlCharacter(p.managementGroupId) ? undefined : await store.managementGroup(p.managementGroupId);
    if (!mg || mg.tenantId !== call.principal.tenantId) throw errors.arm.managementGroupNotFound({ name: p.managementGroupId });
    const scope = `/providers/Vendor.Management/managementGroups/${mg.name}`;
    role = { scope, authScope: scope };
  } else if (p.subscriptionId === undefined) {
    // The tenant root: decided by the roles held at the tenant's root management group.
    role = { scope: '/', authScope: tenantRoot };
  } else {
    let scope = `/subscriptions/${p.subscriptionId}`;
    if (p.resourceGroupName !== undefined) scope += `/resourceGroups/${p.resourceGroupName}`;
    if (p.resourceName !== undefined) scope += `/providers/${p.providerNamespace}/${p.resourceType}/${p.resourceName}`;
    if (p.childName !== undefined) scope += `/${p.childType}/${p.childName}`;
    role = { scope, authScope: scope, subscriptionId: call.subscription?.subscriptionId ?? p.subscriptionId };
  }
  return { scope: role.authScope, role };
}

/** The `$filter` of a role-assignment list (reference §7.1): `atScope()`, `principalId eq '…'`, `assignedTo('…')`, joined with `and`. */
export interface AssignmentFilter {
  atScope: boolean;
  principalId?: string;
  assignedTo?: string;
}

const guidText = "([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})";
const principalTerm = new RegExp(`^principalId\\s+eq\\s+'${guidText}'$`, 'i');
const assignedTerm = new RegExp(`^assignedTo\\(\\s*'${guidText}'\\s*\\)$`, 'i');

/**
 * Parses a role-assignment `$filter`.
 * @throws ApiError 400 `InvalidFilter` naming the term that is not one of the three forms.
 */
export function assignmentFilter(text: string | undefined): AssignmentFilter {
  const f: AssignmentFilter = { atScope: false };
  if (text === undefined || text.trim() === '') return f;
  for (const raw of text.trim().split(/\s+and\s+/i)) {
    const term = raw.trim();
    let m: RegExpMatchArray | null;
    if (/^atScope\(\s*\)$/i.test(term)) f.atScope = true;
    else if ((m = term.match(principalTerm)) && f.principalId === undefined) f.principalId = m[1]!.toLowerCase();
    else if ((m = term.match(assignedTerm)) && f.assignedTo === undefined) f.assignedTo = m[1]!.toLowerCase();
    else throw errors.arm.invalidFilter({ message: `The $filter '${text.slice(0, 200)}' is invalid: '${term.slice(0, 100)}' is not one of atScope(), principalId eq '{id}', assignedTo('{id}').` });
  }
  if (f.principalId && f.assignedTo) throw errors.arm.invalidFilter({ message: `The $filter '${text.slice(0, 200)}' is invalid: principalId and assignedTo cannot be combined.` });
  return f;
}

/** The `$filter` of a role-definition list (reference §7.2): `roleName eq '…'`, `type eq '…'`, `atScopeAndBelow()`, joined with `and`. */
export interface DefinitionFilter {
  roleName?: string;
  type?: string;
  atScopeAndBelow: boolean;
}

/**
 * Parses a role-definition `$filter` (`roleName eq 'Reader'`, `type eq 'CustomRole'`, `atScopeAndBelow()`).
 * @throws ApiError 400 `InvalidFilter` naming the term of another form.
 */
export function definitionFilter(text: string | undefined): DefinitionFilter {
  const f: DefinitionFilter = { atScopeAndBelow: false };
  if (text === undefined || text.trim() === '') return f;
  for (const raw of text.trim().split(/\s+and\s+/i)) {
    const term = raw.trim();
    let m: RegExpMatchArray | null;
    if (/^atScopeAndBelow\(\s*\)$/i.test(term)) f.atScopeAndBelow = true;
    else if ((m = term.match(/^roleName\s+eq\s+'((?:[^']|'')*)'$/i))) f.roleName = m[1]!.replace(/''/g, "'");
    else if ((m = term.match(/^type\s+eq\s+'((?:[^']|'')*)'$/i))) f.type = m[1]!.replace(/''/g, "'");
    else throw errors.arm.invalidFilter({ message: `The $filter '${text.slice(0, 200)}' is invalid: '${term.slice(0, 100)}' is not one of roleName eq '{name}', type eq '{type}', atScopeAndBelow().` });
  }
  return f;
}

/** The role definition GUID of a `roleDefinitionId` (`…/providers/Vendor.Authorization/roleDefinitions/{guid}` or the bare GUID), or undefined. */
export function roleGuidOf(roleDefinitionId: string): string | undefined {
  const m = roleDefinitionId.match(new RegExp(`^(?:(?:/[^/]+)*/providers/[^/]+\\.Authorization/roleDefinitions/)?${guidText}$`, 'i'));
  return m ? m[1]!.toLowerCase() : undefined;
}

/** The id prefix of role definitions seen at `scope`: the subscription for scopes in one, else none (tenant level). */
export function definitionIdPrefix(role: RoleScope): string {
  return role.subscriptionId ? `/subscriptions/${role.subscriptionId}` : '';
}
