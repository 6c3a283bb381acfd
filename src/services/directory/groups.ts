/**
 * Groups of the directory (issue 27 item 6; the public v1.0 `group` resource): CRUD, `members`
 * (users, groups, service principals), `POST …/members/$ref {"@odata.id": …}` and
 * `DELETE …/members/{id}/$ref`. Membership decides resource-manager access (an assignment to a
 * group grants its members, `src/core/identity/groups.ts`); every membership write goes through
 * the directory's one write path, which invalidates the membership caches.
 */
import type { FieldMap } from '../../core/odata/index.ts';
import { errors } from '../../core/errors/index.ts';
import { isUuid, newUuid } from '../../core/ids.ts';
import { nowIso } from '../../core/clock.ts';
import { bool, fromJson, isUniqueViolation } from '../../store/db.ts';
import { allow, boolProp, groupPermissions, objectBody, onlyProps, pageOf, send, sendOne, sendPage, stringProp, type DirRequest } from './request.ts';
import { listCollection } from './list.ts';
import { countRows, directoryWrite, groupRow, groupRows, memberRows, pageRows, principalRow, userRow, type Db } from './store.ts';
import { renderUser } from './users.ts';
import { renderPrincipal } from './principals.ts';

const groupFields: FieldMap = {
  id: { column: 'id', type: 'string', caseInsensitive: true },
  displayName: { column: 'display_name', type: 'string' },
  mailNickname: { column: 'mail_nickname', type: 'string' },
  securityEnabled: { column: 'security_enabled', type: 'boolean' },
  mailEnabled: { column: 'mail_enabled', type: 'boolean' },
};
const writable = ['displayName', 'description', 'mailEnabled', 'mailNickname', 'securityEnabled', 'groupTypes', 'visibility', 'members@odata.bind', 'owners@odata.bind'];
const readOnly = ['id', 'createdDateTime', 'deletedDateTime', 'mail'];

type GroupRow = NonNullable<Awaited<ReturnType<typeof groupRow>>>;

/** The v1.0 `group` resource of a stored row. */
export function renderGroup(r: GroupRow): Record<string, unknown> {
  const p = fromJson<Record<string, unknown>>(r.props) ?? {};
  return {
    id: r.id,
    deletedDateTime: null,
    classification: null,
    createdDateTime: r.created_at,
    description: p.description ?? null,
    displayName: r.display_name,
    groupTypes: Array.isArray(p.groupTypes) ? p.groupTypes : [],
    mail: null,
    mailEnabled: bool(r.mail_enabled),
    mailNickname: r.mail_nickname,
    securityEnabled: bool(r.security_enabled),
    visibility: p.visibility ?? null,
  };
}

async function requireGroup(dr: DirRequest, id: string, db: Db = dr.ctx.store.db): Promise<GroupRow> {
  const r = await groupRow(db, dr.principal.tenantId, id);
  if (!r) throw errors.directory.dirNotFound({ id });
  return r;
}

/** The object a reference names (`…/directoryObjects/{id}`, `…/users/{id}`, or a bare id) in the tenant, with its member type. @throws ApiError 400 */
async function resolveRef(dr: DirRequest, db: Db, ref: unknown): Promise<{ id: string; type: 'user' | 'group' | 'servicePrincipal' }> {
  if (typeof ref !== 'string' || ref.length > 2048) throw errors.directory.dirRefInvalid({ id: String(ref).slice(0, 100) });
  const last = ref.replace(/\/+$/, '').split('/').pop() ?? '';
  const id = (/^[^(]*\('?([^')]+)'?\)$/.exec(last)?.[1] ?? last).toLowerCase();
  if (!isUuid(id)) throw errors.directory.dirRefInvalid({ id: ref.slice(0, 100) });
  const tenant = dr.principal.tenantId;
  if (await userRow(db, tenant, id)) return { id, type: 'user' };
  if (await groupRow(db, tenant, id)) return { id, type: 'group' };
  if (await principalRow(db, tenant, id)) return { id, type: 'servicePrincipal' };
  throw errors.directory.dirRefInvalid({ id });
}

