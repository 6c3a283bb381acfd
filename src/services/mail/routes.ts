/**
 * The route table of the mail API (reference mail.md §2, §4–§6, §8–§10): `/{v1.0|beta}/me/...`
 * and `/{v1.0|beta}/users/{id | userPrincipalName}/...`, with folders by id, well-known name or
 * key syntax (`mailFolders('Inbox')`), nested `childFolders`, and action names with or without
 * the `vendor.graph.` qualifier. One handler opens the request (authenticates, checks the
 * input, resolves the mailbox, throttles per app and mailbox; `request.ts`), then
 * {@link dispatch} maps the path and method to a handler (`handlers.ts`,
 * `folder-handlers.ts`). Errors render in the mail envelope.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { knownPrincipal } from '../../core/auth.ts';
import { openCachedMailbox, getFolder, type FolderRow, hiddenFromMailboxList } from './store.ts';
import * as msg from './handlers.ts';
import * as lists from './lists.ts';
import { copyOrMoveFolder, folderChildren, folderItem } from './folder-handlers.ts';
import { keySegment } from './paths.ts';
import { checkRequestInput, eq, mailboxOwner, mailPrincipal, need, parsePrefer, pathSegments, sendJson, type MailRequest } from './request.ts';
import { askedBefore, keptMailBytes, mailboxVersionAhead } from './kept.ts';
import { isPostgres } from '../../store/db.ts';
import { getMessageInTurn, messageAnswer, messageForWrite } from './message-read.ts';

async function handle(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const raw = req.raw.url ?? req.url;
  const qi = raw.indexOf('?');
  const path = qi < 0 ? raw : raw.slice(0, qi);
  const q = new URLSearchParams(qi < 0 ? '' : raw.slice(qi + 1));
  const segs = pathSegments(path);
  // A write of the mailbox answers once every live instance applied it (PostgreSQL; `core/kept-versions.ts`).
  if (req.method !== 'GET' && req.method !== 'HEAD') ctx.cache.markRequest(req.raw);
  const version = segs[0]!.toLowerCase() === 'beta' ? 'beta' : 'v1.0';
  // The routes match `/{version}/me…` and `/{version}/users…` (so that key syntax `users('…')` reaches here too).
  if (segs.length < 3 || !(eq(segs[1], 'me') || eq(segs[1], 'users'))) throw errors.mail.segmentNotFound({ segment: segs[Math.min(segs.length - 1, 1)] ?? '' });
  // A token verified before: no promise (issue 9); else the full check with its errors.
  const known = knownPrincipal(req, ctx.identity, 'mail');
  const principal = known !== undefined && known.audience === 'mail' ? known : await mailPrincipal(ctx, req);
  checkRequestInput(segs, q, req.body);
  const me = eq(segs[1], 'me');
  const rest = segs.slice(me ? 2 : 3);
  const s = ctx.config.settings;
  const count = (userId: string) => ctx.rateLimiter.hit(ctx.rateLimiter.bucket('mail', principal.tenantId, principal.appId, userId), s.mailRequestsPerWindow, s.mailWindowSeconds);
  // `/me` names the caller's own mailbox (the only one a delegated token reaches): its rate-limit
  // count and (for a read) its mailbox version are asked for now, so that on PostgreSQL they go in one statement
  // with the cache-version read the owner's look-up waits for (`tick-batch.ts`). Their answers
  // are used only after the checks below, in the same order as for any other path.
  const ahead = me && principal.kind === 'user' ? count(principal.objectId) : undefined;
  if (ahead instanceof Promise) ahead.catch(() => undefined);
  // A message by id on a live instance or the embedded store needs no mailbox version (`message-read.ts`).
  const byIdUnversioned = rest.length === 2 && eq(rest[0], 'messages') && !q.has('$expand') && (ctx.cache.live || !isPostgres(ctx.store.db));
  // A list or delta is kept (and needs the version) only when asked before (`kept.ts` `askedBefore`).
  const last = rest.at(-1);
  const sighted = ahead && req.method === 'GET' && (eq(last, 'messages') || eq(last, 'delta')) ? askedBefore(principal.tenantId, principal.objectId, raw) : undefined;
  const versionAhead = ahead && req.method === 'GET' && !byIdUnversioned && sighted !== false ? mailboxVersionAhead(ctx.store.db, ctx.cache, principal.tenantId, principal.objectId) : undefined;
  const user = await mailboxOwner(ctx, principal, me ? 'me' : { idOrUpn: segs[2]! });
  const userSegment = me ? 'me' : keySegment('users', user.id);

  const hit = ahead ?? count(user.id);
  const rl = hit instanceof Promise ? await hit : hit;
  if (!rl.allowed) throw errors.mail.throttled({}, { headers: { 'Retry-After': String(rl.retryAfterSeconds) } });

  const mb = await openCachedMailbox(ctx.store.db, ctx.cache, { tenantId: user.tenantId, id: user.id, mail: user.mail, displayName: user.displayName }, req.raw);
  const mr: MailRequest = { ctx, req, reply, principal, mb, version, userSegment, q, path, immutable: false, body: req.body, versionAhead, askedBefore: sighted };
  parsePrefer(mr, req.headers.prefer);
  if (mr.bodyTypeToken) reply.header('Preference-Applied', mr.bodyTypeToken);
  return dispatch(mr, req.method.toUpperCase(), rest);
}

/**
 * The route table below the mailbox: `messages…`, `sendMail`, `mailFolders[/{id}[/childFolders/{id}]…][/childFolders | /messages… | /copy | /move]`.
 * @throws ApiError 400 `BadRequest` for a segment that names nothing, 405 for a method the resource does not answer
 */
