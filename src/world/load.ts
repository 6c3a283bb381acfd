/**
 * Resolving and loading a world (issue 28 items 1–2): ids omitted in the file are made
 * deterministically from names (`stableUuid`), references are checked (duplicate ids, a role
 * assignment naming a principal or resource group that does not exist), all before anything is
 * written; then the store is emptied and the world written through the areas' store functions
 * (the directory's `addTenant`/`addUser`/`addApp`, the resource manager's `ArmStore`).
 *
 * Extension points for the kinds that land later: a tenant-level property in `schema.ts`, a
 * check in {@link resolveWorld} and a step in {@link loadWorld} (marked "next kinds").
 */
import type { AppContext, ServiceModule } from '../context.ts';
import { stableUuid } from '../core/ids.ts';
import type { AppKind } from '../core/identity/directory.ts';
import { ArmStore } from '../services/arm/store.ts';
import { WorldError, type World } from './file.ts';
import { hasCredentials, loadDirectory, principalOf, resolveDirectory, type ResolvedDirectory } from './directory.ts';
import { loadRbac, pushAssignment, resolveRbac, roleOf, type ResolvedRbac } from './rbac.ts';
import { worldTables } from './snapshots.ts';
import { resolveTenantData, type DataWrite } from './data.ts';

/** A user ready to write. */
interface ResolvedUser {
  id: string;
  upn: string;
  displayName: string;
  mail: string;
  accountEnabled: boolean;
  password?: string;
  passwordHash?: string;
  tenantAdmin: boolean;
}

/** An application ready to write. */
interface ResolvedApp {
  appId: string;
  objectId: string;
  displayName: string;
  kind: AppKind;
  secret?: string;
  secretHash?: string;
  redirectUris: string[];
  grants: { audience: string; role: string }[];
}

/** A tenant ready to write. */
export interface ResolvedTenant {
  id: string;
  domain: string;
  displayName: string;
  users: ResolvedUser[];
  apps: ResolvedApp[];
  /** Management groups below the root, parents first. */
  managementGroups: { name: string; displayName: string; parent: string }[];
  /** Role assignments at management groups. */
  assignments: { id: string; scope: string; role: string; principalId: string; principalType: 'User' | 'ServicePrincipal' | 'Group' }[];
  subscriptions: {
    id: string;
    managementGroup: string;
    displayName: string;
    state: 'Enabled' | 'Disabled' | 'Warned' | 'PastDue';
    groups: { name: string; location: string; tags: Record<string, string>; managedBy?: string }[];
    assignments: { id: string; scope: string; role: string; principalId: string; principalType: 'User' | 'ServicePrincipal' | 'Group' }[];
  }[];
  /** Groups, credentials, service principals' app role assignments (`directory.ts`). */
  directory?: ResolvedDirectory;
  /** Custom roles and provider registrations (`rbac.ts`). */
  rbac?: ResolvedRbac;
  /** Writes of the data kinds (`data.ts`), run after the directory and the hierarchy. */
  writes: DataWrite[];
}

/** A world ready to write. */
export interface ResolvedWorld {
  /** Epoch ms of the world's clock, or null (the machine clock). */
  clockMs: number | null;
  tenants: ResolvedTenant[];
}

/**
 * Gives every object its id and checks every reference.
 * @throws WorldError listing each duplicate id or name and each dangling reference, with its file, line and path.
 */
