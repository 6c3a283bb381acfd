/**
 * The directory kinds of a world file beyond users and applications: groups with their members,
 * several client secrets and certificate key credentials per application, and service principals
 * with their app role assignments on the API families' resource principals. Shapes are the v1.0
 * resources' own: `group` (plus `members`, named by UPN, display name or id),
 * `application.passwordCredentials` (plus `secretText` or the stored `secretHash` with its `hint`),
 * `application.keyCredentials` (`key` the base64 certificate), `servicePrincipal.appRoleAssignments`
 * (`resourceId` or `resourceDisplayName`, `appRoleId` or the role's value `appRole`).
 *
 * Here: the schema parts (`schema.ts` spreads them), the resolution and checks (`load.ts` calls
 * {@link resolveDirectory} per tenant entry; duplicates and dangling references each a line with
 * file:line:path, before anything is written), the load through the directory's store functions
 * ({@link loadDirectory}, `services/directory/store.ts` `worldInserts`) and the export
 * ({@link exportDirectory}, {@link directoryNames}).
 */
import { createHash } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.ts';
import { nowIso } from '../core/clock.ts';
import { stableUuid } from '../core/ids.ts';
import { hashSecret } from '../core/identity/directory.ts';
import { fromJson, toJson } from '../store/db.ts';
import type { Database } from '../store/database.ts';
import { certificateOf } from '../services/directory/credentials.ts';
import { recountCredentials, worldInserts } from '../services/directory/store.ts';
import { resourcePrincipals } from '../services/directory/resources.ts';
import type { World } from './file.ts';
import type { ResolvedTenant } from './load.ts';
import type { WorldFileData, WorldTenantData } from './schema.ts';

const guid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'A GUID.' });
const strict = { additionalProperties: false } as const;
const hashPattern = '^scrypt\\$[A-Za-z0-9+/=]+\\$[A-Za-z0-9+/=]+$';
const dateTime = Type.String({ format: 'date-time' });

/** A client secret (v1.0 `passwordCredential`) with its text or stored hash. */
export const WorldPasswordCredential = Type.Object(
  {
    keyId: Type.Optional(guid),
    displayName: Type.Optional(Type.String({ maxLength: 256 })),
    secretText: Type.Optional(Type.String({ minLength: 3, maxLength: 256, description: 'The secret (stored hashed). One of secretText and secretHash.' })),
    secretHash: Type.Optional(Type.String({ pattern: hashPattern, description: 'The stored hash, as an export writes it (with hint).' })),
    hint: Type.Optional(Type.String({ minLength: 3, maxLength: 3, description: "The secret's first three characters (required with secretHash)." })),
    startDateTime: Type.Optional(dateTime),
    endDateTime: Type.Optional(dateTime),
  },
  { ...strict, description: 'A client secret of the application (v1.0 passwordCredential).' },
);

/** A certificate (v1.0 `keyCredential`). */
export const WorldKeyCredential = Type.Object(
  {
    keyId: Type.Optional(guid),
    displayName: Type.Optional(Type.String({ maxLength: 256 })),
    type: Type.Literal('AsymmetricX509Cert'),
    usage: Type.Literal('Verify'),
    key: Type.String({ minLength: 1, maxLength: 65536, description: 'The certificate: base64 of its DER, or of its PEM text (RSA key).' }),
    startDateTime: Type.Optional(dateTime),
    endDateTime: Type.Optional(dateTime),
  },
  { ...strict, description: 'A certificate of the application for client assertions (v1.0 keyCredential).' },
);

/** Properties of an application (spread into `WorldApplication`). */
export const applicationCredentialProperties = {
  passwordCredentials: Type.Optional(Type.Array(WorldPasswordCredential, { maxItems: 20 })),
  keyCredentials: Type.Optional(Type.Array(WorldKeyCredential, { maxItems: 20 })),
};

/** A group (v1.0 `group`) with its direct members. */
export const WorldGroup = Type.Object(
  {
    id: Type.Optional(guid),
    displayName: Type.String({ minLength: 1, maxLength: 256 }),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
    mailNickname: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    securityEnabled: Type.Optional(Type.Boolean()),
    mailEnabled: Type.Optional(Type.Boolean()),
    groupTypes: Type.Optional(Type.Array(Type.Union([Type.Literal('Unified'), Type.Literal('DynamicMembership')]), { maxItems: 2 })),
    visibility: Type.Optional(Type.Union([Type.Literal('Public'), Type.Literal('Private'), Type.Literal('HiddenMembership')])),
    members: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 10_000, description: "Users (UPN or id), groups (displayName or id), applications' service principals (displayName, appId or id)." })),
  },
  { ...strict, description: 'A directory group (v1.0 group resource) and its direct members.' },
);

