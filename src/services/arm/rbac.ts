/**
 * Role-based access control of the resource manager: built-in role definitions with their
 * standard ids, and the check "does this principal hold a role that grants this action at
 * this scope or above" (management group → subscription → resource group → resource).
 */
import type { Principal } from '../../core/identity/identity.ts';
import type { ArmStore } from './store.ts';

/** A built-in role definition. */
export interface RoleDefinition {
  /** The role definition GUID (standard built-in ids). */
  id: string;
  roleName: string;
  description: string;
  actions: string[];
  notActions: string[];
}

/** The built-in roles (standard ids; `Vendor.` namespaces). */
export const builtInRoles: RoleDefinition[] = [
  { id: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635', roleName: 'Owner', description: 'Grants full access to manage all resources, including the ability to assign roles.', actions: ['*'], notActions: [] },
  {
    id: 'b24988ac-6180-42a0-ab88-20f7382dd24c',
    roleName: 'Contributor',
    description: 'Grants full access to manage all resources, but does not allow you to assign roles.',
    actions: ['*'],
    notActions: ['Vendor.Authorization/*/Delete', 'Vendor.Authorization/*/Write', 'Vendor.Authorization/elevateAccess/Action'],
  },
  { id: 'acdd72a7-3385-48ef-bd42-f606fba81ae7', roleName: 'Reader', description: 'View all resources, but does not allow you to make any changes.', actions: ['*/read'], notActions: [] },
  {
    id: '18d7d88d-d35e-4fb5-a5c3-7773c20a72d9',
    roleName: 'User Access Administrator',
    description: 'Lets you manage user access to resources.',
    actions: ['*/read', 'Vendor.Authorization/*', 'Vendor.Support/*'],
    notActions: [],
  },
  {
    id: 'f58310d9-a9f6-439a-9e8d-f62e7b41a168',
    roleName: 'Role Based Access Control Administrator',
    description: 'Manage access by assigning roles with RBAC. Does not allow other ways to manage access.',
    actions: ['Vendor.Authorization/roleAssignments/write', 'Vendor.Authorization/roleAssignments/delete', '*/read', 'Vendor.Support/*'],
    notActions: [],
  },
];

/** The built-in role with this GUID (case-insensitive). */
export function roleById(id: string): RoleDefinition | undefined {
  return builtInRoles.find((r) => r.id === id.toLowerCase());
}

/** An action pattern (`*` wildcards, case-insensitive) as a regular expression. */
function matcher(pattern: string): RegExp {
  return new RegExp('^' + pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*') + '$', 'i');
}

/** The compiled matchers of a role's actions and notActions, built once per role definition. */
const compiled = new WeakMap<RoleDefinition, { allow: RegExp[]; deny: RegExp[] }>();

function matchersOf(role: RoleDefinition): { allow: RegExp[]; deny: RegExp[] } {
  let m = compiled.get(role);
  if (!m) {
    m = { allow: role.actions.map(matcher), deny: role.notActions.map(matcher) };
    compiled.set(role, m);
  }
  return m;
}

/** True when the role's actions grant `action` (wildcards, minus notActions). */
export function roleGrants(role: RoleDefinition, action: string): boolean {
  const m = matchersOf(role);
  return m.allow.some((re) => re.test(action)) && !m.deny.some((re) => re.test(action));
}

/**
 * Every scope at or above `scope`, lower case: the scope, each of its path prefixes, the
 * management groups above its subscription, and the root `/`.
 */
export async function scopeAncestors(store: ArmStore, scope: string): Promise<ReadonlySet<string>> {
  const s = scope.toLowerCase().replace(/\/+$/, '');
  // Kept per scope in the `arm` area: a subscription's management group and the group chain
  // change only by writes to the hierarchy, which empty that area.
  const kept = store.cache?.shared<ReadonlySet<string>>('arm.scopeAncestors', 'arm', 10_000);
  return kept ? kept.get(s, () => ancestorsOf(store, s)) : ancestorsOf(store, s);
}

async function ancestorsOf(store: ArmStore, s: string): Promise<ReadonlySet<string>> {
  const parts = s.split('/').filter(Boolean);
  const out = new Set<string>(['/']);
  for (let i = 1; i <= parts.length; i++) out.add('/' + parts.slice(0, i).join('/'));
  let mgStart: string | undefined;
  if (parts[0] === 'subscriptions' && parts[1]) mgStart = (await store.subscription(parts[1]))?.managementGroup;
  else if (parts[0] === 'providers' && parts[1] === 'vendor.management' && parts[2] === 'managementgroups' && parts[3]) mgStart = parts[3];
  if (mgStart) for (const mg of await store.managementGroupChain(mgStart)) out.add(`/providers/vendor.management/managementgroups/${mg}`);
  return out;
}

/** The roles a principal holds at or above `scope`. */
export async function rolesAt(store: ArmStore, principal: Principal, scope: string): Promise<RoleDefinition[]> {
  const ancestors = await scopeAncestors(store, scope);
  const assignments = await store.assignmentsOf(principal.objectId);
  const out: RoleDefinition[] = [];
  for (const a of assignments) {
    if (a.tenantId !== principal.tenantId || !ancestors.has(a.scope.toLowerCase().replace(/\/+$/, '') || '/')) continue;
    const role = roleById(a.roleDefinitionId);
    if (role) out.push(role);
  }
  return out;
}

/** True when the principal holds a role granting `action` at or above `scope`. */
export async function isAuthorized(store: ArmStore, principal: Principal, action: string, scope: string): Promise<boolean> {
  return (await rolesAt(store, principal, scope)).some((r) => roleGrants(r, action));
}
