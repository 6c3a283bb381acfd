/**
 * Role-based access control of the resource manager: built-in role definitions with their
 * standard ids, and the check "does this principal hold a role that grants this action at
 * this scope or above" (management group → subscription → resource group → resource).
 */
import type { Principal } from '../../core/identity/identity.ts';
import type { ArmStore } from './store.ts';
import { builtInRole, type RoleDefinition } from './roles.ts';

export type { RoleDefinition } from './roles.ts';
export { builtInRoles } from './roles.ts';

/** The built-in role with this GUID (case-insensitive). */
export function roleById(id: string): RoleDefinition | undefined {
  return builtInRole(id);
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

/**
 * The principal ids that stand for the directory object `objectId` of `tenantId` in role
 * assignments (authorization, and the `assignedTo()` filter): its own object id and the groups
 * of the tenant it is a member of, directly or through nested groups (breadth first, at most
 * {@link maxGroupsPerPrincipal}). THE one place group membership enters authorization: an
 * assignment to any of these ids grants the principal. Memberships are read through the
 * `directory` cache area; the group tables are cached tables of both the `directory` and the
 * `arm` areas (`core/cache-tables.ts`), so a membership change empties these lists and the
 * decisions cached in `gateway.ts` on every instance.
 */
export async function principalIdsFor(store: ArmStore, tenantId: string, objectId: string): Promise<readonly string[]> {
  const id = objectId.toLowerCase();
  const kept = store.cache?.shared<readonly string[]>('arm.principalIds', 'directory', 10_000);
  const load = () => groupsAbove(store, tenantId, id);
  return kept ? kept.get(`${tenantId}/${id}`, load) : load();
}

/** Most groups that stand for one principal (a bound on nested-group walks). */
export const maxGroupsPerPrincipal = 1000;

/** `id` and the groups of `tenantId` above it (transitive membership), read from the directory. */
async function groupsAbove(store: ArmStore, tenantId: string, id: string): Promise<readonly string[]> {
  const out = [id];
  const seen = new Set(out);
  let frontier = [id];
  while (frontier.length && out.length < maxGroupsPerPrincipal) {
    const rows = await store.db
      .selectFrom('directory_group_members')
      .innerJoin('directory_groups', 'directory_groups.id', 'directory_group_members.group_id')
      .select('directory_group_members.group_id')
      .where('directory_group_members.member_id', 'in', frontier)
      .where('directory_groups.tenant_id', '=', tenantId)
      .execute();
    frontier = [];
    for (const r of rows) {
      if (seen.has(r.group_id) || out.length >= maxGroupsPerPrincipal) continue;
      seen.add(r.group_id);
      out.push(r.group_id);
      frontier.push(r.group_id);
    }
  }
  return Object.freeze(out);
}

/**
 * The role definition an assignment names: a built-in by its standard id, else the tenant's
 * custom role (`arm_role_definitions`); undefined when neither exists (a deleted custom role
 * grants nothing).
 */
export async function roleDefinitionOf(store: ArmStore, tenantId: string, id: string): Promise<RoleDefinition | undefined> {
  const builtIn = builtInRole(id);
  if (builtIn) return builtIn;
  const custom = await store.customRole(id);
  return custom && custom.tenantId === tenantId ? custom : undefined;
}

/** The roles a principal holds at or above `scope` (through itself and {@link principalIdsFor}). */
export async function rolesAt(store: ArmStore, principal: Principal, scope: string): Promise<RoleDefinition[]> {
  const ancestors = await scopeAncestors(store, scope);
  const out: RoleDefinition[] = [];
  for (const id of await principalIdsFor(store, principal.tenantId, principal.objectId)) {
    for (const a of await store.assignmentsOf(id)) {
      if (a.tenantId !== principal.tenantId || !ancestors.has(a.scope.toLowerCase().replace(/\/+$/, '') || '/')) continue;
      const role = await roleDefinitionOf(store, principal.tenantId, a.roleDefinitionId);
      if (role) out.push(role);
    }
  }
  return out;
}

/** True when the principal holds a role granting `action` at or above `scope`. */
export async function isAuthorized(store: ArmStore, principal: Principal, action: string, scope: string): Promise<boolean> {
  return (await rolesAt(store, principal, scope)).some((r) => roleGrants(r, action));
}
