/**
 * Routes of the mail API (reference mail.md §2, §4–§6, §8–§10): `/{v1.0|beta}/me/...` and
 * `/{v1.0|beta}/users/{id | userPrincipalName}/...`, with folders by id, well-known name or
 * key syntax (`mailFolders('Inbox')`), nested `childFolders`, and action names with or without
 * the `vendor.graph.` qualifier. One handler parses the path and dispatches; it authenticates,
 * checks permissions per method (reference §9), throttles per app and mailbox and renders
 * errors in the mail envelope.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../core/errors/index.ts';
import { AuthFailure, authenticate } from '../../core/auth.ts';
import { absoluteUrl } from '../../core/paging.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { openMailbox, getFolder, type Mailbox, type FolderRow, hiddenFromMailboxList, listChildFolders, getMessage } from './store.ts';
import { renderFolders } from './folders.ts';
import * as folders from './folders.ts';
import * as msg from './handlers.ts';
import { opt } from './query.ts';
import { nulPath } from '../../core/input.ts';
import { keySegment, splitPath } from './paths.ts';

/** What every handler gets: the request, the caller, the mailbox and the parsed options. */
export interface MailRequest {
  ctx: AppContext;
  req: FastifyRequest;
  reply: FastifyReply;
  principal: Principal;
  mb: Mailbox;
  version: 'v1.0' | 'beta';
  /** `me` or `users('{id}')`, for links. */
  userSegment: string;
  q: URLSearchParams;
  /** The request path as received (for next links). */
  path: string;
  immutable: boolean;
  bodyType?: 'text' | 'html';
  /** The `…body-content-type` preference token as sent (echoed in `Preference-Applied`). */
  bodyTypeToken?: string;
  maxPageSize?: number;
  body: unknown;
}

type Level = 'read' | 'write' | 'send';
const scopesFor: Record<Level, string[]> = {
  read: ['Mail.ReadBasic', 'Mail.Read', 'Mail.ReadWrite', 'Mail.ReadBasic.All'],
  write: ['Mail.ReadWrite'],
  send: ['Mail.Send'],
};

/**
 * Checks the caller's delegated scopes or application roles for a method.
 * @throws ApiError 403 `ErrorAccessDenied`
 */
export function need(mr: MailRequest, level: Level): void {
  const granted = mr.principal.kind === 'user' ? mr.principal.scopes : mr.principal.roles;
  if (!scopesFor[level].some((s) => granted.includes(s))) throw new ApiError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
}

/** The mail family's 401 for a token problem (reference mail §8.2), with the Bearer challenge. */
export function authError(e: AuthFailure): ApiError {
  const msg =
    e.reason === 'missing'
      ? 'Access token is empty.'
      : e.reason === 'expired'
        ? 'Lifetime validation failed, the token is expired.'
        : e.reason === 'audience'
          ? 'Invalid audience.'
          : e.reason === 'invalid_signature'
            ? 'Signature validation failed.'
            : 'CompactToken parsing failed with error code: 80049217';
  return new ApiError(401, 'InvalidAuthenticationToken', msg, { headers: { 'WWW-Authenticate': 'Bearer realm="", error="invalid_token"' } });
}

/**
 * Splits a request path into segments with the mail area's one splitter ({@link splitPath}):
 * key syntax (`users('a@b')`, `mailFolders('Inbox')`, `messages('…')`) expands to name + key,
 * `delta()` to `delta`. @throws ApiError 400 `BadRequest` for invalid percent-encoding
 */
export function pathSegments(path: string): string[] {
  return splitPath(path, { code: 'BadRequest', what: 'path segment' });
}

function parsePrefer(mr: Pick<MailRequest, 'immutable' | 'bodyType' | 'bodyTypeToken' | 'maxPageSize'>, header: string | string[] | undefined): void {
  const text = Array.isArray(header) ? header.join(',') : header ?? '';
  const bt = /([\w-]+\.body-content-type)\s*=\s*"?(text|html)"?/i.exec(text);
  if (bt) {
    mr.bodyType = bt[2]!.toLowerCase() as 'text' | 'html';
    mr.bodyTypeToken = `${bt[1]}="${mr.bodyType}"`;
  }
  mr.immutable = /IdType\s*=\s*"?ImmutableId"?/i.test(text);
  const mp = /odata\.maxpagesize\s*=\s*(\d+)/i.exec(text);
  if (mp) mr.maxPageSize = Math.max(1, Math.min(1000, Number(mp[1])));
}