async function dispatch(mr: MailRequest, method: string, rest: string[]): Promise<unknown> {
  const db = mr.ctx.store.db;
  const [head, ...tail] = rest;
  if (eq(head, 'messages')) return messagesCollection(mr, method, tail, undefined);
  if (eq(head, 'sendMail')) {
    if (method !== 'POST' || tail.length) throw errors.mail.methodNotAllowedHere({ method });
    need(mr, 'send');
    return msg.sendMail(mr);
  }
  if (eq(head, 'mailFolders')) {
    if (tail.length === 0) {
      const root = await getFolder(db, mr.mb, 'msgfolderroot');
      return folderChildren(mr, method, root);
    }
    let i = 1;
    while (eq(tail[i], 'childFolders') && tail[i + 1] !== undefined) i += 2;
    if (method === 'GET' && i === tail.length - 1 && eq(tail[i], 'messages') && lists.withoutExpand(mr)) {
      // A page of a folder's messages: kept per mailbox version with its folder look-ups
      // (folder writes change the version too; `kept.ts`), in the order of the path below.
      const text = await keptMailBytes(mr, 'list', async () => {
        // A well-known folder by name: its id is the mailbox's (they cannot be deleted or moved), no folder read.
        const wellKnown = i === 1 ? mr.mb.wellKnown.get(tail[0]!.toLowerCase()) : undefined;
        const folder = wellKnown !== undefined ? { id: wellKnown } : await folderOfPath(mr, tail, i);
        need(mr, 'read');
        return lists.pageBytes(mr, folder, []);
      });
      need(mr, 'read');
      return sendJson(mr, 200, text);
    }
    const folder = await folderOfPath(mr, tail, i);
    const more = tail.slice(i);
    if (more.length === 0) return folderItem(mr, method, folder);
    if (eq(more[0], 'childFolders') && more.length === 1) return folderChildren(mr, method, folder);
    if (eq(more[0], 'messages')) return messagesCollection(mr, method, more.slice(1), folder);
    if ((eq(more[0], 'copy') || eq(more[0], 'move')) && more.length === 1) return copyOrMoveFolder(mr, method, folder, eq(more[0], 'copy') ? 'copy' : 'move');
    throw errors.mail.segmentNotFound({ segment: more[0] ?? '' });
  }
  throw errors.mail.segmentNotFound({ segment: head ?? '' });
}

/** The folder named by `tail[0]` and the `childFolders/{id}` pairs up to `end`. @throws ApiError 404 `ErrorFolderNotFound` (also a child under another parent) */
async function folderOfPath(mr: MailRequest, tail: string[], end: number): Promise<FolderRow> {
  const db = mr.ctx.store.db;
  let folder = await getFolder(db, mr.mb, tail[0]!);
  for (let i = 1; i < end; i += 2) {
    const child = await getFolder(db, mr.mb, tail[i + 1]!);
    if (child.parentId !== folder.id) throw errors.mail.folderNotFound();
    folder = child;
  }
  return folder;
}

async function messagesCollection(mr: MailRequest, method: string, tail: string[], folder: FolderRow | undefined): Promise<unknown> {
  if (tail.length === 0) {
    if (method === 'GET') {
      need(mr, 'read');
      const exclude = folder ? [] : hiddenFromMailboxList.map((n) => mr.mb.wellKnown.get(n)!);
      return lists.listMessages(mr, folder, exclude);
    }
    if (method === 'POST') {
      need(mr, 'write');
      return msg.createMessage(mr, folder ?? (await getFolder(mr.ctx.store.db, mr.mb, 'drafts')));
    }
    throw errors.mail.methodNotAllowedHere({ method });
  }
  if (eq(tail[0], '$count') && tail.length === 1) {
    if (method !== 'GET') throw errors.mail.methodNotAllowedHere({ method });
    need(mr, 'read');
    const exclude = folder ? [] : hiddenFromMailboxList.map((n) => mr.mb.wellKnown.get(n)!);
    return lists.countOnly(mr, folder, exclude);
  }
  if (eq(tail[0], 'delta') && tail.length === 1) {
    if (method !== 'GET') throw errors.mail.methodNotAllowedHere({ method });
    need(mr, 'read');
    if (!folder) throw errors.mail.deltaNeedsFolder();
    return lists.delta(mr, folder);
  }
  if (method === 'GET' && tail.length === 1 && lists.withoutExpand(mr)) {
    // The answer kept per message version (`message-read.ts`: a client reading many different
    // messages, or one message again and again). SQLite: known by the mailbox version (a prepared
    // read) while it does not move, else by a read of the change key. A live PostgreSQL
    // instance knows the message's version without a statement. A PostgreSQL instance that is
    // not live keeps texts per mailbox version and request (the version comes in the turn's one
    // statement; the message would be a round trip of its own). Each answers only a message that
    // was found and checked, so the 404 and 400 come first as below.
    const id = tail[0]!;
    const bytes = isPostgres(mr.ctx.store.db) && !mr.ctx.cache.live ? await keptMailBytes(mr, 'message', () => messageAnswer(mr, id)) : await messageAnswer(mr, id);
    need(mr, 'read');
    return sendJson(mr, 200, bytes);
  }
  // A PATCH of a message read before needs no read of its row on a live PostgreSQL instance (`message-read.ts`).
  const m = method === 'PATCH' && tail.length === 1 ? await messageForWrite(mr, tail[0]!) : await getMessageInTurn(mr.ctx.store.db, mr.mb, tail[0]!);
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
