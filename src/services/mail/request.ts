/**
 * The mail request (reference mail.md §2, §5, §8, §9): what every mail handler gets
 * ({@link MailRequest}) and the helpers they share — authentication with the mail family's
 * 401s, the mailbox owner of a path, permission checks per method, input that no mail store
 * can hold, `Prefer`, `$top` / `$skip` paging with next links, `@odata.context` and the JSON
 * reply. Used by the route table (`routes.ts`), the handlers and the subscription routes
 * (mailsync); it imports neither.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors, type ApiError } from '../../core/errors/index.ts';
import { AuthFailure, authenticate } from '../../core/auth.ts';
import { absoluteUrl } from '../../core/paging.ts';
import type { Principal } from '../../core/identity/identity.ts';
import type { DirectoryUser } from '../../core/identity/directory.ts';
import { nulPath } from '../../core/input.ts';
import type { Mailbox } from './store.ts';
import { opt } from './query.ts';
import { keySegment, requestPathRules, splitPath } from './paths.ts';

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
  /** The mailbox's version, asked for before the caller was checked (`kept.ts` `mailboxVersionAhead`); used when it is this request's mailbox. */
  versionAhead?: { tenantId: string; mailboxId: string; version: string | undefined | Promise<string | undefined> };
  /**
   * Whether this mailbox was asked for this URL lately (`kept.ts` `askedBefore`), when already
   * asked (a list or delta of `/me`): its answer is kept only then.
   */
  askedBefore?: boolean;
}

/** What a method needs: read, write or send (reference mail §9). */
export type Level = 'read' | 'write' | 'send';
const scopesFor: Record<Level, string[]> = {
  read: ['Mail.ReadBasic', 'Mail.Read', 'Mail.ReadWrite', 'Mail.ReadBasic.All'],
  write: ['Mail.ReadWrite'],
  send: ['Mail.Send'],
};

/**
 * Case-insensitive equality of a path segment with an ASCII name `b` (undefined matches nothing).
 * Lengths are compared first: no segment that lower-cases to an ASCII name has another length.
 */
export const eq = (a: string | undefined, b: string): boolean => a !== undefined && a.length === b.length && a.toLowerCase() === b.toLowerCase();

/**
 * Checks the caller's delegated scopes or application roles for a method.
 * @throws ApiError 403 `ErrorAccessDenied`
 */
export function need(mr: MailRequest, level: Level): void {
  const granted = mr.principal.kind === 'user' ? mr.principal.scopes : mr.principal.roles;
  if (!scopesFor[level].some((s) => granted.includes(s))) throw errors.mail.accessDenied();
}

/** The mail family's 401 for a token problem (reference mail §8.2), with the Bearer challenge. */
export function authError(e: AuthFailure): ApiError {
  return e.reason === 'missing'
    ? errors.mail.tokenMissing()
    : e.reason === 'expired'
      ? errors.mail.tokenExpired()
      : e.reason === 'audience'
        ? errors.mail.tokenAudience()
        : e.reason === 'invalid_signature'
          ? errors.mail.tokenSignature()
          : errors.mail.tokenMalformed();
}

/**
 * The caller of a mail route (messages, folders, subscriptions): a bearer token for the mail
 * audience.
 * @throws ApiError 401 `InvalidAuthenticationToken` (with the Bearer challenge for a token problem)
 */
export async function mailPrincipal(ctx: AppContext, req: FastifyRequest): Promise<Principal> {
  let principal: Principal;
  try {
    principal = await authenticate(req, ctx.identity, 'mail');
  } catch (e) {
    if (e instanceof AuthFailure) throw authError(e);
    throw e;
  }
  if (principal.audience !== 'mail') throw errors.mail.wrongAudience();
  return principal;
}

/**
 * The directory user whose mailbox a path names: `me` (delegated tokens only) or a user id /
 * userPrincipalName of the caller's tenant; a delegated token reaches only its own user.
 * @throws ApiError 400 `BadRequest` (`/me` with an app token), 404 `ErrorInvalidUser`, 403 `ErrorAccessDenied`
 */