/** A service principal entry: the application it belongs to and its app role assignments. */
export const WorldServicePrincipal = Type.Object(
  {
    appId: Type.String({ minLength: 1, maxLength: 256, description: "The application's appId (or its displayName)." }),
    appRoleAssignments: Type.Optional(
      Type.Array(
        Type.Object(
          {
            resourceId: Type.Optional(guid),
            resourceDisplayName: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
            appRoleId: Type.Optional(guid),
            appRole: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "The role's value (e.g. Mail.Read), instead of appRoleId." })),
          },
          strict,
        ),
        { maxItems: 256 },
      ),
    ),
  },
  { ...strict, description: "An application's service principal (v1.0 servicePrincipal) with its app role assignments." },
);

/** Properties of a tenant (spread into `WorldTenant`). */
export const directoryTenantProperties = {
  groups: Type.Optional(Type.Array(WorldGroup, { maxItems: 10_000 })),
  servicePrincipals: Type.Optional(Type.Array(WorldServicePrincipal, { maxItems: 10_000 })),
};

type MemberType = 'user' | 'group' | 'servicePrincipal';

/** What the directory kinds of a tenant write. */
export interface ResolvedDirectory {
  groups: { id: string; displayName: string; mailNickname: string; securityEnabled: boolean; mailEnabled: boolean; props: Record<string, unknown>; members: { id: string; type: MemberType }[] }[];
  passwords: { appId: string; keyId: string; displayName: string | null; secretText?: string; secretHash?: string; hint: string; start?: string; end?: string }[];
  keys: Database['app_key_credentials'][];
  grants: { appId: string; audience: string; role: string }[];
}

/** Per world: group ids and credential key ids seen (first place), groups by tenant and lower-case name. */
const stateOf = new WeakMap<World, { ids: Map<string, string>; keyIds: Map<string, string>; byName: Map<ResolvedTenant, Map<string, string[]>> }>();

function state(world: World) {
  let s = stateOf.get(world);
  if (!s) stateOf.set(world, (s = { ids: new Map(), keyIds: new Map(), byName: new Map() }));
  return s;
}

/** A principal of a tenant as `load.ts` keeps them (users and applications). */
type Principal = { id: string; type: 'User' | 'ServicePrincipal' | 'Group' };

/**
 * The principal a role assignment or a member names: a user or application (the `names` of
 * `load.ts`) or a group of the tenant (by displayName or id). Notes the problem (unknown,
 * ambiguous) at `where` and returns undefined.
 */
export function principalOf(world: World, tenant: ResolvedTenant, names: Map<string, { id: string; type: 'User' | 'ServicePrincipal' }>, name: string, where: string, problems: string[]): Principal | undefined {
  const key = name.toLowerCase();
  const groups = state(world).byName.get(tenant)?.get(key) ?? [];
  const named = names.get(key);
  if ((named ? 1 : 0) + groups.length > 1) {
    problems.push(`${where}: '${name}' names more than one user, group or application in tenant ${tenant.domain}: name it by id`);
    return undefined;
  }
  if (named) return named;
  if (groups.length === 1) return { id: groups[0]!, type: 'Group' };
  problems.push(`${where}: no user or application '${name}' (nor a group so named) in tenant ${tenant.domain}`);
  return undefined;
}

/** Whether an application entry has credentials (a confidential client even without `secret`). */
export function hasCredentials(a: { passwordCredentials?: unknown[]; keyCredentials?: unknown[] }): boolean {
  return (a.passwordCredentials?.length ?? 0) + (a.keyCredentials?.length ?? 0) > 0;
}

const iso = (s: string) => new Date(Date.parse(s)).toISOString();

/**
 * Resolves the groups, credentials and service principals of tenant entry `t`: group ids now (so
 * role assignments can name them), members and service principals in `pending` (every file's
 * principals known). Problems are noted with file:line:path.
 */
