/**
 * The directory request (issue 27 item 6): what every directory handler shares — the caller
 * (a mail-audience bearer token, the mail family's 401s), the permission checks (delegated
 * scopes plus a directory role for writes, or application roles), the OData query options
 * (`$filter`, `$select`, `$top`, `$count`, `$skiptoken`), `@odata.context` and next links on the
 * server's own `/v1.0/$metadata`, and the JSON reply.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Expression, SqlBool } from 'kysely';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { compileFilter, compileOrderBy, ODataError, parseFilter, parseOrderBy, type CompiledOrderBy, type FieldMap } from '../../core/odata/index.ts';
import { mailPrincipal } from '../mail/request.ts';

/** What every directory handler gets. */
export interface DirRequest {
  ctx: AppContext;
  req: FastifyRequest;
  reply: FastifyReply;
  principal: Principal;
  /** Path segments after `/v1.0` (percent-decoded, case kept). */
  segs: string[];
  q: URLSearchParams;
  /** The request path (for next links). */
  path: string;
  body: unknown;
}

/** The permissions of a kind of directory object: the scopes/roles that read it and those that write it. */
export interface PermissionSet {
  read: string[];
  write: string[];
}

/** Users: `User.Read.All` / `User.ReadWrite.All` (and the directory-wide permissions). */
export const userPermissions: PermissionSet = {
  read: ['User.Read.All', 'User.ReadBasic.All', 'User.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'],
  write: ['User.ReadWrite.All', 'Directory.ReadWrite.All'],
};
/** Groups and their members. */
export const groupPermissions: PermissionSet = {
  read: ['Group.Read.All', 'Group.ReadWrite.All', 'GroupMember.Read.All', 'GroupMember.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'],
  write: ['Group.ReadWrite.All', 'Directory.ReadWrite.All'],
};
/** Applications and service principals. */
export const applicationPermissions: PermissionSet = {
  read: ['Application.Read.All', 'Application.ReadWrite.All', 'Directory.Read.All', 'Directory.ReadWrite.All'],
  write: ['Application.ReadWrite.All', 'Directory.ReadWrite.All'],
};
/** App role assignments (application permissions granted to service principals). */
export const assignmentPermissions: PermissionSet = {
  read: applicationPermissions.read,
  write: ['AppRoleAssignment.ReadWrite.All', 'Application.ReadWrite.All', 'Directory.ReadWrite.All'],
};

/**
 * Checks that the caller may read or write: an application token needs one of the roles; a
 * delegated token one of the scopes and, for a write, a directory role (the tenant
 * administrator holds it).
 * @throws ApiError 403 `Authorization_RequestDenied`
 */
export function allow(dr: DirRequest, set: PermissionSet, level: 'read' | 'write'): void {
  const p = dr.principal;
  const wanted = set[level];
  const granted = p.kind === 'user' ? p.scopes : p.roles;
  if (!wanted.some((s) => granted.includes(s))) throw errors.directory.dirAccessDenied();
  if (level === 'write' && p.kind === 'user' && !p.isTenantAdmin) throw errors.directory.dirAccessDenied();
}

/** The caller of a directory route (mail-audience token; the mail family's 401s). */
export async function directoryPrincipal(ctx: AppContext, req: FastifyRequest): Promise<Principal> {
  return mailPrincipal(ctx, req);
}

/** The content type of the family's JSON answers. */
const jsonContentType = 'application/json; odata.metadata=minimal; odata.streaming=true; IEEE754Compatible=false; charset=utf-8';

/** Sends a JSON body (or nothing, for 204) with a status. */
export function send(dr: DirRequest, status: number, body?: unknown): unknown {
  dr.reply.code(status);
  if (body === undefined) return dr.reply.send();
  return dr.reply.header('content-type', jsonContentType).send(JSON.stringify(body));
}

/** `@odata.context` on the server's own metadata: `{origin}/v1.0/$metadata#{fragment}`. */
export function contextUrl(dr: DirRequest, fragment: string): string {
  return `${dr.ctx.origin()}/v1.0/$metadata#${fragment}`;
}

/** A value of the query (`$top` or `top`), once; undefined when absent. */
export function option(q: URLSearchParams, name: string): string | undefined {
  return q.get(`$${name}`) ?? q.get(name) ?? undefined;
}

/** Runs an OData parse-and-compile step; its `ODataError` becomes the directory's 400. */
function odata<T>(text: string, resource: string, step: () => T): T {
  try {
    return step();
  } catch (e) {
    if (!(e instanceof ODataError)) throw e;
    if (e.kind === 'unknown_property' || e.kind === 'unsupported') throw errors.directory.dirUnsupportedQuery({ property: e.property ?? text, resource });
    throw errors.directory.dirBadFilter({ reason: e.message });
  }
}

/** The compiled `$filter` over `fields`, or undefined without one. @throws ApiError 400 `BadRequest` / `Request_UnsupportedQuery` */
export function filterOf(dr: DirRequest, fields: FieldMap, resource: string): Expression<SqlBool> | undefined {
  const text = option(dr.q, 'filter');
  return text === undefined ? undefined : odata(text, resource, () => compileFilter(parseFilter(text), fields));
}

/** Where a page continues (`$skiptoken`): after an id (id order), or after `skip` rows (`$orderby`). */
export type PageState = { after: string } | { skip: number };

