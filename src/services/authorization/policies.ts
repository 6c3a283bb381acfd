/**
 * Role management policies as the API shows them (spec resource-manager §2.1, §4.1, §4.2;
 * reference §2.3–§2.5): scope resolution for the four scope shapes, stable policy names,
 * the policy record, and the one `$filter` form of the list.
 */
import { LRUCache } from 'lru-cache';
import type { Principal } from '../../core/identity/identity.ts';
import { errors, type ApiError } from '../../core/errors/index.ts';
import { isUuid, stableUuid } from '../../core/ids.ts';
import { ODataError, parseFilter } from '../../core/odata/index.ts';
import { ArmStore } from '../arm/store.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { scopeAncestors, type RoleDefinition } from '../arm/rbac.ts';
import { policyRoles } from '../arm/roles.ts';
import { defaultRules } from './defaults.ts';
import type { PolicyPrincipal, StoredPolicy } from './store.ts';

/** The resource type of a policy (reference §2.3: capital R and P). */
export const policyType = 'Vendor.Authorization/RoleManagementPolicies';

/** A scope that exists in the store, in its canonical casing. */
export interface ResolvedScope {
  /** E.g. `/subscriptions/<id>/resourceGroups/stratus-rg`. */
  scope: string;
  /** `policyProperties.scope.type`. */
  type: 'managementgroup' | 'subscription' | 'resourcegroup' | 'resource';
  /** `policyProperties.scope.displayName`. */
  displayName: string;
}

/**
 * Resolves the scope of a request from its route parameters (`managementGroupId`;
 * `subscriptionId`; `resourceGroupName`; `providerNamespace`, `resourceType`,
 * `resourceName`, optional `childType`, `childName`) after the gateway checked the
 * subscription and resource group.
 * @throws ApiError 404 `ManagementGroupNotFound` (missing or another tenant's) or
 *   `ResourceNotFound` (no such resource in the tenant).
 */
export async function resolveScope(store: ArmStore, params: Record<string, string>, call: ArmCall): Promise<ResolvedScope> {
  if (params.managementGroupId !== undefined) {
    // No stored name holds a control character (and PostgreSQL refuses U+0000 in a query).
    const mg = hasControlCharacter(params.managementGroupId) ? undefined : await store.managementGroup(params.managementGroupId);
    if (!mg || mg.tenantId !== call.principal.tenantId) throw errors.arm.managementGroupNotFound({ name: params.managementGroupId });
    return { scope: `/providers/Vendor.Management/managementGroups/${mg.name}`, type: 'managementgroup', displayName: mg.displayName };
  }
  const sub = call.subscription!;
  const subScope = `/subscriptions/${sub.subscriptionId}`;
  if (params.resourceGroupName === undefined) return { scope: subScope, type: 'subscription', displayName: sub.displayName };
  const rg = call.resourceGroup!;
  const rgScope = `${subScope}/resourceGroups/${rg.name}`;
  if (params.resourceName === undefined) return { scope: rgScope, type: 'resourcegroup', displayName: rg.name };
  let path = `${params.providerNamespace}/${params.resourceType}/${params.resourceName}`;
  if (params.childName !== undefined) path += `/${params.childType}/${params.childName}`;
  const row = hasControlCharacter(path) ? undefined : await store.getResource(`${rgScope}/providers/${path}`);
  if (!row || row.tenantId !== call.principal.tenantId) throw errors.arm.resourceNotFound({ typeAndName: path, resourceGroup: params.resourceGroupName });
  return { scope: row.id, type: 'resource', displayName: String(row.body.name ?? row.name) };
}

/** Whether `s` holds a C0 control character or DEL (never part of a scope name). */
export function hasControlCharacter(s: string): boolean {
  return /[\u0000-\u001f\u007f]/.test(s);
}

/** The stable policy name (a GUID) of `role` at `scope` in `tenantId`: the same inputs always give the same name. */
export function policyName(tenantId: string, scope: string, roleDefinitionId: string): string {
  return stableUuid('roleManagementPolicy', tenantId, scope.toLowerCase(), roleDefinitionId.toLowerCase());
}

/** The role definitions that have role management policies at every scope: the first five built-in roles (`arm/roles.ts` `policyRoles`). */
export function rolesAtScope(): readonly RoleDefinition[] {
  return policyRoles;
}

/** The role whose policy at `scope` is named `name` (case-insensitive), if any. */
export function roleOfPolicy(tenantId: string, scope: string, name: string): RoleDefinition | undefined {
  if (!isUuid(name)) return undefined;
  return rolesAtScope().find((r) => policyName(tenantId, scope, r.id) === name.toLowerCase());
}

/** The `lastModifiedBy` of a write by `p`. */
export function modifiedBy(p: Principal): PolicyPrincipal {
  return {
    id: p.objectId,
    displayName: p.name ?? p.userPrincipalName ?? p.appId ?? null,
    type: p.kind === 'user' ? 'User' : 'ServicePrincipal',
    email: p.kind === 'user' ? (p.userPrincipalName ?? null) : null,
  };
}

/** ISO 8601 UTC `…Z` → the offset form the service writes (`…+00:00`, reference §2.3). */
export function offsetForm(iso: string): string {
  return iso.endsWith('Z') ? `${iso.slice(0, -1)}+00:00` : iso;
}

/** The JSON text of the default rules (made once: {@link defaultRules} always gives the same rules). */
let defaultRulesText: string | undefined;