export function resolveDirectory(world: World, t: WorldTenantData, tenant: ResolvedTenant, at: (p: string) => string, problems: string[], names: Map<string, { id: string; type: 'User' | 'ServicePrincipal' }>, pending: { tenant: ResolvedTenant; run: () => void }[]): void {
  const st = state(world);
  const dir = (tenant.directory ??= { groups: [], passwords: [], keys: [], grants: [] });
  let byName = st.byName.get(tenant);
  if (!byName) st.byName.set(tenant, (byName = new Map()));
  const dup = (seen: Map<string, string>, key: string, where: string, what: string) => {
    const first = seen.get(key);
    if (first !== undefined) problems.push(`${where}: duplicate ${what} (first at ${first})`);
    else seen.set(key, where);
    return first === undefined;
  };
  (t.applications ?? []).forEach((a, i) => {
    const appId = (a.appId ?? stableUuid('world-app', tenant.id, a.displayName)).toLowerCase();
    (a.passwordCredentials ?? []).forEach((p, j) => {
      const where = at(`/applications/${i}/passwordCredentials/${j}`);
      const keyId = (p.keyId ?? stableUuid('world-secret', appId, String(j))).toLowerCase();
      dup(st.keyIds, keyId, where, `credential keyId ${keyId}`);
      if ((p.secretText === undefined) === (p.secretHash === undefined)) problems.push(`${where}: give exactly one of secretText and secretHash`);
      if (p.secretHash !== undefined && p.hint === undefined) problems.push(`${where}: a secretHash needs its hint`);
      if (p.startDateTime && p.endDateTime && Date.parse(p.endDateTime) <= Date.parse(p.startDateTime)) problems.push(`${where}/endDateTime: must be after startDateTime`);
      dir.passwords.push({ appId, keyId, displayName: p.displayName ?? null, secretText: p.secretText, secretHash: p.secretHash, hint: p.hint ?? p.secretText?.slice(0, 3) ?? '', start: p.startDateTime && iso(p.startDateTime), end: p.endDateTime && iso(p.endDateTime) });
    });
    (a.keyCredentials ?? []).forEach((k, j) => {
      const where = at(`/applications/${i}/keyCredentials/${j}`);
      const keyId = (k.keyId ?? stableUuid('world-certificate', appId, String(j))).toLowerCase();
      dup(st.keyIds, keyId, where, `credential keyId ${keyId}`);
      const cert = certificateOf(k.key);
      if (!cert) return void problems.push(`${where}/key: not a base64 X.509 certificate`);
      if (cert.publicKey.asymmetricKeyType !== 'rsa') return void problems.push(`${where}/key: the certificate must have an RSA key`);
      const validFrom = new Date(cert.validFrom).toISOString();
      const validTo = new Date(cert.validTo).toISOString();
      const start = k.startDateTime ? iso(k.startDateTime) : validFrom;
      const end = k.endDateTime ? iso(k.endDateTime) : validTo;
      if (end <= start || start < validFrom || end > validTo) return void problems.push(`${where}: startDateTime and endDateTime must lie within the certificate's validity (${validFrom} – ${validTo})`);
      const der = cert.raw;
      dir.keys.push({
        key_id: keyId,
        app_id: appId,
        type: 'AsymmetricX509Cert',
        usage: 'Verify',
        key_der: der.toString('base64'),
        thumbprint: createHash('sha1').update(der).digest('base64url'),
        thumbprint256: createHash('sha256').update(der).digest('base64url'),
        display_name: k.displayName ?? `CN=${cert.subject.split('\n').find((l) => l.startsWith('CN='))?.slice(3) ?? 'certificate'}`,
        start_at: start,
        end_at: end,
      });
    });
  });
  (t.groups ?? []).forEach((g, i) => {
    const where = at(`/groups/${i}`);
    const id = (g.id ?? stableUuid('world-group', tenant.id, g.displayName.toLowerCase())).toLowerCase();
    if (!dup(st.ids, id, where, `group id ${id}`)) return;
    for (const n of new Set([g.displayName.toLowerCase(), id])) byName.set(n, [...(byName.get(n) ?? []), id]);
    const props: Record<string, unknown> = {};
    if (g.description !== undefined) props.description = g.description;
    if (g.groupTypes !== undefined) props.groupTypes = g.groupTypes;
    if (g.visibility !== undefined) props.visibility = g.visibility;
    const entry: ResolvedDirectory['groups'][number] = { id, displayName: g.displayName, mailNickname: g.mailNickname ?? (g.displayName.replace(/[^A-Za-z0-9]/g, '') || 'group'), securityEnabled: g.securityEnabled ?? true, mailEnabled: g.mailEnabled ?? false, props, members: [] };
    dir.groups.push(entry);
    pending.push({
      tenant,
      run: () => {
        if (names.has(id)) problems.push(`${where}/id: ${id} is already a user's or service principal's object id`);
        (g.members ?? []).forEach((m, j) => {
          const w = at(`/groups/${i}/members/${j}`);
          const p = principalOf(world, tenant, names, m, w, problems);
          if (!p) return;
          if (p.id === id) return void problems.push(`${w}: a group cannot be its own member`);
          if (entry.members.some((x) => x.id === p.id)) return void problems.push(`${w}: duplicate member '${m}'`);
          entry.members.push({ id: p.id, type: p.type === 'User' ? 'user' : p.type === 'Group' ? 'group' : 'servicePrincipal' });
        });
      },
    });
  });
  (t.servicePrincipals ?? []).forEach((s, i) => {
    pending.push({
      tenant,
      run: () => {
        const where = at(`/servicePrincipals/${i}`);
        const key = s.appId.toLowerCase();
        const app = tenant.apps.find((a) => a.appId === key || a.displayName.toLowerCase() === key);
        if (!app) return void problems.push(`${where}/appId: no application '${s.appId}' in tenant ${tenant.domain}`);
        if (!dup(st.ids, `sp:${app.appId}`, where, `service principal of ${app.displayName}`)) return;
        (s.appRoleAssignments ?? []).forEach((r, j) => {
          const w = `${where}/appRoleAssignments/${j}`;
          if ((r.resourceId === undefined) === (r.resourceDisplayName === undefined)) return void problems.push(`${w}: give exactly one of resourceId and resourceDisplayName`);
          if ((r.appRoleId === undefined) === (r.appRole === undefined)) return void problems.push(`${w}: give exactly one of appRoleId and appRole`);
          const resource = resourcePrincipals.find((p) => (r.resourceId ? p.id === r.resourceId.toLowerCase() : p.displayName.toLowerCase() === r.resourceDisplayName!.toLowerCase()));
          if (!resource) return void problems.push(`${w}: no resource service principal '${r.resourceId ?? r.resourceDisplayName}' (docs/directory-app-roles.md lists them)`);
          const role = resource.appRoles.find((x) => (r.appRoleId ? x.id === r.appRoleId.toLowerCase() : x.value === r.appRole));
          if (!role) return void problems.push(`${w}: ${resource.displayName} has no app role '${r.appRoleId ?? r.appRole}'`);
          if (app.grants.some((x) => x.audience === resource.family && x.role === role.value) || dir.grants.some((x) => x.appId === app.appId && x.audience === resource.family && x.role === role.value)) {
            return void problems.push(`${w}: duplicate app role assignment ${role.value} on ${resource.displayName}`);
          }
          dir.grants.push({ appId: app.appId, audience: resource.family, role: role.value });
        });
      },
    });
  });
}

