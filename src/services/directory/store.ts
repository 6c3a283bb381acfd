/**
 * The directory's queries (issue 27 item 6) over the core directory tables
 * (`src/core/tables.ts`: `directory_users`, `directory_apps`, `directory_groups`,
 * `directory_group_members`, `app_password_credentials`, `app_key_credentials`,
 * `app_role_grants`). Every row is scoped by its tenant; lists are keyset pages in id order.
 *
 * **One write path.** Every write goes through {@link directoryWrite}: one transaction, so a
 * failed write leaves nothing behind. The caches it affects (the identity provider's user
 * look-ups, group memberships and the resource manager's kept access decisions, on every
 * instance) are emptied by the store's triggers on these tables (`src/core/cache-tables.ts`),
 * not by anything here.
 */
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { CompiledOrderBy } from '../../core/odata/index.ts';
import type { AppContext } from '../../context.ts';
import type { Database } from '../../store/database.ts';

/** The database the directory queries run on (the app's, or a transaction of it). */
export type Db = Kysely<Database>;

/** Runs a directory write in one transaction (see the file comment). */
export async function directoryWrite<T>(ctx: AppContext, fn: (db: Db) => Promise<T>): Promise<T> {
  return ctx.store.transaction(fn);
}

/** Which rows a page reads: `limit` rows in id order after `after`, or (with `order`, `$orderby`) after `skip` rows in that order, then id. */
export interface Window {
  limit: number;
  after?: string;
  skip?: number;
  order?: CompiledOrderBy[];
}

/** A page of rows: at most `top` of the window, and where the next page starts when more follow. */
export async function pageRows<R extends { id: string }>(rows: (w: Window) => Promise<R[]>, top: number, w: Omit<Window, 'limit'>): Promise<{ rows: R[]; next?: { after: string } | { skip: number } }> {
  const got = await rows({ ...w, limit: top + 1 });
  if (got.length <= top) return { rows: got };
  const page = got.slice(0, top);
  return { rows: page, next: w.order ? { skip: (w.skip ?? 0) + top } : { after: page[page.length - 1]!.id } };
}

/** Applies a {@link Window} to a query over a table whose id column is `idColumn`. */
function windowed<Q extends { where: any; orderBy: any; offset: any; limit: any }>(q: Q, w: Window, idColumn: string): Q {
  let out = q;
  if (w.order) {
    for (const o of w.order) out = out.orderBy(sql.ref(o.column), o.direction);
    out = out.orderBy(sql.ref(idColumn), 'asc');
    if (w.skip) out = out.offset(w.skip);
  } else {
    if (w.after !== undefined) out = out.where(sql.ref(idColumn), '>', w.after);
    out = out.orderBy(sql.ref(idColumn), 'asc');
  }
  return out.limit(w.limit);
}

/** Users of a tenant: a window, filtered. */
export async function userRows(db: Db, tenantId: string, filter: Expression<SqlBool> | undefined, w: Window) {
  let q = db.selectFrom('directory_users').selectAll().where('tenant_id', '=', tenantId);
  if (filter) q = q.where(filter);
  return windowed(q, w, 'id').execute();
}

/** How many users of a tenant match. */
export async function countRows(db: Db, table: 'directory_users' | 'directory_groups', tenantId: string, filter: Expression<SqlBool> | undefined): Promise<number> {
  let q = db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).where('tenant_id', '=', tenantId);
  if (filter) q = q.where(filter);
  return Number((await q.executeTakeFirst())?.n ?? 0);
}

/** A user of the tenant by object id or user principal name (case-insensitive). */
export async function userRow(db: Db, tenantId: string, idOrUpn: string) {
  const v = idOrUpn.toLowerCase();
  return db
    .selectFrom('directory_users')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb.or([eb('id', '=', v), eb('upn_lower', '=', v)]))
    .executeTakeFirst();
}

