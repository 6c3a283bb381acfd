/**
 * Users of the directory (issue 27 item 6; the public v1.0 `user` resource): list with
 * `$filter` (eq / startswith / … on id, displayName, userPrincipalName, mail, mailNickname,
 * accountEnabled), `$select`, `$top`, `$count` and next links; create with `passwordProfile`;
 * get by id or userPrincipalName; PATCH; DELETE; `/me`; `memberOf`. A created user signs in at
 * once with its password (the identity provider reads the same table); a deleted or disabled
 * user's refresh tokens are revoked in the same transaction.
 */
import type { FieldMap } from '../../core/odata/index.ts';
import { errors } from '../../core/errors/index.ts';
import { hashSecret } from '../../core/identity/directory.ts';
import { newUuid } from '../../core/ids.ts';
import { nowIso } from '../../core/clock.ts';
import { bool, fromJson, isUniqueViolation } from '../../store/db.ts';
import { allow, boolProp, filterOf, groupPermissions, objectBody, onlyProps, sendOne, sendPage, send, stringProp, userPermissions, type DirRequest } from './request.ts';
import { countRows, directoryWrite, dropMemberships, memberOfRows, upnTaken, userRow, userRows, type Db } from './store.ts';
import { listCollection } from './list.ts';
import { renderGroup } from './groups.ts';

/** Users' `$filter` properties. */
const userFields: FieldMap = {
  id: { column: 'id', type: 'string', caseInsensitive: true },
  displayName: { column: 'display_name', type: 'string' },
  userPrincipalName: { column: 'upn_lower', type: 'string', caseInsensitive: true },
  mail: { column: 'mail', type: 'string' },
  mailNickname: { column: 'mail_nickname', type: 'string' },
  accountEnabled: { column: 'account_enabled', type: 'boolean' },
};

/** The user properties kept in `props` (JSON), as given. */
const extraProps = ['givenName', 'surname', 'jobTitle', 'mobilePhone', 'officeLocation', 'preferredLanguage', 'businessPhones', 'usageLocation', 'department', 'companyName', 'employeeId', 'city', 'country'] as const;
const writable = ['accountEnabled', 'displayName', 'mailNickname', 'userPrincipalName', 'passwordProfile', 'mail', 'passwordPolicies', ...extraProps];
const readOnly = ['id', 'createdDateTime', 'deletedDateTime'];

type UserRow = NonNullable<Awaited<ReturnType<typeof userRow>>>;

/** The v1.0 `user` resource of a stored row. */
export function renderUser(r: UserRow): Record<string, unknown> {
  const p = fromJson<Record<string, unknown>>(r.props) ?? {};
  return {
    id: r.id,
    businessPhones: Array.isArray(p.businessPhones) ? p.businessPhones : [],
    displayName: r.display_name,
    givenName: p.givenName ?? null,
    jobTitle: p.jobTitle ?? null,
    mail: r.mail || null,
    mobilePhone: p.mobilePhone ?? null,
    officeLocation: p.officeLocation ?? null,
    preferredLanguage: p.preferredLanguage ?? null,
    surname: p.surname ?? null,
    userPrincipalName: r.upn,
    accountEnabled: bool(r.account_enabled),
    mailNickname: r.mail_nickname ?? r.upn.split('@')[0],
    createdDateTime: r.created_at ?? null,
    usageLocation: p.usageLocation ?? null,
    department: p.department ?? null,
    companyName: p.companyName ?? null,
    employeeId: p.employeeId ?? null,
    city: p.city ?? null,
    country: p.country ?? null,
  };
}

/** The `user` of the path in the caller's tenant. @throws ApiError 404 `Request_ResourceNotFound` */
async function requireUser(dr: DirRequest, idOrUpn: string, db: Db = dr.ctx.store.db): Promise<UserRow> {
  const r = await userRow(db, dr.principal.tenantId, idOrUpn);
  if (!r) throw errors.directory.dirNotFound({ id: idOrUpn });
  return r;
}

/** A password the directory accepts: 8–256 characters, three of lower case, upper case, digits and symbols. */
function checkPassword(pw: unknown): string {
  if (typeof pw !== 'string') throw errors.directory.dirInvalidValue({ property: 'passwordProfile', resource: 'User' });
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(pw)).length;
  if (pw.length < 8 || pw.length > 256 || classes < 3) throw errors.directory.dirPasswordWeak();
  return pw;
}