/** Writes the directory kinds of a resolved tenant (after its users and applications). */
export async function loadDirectory(ctx: AppContext, tenant: ResolvedTenant): Promise<void> {
  const dir = tenant.directory;
  if (!dir) return;
  const db = ctx.store.db;
  const now = nowIso();
  const apps = new Set<string>();
  for (const p of dir.passwords) {
    const start = p.start ?? now;
    const end = p.end ?? new Date(Date.parse(start) + 2 * 365 * 86400_000).toISOString();
    await worldInserts.password(db, { key_id: p.keyId, app_id: p.appId, secret_hash: p.secretHash ?? (await hashSecret(p.secretText!)), hint: p.hint, display_name: p.displayName, start_at: start, end_at: end });
    apps.add(p.appId);
  }
  for (const k of dir.keys) (await worldInserts.key(db, k), apps.add(k.app_id));
  for (const a of apps) await recountCredentials(db, a);
  for (const g of dir.groups) {
    await worldInserts.group(db, { id: g.id, tenant_id: tenant.id, display_name: g.displayName, mail_nickname: g.mailNickname, security_enabled: g.securityEnabled ? 1 : 0, mail_enabled: g.mailEnabled ? 1 : 0, created_at: now, props: toJson(g.props) });
  }
  for (const g of dir.groups) for (const m of g.members) await worldInserts.member(db, g.id, m.id, m.type);
  for (const x of dir.grants) await db.insertInto('app_role_grants').values({ app_id: x.appId, audience: x.audience, role: x.role }).execute();
}

