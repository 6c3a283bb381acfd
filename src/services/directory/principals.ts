/**
 * Service principals (issue 27 item 6; the public v1.0 `servicePrincipal` and
 * `appRoleAssignment` resources): create for an appId, get, list with `$filter=appId eq '…'`,
 * delete; application permissions granted through `appRoleAssignments` on the client's service
 * principal or `appRoleAssignedTo` on the resource's. The resource service principals of the
 * Stratus API families are built in (`resources.ts`); a grant is a row of `app_role_grants`,
 * carried in the `roles` of the client's next token.
 */
import { createHash } from 'node:crypto';
import type { FieldMap, FilterNode, ValueNode } from '../../core/odata/index.ts';
import { parseFilter } from '../../core/odata/index.ts';
import { errors } from '../../core/errors/index.ts';
import { isUuid, newUuid } from '../../core/ids.ts';
import { fromJson, isUniqueViolation } from '../../store/db.ts';
import { allow, applicationPermissions, assignmentPermissions, objectBody, option, send, sendOne, sendPage, type DirRequest } from './request.ts';
import { appByAppId, directoryWrite, dropAppDependents, grantsOfApp, grantsOnAudience, principalRow, principalRows, type AppRow, type Db } from './store.ts';
import { listCollection } from './list.ts';
import { renderResourcePrincipal, resourceOfFamily, resourcePrincipal, resourcePrincipals, type ResourcePrincipal } from './resources.ts';

const principalFields: FieldMap = {
  id: { column: 'object_id', type: 'string', caseInsensitive: true },
  appId: { column: 'app_id', type: 'string', caseInsensitive: true },
  displayName: { column: 'display_name', type: 'string' },
};

/** The v1.0 `servicePrincipal` resource of a stored application row. */
export function renderPrincipal(r: AppRow): Record<string, unknown> {
  return {
    id: r.object_id,
    deletedDateTime: null,
    accountEnabled: true,
    appDisplayName: r.display_name,
    appId: r.app_id,
    appOwnerOrganizationId: r.tenant_id,
    appRoleAssignmentRequired: false,
    appRoles: [],
    displayName: r.display_name,
    servicePrincipalNames: [r.app_id],
    servicePrincipalType: r.kind === 'ManagedIdentity' ? 'ManagedIdentity' : 'Application',
    tags: [],
    keyCredentials: [],
    passwordCredentials: [],
    replyUrls: fromJson<string[]>(r.redirect_uris) ?? [],
  };
}

/** The id of the assignment of `role` on `audience` to client `appId` (stable: 43 base64url characters). */
export function assignmentId(appId: string, audience: string, role: string): string {
  return createHash('sha256').update(`${appId}\u0000${audience}\u0000${role}`).digest('base64url').slice(0, 43);
}

/** The `appRoleAssignment` resource of a grant (none when the role is not a built-in resource's). */
function renderAssignment(g: { app_id: string; audience: string; role: string }, principal: { id: string; displayName: string }): Record<string, unknown>[] {
  const resource = resourceOfFamily(g.audience);
  const role = resource?.appRoles.find((a) => a.value === g.role);
  if (!resource || !role) return [];
  return [{
    id: assignmentId(g.app_id, g.audience, g.role),
    deletedDateTime: null,
    appRoleId: role.id,
    createdDateTime: null,
    principalDisplayName: principal.displayName,
    principalId: principal.id,
    principalType: 'ServicePrincipal',
    resourceDisplayName: resource.displayName,
    resourceId: resource.id,
  }];
}

/** Whether a built-in resource principal matches a simple `$filter` (eq / startswith on id, appId, displayName; and / or). */
function matchesResource(r: ResourcePrincipal, node: FilterNode): boolean {
  const value = (v: ValueNode): string | undefined => {
    if (v.kind === 'literal') return typeof v.value === 'string' ? v.value.toLowerCase() : undefined;
    if (v.kind !== 'property') return undefined;
    const name = v.path.join('/');
    return name === 'id' ? r.id : name === 'appId' ? r.appId : name === 'displayName' ? r.displayName.toLowerCase() : undefined;
  };
  if (node.kind === 'and') return matchesResource(r, node.left) && matchesResource(r, node.right);
  if (node.kind === 'or') return matchesResource(r, node.left) || matchesResource(r, node.right);
  if (node.kind === 'compare' && node.op === 'eq') return value(node.left) !== undefined && value(node.left) === value(node.right);
  if (node.kind === 'boolcall' && node.call.name === 'startswith' && node.call.args.length === 2) {
    const [a, b] = node.call.args.map(value);
    return a !== undefined && b !== undefined && a.startsWith(b);
  }
  return false;
}