/** `props` after applying description, groupTypes and visibility of `body`. */
function mergedProps(previous: string | undefined, b: Record<string, unknown>): string {
  const p = fromJson<Record<string, unknown>>(previous ?? '{}') ?? {};
  if (b.description !== undefined) {
    if (b.description !== null && (typeof b.description !== 'string' || b.description.length > 1024)) throw errors.directory.dirInvalidValue({ property: 'description', resource: 'Group' });
    p.description = b.description;
  }
  if (b.groupTypes !== undefined) {
    if (!Array.isArray(b.groupTypes) || b.groupTypes.some((t) => t !== 'Unified' && t !== 'DynamicMembership')) throw errors.directory.dirInvalidValue({ property: 'groupTypes', resource: 'Group' });
    p.groupTypes = b.groupTypes;
  }
  if (b.visibility !== undefined) {
    if (b.visibility !== null && !['Public', 'Private', 'HiddenMembership'].includes(String(b.visibility))) throw errors.directory.dirInvalidValue({ property: 'visibility', resource: 'Group' });
    p.visibility = b.visibility;
  }
  return JSON.stringify(p);
}

/** `GET /groups`. */
export async function listGroups(dr: DirRequest): Promise<unknown> {
  const { db } = dr.ctx.store;
  const tenant = dr.principal.tenantId;
  return listCollection(dr, {
    permissions: groupPermissions,
    fields: groupFields,
    resource: 'Group',
    type: 'group',
    fragment: 'groups',
    sortable: true,
    rows: (filter, w) => groupRows(db, tenant, filter, w),
    count: (filter) => countRows(db, 'directory_groups', tenant, filter),
    render: renderGroup,
  });
}

/** `POST /groups`: 201 (`displayName`, `mailEnabled`, `mailNickname`, `securityEnabled` required; `members@odata.bind` optional). */
export async function createGroup(dr: DirRequest): Promise<unknown> {
  allow(dr, groupPermissions, 'write');
  const b = objectBody(dr);
  onlyProps(b, writable, readOnly);
  const displayName = stringProp(b, 'displayName', 'Group');
  const mailNickname = stringProp(b, 'mailNickname', 'Group', 64);
  const mailEnabled = boolProp(b, 'mailEnabled', 'Group');
  const securityEnabled = boolProp(b, 'securityEnabled', 'Group');
  for (const [name, v] of [['displayName', displayName], ['mailEnabled', mailEnabled], ['mailNickname', mailNickname], ['securityEnabled', securityEnabled]] as const) {
    if (v === undefined) throw errors.directory.dirValueRequired({ property: name, resource: 'Group' });
  }
  const binds = b['members@odata.bind'];
  if (binds !== undefined && (!Array.isArray(binds) || binds.length > 20)) throw errors.directory.dirInvalidValue({ property: 'members@odata.bind', resource: 'Group' });
  const props = mergedProps(undefined, b);
  const id = newUuid();
  const row = await directoryWrite(dr.ctx, async (db) => {
    await db
      .insertInto('directory_groups')
      .values({ id, tenant_id: dr.principal.tenantId, display_name: displayName!, mail_nickname: mailNickname!, security_enabled: securityEnabled ? 1 : 0, mail_enabled: mailEnabled ? 1 : 0, created_at: nowIso(), props })
      .execute();
    for (const ref of (binds as unknown[] | undefined) ?? []) {
      const m = await resolveRef(dr, db, ref);
      await db.insertInto('directory_group_members').values({ group_id: id, member_id: m.id, member_type: m.type }).onConflict((oc) => oc.doNothing()).execute();
    }
    return requireGroup(dr, id, db);
  });
  dr.reply.header('location', `${dr.ctx.origin()}/v1.0/groups/${id}`);
  return sendOne(dr, 201, 'groups', renderGroup(row), 'group');
}

/** `GET /groups/{id}`. */
export async function getGroup(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, groupPermissions, 'read');
  return sendOne(dr, 200, 'groups', renderGroup(await requireGroup(dr, id)), 'group');
}