export function resolveWorld(world: World): ResolvedWorld {
  const problems: string[] = [];
  const byDomain = new Map<string, ResolvedTenant>();
  const tenantIds = new Map<string, string>();
  const userIds = new Map<string, string>();
  const upns = new Map<string, string>();
  const appIds = new Map<string, string>();
  const subIds = new Map<string, string>();
  const dup = (seen: Map<string, string>, key: string, where: string, what: string) => {
    const first = seen.get(key);
    if (first !== undefined) problems.push(`${where}: duplicate ${what} (first at ${first})`);
    else seen.set(key, where);
  };
  // Principals by tenant: every name they may be referred to by.
  const principals = new Map<ResolvedTenant, Map<string, { id: string; type: 'User' | 'ServicePrincipal' }>>();
  const pending: { tenant: ResolvedTenant; run: () => void }[] = [];
  // Management groups by tenant: lower-case name → name (the root group is named by the tenant id).
  const groupsOf = new Map<ResolvedTenant, Map<string, string>>();
  const mgScope = (name: string) => `/providers/Vendor.Management/managementGroups/${name}`;
  /** The principal and role of an assignment, or undefined after noting the problems. */
  const who = (tenant: ResolvedTenant, r: { principal: string; role: string }, where: string) => {
    const principal = principalOf(world, tenant, principals.get(tenant)!, r.principal, `${where}/principal`, problems);
    const role = roleOf(tenant, r.role);
    if (!role) problems.push(`${where}/role: no role '${r.role}' (a built-in role's name, a custom role of tenant ${tenant.domain}, or a role definition id)`);
    return principal && role ? { principal, role } : undefined;
  };

  for (const t of world.tenants) {
    const at = (p: string) => `${t.from.at(`/tenants/${t.index}${p}`)}: /tenants/${t.index}${p}`;
    const domain = t.domain.toLowerCase();
    const id = (t.id ?? stableUuid('world-tenant', domain)).toLowerCase();
    let tenant = byDomain.get(domain);
    if (tenant && t.id && t.id.toLowerCase() !== tenant.id) problems.push(`${at('/id')}: tenant ${domain} has id ${tenant.id} in another file`);
    if (!tenant) {
      dup(tenantIds, id, at(''), `tenant id ${id}`);
      tenant = { id, domain, displayName: t.displayName ?? domain, users: [], apps: [], managementGroups: [], assignments: [], subscriptions: [], writes: [] };
      groupsOf.set(tenant, new Map([[id, id]]));
      byDomain.set(domain, tenant);
      principals.set(tenant, new Map());
    }
    const names = principals.get(tenant)!;
    (t.users ?? []).forEach((u, i) => {
      const upn = u.userPrincipalName.toLowerCase();
      const uid = (u.id ?? stableUuid('world-user', upn)).toLowerCase();
      dup(userIds, uid, at(`/users/${i}`), `user id ${uid}`);
      dup(upns, upn, at(`/users/${i}/userPrincipalName`), `userPrincipalName ${upn}`);
      if ((u.password === undefined) === (u.passwordHash === undefined)) problems.push(`${at(`/users/${i}`)}: give exactly one of password and passwordHash`);
      tenant.users.push({ id: uid, upn: u.userPrincipalName, displayName: u.displayName, mail: u.mail ?? u.userPrincipalName, accountEnabled: u.accountEnabled ?? true, password: u.password, passwordHash: u.passwordHash, tenantAdmin: u.tenantAdmin ?? false });
      names.set(upn, { id: uid, type: 'User' }).set(uid, { id: uid, type: 'User' });
    });
    (t.applications ?? []).forEach((a, i) => {
      const appId = (a.appId ?? stableUuid('world-app', tenant.id, a.displayName)).toLowerCase();
      const objectId = (a.id ?? stableUuid('world-sp', appId)).toLowerCase();
      dup(appIds, appId, at(`/applications/${i}`), `application appId ${appId}`);
      dup(userIds, objectId, at(`/applications/${i}`), `object id ${objectId}`);
      const kind: AppKind = a.kind ?? (a.secret || hasCredentials(a) ? 'ServicePrincipal' : 'PublicClient');
      if (a.secret !== undefined && a.secretHash !== undefined) problems.push(`${at(`/applications/${i}`)}: give at most one of secret and secretHash`);
      if (kind !== 'PublicClient' && !a.secret && !a.secretHash && !hasCredentials(a)) problems.push(`${at(`/applications/${i}`)}: a ${kind} needs a secret`);
      if (names.has(a.displayName.toLowerCase())) problems.push(`${at(`/applications/${i}/displayName`)}: duplicate principal name ${a.displayName}`);
      tenant.apps.push({ appId, objectId, displayName: a.displayName, kind, secret: a.secret, secretHash: a.secretHash, redirectUris: [...(a.web?.redirectUris ?? []), ...(a.publicClient?.redirectUris ?? [])], grants: (a.appRoles ?? []).map((r) => ({ audience: r.api, role: r.role })) });
      for (const n of [a.displayName.toLowerCase(), appId, objectId]) names.set(n, { id: objectId, type: 'ServicePrincipal' });
    });
    (t.subscriptions ?? []).forEach((s, i) => {
      const sid = (s.subscriptionId ?? stableUuid('world-subscription', tenant.id, s.displayName)).toLowerCase();
      dup(subIds, sid, at(`/subscriptions/${i}`), `subscription id ${sid}`);
      const groups = new Map<string, string>();
      const sub: ResolvedTenant['subscriptions'][number] = { id: sid, managementGroup: tenant.id, displayName: s.displayName, state: s.state ?? 'Enabled', groups: [], assignments: [] };
      if (s.managementGroup !== undefined) {
        pending.push({
          tenant,
          run: () => {
            const mg = groupsOf.get(tenant)!.get(s.managementGroup!.toLowerCase());
            if (!mg) problems.push(`${at(`/subscriptions/${i}/managementGroup`)}: no management group '${s.managementGroup}' in tenant ${tenant.domain}`);
            else sub.managementGroup = mg;
          },
        });
      }
      (s.resourceGroups ?? []).forEach((g, j) => {
        dup(groups, g.name.toLowerCase(), at(`/subscriptions/${i}/resourceGroups/${j}`), `resource group ${g.name}`);
        sub.groups.push({ name: g.name, location: g.location, tags: g.tags ?? {}, ...(g.managedBy ? { managedBy: g.managedBy } : {}) });
      });
      tenant.subscriptions.push(sub);
      // Role assignments are checked once every file's principals are known.
      pending.push({
        tenant,
        run: () =>
          (s.roleAssignments ?? []).forEach((r, j) => {
            const where = at(`/subscriptions/${i}/roleAssignments/${j}`);
            const found = who(tenant, r, where);
            const rel = (r.scope ?? '').replace(/^\/+|\/+$/g, '');
            const base = `/subscriptions/${sid}`;
            let scope = base;
            const m = /^resourceGroups\/([^/]+)((?:\/providers\/[^/]+(?:\/[^/]+\/[^/]+)+)?)$/i.exec(rel);
            if (m) {
              if (!groups.has(m[1]!.toLowerCase())) problems.push(`${where}/scope: no resource group '${m[1]}' in subscription ${s.displayName}`);
              scope = `${base}/resourceGroups/${m[1]}${m[2]}`;
            } else if (rel !== '') problems.push(`${where}/scope: '${r.scope}' is not '', 'resourceGroups/<name>' or 'resourceGroups/<name>/providers/<namespace>/<type>/<name>…'`);
            if (found) pushAssignment(tenant, sub.assignments, { id: stableUuid('assignment', scope, found.role, found.principal.id), scope, role: found.role, principalId: found.principal.id, principalType: found.principal.type }, where, problems);
          }),
      });
    });
    (t.managementGroups ?? []).forEach((g, i) => {
      const mgs = groupsOf.get(tenant)!;
      if (mgs.has(g.name.toLowerCase())) problems.push(`${at(`/managementGroups/${i}/name`)}: duplicate management group ${g.name}`);
      mgs.set(g.name.toLowerCase(), g.name);
      const entry = { name: g.name, displayName: g.displayName, parent: g.parent ?? tenant.id };
      tenant.managementGroups.push(entry);
      pending.unshift({
        tenant,
        run: () => {
          const parent = mgs.get(entry.parent.toLowerCase());
          if (!parent) problems.push(`${at(`/managementGroups/${i}/parent`)}: no management group '${entry.parent}' in tenant ${tenant.domain}`);
          else entry.parent = parent;
        },
      });
    });
    (t.roleAssignments ?? []).forEach((r, j) => {
      const where = at(`/roleAssignments/${j}`);
      pending.push({
        tenant,
        run: () => {
          const found = who(tenant, r, where);
          const mg = groupsOf.get(tenant)!.get(r.scope.slice('managementGroups/'.length).toLowerCase());
          if (!mg) problems.push(`${where}/scope: no management group '${r.scope.slice('managementGroups/'.length)}' in tenant ${tenant.domain}`);
          if (found && mg) pushAssignment(tenant, tenant.assignments, { id: stableUuid('assignment', mgScope(mg), found.role, found.principal.id), scope: mgScope(mg), role: found.role, principalId: found.principal.id, principalType: found.principal.type }, where, problems);
        },
      });
    });
    // Next kinds (mailboxes, workspaces, billing accounts, …): resolve and check here.
    resolveDirectory(world, t, tenant, at, problems, names, pending);
    resolveRbac(world, t, tenant, at, problems, pending);
    pending.push({ tenant, run: () => tenant.writes.push(...resolveTenantData(world, t, tenant, at, problems, principals.get(tenant)!)) });
  }
  for (const p of pending) p.run();
  for (const t of byDomain.values()) {
    // Parents first; a group whose parents never reach the root is in a cycle.
    const placed = new Set([t.id]);
    const ordered: ResolvedTenant['managementGroups'] = [];
    for (let progress = true; progress; ) {
      progress = false;
      for (const g of t.managementGroups) if (!placed.has(g.name) && placed.has(g.parent)) (placed.add(g.name), ordered.push(g), (progress = true));
    }
    for (const g of t.managementGroups) if (!placed.has(g.name) && groupsOf.get(t)!.has(g.parent.toLowerCase())) problems.push(`tenant ${t.domain}: management group ${g.name} is in a cycle of parents`);
    t.managementGroups = ordered;
  }
  if (problems.length) throw new WorldError(problems);
  return { clockMs: world.clock === undefined ? null : Date.parse(world.clock), tenants: [...byDomain.values()] };
}

