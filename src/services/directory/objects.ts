/**
 * Directory objects by id (the public v1.0 `directoryObject`): `GET /directoryObjects/{id}` and
 * `POST /directoryObjects/getByIds {ids, types}` — users, groups and service principals
 * (the built-in resource principals included) of the caller's tenant, each with its
 * `@odata.type`. The ids `members/$ref` bodies name (`…/directoryObjects/{id}`) read back here.
 */
import { errors } from '../../core/errors/index.ts';
import { isUuid } from '../../core/ids.ts';
import { allow, applicationPermissions, groupPermissions, objectBody, send, contextUrl, userPermissions, type DirRequest } from './request.ts';
import { groupRow, principalRow, userRow } from './store.ts';
import { renderUser } from './users.ts';
import { renderGroup } from './groups.ts';
import { renderPrincipal } from './principals.ts';
import { renderResourcePrincipal, resourcePrincipal } from './resources.ts';

/** Reading any directory object: one of the read permissions of users, groups or applications. */
const anyRead = { read: [...new Set([...userPermissions.read, ...groupPermissions.read, ...applicationPermissions.read])], write: [] };

/** The object with this id in the caller's tenant, with its `@odata.type`; undefined when none. */
async function objectOf(dr: DirRequest, id: string, types?: Set<string>): Promise<Record<string, unknown> | undefined> {
  if (!isUuid(id)) return undefined;
  const db = dr.ctx.store.db;
  const tenant = dr.principal.tenantId;
  const want = (t: string) => !types || types.has(t);
  if (want('user')) {
    const u = await userRow(db, tenant, id);
    if (u) return { '@odata.type': '#vendor.graph.user', ...renderUser(u) };
  }
  if (want('group')) {
    const g = await groupRow(db, tenant, id);
    if (g) return { '@odata.type': '#vendor.graph.group', ...renderGroup(g) };
  }
  if (want('serviceprincipal')) {
    const builtIn = resourcePrincipal(id);
    if (builtIn && builtIn.id === id.toLowerCase()) return { '@odata.type': '#vendor.graph.servicePrincipal', ...renderResourcePrincipal(builtIn, tenant) };
    const sp = await principalRow(db, tenant, id);
    if (sp) return { '@odata.type': '#vendor.graph.servicePrincipal', ...renderPrincipal(sp) };
  }
  return undefined;
}

/** `GET /directoryObjects/{id}`. @throws ApiError 404 `Request_ResourceNotFound` */
export async function getDirectoryObject(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, anyRead, 'read');
  const o = await objectOf(dr, id);
  if (!o) throw errors.directory.dirNotFound({ id });
  return send(dr, 200, { '@odata.context': contextUrl(dr, 'directoryObjects/$entity'), ...o });
}

/** `POST /directoryObjects/getByIds {ids: [...], types?: ['user' | 'group' | 'servicePrincipal']}`: the objects found, in the order asked (at most 1000 ids). @throws ApiError 400 */
export async function getByIds(dr: DirRequest): Promise<unknown> {
  allow(dr, anyRead, 'read');
  const b = objectBody(dr);
  if (!Array.isArray(b.ids) || b.ids.length === 0 || b.ids.length > 1000 || b.ids.some((i) => typeof i !== 'string')) throw errors.directory.dirInvalidValue({ property: 'ids', resource: 'directoryObject' });
  if (b.types !== undefined && (!Array.isArray(b.types) || b.types.some((t) => typeof t !== 'string' || !['user', 'group', 'serviceprincipal'].includes(t.toLowerCase())))) {
    throw errors.directory.dirInvalidValue({ property: 'types', resource: 'directoryObject' });
  }
  const types = b.types ? new Set((b.types as string[]).map((t) => t.toLowerCase())) : undefined;
  const value: Record<string, unknown>[] = [];
  for (const id of b.ids as string[]) {
    const o = await objectOf(dr, id, types);
    if (o) value.push(o);
  }
  return send(dr, 200, { '@odata.context': contextUrl(dr, 'directoryObjects'), value });
}