/** How an export names each group of the world: its displayName, or its id where the name is not unique among the tenant's principals. */
export async function directoryNames(db: Kysely<Database>): Promise<Map<string, string>> {
  const [groups, users, apps] = await Promise.all([
    db.selectFrom('directory_groups').select(['id', 'tenant_id', 'display_name']).execute(),
    db.selectFrom('directory_users').select(['tenant_id', 'upn_lower', 'id']).execute(),
    db.selectFrom('directory_apps').select(['tenant_id', 'display_name', 'app_id', 'object_id']).execute(),
  ]);
  const count = new Map<string, number>();
  const add = (tenant: string, name: string) => count.set(`${tenant}|${name.toLowerCase()}`, (count.get(`${tenant}|${name.toLowerCase()}`) ?? 0) + 1);
  for (const g of groups) add(g.tenant_id, g.display_name);
  for (const u of users) (add(u.tenant_id, u.upn_lower), add(u.tenant_id, u.id));
  for (const a of apps) (add(a.tenant_id, a.display_name), add(a.tenant_id, a.app_id), add(a.tenant_id, a.object_id));
  return new Map(groups.map((g) => [g.id, count.get(`${g.tenant_id}|${g.display_name.toLowerCase()}`) === 1 ? g.display_name : g.id]));
}

type ExportedTenant = NonNullable<WorldFileData['tenants']>[number];

/** Adds the directory kinds of `db` to the tenants of export `out` (groups, credentials); names as {@link directoryNames}. */
export async function exportDirectory(db: Kysely<Database>, out: WorldFileData): Promise<void> {
  const [groups, members, passwords, keys, users, apps, names] = await Promise.all([
    db.selectFrom('directory_groups').selectAll().orderBy('id').execute(),
    db.selectFrom('directory_group_members').selectAll().execute(),
    db.selectFrom('app_password_credentials').selectAll().orderBy('key_id').execute(),
    db.selectFrom('app_key_credentials').selectAll().orderBy('key_id').execute(),
    db.selectFrom('directory_users').select(['id', 'upn']).execute(),
    db.selectFrom('directory_apps').select(['object_id', 'display_name']).execute(),
    directoryNames(db),
  ]);
  const memberName = new Map<string, string>([...users.map((u) => [u.id, u.upn] as const), ...apps.map((a) => [a.object_id, a.display_name] as const), ...names]);
  for (const t of (out.tenants ?? []) as ExportedTenant[]) {
    for (const a of t.applications ?? []) {
      const ps = passwords.filter((p) => p.app_id === a.appId);
      const ks = keys.filter((k) => k.app_id === a.appId);
      if (ps.length) a.passwordCredentials = ps.map((p) => ({ keyId: p.key_id, ...(p.display_name !== null ? { displayName: p.display_name } : {}), secretHash: p.secret_hash, hint: p.hint, startDateTime: p.start_at, endDateTime: p.end_at }));
      if (ks.length) a.keyCredentials = ks.map((k) => ({ keyId: k.key_id, ...(k.display_name !== null ? { displayName: k.display_name } : {}), type: 'AsymmetricX509Cert' as const, usage: 'Verify' as const, key: k.key_der, startDateTime: k.start_at, endDateTime: k.end_at }));
    }
    const mine = groups.filter((g) => g.tenant_id === t.id);
    if (!mine.length) continue;
    t.groups = mine.map((g) => {
      const p = fromJson<Record<string, unknown>>(g.props) ?? {};
      const ms = members
        .filter((m) => m.group_id === g.id)
        .map((m) => memberName.get(m.member_id) ?? m.member_id)
        .sort();
      return {
        id: g.id,
        displayName: g.display_name,
        ...(typeof p.description === 'string' ? { description: p.description } : {}),
        mailNickname: g.mail_nickname,
        ...(Number(g.security_enabled) === 1 ? {} : { securityEnabled: false }),
        ...(Number(g.mail_enabled) === 1 ? { mailEnabled: true } : {}),
        ...(Array.isArray(p.groupTypes) ? { groupTypes: p.groupTypes as ('Unified' | 'DynamicMembership')[] } : {}),
        ...(typeof p.visibility === 'string' ? { visibility: p.visibility as 'Public' } : {}),
        ...(ms.length ? { members: ms } : {}),
      };
    });
  }
}