export async function mailboxOwner(ctx: AppContext, principal: Principal, who: 'me' | { idOrUpn: string }): Promise<DirectoryUser> {
  let userId: string;
  if (who === 'me') {
    if (principal.kind !== 'user') throw errors.mail.meNeedsUser();
    userId = principal.objectId;
  } else userId = who.idOrUpn;
  const user = await ctx.identity.directory.findUser(userId);
  if (!user || user.tenantId !== principal.tenantId) throw errors.mail.invalidUser({ user: userId });
  if (principal.kind === 'user' && user.id !== principal.objectId) throw errors.mail.accessDenied();
  return user;
}

/**
 * Splits a request path into segments with the mail area's one splitter ({@link splitPath}):
 * key syntax (`users('a@b')`, `mailFolders('Inbox')`, `messages('…')`) expands to name + key,
 * `delta()` to `delta`. @throws ApiError 400 `BadRequest` for invalid percent-encoding
 */
export function pathSegments(path: string): string[] {
  return splitPath(path, requestPathRules);
}

/** Reads `Prefer` (body content type, immutable ids, page size) into the request. */
export function parsePrefer(mr: Pick<MailRequest, 'immutable' | 'bodyType' | 'bodyTypeToken' | 'maxPageSize'>, header: string | string[] | undefined): void {
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
  if (segs.some((s) => s.includes('\u0000'))) throw errors.mail.nulInUrl();
  const seen = new Set<string>();
  for (const [k, v] of q) {
    if (k.includes('\u0000') || v.includes('\u0000')) throw errors.mail.nulInQuery();
    const key = k.toLowerCase();
    if (!key.startsWith('$')) continue;
    if (seen.has(key)) throw errors.mail.duplicateQueryOption({ option: k });
    seen.add(key);
  }
  if (nulPath(body) !== undefined) throw errors.mail.nulInBody();
}

/** The `destinationId` (or `DestinationId`) of a copy / move body. @throws ApiError 400 */
export function destinationId(body: unknown): string {
  const o = (body ?? {}) as Record<string, unknown>;
  const v = o.destinationId ?? o.DestinationId;
  if (typeof v !== 'string' || v === '') throw errors.mail.destinationRequired();
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
  return mr.reply.header('content-type', jsonContentType).send(JSON.stringify(body));
}

/** The content type of the mail family's JSON answers. */
const jsonContentType = 'application/json; odata.metadata=minimal; odata.streaming=true; IEEE754Compatible=false; charset=utf-8';

/** Sends a JSON text made by the caller (spliced from cached message texts: `rendered.ts`) like {@link send}. */
export function sendJson(mr: MailRequest, status: number, text: string | Buffer): unknown {
  return mr.reply.code(status).header('content-type', jsonContentType).send(text);
}

/** Largest `$skip` accepted (a 32-bit offset; larger values would overflow the databases' OFFSET). */
const maxSkip = 2147483647;

/** `$top` / `$skip` / page size of a collection. @throws ApiError 400 */
export function paging(mr: MailRequest): { pageSize: number; skip: number } {
  const top = opt(mr.q, 'top');
  const skip = opt(mr.q, 'skip');
  let pageSize = mr.maxPageSize ?? 10;
  if (top !== undefined) {
    if (!/^\d+$/.test(top) || Number(top) < 1 || Number(top) > 1000) throw errors.mail.invalidTop({ value: top });
    pageSize = Number(top);
  }
  if (skip !== undefined && (!/^\d+$/.test(skip) || Number(skip) > maxSkip)) throw errors.mail.invalidSkip({ value: skip, max: maxSkip });
  return { pageSize, skip: skip === undefined ? 0 : Number(skip) };
}

/** The next link of an offset-paged collection: the same query with `$skip` advanced. */
export function nextLink(mr: MailRequest, skip: number): string {
  const params: Record<string, string> = {};
  for (const [k, v] of mr.q) if (k.toLowerCase() !== '$skip') params[k] = v;
  params.$skip = String(skip);
  return absoluteUrl(mr.ctx.origin(), mr.path, params);
}