/** Whether a user principal name is taken (in any tenant: the column is unique). */
export async function upnTaken(db: Db, upn: string, exceptId?: string): Promise<boolean> {
  let q = db.selectFrom('directory_users').select('id').where('upn_lower', '=', upn.toLowerCase());
  if (exceptId) q = q.where('id', '<>', exceptId);
  return (await q.executeTakeFirst()) !== undefined;
}

/** Groups of a tenant: a window, filtered. */
export async function groupRows(db: Db, tenantId: string, filter: Expression<SqlBool> | undefined, w: Window) {
  let q = db.selectFrom('directory_groups').selectAll().where('tenant_id', '=', tenantId);
  if (filter) q = q.where(filter);
  return windowed(q, w, 'id').execute();
}

/** A group of the tenant by id. */
export async function groupRow(db: Db, tenantId: string, id: string) {
  return db.selectFrom('directory_groups').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id.toLowerCase()).executeTakeFirst();
}

/** Direct members of a group (ids and kinds), a window in member-id order. */
export async function memberRows(db: Db, groupId: string, w: Window) {
  const q = db.selectFrom('directory_group_members').select(['member_id as id', 'member_type']).where('group_id', '=', groupId);
  return windowed(q, { ...w, order: undefined }, 'member_id').execute();
}

/** The groups an object is a direct member of. */
export async function memberOfRows(db: Db, memberId: string) {
  return db
    .selectFrom('directory_group_members')
    .innerJoin('directory_groups', 'directory_groups.id', 'directory_group_members.group_id')
    .selectAll('directory_groups')
    .where('directory_group_members.member_id', '=', memberId)
    .orderBy('directory_groups.id')
    .execute();
}

/** Removes an object from every group (the object is deleted). */
export async function dropMemberships(db: Db, memberId: string): Promise<void> {
  await db.deleteFrom('directory_group_members').where('member_id', '=', memberId).execute();
}

/** Application registrations of a tenant (those with an application object): a window in application-id order, filtered. */
export async function applicationRows(db: Db, tenantId: string, filter: Expression<SqlBool> | undefined, w: Window) {
  let q = db.selectFrom('directory_apps').selectAll().select('application_id as id').where('tenant_id', '=', tenantId).where('application_id', 'is not', null);
  if (filter) q = q.where(filter);
  return (await windowed(q, w, 'application_id').execute()) as (AppRow & { id: string })[];
}

/** The stored row of an application registration. */
export type AppRow = Awaited<ReturnType<typeof appByApplicationId>> & object;

/** An application by its application object id. */
export async function appByApplicationId(db: Db, tenantId: string, id: string) {
  return db.selectFrom('directory_apps').selectAll().where('tenant_id', '=', tenantId).where('application_id', '=', id.toLowerCase()).executeTakeFirst();
}

/** An application by client id (appId). */
export async function appByAppId(db: Db, tenantId: string, appId: string) {
  return db.selectFrom('directory_apps').selectAll().where('tenant_id', '=', tenantId).where('app_id', '=', appId.toLowerCase()).executeTakeFirst();
}

/** Service principals of a tenant: a window in object-id order, filtered. */
export async function principalRows(db: Db, tenantId: string, filter: Expression<SqlBool> | undefined, w: Window) {
  let q = db.selectFrom('directory_apps').selectAll().select('object_id as id').where('tenant_id', '=', tenantId).where('has_sp', '=', 1);
  if (filter) q = q.where(filter);
  return (await windowed(q, w, 'object_id').execute()) as (AppRow & { id: string })[];
}

/** A service principal by object id. */
export async function principalRow(db: Db, tenantId: string, id: string) {
  return db.selectFrom('directory_apps').selectAll().where('tenant_id', '=', tenantId).where('object_id', '=', id.toLowerCase()).where('has_sp', '=', 1).executeTakeFirst();
}

/** The password credentials of an application (no hashes). */
export async function passwordCredentials(db: Db, appId: string) {
  return db.selectFrom('app_password_credentials').select(['key_id', 'hint', 'display_name', 'start_at', 'end_at']).where('app_id', '=', appId).orderBy('start_at').orderBy('key_id').execute();
}

