/**
 * The resource-manager kinds of a world file beyond the hierarchy and built-in assignments:
 * custom role definitions (a tenant's `roleDefinitions`, in the ARM `roleDefinition` shape:
 * `name` the GUID, `properties.roleName/description/permissions/assignableScopes`), provider
 * registrations per subscription (`providers: [{namespace, registrationState}]`, the ARM
 * `Provider` shape; namespaces absent are registered) and a resource group's `managedBy`.
 * Role assignments (`load.ts`) name a built-in role or a custom role of the tenant by name or id
 * ({@link roleOf}), a group as principal, and any scope down to a resource.
 *
 * Here: the schema parts (`schema.ts` spreads them), resolution and checks ({@link resolveRbac}),
 * the load through the areas' store functions (`roleStore.putDefinition`,
 * `ResourcesStore.setRegistration`; {@link loadRbac}) and the export ({@link exportRbac},
 * {@link roleNamesForExport}).
 */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.ts';
import { nowIso } from '../core/clock.ts';
import { stableUuid } from '../core/ids.ts';
import type { Database } from '../store/database.ts';
import { builtInRoles, type RoleDefinition } from '../services/arm/roles.ts';
import { roleStore } from '../services/arm/role-store.ts';
import { ResourcesStore } from '../services/resources/store.ts';
import type { World } from './file.ts';
import type { ResolvedTenant } from './load.ts';
import type { WorldFileData, WorldTenantData } from './schema.ts';

const guid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'A GUID.' });
const strict = { additionalProperties: false } as const;
const actions = Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 1024 }), { maxItems: 5000 }));

/** A custom role definition (ARM `roleDefinition`, api-version 2022-04-01). */
export const WorldRoleDefinition = Type.Object(
  {
    name: Type.Optional(Type.Union([guid], { description: 'The role definition id (default: made from the tenant and roleName).' })),
    properties: Type.Object(
      {
        roleName: Type.String({ minLength: 1, maxLength: 512 }),
        description: Type.Optional(Type.String({ maxLength: 2048 })),
        type: Type.Optional(Type.Literal('CustomRole')),
        permissions: Type.Array(Type.Object({ actions, notActions: actions, dataActions: actions, notDataActions: actions }, strict), { minItems: 1, maxItems: 10 }),
        assignableScopes: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { minItems: 1, maxItems: 2000, description: "Full scopes: '/', '/subscriptions/<id>[/resourceGroups/<name>]', '/providers/Vendor.Management/managementGroups/<name>'." }),
      },
      strict,
    ),
  },
  { ...strict, description: 'A custom role definition (resource-manager roleDefinition resource).' },
);

/** A provider registration of a subscription (ARM `Provider`: namespace and registration state). */
export const WorldProvider = Type.Object(
  {
    namespace: Type.String({ minLength: 3, maxLength: 128, pattern: '^[A-Za-z][A-Za-z0-9]*(\\.[A-Za-z][A-Za-z0-9]*)+$' }),
    registrationState: Type.Union([Type.Literal('Registered'), Type.Literal('NotRegistered')]),
  },
  strict,
);

/** Properties of a tenant (spread into `WorldTenant`). */
export const rbacTenantProperties = { roleDefinitions: Type.Optional(Type.Array(WorldRoleDefinition, { maxItems: 5000, description: 'Custom role definitions of the tenant.' })) };
/** Properties of a subscription (spread into `WorldSubscription`). */
export const rbacSubscriptionProperties = { providers: Type.Optional(Type.Array(WorldProvider, { maxItems: 500, description: 'Provider registrations that differ from the default (every namespace registered).' })) };
/** Properties of a resource group (spread into `WorldResourceGroup`). */
export const rbacResourceGroupProperties = { managedBy: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'The id of the resource that manages the group.' })) };

/** What the resource-manager kinds of a tenant write. */
export interface ResolvedRbac {
  roles: RoleDefinition[];
  registrations: { subscriptionId: string; namespace: string; state: 'Registered' | 'NotRegistered' }[];
}

/** Per world: role definition ids seen (first place). */
const idsOf = new WeakMap<World, Map<string, string>>();

/** When a world's registrations say they were set: long ago, so they read as settled (not `Registering`). */
const settledAt = '2000-01-01T00:00:00.000Z';

