/**
 * Application registrations (issue 27 item 6; the public v1.0 `application` resource): create
 * (a new `appId`), get by object id, list with `$filter` (`appId eq '…'`, displayName), PATCH
 * (`displayName`, `web.redirectUris`, `publicClient.redirectUris`, `spa.redirectUris`,
 * `keyCredentials`, …), DELETE, `addPassword`, `removePassword`. The identity provider reads
 * the same rows: a new redirect URI, secret or certificate works on the next token request; a
 * deleted application obtains no more tokens and its refresh tokens are revoked with it.
 */
import type { FieldMap } from '../../core/odata/index.ts';
import { errors } from '../../core/errors/index.ts';
import { newUuid } from '../../core/ids.ts';
import { nowIso } from '../../core/clock.ts';
import { fromJson } from '../../store/db.ts';
import { allow, applicationPermissions, boolProp, objectBody, onlyProps, send, sendOne, stringProp, type DirRequest } from './request.ts';
import { appByApplicationId, applicationRows, directoryWrite, dropAppDependents, type AppRow, type Db } from './store.ts';
import { listCollection } from './list.ts';
import { addPassword, removePassword, renderKeyCredentials, renderPasswordCredentials, setKeyCredentials } from './credentials.ts';

const applicationFields: FieldMap = {
  id: { column: 'application_id', type: 'string', caseInsensitive: true },
  appId: { column: 'app_id', type: 'string', caseInsensitive: true },
  displayName: { column: 'display_name', type: 'string' },
};
const platforms = ['web', 'publicClient', 'spa'] as const;
const writable = ['displayName', 'description', 'notes', 'signInAudience', 'identifierUris', 'isFallbackPublicClient', 'keyCredentials', 'requiredResourceAccess', 'tags', ...platforms];
const readOnly = ['id', 'appId', 'createdDateTime', 'deletedDateTime', 'passwordCredentials', 'publisherDomain'];

/** The redirect URIs of an application by platform (rows made before platforms were kept: by kind). */
export function redirectsOf(r: AppRow): Record<(typeof platforms)[number], string[]> {
  const p = fromJson<Record<string, unknown>>(r.props) ?? {};
  const all = fromJson<string[]>(r.redirect_uris) ?? [];
  const kept = p.redirects as Record<string, string[]> | undefined;
  if (kept) return { web: kept.web ?? [], publicClient: kept.publicClient ?? [], spa: kept.spa ?? [] };
  return r.kind === 'PublicClient' ? { web: [], publicClient: all, spa: [] } : { web: all, publicClient: [], spa: [] };
}

/** The v1.0 `application` resource of a stored row. */
export async function renderApplication(db: Db, r: AppRow): Promise<Record<string, unknown>> {
  const p = fromJson<Record<string, unknown>>(r.props) ?? {};
  const redirects = redirectsOf(r);
  return {
    id: r.application_id,
    deletedDateTime: null,
    appId: r.app_id,
    createdDateTime: r.created_at ?? null,
    description: p.description ?? null,
    displayName: r.display_name,
    identifierUris: Array.isArray(p.identifierUris) ? p.identifierUris : [],
    isFallbackPublicClient: r.kind === 'PublicClient',
    notes: p.notes ?? null,
    publisherDomain: null,
    signInAudience: p.signInAudience ?? null,
    tags: Array.isArray(p.tags) ? p.tags : [],
    keyCredentials: await renderKeyCredentials(db, r.app_id),
    passwordCredentials: await renderPasswordCredentials(db, r.app_id),
    requiredResourceAccess: Array.isArray(p.requiredResourceAccess) ? p.requiredResourceAccess : [],
    publicClient: { redirectUris: redirects.publicClient },
    spa: { redirectUris: redirects.spa },
    web: { homePageUrl: null, logoutUrl: null, redirectUris: redirects.web, implicitGrantSettings: { enableAccessTokenIssuance: false, enableIdTokenIssuance: false } },
  };
}