/** `$top` (1–999, default 100) and where the page starts (`$skiptoken`). @throws ApiError 400 */
export function pageOf(dr: DirRequest): { top: number; after?: string; skip?: number } {
  const top = option(dr.q, 'top');
  if (top !== undefined && (!/^\d{1,3}$/.test(top) || Number(top) < 1)) throw errors.directory.dirBadTop({ value: top });
  const token = option(dr.q, 'skiptoken');
  let state: { after?: unknown; skip?: unknown } | undefined = {};
  if (token !== undefined) {
    state = decodeToken<{ after?: unknown; skip?: unknown }>(token);
    const ok = state && (typeof state.after === 'string' || (typeof state.skip === 'number' && Number.isSafeInteger(state.skip) && state.skip >= 0 && state.skip <= 1_000_000));
    if (!ok) throw errors.directory.dirBadSkipToken({ value: token.slice(0, 100) });
  }
  return { top: top === undefined ? 100 : Number(top), after: state?.after as string | undefined, skip: state?.skip as number | undefined };
}

/** The compiled `$orderby` over `fields`, or undefined without one. @throws ApiError 400 */
export function orderOf(dr: DirRequest, fields: FieldMap, resource: string): CompiledOrderBy[] | undefined {
  const text = option(dr.q, 'orderby');
  return text === undefined ? undefined : odata(text, resource, () => compileOrderBy(parseOrderBy(text), fields));
}

/** Whether `$count=true` was asked (needs `ConsistencyLevel: eventual`). @throws ApiError 400 */
export function countAsked(dr: DirRequest): boolean {
  const c = option(dr.q, 'count');
  if (c === undefined || c.toLowerCase() === 'false') return false;
  if (c.toLowerCase() !== 'true') throw errors.directory.dirBadFilter({ reason: `invalid $count value '${c}'.` });
  if (String(dr.req.headers.consistencylevel ?? '').toLowerCase() !== 'eventual') throw errors.directory.dirCountNeedsHeader();
  return true;
}

/** `$select` applied to one object: only the named properties (plus `@odata.type` when present). @throws ApiError 400 for an unknown property */
export function selectOf(dr: DirRequest, type: string): ((o: Record<string, unknown>) => Record<string, unknown>) | undefined {
  const text = option(dr.q, 'select');
  if (text === undefined || text.trim() === '' || text.trim() === '*') return undefined;
  const names = text.split(',').map((s) => s.trim()).filter(Boolean);
  return (o) => {
    const out: Record<string, unknown> = {};
    if (o['@odata.type'] !== undefined) out['@odata.type'] = o['@odata.type'];
    for (const n of names) {
      const key = Object.keys(o).find((k) => k.toLowerCase() === n.toLowerCase());
      if (key === undefined) throw errors.directory.dirBadSelect({ property: n, type });
      out[key] = o[key];
    }
    return out;
  };
}

/**
 * Sends a collection page: `value` (each item through `$select`), `@odata.count` when asked,
 * `@odata.nextLink` when `next` is set (the same query with `$skiptoken`).
 */
export function sendPage(dr: DirRequest, fragment: string, items: Record<string, unknown>[], type: string, next: PageState | undefined, count?: number): unknown {
  const select = selectOf(dr, type);
  const body: Record<string, unknown> = { '@odata.context': contextUrl(dr, select ? `${fragment}(${option(dr.q, 'select')})` : fragment) };
  if (count !== undefined) body['@odata.count'] = count;
  body.value = select ? items.map(select) : items;
  if (next !== undefined) {
    const query: Record<string, string> = {};
    for (const [k, v] of dr.q) if (k.toLowerCase() !== '$skiptoken') query[k] = v;
    query.$skiptoken = encodeToken(next);
    body['@odata.nextLink'] = absoluteUrl(dr.ctx.origin(), dr.path, query);
  }
  return send(dr, 200, body);
}

/** Sends one object with its `@odata.context` (`$select` applied). */
export function sendOne(dr: DirRequest, status: number, fragment: string, item: Record<string, unknown>, type: string): unknown {
  const select = selectOf(dr, type);
  return send(dr, status, { '@odata.context': contextUrl(dr, `${fragment}/$entity`), ...(select ? select(item) : item) });
}

/** The JSON object body of a write. @throws ApiError 400 `BadRequest` when it is not an object */
export function objectBody(dr: DirRequest): Record<string, unknown> {
  const b = dr.body;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) throw errors.mail.invalidBody({ message: 'The request body must be a JSON object.' });
  return b as Record<string, unknown>;
}

/**
 * A string property of a body: undefined when absent; the trimmed value otherwise.
 * @throws ApiError 400 `Request_BadRequest` when not a string, empty, or longer than `max`
 */
export function stringProp(body: Record<string, unknown>, name: string, resource: string, max = 256): string | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.trim() === '' || v.length > max) throw errors.directory.dirInvalidValue({ property: name, resource });
  return v.trim();
}

/** A boolean property of a body (undefined when absent). @throws ApiError 400 when not a boolean */
export function boolProp(body: Record<string, unknown>, name: string, resource: string): boolean | undefined {
  const v = body[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'boolean') throw errors.directory.dirInvalidValue({ property: name, resource });
  return v;
}

/**
 * Refuses body properties a write may not name: read-only ones and unknown ones.
 * @throws ApiError 400 `Request_BadRequest`
 */
export function onlyProps(body: Record<string, unknown>, writable: readonly string[], readOnly: readonly string[]): void {
  for (const k of Object.keys(body)) {
    if (k.startsWith('@odata.')) continue;
    if (readOnly.includes(k)) throw errors.directory.dirReadOnlyProperty({ property: k });
    if (!writable.includes(k)) throw errors.directory.dirUnknownProperty({ property: k });
  }
}