async function requirePrincipal(dr: DirRequest, id: string, db: Db = dr.ctx.store.db): Promise<AppRow> {
  const r = isUuid(id) ? await principalRow(db, dr.principal.tenantId, id) : undefined;
  if (!r) throw errors.directory.dirNotFound({ id });
  return r;
}

/** `GET /servicePrincipals`: the built-in resource principals (first page) then the tenant's. */
export async function listPrincipals(dr: DirRequest): Promise<unknown> {
  const text = option(dr.q, 'filter');
  const builtIn = (): ResourcePrincipal[] => {
    try {
      return resourcePrincipals.filter((r) => (text === undefined ? true : matchesResource(r, parseFilter(text))));
    } catch {
      return []; // the listing itself answers the filter's 400
    }
  };
  return listCollection(dr, {
    permissions: applicationPermissions,
    fields: principalFields,
    resource: 'ServicePrincipal',
    type: 'servicePrincipal',
    fragment: 'servicePrincipals',
    rows: (filter, w) => principalRows(dr.ctx.store.db, dr.principal.tenantId, filter, w),
    render: (r) => renderPrincipal(r),
    first: builtIn().map((r) => renderResourcePrincipal(r, dr.principal.tenantId)),
  });
}

/** `POST /servicePrincipals {appId}`: 201. @throws ApiError 400 unknown appId, 409 when it has one */
export async function createPrincipal(dr: DirRequest): Promise<unknown> {
  allow(dr, applicationPermissions, 'write');
  const b = objectBody(dr);
  const appId = b.appId;
  if (appId === undefined) throw errors.directory.dirValueRequired({ property: 'appId', resource: 'ServicePrincipal' });
  if (typeof appId !== 'string' || !isUuid(appId)) throw errors.directory.dirInvalidValue({ property: 'appId', resource: 'ServicePrincipal' });
  if (resourcePrincipal(appId)) throw errors.directory.dirSpExists({ appId });
  const row = await directoryWrite(dr.ctx, async (db) => {
    const app = await appByAppId(db, dr.principal.tenantId, appId);
    if (!app) throw errors.directory.dirAppNotFoundForSp({ appId });
    if (app.has_sp) throw errors.directory.dirSpExists({ appId });
    await db.updateTable('directory_apps').set({ has_sp: 1, object_id: newUuid() }).where('app_id', '=', app.app_id).execute();
    return (await appByAppId(db, dr.principal.tenantId, appId))!;
  });
  dr.reply.header('location', `${dr.ctx.origin()}/v1.0/servicePrincipals/${row.object_id}`);
  return sendOne(dr, 201, 'servicePrincipals', renderPrincipal(row), 'servicePrincipal');
}

/** `GET /servicePrincipals/{id}` (also a built-in resource principal). */
export async function getPrincipal(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, applicationPermissions, 'read');
  const builtIn = resourcePrincipal(id);
  if (builtIn && builtIn.id === id.toLowerCase()) return sendOne(dr, 200, 'servicePrincipals', renderResourcePrincipal(builtIn, dr.principal.tenantId), 'servicePrincipal');
  return sendOne(dr, 200, 'servicePrincipals', renderPrincipal(await requirePrincipal(dr, id)), 'servicePrincipal');
}

/** `DELETE /servicePrincipals/{id}`: 204; the application stays, without tokens until a principal is created again. */
export async function deletePrincipal(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, applicationPermissions, 'write');
  if (resourcePrincipal(id)) throw errors.directory.dirResourceReadOnly({ id });
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requirePrincipal(dr, id, db);
    if (r.application_id === null) {
      // A managed identity has no application object: the principal is all there is.
      await dropAppDependents(db, r.app_id, r.object_id);
      await db.deleteFrom('directory_apps').where('app_id', '=', r.app_id).execute();
      return;
    }
    await db.deleteFrom('app_role_grants').where('app_id', '=', r.app_id).execute();
    await db.deleteFrom('refresh_tokens').where('app_id', '=', r.app_id).execute();
    await db.deleteFrom('directory_group_members').where('member_id', '=', r.object_id).execute();
    await db.updateTable('directory_apps').set({ has_sp: 0 }).where('app_id', '=', r.app_id).execute();
  });
  return send(dr, 204);
}