/** The key credentials of an application. */
export async function keyCredentialRows(db: Db, appId: string) {
  return db.selectFrom('app_key_credentials').selectAll().where('app_id', '=', appId).orderBy('start_at').orderBy('key_id').execute();
}

/** Recounts an application's credentials into `directory_apps.credentials` (a confidential client while it has any). */
export async function recountCredentials(db: Db, appId: string): Promise<void> {
  const p = await db.selectFrom('app_password_credentials').select((eb) => eb.fn.countAll<number | string>().as('n')).where('app_id', '=', appId).executeTakeFirst();
  const k = await db.selectFrom('app_key_credentials').select((eb) => eb.fn.countAll<number | string>().as('n')).where('app_id', '=', appId).executeTakeFirst();
  await db.updateTable('directory_apps').set({ credentials: Number(p?.n ?? 0) + Number(k?.n ?? 0) }).where('app_id', '=', appId).execute();
}

/** Application-role grants of a client (every audience). */
export async function grantsOfApp(db: Db, appId: string) {
  return db.selectFrom('app_role_grants').selectAll().where('app_id', '=', appId).orderBy('audience').orderBy('role').execute();
}

/** Application-role grants on an audience, with the granted application's tenant. */
export async function grantsOnAudience(db: Db, tenantId: string, audience: string) {
  return db
    .selectFrom('app_role_grants')
    .innerJoin('directory_apps', 'directory_apps.app_id', 'app_role_grants.app_id')
    .select(['app_role_grants.app_id', 'app_role_grants.audience', 'app_role_grants.role', 'directory_apps.object_id', 'directory_apps.display_name'])
    .where('app_role_grants.audience', '=', audience)
    .where('directory_apps.tenant_id', '=', tenantId)
    .orderBy('app_role_grants.app_id')
    .orderBy('app_role_grants.role')
    .execute();
}

/** Deletes what belongs to a client: its credentials, role grants, memberships and refresh tokens. */
export async function dropAppDependents(db: Db, appId: string, objectId: string): Promise<void> {
  await db.deleteFrom('app_password_credentials').where('app_id', '=', appId).execute();
  await db.deleteFrom('app_key_credentials').where('app_id', '=', appId).execute();
  await db.deleteFrom('app_role_grants').where('app_id', '=', appId).execute();
  await db.deleteFrom('refresh_tokens').where('app_id', '=', appId).execute();
  await dropMemberships(db, objectId);
}

/**
 * Store-level inserts for loading a world (`src/world/directory.ts`): rows already checked by
 * the world's resolution, written in the load's order with no API validation. The caller
 * recounts the application's credentials ({@link recountCredentials}) after its secrets and
 * certificates are in.
 */
export const worldInserts = {
  /** A client secret (`app_password_credentials`): stored hash, three-character hint, dates (ISO 8601). */
  async password(db: Db, r: Database['app_password_credentials']): Promise<void> {
    await db.insertInto('app_password_credentials').values(r).execute();
  },
  /** A certificate key credential (`app_key_credentials`), DER as base64 with its thumbprints. */
  async key(db: Db, r: Database['app_key_credentials']): Promise<void> {
    await db.insertInto('app_key_credentials').values(r).execute();
  },
  /** A group (`directory_groups`; `props` the JSON of description and groupTypes). */
  async group(db: Db, r: Omit<Database['directory_groups'], 'security_enabled' | 'mail_enabled' | 'props'> & { security_enabled: number; mail_enabled: number; props: string }): Promise<void> {
    await db.insertInto('directory_groups').values(r).execute();
  },
  /** A direct member of a group (`member_type` `user`, `group` or `servicePrincipal`). */
  async member(db: Db, groupId: string, memberId: string, memberType: 'user' | 'group' | 'servicePrincipal'): Promise<void> {
    await db.insertInto('directory_group_members').values({ group_id: groupId, member_id: memberId, member_type: memberType }).execute();
  },
};