async function requireApplication(dr: DirRequest, id: string, db: Db = dr.ctx.store.db): Promise<AppRow> {
  const r = await appByApplicationId(db, dr.principal.tenantId, id);
  if (!r) throw errors.directory.dirNotFound({ id });
  return r;
}

/** A platform's `{ redirectUris: [...] }`: absolute URIs without fragments, at most 256 of 256 characters. @throws ApiError 400 */
function redirectList(value: unknown, platform: string): string[] {
  if (value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) throw errors.directory.dirInvalidValue({ property: platform, resource: 'Application' });
  const list = (value as Record<string, unknown>).redirectUris;
  if (list === undefined) return [];
  if (!Array.isArray(list) || list.length > 256) throw errors.directory.dirInvalidValue({ property: `${platform}.redirectUris`, resource: 'Application' });
  return list.map((u) => {
    let url: URL | undefined;
    try {
      url = typeof u === 'string' && u.length <= 256 ? new URL(u) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || url.hash || !/^(https?:|[a-z][a-z0-9+.-]*:)/i.test(url.protocol)) throw errors.directory.dirInvalidValue({ property: `${platform}.redirectUris`, resource: 'Application' });
    return u as string;
  });
}

/**
 * Applies a create or PATCH body to the stored columns: display name, kind (public client),
 * redirect URIs by platform and their union (what the identity provider checks), other
 * properties in `props`. @throws ApiError 400
 */
function applyBody(b: Record<string, unknown>, row: AppRow | undefined, set: Record<string, string | number>): void {
  const p = fromJson<Record<string, unknown>>(row?.props ?? '{}') ?? {};
  const displayName = stringProp(b, 'displayName', 'Application');
  if (displayName !== undefined) set.display_name = displayName;
  const fallback = boolProp(b, 'isFallbackPublicClient', 'Application');
  if (fallback !== undefined) set.kind = fallback ? 'PublicClient' : 'ServicePrincipal';
  const redirects = row ? redirectsOf(row) : { web: [], publicClient: [], spa: [] };
  let redirectsChanged = !row;
  for (const platform of platforms) {
    if (b[platform] === undefined) continue;
    redirects[platform] = redirectList(b[platform], platform);
    redirectsChanged = true;
  }
  if (redirectsChanged) {
    p.redirects = redirects;
    set.redirect_uris = JSON.stringify([...new Set([...redirects.web, ...redirects.publicClient, ...redirects.spa])]);
  }
  for (const k of ['description', 'notes', 'signInAudience'] as const) {
    if (b[k] === undefined) continue;
    if (b[k] !== null && (typeof b[k] !== 'string' || (b[k] as string).length > 1024)) throw errors.directory.dirInvalidValue({ property: k, resource: 'Application' });
    p[k] = b[k];
  }
  for (const k of ['identifierUris', 'tags', 'requiredResourceAccess'] as const) {
    if (b[k] === undefined) continue;
    if (!Array.isArray(b[k]) || JSON.stringify(b[k]).length > 65536) throw errors.directory.dirInvalidValue({ property: k, resource: 'Application' });
    p[k] = b[k];
  }
  set.props = JSON.stringify(p);
}

/** `GET /applications` (`$filter=appId eq '…'`, displayName, id). */
export async function listApplications(dr: DirRequest): Promise<unknown> {
  const { db } = dr.ctx.store;
  return listCollection(dr, {
    permissions: applicationPermissions,
    fields: applicationFields,
    resource: 'Application',
    type: 'application',
    fragment: 'applications',
    rows: (filter, w) => applicationRows(db, dr.principal.tenantId, filter, w),
    render: (r) => renderApplication(db, r),
  });
}