/** `PATCH /groups/{id}`: 204. */
export async function patchGroup(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, groupPermissions, 'write');
  const b = objectBody(dr);
  onlyProps(b, writable.filter((k) => !k.includes('@')), readOnly);
  const set: Record<string, string | number> = {};
  const displayName = stringProp(b, 'displayName', 'Group');
  if (displayName !== undefined) set.display_name = displayName;
  const nick = stringProp(b, 'mailNickname', 'Group', 64);
  if (nick !== undefined) set.mail_nickname = nick;
  const sec = boolProp(b, 'securityEnabled', 'Group');
  if (sec !== undefined) set.security_enabled = sec ? 1 : 0;
  const me = boolProp(b, 'mailEnabled', 'Group');
  if (me !== undefined) set.mail_enabled = me ? 1 : 0;
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requireGroup(dr, id, db);
    set.props = mergedProps(r.props, b);
    await db.updateTable('directory_groups').set(set).where('id', '=', r.id).execute();
  });
  return send(dr, 204);
}

/** `DELETE /groups/{id}`: 204, with its memberships (as group and as member). */
export async function deleteGroup(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, groupPermissions, 'write');
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requireGroup(dr, id, db);
    await db.deleteFrom('directory_group_members').where('group_id', '=', r.id).execute();
    await db.deleteFrom('directory_group_members').where('member_id', '=', r.id).execute();
    await db.deleteFrom('directory_groups').where('id', '=', r.id).execute();
  });
  return send(dr, 204);
}

/** `GET /groups/{id}/members`: direct members, each with its `@odata.type`. */
export async function listMembers(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, groupPermissions, 'read');
  const g = await requireGroup(dr, id);
  const { top, after } = pageOf(dr);
  const db = dr.ctx.store.db;
  const page = await pageRows((w) => memberRows(db, g.id, w), top, { after });
  const items: Record<string, unknown>[] = [];
  for (const m of page.rows) {
    if (m.member_type === 'user') {
      const u = await userRow(db, dr.principal.tenantId, m.id);
      if (u) items.push({ '@odata.type': '#vendor.graph.user', ...renderUser(u) });
    } else if (m.member_type === 'group') {
      const sub = await groupRow(db, dr.principal.tenantId, m.id);
      if (sub) items.push({ '@odata.type': '#vendor.graph.group', ...renderGroup(sub) });
    } else {
      const sp = await principalRow(db, dr.principal.tenantId, m.id);
      if (sp) items.push({ '@odata.type': '#vendor.graph.servicePrincipal', ...renderPrincipal(sp) });
    }
  }
  return sendPage(dr, 'directoryObjects', items, 'directoryObject', page.next);
}

/** `POST /groups/{id}/members/$ref {"@odata.id": …}`: 204. @throws ApiError 400 when already a member or the reference names nothing */
export async function addMember(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, groupPermissions, 'write');
  const b = objectBody(dr);
  await directoryWrite(dr.ctx, async (db) => {
    const g = await requireGroup(dr, id, db);
    const m = await resolveRef(dr, db, b['@odata.id']);
    if (m.id === g.id) throw errors.directory.dirRefInvalid({ id: m.id });
    const exists = await db.selectFrom('directory_group_members').select('member_id').where('group_id', '=', g.id).where('member_id', '=', m.id).executeTakeFirst();
    if (exists) throw errors.directory.dirRefExists();
    await db.insertInto('directory_group_members').values({ group_id: g.id, member_id: m.id, member_type: m.type }).execute();
  }).catch((e) => {
    throw isUniqueViolation(e) ? errors.directory.dirRefExists() : e;
  });
  return send(dr, 204);
}

/** `DELETE /groups/{id}/members/{memberId}/$ref`: 204. @throws ApiError 404 when not a member */
export async function removeMember(dr: DirRequest, id: string, memberId: string): Promise<unknown> {
  allow(dr, groupPermissions, 'write');
  await directoryWrite(dr.ctx, async (db) => {
    const g = await requireGroup(dr, id, db);
    const r = await db.deleteFrom('directory_group_members').where('group_id', '=', g.id).where('member_id', '=', memberId.toLowerCase()).executeTakeFirst();
    if (Number(r.numDeletedRows) !== 1) throw errors.directory.dirNotFound({ id: memberId });
  });
  return send(dr, 204);
}