/**
 * Rejects input no mail store can hold or read unambiguously: a NUL character anywhere in the
 * path, the query or a JSON body (PostgreSQL text cannot store it; the core refuses bodies nested
 * deeper than 64 levels before they are parsed, with `RequestBodyRead`), and a system
 * query option (`$top`, `$filter`, …) given more than once (OData: each at most once).
 * @throws ApiError 400 `ErrorInvalidRequest` / `BadRequest`
 */
export function checkRequestInput(segs: string[], q: URLSearchParams, body: unknown): void {
  if (segs.some((s) => s.includes('\u0000'))) throw new ApiError(400, 'ErrorInvalidRequest', 'The request URL contains a NUL character.');
  const seen = new Set<string>();
  for (const [k, v] of q) {
    if (k.includes('\u0000') || v.includes('\u0000')) throw new ApiError(400, 'ErrorInvalidRequest', 'The query string contains a NUL character.');
    const key = k.toLowerCase();
    if (!key.startsWith('$')) continue;
    if (seen.has(key)) throw new ApiError(400, 'BadRequest', `Query option '${k}' was specified more than once, but it must be specified at most once.`);
    seen.add(key);
  }
  if (nulPath(body) !== undefined) throw new ApiError(400, 'ErrorInvalidRequest', 'The request body contains a NUL character, which a mail item cannot hold.');
}

async function handle(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const raw = req.raw.url ?? req.url;
  const qi = raw.indexOf('?');
  const path = qi < 0 ? raw : raw.slice(0, qi);
  const q = new URLSearchParams(qi < 0 ? '' : raw.slice(qi + 1));
  const segs = pathSegments(path);
  const version = segs[0]!.toLowerCase() === 'beta' ? 'beta' : 'v1.0';
  // The routes match `/{version}/me…` and `/{version}/users…` (so that key syntax `users('…')` reaches here too).
  if (segs.length < 3 || !(eq(segs[1], 'me') || eq(segs[1], 'users'))) throw badSegment(segs[Math.min(segs.length - 1, 1)]);
  let principal: Principal;
  try {
    principal = await authenticate(req, ctx.identity, 'mail');
  } catch (e) {
    if (e instanceof AuthFailure) throw authError(e);
    throw e;
  }
  if (principal.audience !== 'mail') throw new ApiError(401, 'InvalidAuthenticationToken', 'Invalid audience.');
  checkRequestInput(segs, q, req.body);
  let rest: string[];
  let userSegment: string;
  let userId: string;
  if (eq(segs[1], 'me')) {
    if (principal.kind !== 'user') throw new ApiError(400, 'BadRequest', '/me request is only valid with delegated authentication flow.');
    userId = principal.objectId;
    rest = segs.slice(2);
    userSegment = 'me';
  } else {
    userId = segs[2]!;
    rest = segs.slice(3);
    userSegment = '';
  }
  const user = await ctx.identity.directory.findUser(userId);
  if (!user || user.tenantId !== principal.tenantId) throw new ApiError(404, 'ErrorInvalidUser', `The requested user '${userId}' is invalid.`);
  if (principal.kind === 'user' && user.id !== principal.objectId) throw new ApiError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
  if (!userSegment) userSegment = keySegment('users', user.id);

  const s = ctx.config.settings;
  const rl = await ctx.rateLimiter.hit(`mail:${principal.tenantId}:${principal.appId}:${user.id}`, s.mailRequestsPerWindow, s.mailWindowSeconds);
  if (!rl.allowed) throw new ApiError(429, 'ApplicationThrottled', 'Application is over its MailboxConcurrency limit.', { headers: { 'Retry-After': String(rl.retryAfterSeconds) } });

  const mb = await openMailbox(ctx.store.db, { tenantId: user.tenantId, id: user.id, mail: user.mail, displayName: user.displayName });
  const mr: MailRequest = { ctx, req, reply, principal, mb, version, userSegment, q, path, immutable: false, body: req.body };
  parsePrefer(mr, req.headers.prefer);
  if (mr.bodyTypeToken) reply.header('Preference-Applied', mr.bodyTypeToken);
  return dispatch(mr, req.method.toUpperCase(), rest);
}

const badSegment = (s: string | undefined) => new ApiError(400, 'BadRequest', `Resource not found for the segment '${s ?? ''}'.`);
const badMethod = (method: string) => new ApiError(405, 'ErrorInvalidRequest', `The HTTP method '${method}' is not allowed for this resource.`);
const eq = (a: string | undefined, b: string) => a !== undefined && a.toLowerCase() === b.toLowerCase();