/**
 * Empties every world table and writes `world` (resolved first: nothing is written when it does
 * not resolve). The caller keeps it as the world snapshot. `knownHashes`: stored hashes of
 * published secrets by their text (the demo's), so they are not hashed again at every load.
 * @throws WorldError when the world does not resolve.
 */
export async function loadWorld(ctx: AppContext, modules: readonly ServiceModule[], world: World, knownHashes: Readonly<Record<string, string>> = {}): Promise<ResolvedWorld> {
  const resolved = resolveWorld(world);
  const db = ctx.store.db;
  for (const t of worldTables(modules)) await db.deleteFrom(t as 'tenants').execute();
  const d = ctx.identity.directory;
  const arm = new ArmStore(db, ctx.cache);
  for (const t of resolved.tenants) {
    await d.addTenant({ id: t.id, domain: t.domain, displayName: t.displayName });
    await Promise.all([
      ...t.users.map((u) => d.addUser({ id: u.id, tenantId: t.id, userPrincipalName: u.upn, displayName: u.displayName, mail: u.mail, isTenantAdmin: u.tenantAdmin, accountEnabled: u.accountEnabled }, u.password ?? '', u.passwordHash ?? knownHashes[u.password ?? ''])),
      ...t.apps.map((a) => d.addApp({ appId: a.appId, objectId: a.objectId, tenantId: t.id, displayName: a.displayName, kind: a.kind, redirectUris: a.redirectUris }, a.secret ?? (a.secretHash ? '(kept hash)' : undefined), a.grants, a.secretHash ?? knownHashes[a.secret ?? ''])),
    ]);
    await loadDirectory(ctx, t);
    await arm.addManagementGroup({ name: t.id, tenantId: t.id, displayName: 'Tenant Root Group' });
    for (const g of t.managementGroups) await arm.addManagementGroup({ name: g.name, tenantId: t.id, displayName: g.displayName, parentName: g.parent });
    for (const s of t.subscriptions) {
      await arm.addSubscription({ subscriptionId: s.id, tenantId: t.id, displayName: s.displayName, state: s.state, managementGroup: s.managementGroup });
      for (const g of s.groups) await arm.addResourceGroup({ subscriptionId: s.id, ...g });
      for (const a of s.assignments) await arm.addAssignment({ id: a.id, tenantId: t.id, scope: a.scope, roleDefinitionId: a.role, principalId: a.principalId, principalType: a.principalType });
    }
    for (const a of t.assignments) await arm.addAssignment({ id: a.id, tenantId: t.id, scope: a.scope, roleDefinitionId: a.role, principalId: a.principalId, principalType: a.principalType });
    await loadRbac(ctx, t);
    // Next kinds: write them here through their area's store functions.
  }
  for (const t of resolved.tenants) for (const w of t.writes) await w(ctx);
  await ctx.cache.changed(db);
  return resolved;
}