/** Texts of computed (never changed) policies by tenant, scope, scope name and type, and role. */
const computedTexts = new LRUCache<string, string>({ max: 10_000 });

/**
 * The JSON text of the `RoleManagementPolicy` (reference §2.4, §2.5) of `role` at `scope`: the stored
 * rules when the policy was changed, else the default rule set; `effectiveRules` equal
 * `rules`. An unchanged policy shows `lastModifiedBy` as in the published example and
 * `lastModifiedDateTime: null`.
 *
 * Made as JSON text, without building a record: the rules are spliced as text — the stored
 * row's own text for a changed policy, the default rules' text (made once) for a computed one,
 * whose whole text is kept.
 */
export function policyJson(tenantId: string, s: ResolvedScope, role: RoleDefinition, stored?: StoredPolicy): string {
  const key = stored ? undefined : `${tenantId}|${s.scope}|${s.type}|${s.displayName}|${role.id}`;
  const kept = key && computedTexts.get(key);
  if (kept) return kept;
  const name = policyName(tenantId, s.scope, role.id);
  const rules = stored ? (stored.rulesJson ?? JSON.stringify(stored.rules)) : (defaultRulesText ??= JSON.stringify(defaultRules()));
  const j = JSON.stringify;
  const modified = stored ? j(offsetForm(stored.lastModifiedAt)) : 'null';
  const by = j(stored?.lastModifiedBy ?? { id: null, displayName: 'Admin', type: null, email: null });
  const text =
    `{"properties":{"scope":${j(s.scope)},"displayName":null,"description":null,"isOrganizationDefault":false,"lastModifiedDateTime":${modified},"lastModifiedBy":${by},` +
    `"rules":${rules},"effectiveRules":${rules},"policyProperties":{"scope":{"id":${j(s.scope)},"displayName":${j(s.displayName)},"type":${j(s.type)}}}},` +
    `"name":${j(name)},"id":${j(`${s.scope}/providers/Vendor.Authorization/roleManagementPolicies/${name}`)},"type":${j(policyType)}}`;
  if (key) computedTexts.set(key, text);
  return text;
}

/** An expression as quoted in an error message: at most 200 characters. */
function cut(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function invalidFilter(message: string): ApiError {
  return errors.arm.invalidFilter({ message });
}

/**
 * Parses the list's one `$filter` form (spec §4.1):
 * `roleDefinitionId eq '<scope>/providers/Vendor.Authorization/roleDefinitions/<guid>'`,
 * where `<scope>` is the request scope or one above it (empty for a tenant-level id).
 * The expression is parsed by the OData core, then its shape is checked.
 * @returns the role definition.
 * @throws ApiError 400 `InvalidFilter` (syntax, with the position; nesting too deep to parse; any other shape; an id
 *   that is not a role definition id or belongs to an unrelated scope), 400
 *   `RoleDefinitionDoesNotExist` (a well-formed id of no known role).
 */
export async function roleFromFilter(store: ArmStore, text: string, scope: string): Promise<RoleDefinition> {
  const { value, prefix, guid } = filteredRoleId(text);
  const ancestors = await scopeAncestors(store, scope);
  if (!ancestors.has(prefix)) throw invalidFilter(`The role definition id '${value}' in the $filter expression is not defined at the scope '${scope}' or a scope above it.`);
  const role = isUuid(guid) ? policyRoles.find((r) => r.id === guid.toLowerCase()) : undefined;
  if (!role) throw errors.arm.roleDefinitionDoesNotExist({ id: guid });
  return role;
}

/** The role definition ids of well-formed `$filter` texts (parsing is the costly part of a filtered list). */
const filteredIds = new LRUCache<string, { value: string; prefix: string; guid: string }>({ max: 1000 });

/**
 * The role definition id a policy `$filter` names: as written, its scope prefix (lower case,
 * `/` for none) and its GUID part.
 * @throws ApiError 400 `InvalidFilter` for another shape or a value that is no role definition id
 */
function filteredRoleId(text: string): { value: string; prefix: string; guid: string } {
  const known = filteredIds.get(text);
  if (known) return known;
  const form = "roleDefinitionId eq '<scope>/providers/Vendor.Authorization/roleDefinitions/<role definition id>'";
  let node;
  try {
    node = parseFilter(text);
  } catch (e) {
    if (e instanceof ODataError) throw invalidFilter(`The $filter expression '${cut(text)}' is malformed${e.position !== undefined ? ` at position ${e.position}` : ''}: ${e.message}`);
    throw e;
  }
  if (
    node.kind !== 'compare' ||
    node.op !== 'eq' ||
    node.left.kind !== 'property' ||
    node.left.path.join('/').toLowerCase() !== 'roledefinitionid' ||
    node.right.kind !== 'literal' ||
    node.right.type !== 'string'
  ) {
    throw invalidFilter(`The $filter expression '${cut(text)}' is not supported. The only supported filter is ${form}.`);
  }
  const value = String(node.right.value);
  const m = /^(\/.*)?\/providers\/Vendor\.Authorization\/roleDefinitions\/([^/]+)$/i.exec(value);
  if (!m) throw invalidFilter(`The value '${value}' in the $filter expression is not a role definition id; expected ${form}.`);
  const found = { value, prefix: (m[1] ?? '').toLowerCase().replace(/\/+$/, '') || '/', guid: m[2]! };
  filteredIds.set(text, found);
  return found;
}