/**
 * The role definition id a role assignment names: a built-in role (name or id) or a custom role
 * of the tenant (roleName or id), case-insensitive; undefined when none.
 */
export function roleOf(tenant: ResolvedTenant, role: string): string | undefined {
  const key = role.toLowerCase();
  return (builtInRoles.find((r) => r.roleName.toLowerCase() === key || r.id === key) ?? tenant.rbac?.roles.find((r) => r.roleName.toLowerCase() === key || r.id === key))?.id;
}

/**
 * Resolves the custom roles (now: assignments name them later) and the provider registrations of
 * tenant entry `t`; assignable scopes are checked in `pending` (every file's subscriptions known).
 */
export function resolveRbac(world: World, t: WorldTenantData, tenant: ResolvedTenant, at: (p: string) => string, problems: string[], pending: { tenant: ResolvedTenant; run: () => void }[]): void {
  const rbac = (tenant.rbac ??= { roles: [], registrations: [] });
  let ids = idsOf.get(world);
  if (!ids) idsOf.set(world, (ids = new Map()));
  (t.roleDefinitions ?? []).forEach((d, i) => {
    const where = at(`/roleDefinitions/${i}`);
    const p = d.properties;
    const id = (d.name ?? stableUuid('world-role', tenant.id, p.roleName.toLowerCase())).toLowerCase();
    const first = ids.get(id);
    if (first) return void problems.push(`${where}: duplicate role definition id ${id} (first at ${first})`);
    ids.set(id, where);
    if (builtInRoles.some((r) => r.id === id)) return void problems.push(`${where}/name: ${id} is a built-in role's id`);
    if (roleOf(tenant, p.roleName)) return void problems.push(`${at(`/roleDefinitions/${i}/properties/roleName`)}: duplicate role name '${p.roleName}' (a built-in or another custom role of tenant ${tenant.domain})`);
    const all = (k: 'actions' | 'notActions' | 'dataActions' | 'notDataActions') => p.permissions.flatMap((x) => x[k] ?? []);
    const now = nowIso();
    rbac.roles.push({ id, roleName: p.roleName, description: p.description ?? '', type: 'CustomRole', actions: all('actions'), notActions: all('notActions'), dataActions: all('dataActions'), notDataActions: all('notDataActions'), assignableScopes: p.assignableScopes, tenantId: tenant.id, createdOn: now, updatedOn: now, createdBy: tenant.id, updatedBy: tenant.id });
    pending.push({
      tenant,
      run: () =>
        p.assignableScopes.forEach((s, j) => {
          const w = at(`/roleDefinitions/${i}/properties/assignableScopes/${j}`);
          if (s === '/' || /^\/providers\/Vendor\.Management\/managementGroups\/[^/]+$/i.test(s)) return;
          const m = /^\/subscriptions\/([^/]+)(?:\/resourceGroups\/([^/]+))?$/i.exec(s);
          if (!m) return void problems.push(`${w}: '${s}' is not '/', a management group, a subscription or a resource group scope`);
          const sub = tenant.subscriptions.find((x) => x.id === m[1]!.toLowerCase());
          if (!sub) return void problems.push(`${w}: no subscription ${m[1]} in tenant ${tenant.domain}`);
          if (m[2] && !sub.groups.some((g) => g.name.toLowerCase() === m[2]!.toLowerCase())) problems.push(`${w}: no resource group '${m[2]}' in subscription ${sub.displayName}`);
        }),
    });
  });
  (t.subscriptions ?? []).forEach((s, i) => {
    const sid = (s.subscriptionId ?? stableUuid('world-subscription', tenant.id, s.displayName)).toLowerCase();
    const seen = new Set<string>();
    (s.providers ?? []).forEach((p, j) => {
      const ns = p.namespace.toLowerCase();
      if (seen.has(ns)) return void problems.push(`${at(`/subscriptions/${i}/providers/${j}`)}: duplicate provider ${p.namespace}`);
      seen.add(ns);
      rbac.registrations.push({ subscriptionId: sid, namespace: p.namespace, state: p.registrationState });
    });
  });
}