/** `POST /applications`: 201 with a new `appId`; the service principal is created separately (`POST /servicePrincipals`). */
export async function createApplication(dr: DirRequest): Promise<unknown> {
  allow(dr, applicationPermissions, 'write');
  const b = objectBody(dr);
  onlyProps(b, writable, readOnly);
  if (b.displayName === undefined) throw errors.directory.dirValueRequired({ property: 'displayName', resource: 'Application' });
  const set: Record<string, string | number> = {};
  applyBody(b, undefined, set);
  const id = newUuid();
  const appId = newUuid();
  const row = await directoryWrite(dr.ctx, async (db) => {
    await db
      .insertInto('directory_apps')
      .values({
        app_id: appId,
        object_id: newUuid(),
        tenant_id: dr.principal.tenantId,
        display_name: String(set.display_name),
        kind: String(set.kind ?? 'ServicePrincipal'),
        secret_hash: null,
        redirect_uris: String(set.redirect_uris ?? '[]'),
        application_id: id,
        has_sp: 0,
        credentials: 0,
        created_at: nowIso(),
        props: String(set.props ?? '{}'),
      })
      .execute();
    if (b.keyCredentials !== undefined) await setKeyCredentials(db, appId, b.keyCredentials);
    return requireApplication(dr, id, db);
  });
  dr.reply.header('location', `${dr.ctx.origin()}/v1.0/applications/${id}`);
  return sendOne(dr, 201, 'applications', await renderApplication(dr.ctx.store.db, row), 'application');
}

/** `GET /applications/{id}`. */
export async function getApplication(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, applicationPermissions, 'read');
  return sendOne(dr, 200, 'applications', await renderApplication(dr.ctx.store.db, await requireApplication(dr, id)), 'application');
}

/** `PATCH /applications/{id}`: 204. */
export async function patchApplication(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, applicationPermissions, 'write');
  const b = objectBody(dr);
  onlyProps(b, writable, readOnly);
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requireApplication(dr, id, db);
    const set: Record<string, string | number> = {};
    applyBody(b, r, set);
    await db.updateTable('directory_apps').set(set).where('app_id', '=', r.app_id).execute();
    if (b.keyCredentials !== undefined) await setKeyCredentials(db, r.app_id, b.keyCredentials);
  });
  return send(dr, 204);
}

/** `DELETE /applications/{id}`: 204, with its service principal, credentials, grants and refresh tokens. */
export async function deleteApplication(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, applicationPermissions, 'write');
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requireApplication(dr, id, db);
    await dropAppDependents(db, r.app_id, r.object_id);
    await db.deleteFrom('auth_codes').where('app_id', '=', r.app_id).execute();
    await db.deleteFrom('device_codes').where('app_id', '=', r.app_id).execute();
    await db.deleteFrom('directory_apps').where('app_id', '=', r.app_id).execute();
  });
  return send(dr, 204);
}

/** `POST /applications/{id}/addPassword`: 200 with the `passwordCredential` and its `secretText` (shown once). */
export async function addApplicationPassword(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, applicationPermissions, 'write');
  const b = dr.body === undefined || dr.body === null || dr.body === '' ? {} : objectBody(dr);
  const out = await directoryWrite(dr.ctx, async (db) => addPassword(db, (await requireApplication(dr, id, db)).app_id, b));
  return send(dr, 200, { '@odata.context': `${dr.ctx.origin()}/v1.0/$metadata#vendor.graph.passwordCredential`, ...out });
}

/** `POST /applications/{id}/removePassword {keyId}`: 204; the secret is refused from now on and the app's refresh tokens are revoked. */
export async function removeApplicationPassword(dr: DirRequest, id: string): Promise<unknown> {
  allow(dr, applicationPermissions, 'write');
  const b = objectBody(dr);
  await directoryWrite(dr.ctx, async (db) => {
    const r = await requireApplication(dr, id, db);
    await removePassword(db, r.app_id, b);
    await db.deleteFrom('refresh_tokens').where('app_id', '=', r.app_id).execute();
  });
  return send(dr, 204);
}