/** A user principal name of the caller's tenant. @throws ApiError 400 */
async function checkUpn(dr: DirRequest, upn: string): Promise<void> {
  const m = /^[^@\s]+@([^@\s]+)$/.exec(upn);
  if (!m) throw errors.directory.dirInvalidValue({ property: 'userPrincipalName', resource: 'User' });
  const tenant = await dr.ctx.identity.directory.findTenant(dr.principal.tenantId);
  if (!tenant || m[1]!.toLowerCase() !== tenant.domain.toLowerCase()) throw errors.directory.dirUpnDomain();
}

/** The `props` JSON after applying the extra properties of `body`. */
function mergedProps(previous: string | undefined, body: Record<string, unknown>): string {
  const p = fromJson<Record<string, unknown>>(previous ?? '{}') ?? {};
  for (const k of extraProps) {
    if (!(k in body)) continue;
    const v = body[k];
    if (k === 'businessPhones') {
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw errors.directory.dirInvalidValue({ property: k, resource: 'User' });
    } else if (v !== null && (typeof v !== 'string' || v.length > 256)) throw errors.directory.dirInvalidValue({ property: k, resource: 'User' });
    if (v === null) delete p[k];
    else p[k] = v;
  }
  return JSON.stringify(p);
}

/** `GET /users`: a page of the tenant's users. */
export async function listUsers(dr: DirRequest): Promise<unknown> {
  const { db } = dr.ctx.store;
  const tenant = dr.principal.tenantId;
  return listCollection(dr, {
    permissions: userPermissions,
    fields: userFields,
    resource: 'User',
    type: 'user',
    fragment: 'users',
    sortable: true,
    rows: (filter, w) => userRows(db, tenant, filter, w),
    count: (filter) => countRows(db, 'directory_users', tenant, filter),
    render: renderUser,
  });
}

/** `GET /users/$count` (needs `ConsistencyLevel: eventual`): the number as text. */
export async function countUsers(dr: DirRequest): Promise<unknown> {
  allow(dr, userPermissions, 'read');
  if (String(dr.req.headers.consistencylevel ?? '').toLowerCase() !== 'eventual') throw errors.directory.dirCountNeedsHeader();
  const n = await countRows(dr.ctx.store.db, 'directory_users', dr.principal.tenantId, filterOf(dr, userFields, 'User'));
  return dr.reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(String(n));
}

/** `POST /users`: 201 with the user. @throws ApiError 400 for a missing or invalid property, a taken UPN, another domain, a weak password */
export async function createUser(dr: DirRequest): Promise<unknown> {
  allow(dr, userPermissions, 'write');
  const b = objectBody(dr);
  onlyProps(b, writable, readOnly);
  const accountEnabled = boolProp(b, 'accountEnabled', 'User');
  const displayName = stringProp(b, 'displayName', 'User');
  const mailNickname = stringProp(b, 'mailNickname', 'User', 64);
  const upn = stringProp(b, 'userPrincipalName', 'User', 113);
  const profile = b.passwordProfile as Record<string, unknown> | undefined;
  for (const [name, v] of [['accountEnabled', accountEnabled], ['displayName', displayName], ['mailNickname', mailNickname], ['userPrincipalName', upn], ['passwordProfile', profile]] as const) {
    if (v === undefined || v === null) throw errors.directory.dirValueRequired({ property: name, resource: 'User' });
  }
  if (typeof profile !== 'object' || Array.isArray(profile)) throw errors.directory.dirInvalidValue({ property: 'passwordProfile', resource: 'User' });
  const password = checkPassword(profile.password);
  await checkUpn(dr, upn!);
  const mail = b.mail === undefined ? upn! : b.mail === null ? '' : stringProp(b, 'mail', 'User', 256)!;
  const props = mergedProps(undefined, b);
  const hash = await hashSecret(password);
  const id = newUuid();
  const row = await directoryWrite(dr.ctx, async (db) => {
    if (await upnTaken(db, upn!)) throw errors.directory.dirUpnInUse();
    return insertUser(db);
  }).catch((e) => {
    // A concurrent create of the same UPN: the unique index decides.
    throw isUniqueViolation(e) ? errors.directory.dirUpnInUse() : e;
  });
  dr.reply.header('location', `${dr.ctx.origin()}/v1.0/users/${id}`);
  return sendOne(dr, 201, 'users', renderUser(row), 'user');

  async function insertUser(db: Db): Promise<UserRow> {
    await db
      .insertInto('directory_users')
      .values({
        id,
        tenant_id: dr.principal.tenantId,
        upn_lower: upn!.toLowerCase(),
        upn: upn!,
        display_name: displayName!,
        mail,
        password_hash: hash,
        is_tenant_admin: 0,
        account_enabled: accountEnabled ? 1 : 0,
        mail_nickname: mailNickname!,
        created_at: nowIso(),
        props,
      })
      .execute();
    return requireUser(dr, id, db);
  }
}