async function dispatch(mr: MailRequest, method: string, rest: string[]): Promise<unknown> {
  const db = mr.ctx.store.db;
  const [head, ...tail] = rest;
  if (eq(head, 'messages')) return messagesCollection(mr, method, tail, undefined);
  if (eq(head, 'sendMail')) {
    if (method !== 'POST' || tail.length) throw badMethod(method);
    need(mr, 'send');
    return msg.sendMail(mr);
  }
  if (eq(head, 'mailFolders')) {
    if (tail.length === 0) {
      const root = await getFolder(db, mr.mb, 'msgfolderroot');
      return folderChildren(mr, method, root);
    }
    let folder = await getFolder(db, mr.mb, tail[0]!);
    let i = 1;
    while (eq(tail[i], 'childFolders') && tail[i + 1] !== undefined) {
      const child = await getFolder(db, mr.mb, tail[i + 1]!);
      if (child.parentId !== folder.id) throw new ApiError(404, 'ErrorFolderNotFound', 'The specified folder could not be found in the store.');
      folder = child;
      i += 2;
    }
    const more = tail.slice(i);
    if (more.length === 0) return folderItem(mr, method, folder);
    if (eq(more[0], 'childFolders') && more.length === 1) return folderChildren(mr, method, folder);
    if (eq(more[0], 'messages')) return messagesCollection(mr, method, more.slice(1), folder);
    if ((eq(more[0], 'copy') || eq(more[0], 'move')) && more.length === 1) {
      if (method !== 'POST') throw badMethod(method);
      need(mr, 'write');
      const dest = await getFolder(db, mr.mb, destinationId(mr.body));
      const out = await mr.ctx.store.transaction((trx) => (eq(more[0], 'copy') ? folders.copyFolder(trx, mr.mb, folder, dest) : folders.moveFolder(trx, mr.mb, folder, dest)));
      return send(mr, 201, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [out]))[0] });
    }
    throw badSegment(more[0]);
  }
  throw badSegment(head);
}

/** The `destinationId` (or `DestinationId`) of a copy / move body. @throws ApiError 400 */
export function destinationId(body: unknown): string {
  const o = (body ?? {}) as Record<string, unknown>;
  const v = o.destinationId ?? o.DestinationId;
  if (typeof v !== 'string' || v === '') throw new ApiError(400, 'ErrorInvalidRequest', "The request needs a 'destinationId' (a folder id or well-known name).");
  return v;
}

/** `@odata.context` for this mailbox: `{origin}/{version}/$metadata#users('{id}')/{suffix}`. */
export function contextUrl(mr: MailRequest, suffix: string): string {
  return `${mr.ctx.origin()}/${mr.version}/$metadata#${keySegment('users', mr.mb.mailboxId)}/${suffix}`;
}

/** Sends a JSON body with a status. */
export function send(mr: MailRequest, status: number, body?: unknown): unknown {
  mr.reply.code(status);
  if (body === undefined) {
    mr.reply.removeHeader('content-type');
    return mr.reply.send();
  }
  return mr.reply.header('content-type', 'application/json; odata.metadata=minimal; odata.streaming=true; IEEE754Compatible=false; charset=utf-8').send(JSON.stringify(body));
}

/** Largest `$skip` accepted (a 32-bit offset; larger values would overflow the databases' OFFSET). */
const maxSkip = 2147483647;

/** `$top` / `$skip` / page size of a collection. @throws ApiError 400 */
export function paging(mr: MailRequest): { pageSize: number; skip: number } {
  const top = opt(mr.q, 'top');
  const skip = opt(mr.q, 'skip');
  let pageSize = mr.maxPageSize ?? 10;
  if (top !== undefined) {
    if (!/^\d+$/.test(top) || Number(top) < 1 || Number(top) > 1000) throw new ApiError(400, 'BadRequest', `Invalid value '${top}' for query parameter $top; it must be an integer from 1 to 1000.`);
    pageSize = Number(top);
  }
  if (skip !== undefined && (!/^\d+$/.test(skip) || Number(skip) > maxSkip)) throw new ApiError(400, 'BadRequest', `Invalid value '${skip}' for query parameter $skip; it must be an integer from 0 to ${maxSkip}.`);
  return { pageSize, skip: skip === undefined ? 0 : Number(skip) };
}

