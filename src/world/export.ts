/**
 * The current state as a world document (issue 28 item 3: `GET /_stratus/world`,
 * `stratus world export`): what the world format covers — tenants, users, applications,
 * subscriptions, resource groups, role assignments — with every id written out and credentials as
 * their stored hashes (`passwordHash`, `secretHash`), so a start from the export gives the same
 * ids and the same sign-ins. Items are sorted by id or name: two exports of one state are equal.
 * Volatile: `clock` (the Stratus time of the export). Not exported (not in the format yet): see
 * `docs/worlds.md`.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/database.ts';
import { nowIso } from '../core/clock.ts';
import { fromJson } from '../store/db.ts';
import { directoryNames, exportDirectory } from './directory.ts';
import { exportRbac, roleNamesForExport } from './rbac.ts';
import type { WorldFileData } from './schema.ts';
import { exportData } from './data.ts';

const byKey = <T>(key: (x: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** The state of `db` as a world document (JSON-ready; the caller writes it as YAML or JSON). */
export async function exportWorld(db: Kysely<Database>): Promise<WorldFileData> {
  const [tenants, users, apps, grants, subs, groups, assignments, mgs] = await Promise.all([
    db.selectFrom('tenants').select(['id', 'domain', 'display_name']).orderBy('domain').execute(),
    db.selectFrom('directory_users').select(['id', 'tenant_id', 'upn', 'display_name', 'mail', 'password_hash', 'is_tenant_admin', 'account_enabled']).orderBy('upn_lower').execute(),
    db.selectFrom('directory_apps').select(['app_id', 'object_id', 'tenant_id', 'display_name', 'kind', 'secret_hash', 'redirect_uris']).orderBy('app_id').execute(),
    db.selectFrom('app_role_grants').select(['app_id', 'audience', 'role']).orderBy('app_id').orderBy('audience').orderBy('role').execute(),
    db.selectFrom('arm_subscriptions').select(['subscription_id', 'tenant_id', 'display_name', 'state', 'management_group_lower']).orderBy('subscription_id').execute(),
    db.selectFrom('arm_resource_groups').select(['subscription_id', 'name', 'location', 'tags']).orderBy('subscription_id').orderBy('name_lower').execute(),
    db.selectFrom('arm_role_assignments').select(['scope', 'role_definition_id', 'principal_id']).orderBy('scope_lower').orderBy('role_definition_id').orderBy('principal_id').execute(),
    db.selectFrom('arm_management_groups').select(['name', 'name_lower', 'tenant_id', 'display_name', 'parent_name_lower']).orderBy('name_lower').execute(),
  ]);
  const mgName = new Map(mgs.map((g) => [g.name_lower, g.name]));
  const mgPrefix = '/providers/vendor.management/managementgroups/';
  const principalName = new Map<string, string>(await directoryNames(db));
  for (const u of users) principalName.set(u.id, u.upn);
  for (const a of apps) principalName.set(a.object_id, a.display_name);
  const roleNames = await roleNamesForExport(db);
  const out: WorldFileData = { clock: nowIso(), tenants: [] };
  for (const t of tenants) {
    const tenantSubs = subs.filter((s) => s.tenant_id === t.id);
    out.tenants!.push({
      id: t.id,
      domain: t.domain,
      displayName: t.display_name,
      users: users
        .filter((u) => u.tenant_id === t.id)
        .map((u) => ({
          id: u.id,
          userPrincipalName: u.upn,
          displayName: u.display_name,
          mail: u.mail,
          ...(Number(u.account_enabled ?? 1) === 0 ? { accountEnabled: false } : {}),
          passwordHash: u.password_hash,
          ...(Number(u.is_tenant_admin) === 1 ? { tenantAdmin: true } : {}),
        })),
      applications: apps
        .filter((a) => a.tenant_id === t.id)
        .map((a) => {
          const uris = fromJson<string[]>(a.redirect_uris ?? '[]') ?? [];
          const roles = grants.filter((g) => g.app_id === a.app_id).map((g) => ({ api: g.audience as 'mail', role: g.role }));
          return {
            appId: a.app_id,
            id: a.object_id,
            displayName: a.display_name,
            kind: a.kind as 'ServicePrincipal',
            ...(a.secret_hash ? { secretHash: a.secret_hash } : {}),
            ...(uris.length ? { [a.kind === 'PublicClient' ? 'publicClient' : 'web']: { redirectUris: uris } } : {}),
            ...(roles.length ? { appRoles: roles } : {}),
          };
        }),
      managementGroups: mgs
        .filter((g) => g.tenant_id === t.id && g.name_lower !== t.id.toLowerCase())
        .map((g) => ({ name: g.name, displayName: g.display_name, ...(g.parent_name_lower && g.parent_name_lower !== t.id.toLowerCase() ? { parent: mgName.get(g.parent_name_lower) ?? g.parent_name_lower } : {}) })),
      roleAssignments: assignments
        .filter((a) => roleNames[a.role_definition_id] !== undefined && principalName.has(a.principal_id) && a.scope.toLowerCase().startsWith(mgPrefix) && mgs.some((g) => g.tenant_id === t.id && g.name_lower === a.scope.slice(mgPrefix.length).toLowerCase()))
        .map((a) => ({ principal: principalName.get(a.principal_id)!, role: roleNames[a.role_definition_id]!, scope: `managementGroups/${mgName.get(a.scope.slice(mgPrefix.length).toLowerCase())}` }))
        .sort(byKey((x) => `${x.scope}\u0000${x.role}\u0000${x.principal}`)),
      subscriptions: tenantSubs.map((s) => {
        const base = `/subscriptions/${s.subscription_id}`.toLowerCase();
        const rel = (scope: string) => scope.slice(base.length).replace(/^\/+/, '');
        return {
          subscriptionId: s.subscription_id,
          displayName: s.display_name,
          state: s.state as 'Enabled',
          ...(s.management_group_lower !== t.id.toLowerCase() ? { managementGroup: mgName.get(s.management_group_lower) ?? s.management_group_lower } : {}),
          resourceGroups: groups.filter((g) => g.subscription_id === s.subscription_id).map((g) => ({ name: g.name, location: g.location, tags: fromJson<Record<string, string>>(g.tags) ?? {} })),
          // Built-in roles at the subscription or one of its groups to a user or app of the world (others are not in the format yet).
          roleAssignments: assignments
            .filter((a) => roleNames[a.role_definition_id] !== undefined && (a.scope.toLowerCase() === base || /^resourceGroups\/[^/]+(\/providers\/[^/]+(\/[^/]+\/[^/]+)+)?$/i.test(rel(a.scope))) && a.scope.toLowerCase().startsWith(base) && principalName.has(a.principal_id))
            .map((a) => ({ principal: principalName.get(a.principal_id)!, role: roleNames[a.role_definition_id]!, ...(rel(a.scope) ? { scope: rel(a.scope) } : {}) }))
            .sort(byKey((x) => `${x.scope ?? ''}\u0000${x.role}\u0000${x.principal}`)),
        };
      }),
    });
  }
  await exportData(db, out);
  await exportDirectory(db, out);
  await exportRbac(db, out);
  return out;
}