/** `GET /users/{id | userPrincipalName}`. */
export async function getUser(dr: DirRequest, idOrUpn: string): Promise<unknown> {
  allow(dr, userPermissions, 'read');
  return sendOne(dr, 200, 'users', renderUser(await requireUser(dr, idOrUpn)), 'user');
}

/** `GET /me`: the signed-in user (delegated tokens only; any directory or `User.Read` scope). */
export async function getMe(dr: DirRequest): Promise<unknown> {
  if (dr.principal.kind !== 'user') throw errors.directory.dirMeNeedsUser();
  const p = dr.principal;
  const own = ['User.Read', 'User.ReadWrite', 'openid', 'profile', ...userPermissions.read];
  if (!own.some((s) => p.scopes.includes(s))) throw errors.directory.dirAccessDenied();
  return sendOne(dr, 200, 'users', renderUser(await requireUser(dr, p.objectId)), 'user');
}

/** `PATCH /users/{id}`: 204. A new password or `accountEnabled: false` revokes the user's refresh tokens. */
export async function patchUser(dr: DirRequest, idOrUpn: string): Promise<unknown> {
  allow(dr, userPermissions, 'write');
  const b = objectBody(dr);
  onlyProps(b, writable, readOnly);
  const set: Record<string, string | number> = {};
  const displayName = stringProp(b, 'displayName', 'User');
  if (displayName !== undefined) set.display_name = displayName;
  const nick = stringProp(b, 'mailNickname', 'User', 64);
  if (nick !== undefined) set.mail_nickname = nick;
  const enabled = boolProp(b, 'accountEnabled', 'User');
  if (enabled !== undefined) set.account_enabled = enabled ? 1 : 0;
  if (b.mail !== undefined) set.mail = b.mail === null ? '' : stringProp(b, 'mail', 'User')!;
  const upn = stringProp(b, 'userPrincipalName', 'User', 113);
  if (upn !== undefined) await checkUpn(dr, upn);
  let revoke = enabled === false;
  if (b.passwordProfile !== undefined) {
    const profile = b.passwordProfile as Record<string, unknown> | null;
    if (!profile || typeof profile !== 'object' || Array.isArray(profile)) throw errors.directory.dirInvalidValue({ property: 'passwordProfile', resource: 'User' });
    if (profile.password !== undefined) {
      set.password_hash = await hashSecret(checkPassword(profile.password));
      revoke = true;
    }
  }
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requireUser(dr, idOrUpn, db);
    if (upn !== undefined) {
      if (await upnTaken(db, upn, r.id)) throw errors.directory.dirUpnInUse();
      set.upn = upn;
      set.upn_lower = upn.toLowerCase();
    }
    set.props = mergedProps(r.props, b);
    await db.updateTable('directory_users').set(set).where('id', '=', r.id).execute();
    if (revoke) await db.deleteFrom('refresh_tokens').where('user_id', '=', r.id).execute();
  }).catch((e) => {
    throw isUniqueViolation(e) ? errors.directory.dirUpnInUse() : e;
  });
  return send(dr, 204);
}

/** `DELETE /users/{id}`: 204; the user can no longer sign in, its refresh tokens and memberships go with it. */
export async function deleteUser(dr: DirRequest, idOrUpn: string): Promise<unknown> {
  allow(dr, userPermissions, 'write');
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requireUser(dr, idOrUpn, db);
    await db.deleteFrom('directory_users').where('id', '=', r.id).execute();
    await db.deleteFrom('refresh_tokens').where('user_id', '=', r.id).execute();
    await db.deleteFrom('auth_codes').where('user_id', '=', r.id).execute();
    await dropMemberships(db, r.id);
  });
  return send(dr, 204);
}

/** `GET /users/{id}/memberOf` (and `/me/memberOf`): the groups the user is a direct member of. */
export async function userMemberOf(dr: DirRequest, idOrUpn: string): Promise<unknown> {
  if (!(dr.principal.kind === 'user' && idOrUpn === dr.principal.objectId)) allow(dr, userPermissions, 'read');
  allow(dr, { read: [...groupPermissions.read, ...userPermissions.read], write: [] }, 'read');
  const r = await requireUser(dr, idOrUpn);
  const groups = await memberOfRows(dr.ctx.store.db, r.id);
  return sendPage(dr, 'directoryObjects', groups.map((g) => ({ '@odata.type': '#vendor.graph.group', ...renderGroup(g) })), 'group', undefined);
}