/** The next link of an offset-paged collection: the same query with `$skip` advanced. */
export function nextLink(mr: MailRequest, skip: number): string {
  const params: Record<string, string> = {};
  for (const [k, v] of mr.q) if (k.toLowerCase() !== '$skip') params[k] = v;
  params.$skip = String(skip);
  return absoluteUrl(mr.ctx.origin(), mr.path, params);
}

async function folderChildren(mr: MailRequest, method: string, parent: FolderRow): Promise<unknown> {
  const db = mr.ctx.store.db;
  if (method === 'GET') {
    need(mr, 'read');
    const { pageSize, skip } = paging(mr);
    const includeHidden = (mr.q.get('includeHiddenFolders') ?? '').toLowerCase() === 'true';
    const rows = await listChildFolders(db, mr.mb, parent.id, { includeHidden, top: pageSize + 1, skip });
    const body: Record<string, unknown> = { '@odata.context': contextUrl(mr, parent.wellKnown === 'msgfolderroot' ? 'mailFolders' : `${keySegment('mailFolders', parent.id)}/childFolders`), value: await renderFolders(db, mr.mb, rows.slice(0, pageSize)) };
    if (rows.length > pageSize) body['@odata.nextLink'] = nextLink(mr, skip + pageSize);
    return send(mr, 200, body);
  }
  if (method === 'POST') {
    need(mr, 'write');
    const f = await mr.ctx.store.transaction((trx) => folders.createFolder(trx, mr.mb, parent, mr.body));
    return send(mr, 201, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [f]))[0] });
  }
  throw badMethod(method);
}

async function folderItem(mr: MailRequest, method: string, folder: FolderRow): Promise<unknown> {
  const db = mr.ctx.store.db;
  if (method === 'GET') {
    need(mr, 'read');
    return send(mr, 200, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [folder]))[0] });
  }
  if (method === 'PATCH') {
    need(mr, 'write');
    const f = await folders.updateFolder(db, mr.mb, folder, mr.body);
    return send(mr, 200, { '@odata.context': contextUrl(mr, 'mailFolders/$entity'), ...(await renderFolders(db, mr.mb, [f]))[0] });
  }
  if (method === 'DELETE') {
    need(mr, 'write');
    await mr.ctx.store.transaction((trx) => folders.deleteFolder(trx, mr.mb, folder));
    return send(mr, 204);
  }
  throw badMethod(method);
}

async function messagesCollection(mr: MailRequest, method: string, tail: string[], folder: FolderRow | undefined): Promise<unknown> {
  if (tail.length === 0) {
    if (method === 'GET') {
      need(mr, 'read');
      const exclude = folder ? [] : hiddenFromMailboxList.map((n) => mr.mb.wellKnown.get(n)!);
      return msg.listMessages(mr, folder, exclude);
    }
    if (method === 'POST') {
      need(mr, 'write');
      return msg.createMessage(mr, folder ?? (await getFolder(mr.ctx.store.db, mr.mb, 'drafts')));
    }
    throw badMethod(method);
  }
  if (eq(tail[0], '$count') && tail.length === 1) {
    if (method !== 'GET') throw badMethod(method);
    need(mr, 'read');
    const exclude = folder ? [] : hiddenFromMailboxList.map((n) => mr.mb.wellKnown.get(n)!);
    return msg.countOnly(mr, folder, exclude);
  }
  if (eq(tail[0], 'delta') && tail.length === 1) {
    if (method !== 'GET') throw badMethod(method);
    need(mr, 'read');
    if (!folder) throw new ApiError(400, 'ErrorInvalidRequest', 'Delta of messages is available per folder: /mailFolders/{id}/messages/delta.');
    return msg.delta(mr, folder);
  }
  const m = await getMessage(mr.ctx.store.db, mr.mb, tail[0]!);
  return msg.messageItem(mr, method, m, tail.slice(1));
}

/** Registers the mail routes for both versions. */
export function registerMailRoutes(app: FastifyInstance, ctx: AppContext): void {
  for (const version of ['v1.0', 'beta']) {
    // `users*` (not `users/*`) so that key syntax `users('{id | upn}')/…` is served too (the router
    // is case-insensitive, so also the `Users/{id}/Messages/{id}` paths of change notifications).
    for (const url of [`/${version}/me*`, `/${version}/users*`]) {
      app.route({ method: ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'], url, config: { family: 'mail' } as any, handler: (req, reply) => handle(ctx, req, reply) as any });
    }
  }
}