/** `GET /servicePrincipals/{id}/appRoleAssignments` (the client's grants) or `…/appRoleAssignedTo` (a resource's). */
export async function listAssignments(dr: DirRequest, id: string, direction: 'to' | 'of'): Promise<unknown> {
  allow(dr, assignmentPermissions, 'read');
  const builtIn = resourcePrincipal(id);
  let items: Record<string, unknown>[];
  if (builtIn && builtIn.id === id.toLowerCase()) {
    const grants = direction === 'of' ? await grantsOnAudience(dr.ctx.store.db, dr.principal.tenantId, builtIn.family) : [];
    items = grants.flatMap((g) => renderAssignment(g, { id: g.object_id, displayName: g.display_name }));
  } else {
    const sp = await requirePrincipal(dr, id);
    const grants = direction === 'to' ? await grantsOfApp(dr.ctx.store.db, sp.app_id) : [];
    items = grants.flatMap((g) => renderAssignment(g, { id: sp.object_id, displayName: sp.display_name }));
  }
  return sendPage(dr, direction === 'to' ? `servicePrincipals('${id}')/appRoleAssignments` : `servicePrincipals('${id}')/appRoleAssignedTo`, items, 'appRoleAssignment', undefined);
}

/**
 * `POST …/appRoleAssignments` (path: the client) or `…/appRoleAssignedTo` (path: the resource)
 * `{principalId, resourceId, appRoleId}`: 201 with the assignment.
 * @throws ApiError 400 for an unknown principal, resource or role, 409 when already granted
 */
export async function createAssignment(dr: DirRequest, id: string, direction: 'to' | 'of'): Promise<unknown> {
  allow(dr, assignmentPermissions, 'write');
  const b = objectBody(dr);
  for (const k of ['principalId', 'resourceId', 'appRoleId'] as const) {
    if (b[k] === undefined) throw errors.directory.dirValueRequired({ property: k, resource: 'AppRoleAssignment' });
    if (typeof b[k] !== 'string' || !isUuid(b[k] as string)) throw errors.directory.dirInvalidValue({ property: k, resource: 'AppRoleAssignment' });
  }
  const principalId = (b.principalId as string).toLowerCase();
  const resourceId = (b.resourceId as string).toLowerCase();
  if (direction === 'to' && principalId !== id.toLowerCase()) throw errors.directory.dirPrincipalMismatch({ principalId });
  if (direction === 'of' && resourceId !== id.toLowerCase()) throw errors.directory.dirAppRoleNotFound({ resourceId });
  const resource = resourcePrincipal(resourceId);
  const role = resource?.id === resourceId ? resource.appRoles.find((a) => a.id === (b.appRoleId as string).toLowerCase()) : undefined;
  if (direction === 'to') await requirePrincipal(dr, id);
  if (!resource || !role) throw errors.directory.dirAppRoleNotFound({ resourceId });
  const out = await directoryWrite(dr.ctx, async (db) => {
    const sp = await requirePrincipal(dr, principalId, db);
    const exists = await db.selectFrom('app_role_grants').select('role').where('app_id', '=', sp.app_id).where('audience', '=', resource.family).where('role', '=', role.value).executeTakeFirst();
    if (exists) throw errors.directory.dirAppRoleExists();
    await db.insertInto('app_role_grants').values({ app_id: sp.app_id, audience: resource.family, role: role.value }).execute();
    return renderAssignment({ app_id: sp.app_id, audience: resource.family, role: role.value }, { id: sp.object_id, displayName: sp.display_name })[0]!;
  }).catch((e) => {
    throw isUniqueViolation(e) ? errors.directory.dirAppRoleExists() : e;
  });
  return sendOne(dr, 201, `servicePrincipals('${id}')/appRoleAssignments`, out, 'appRoleAssignment');
}

/** `DELETE …/appRoleAssignments/{assignmentId}` or `…/appRoleAssignedTo/{assignmentId}`: 204. @throws ApiError 404 */
export async function deleteAssignment(dr: DirRequest, id: string, assignment: string, direction: 'to' | 'of'): Promise<unknown> {
  allow(dr, assignmentPermissions, 'write');
  await directoryWrite(dr.ctx, async (db) => {
    const builtIn = resourcePrincipal(id);
    const grants =
      builtIn && builtIn.id === id.toLowerCase() && direction === 'of'
        ? await grantsOnAudience(db, dr.principal.tenantId, builtIn.family)
        : direction === 'to'
          ? await grantsOfApp(db, (await requirePrincipal(dr, id, db)).app_id)
          : [];
    const g = grants.find((x) => assignmentId(x.app_id, x.audience, x.role) === assignment);
    if (!g) throw errors.directory.dirNotFound({ id: assignment });
    await db.deleteFrom('app_role_grants').where('app_id', '=', g.app_id).where('audience', '=', g.audience).where('role', '=', g.role).execute();
  });
  return send(dr, 204);
}