/** Writes the custom roles and registrations of a resolved tenant (after its subscriptions). */
export async function loadRbac(ctx: AppContext, tenant: ResolvedTenant): Promise<void> {
  const rbac = tenant.rbac;
  if (!rbac) return;
  const db = ctx.store.db;
  for (const r of rbac.roles) await roleStore.putDefinition(db, r, r.assignableScopes[0]!, false);
  const resources = new ResourcesStore(db);
  for (const x of rbac.registrations) await resources.setRegistration(x.subscriptionId, x.namespace, x.state, settledAt);
}

/** Role names by definition id for an export: every built-in role and the custom roles of `db`. */
export async function roleNamesForExport(db: Kysely<Database>): Promise<Record<string, string>> {
  const custom = await db.selectFrom('arm_role_definitions').select(['id', 'role_name']).execute();
  return Object.fromEntries([...builtInRoles.map((r) => [r.id, r.roleName]), ...custom.map((r) => [r.id, r.role_name])]);
}

type ExportedTenant = NonNullable<WorldFileData['tenants']>[number];

/** Adds the custom roles, registrations and resource groups' `managedBy` of `db` to export `out`. */
export async function exportRbac(db: Kysely<Database>, out: WorldFileData): Promise<void> {
  const [defs, regs, managed] = await Promise.all([
    db.selectFrom('arm_role_definitions').select('id').orderBy('role_name_lower').orderBy('id').execute(),
    db.selectFrom('resources_registrations').select(['subscription_id', 'namespace_lower', 'state']).orderBy('subscription_id').orderBy('namespace_lower').execute(),
    db.selectFrom('arm_resource_groups').select(['subscription_id', 'name_lower', 'managed_by']).where('managed_by', 'is not', null).execute(),
  ]);
  const roles = await Promise.all(defs.map((d) => roleStore.definition(db, d.id)));
  for (const t of (out.tenants ?? []) as ExportedTenant[]) {
    const mine = roles.filter((r): r is RoleDefinition => !!r && r.tenantId === t.id);
    if (mine.length) {
      t.roleDefinitions = mine.map((r) => ({
        name: r.id,
        properties: { roleName: r.roleName, description: r.description, permissions: [{ actions: r.actions, notActions: r.notActions, dataActions: r.dataActions, notDataActions: r.notDataActions }], assignableScopes: r.assignableScopes },
      }));
    }
    for (const s of t.subscriptions ?? []) {
      const sid = s.subscriptionId!.toLowerCase();
      const ps = regs.filter((r) => r.subscription_id === sid);
      if (ps.length) s.providers = ps.map((r) => ({ namespace: r.namespace_lower, registrationState: r.state as 'Registered' }));
      for (const g of s.resourceGroups ?? []) {
        const m = managed.find((x) => x.subscription_id === sid && x.name_lower === g.name.toLowerCase());
        if (m?.managed_by) g.managedBy = m.managed_by;
      }
    }
  }
}

/** A resolved role assignment (`load.ts`). */
type Assignment = { id: string; scope: string; role: string; principalId: string; principalType: 'User' | 'ServicePrincipal' | 'Group' };

/**
 * Adds assignment `a` to `list` after checking it (noted at `where`): not a repeat of one already
 * there, and within a custom role's assignable scopes (at or below one of them; management-group
 * assignable scopes are not followed down the hierarchy: they admit any scope).
 */
export function pushAssignment(tenant: ResolvedTenant, list: Assignment[], a: Assignment, where: string, problems: string[]): void {
  let ids = listed.get(list);
  if (!ids) listed.set(list, (ids = new Set(list.map((x) => x.id))));
  if (ids.has(a.id)) return void problems.push(`${where}: duplicate role assignment (the same principal, role and scope)`);
  const custom = tenant.rbac?.roles.find((r) => r.id === a.role);
  const scope = a.scope.toLowerCase();
  const within = (s: string) => s === '/' || /^\/providers\/vendor\.management\/managementgroups\//i.test(s) || scope === s.toLowerCase() || scope.startsWith(`${s.toLowerCase()}/`);
  if (custom && !custom.assignableScopes.some(within)) return void problems.push(`${where}/scope: ${a.scope} is outside the assignable scopes of role '${custom.roleName}'`);
  list.push(a);
  ids.add(a.id);
}

/** The ids in each assignment list {@link pushAssignment} added to (a look-up, not a scan, per assignment). */
const listed = new WeakMap<Assignment[], Set<string>>();
