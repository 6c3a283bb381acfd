/**
 * What the message change-notification subscription operations mean (reference mail.md
 * §7.1, §9): who may subscribe to which resource, the per-mailbox limit, the validation
 * handshake, renewal and reauthorization. Errors are `errors.mail`'s; the queries are in
 * `store.ts`, the routes in `routes.ts`.
 */
import { signal } from '../../core/cache-bus.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { newUuid, isUuid } from '../../core/ids.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { latestMailChangeSeq } from '../mail/changes.ts';
import { openMailbox, getFolder, hiddenFromMailboxList } from '../mail/store.ts';
import { mailboxOwner, mailPrincipal } from '../mail/request.ts';
import { accessDenied, badPayload, checkExpiration, checkReceiverUrl, filterQuery, parseCreateBody, parseResource, renderSubscription, subscriptionNotFound, validateReceivers } from './subscriptions.ts';
import {
  countActiveSubscriptions,
  deleteSubscriptionRows,
  findSubscription,
  insertSubscription,
  listSubscriptions,
  resetReauthorization,
  retargetChangeNotifications,
  updateSubscriptionRow,
  type Subscription,
} from './store.ts';

/** Active subscriptions per mailbox across all apps (reference mail §7.1 "Count"). */
export const maxSubscriptionsPerMailbox = 1000;
const pageSize = 100;

/** Delegated scopes and application roles that may subscribe to messages (reference mail §7.1 "Scope", §9). */
const readScopes = ['Mail.ReadBasic', 'Mail.Read', 'Mail.ReadWrite'];
const readRoles = ['Mail.ReadBasic', 'Mail.ReadBasic.All', 'Mail.Read', 'Mail.ReadWrite'];

/** Who may see a subscription: the creating app, and for a delegated token only the user's own. */
function owner(p: Principal): { tenantId: string; appId: string; creatorId?: string } {
  return { tenantId: p.tenantId, appId: p.appId, ...(p.kind === 'user' ? { creatorId: p.objectId } : {}) };
}

function version(req: FastifyRequest): string {
  return req.url.toLowerCase().startsWith('/beta/') ? 'beta' : 'v1.0';
}

function contextUrl(ctx: AppContext, req: FastifyRequest, suffix: string): string {
  return `${ctx.origin()}/${version(req)}/$metadata#${suffix}`;
}

async function load(ctx: AppContext, p: Principal, id: string): Promise<Subscription> {
  if (!isUuid(id)) throw subscriptionNotFound(id);
  const s = await findSubscription(ctx.store.db, owner(p), id.toLowerCase());
  if (!s || s.expiration <= nowIso()) throw subscriptionNotFound(id);
  return s;
}

/**
 * Resolves the mailbox and folder of a resource for the caller (reference mail §7.1 "Scope", §9).
 * @throws ApiError 400 (`/me` with an app token, bad resource), 403 `ErrorAccessDenied`, 404 `ErrorInvalidUser` / `ErrorFolderNotFound`
 */
async function resolveResource(ctx: AppContext, p: Principal, resource: string): Promise<{ mailboxId: string; folderId: string | null; exclude: string[]; filter: string | null }> {
  const granted = p.kind === 'user' ? p.scopes.some((s) => readScopes.includes(s)) : p.roles.some((r) => readRoles.includes(r));
  const path = parseResource(resource);
  // Without read access nothing about the directory is revealed (not even whether the user exists).
  if (!granted) throw accessDenied();
  // Delegated tokens subscribe only to the signed-in user's own mailbox (reference mail §7.1).
  const user = await mailboxOwner(ctx, p, path.user);
  const db = ctx.store.db;
  const mb = await openMailbox(db, { tenantId: user.tenantId, id: user.id, mail: user.mail, displayName: user.displayName }, () => ctx.cache.markWritten());
  let out: { mailboxId: string; folderId: string | null; exclude: string[]; filter: string | null };
  if (path.folders.length === 0) out = { mailboxId: user.id, folderId: null, exclude: hiddenFromMailboxList.map((n) => mb.wellKnown.get(n)!).filter(Boolean), filter: path.filter };
  else {
    let folder = await getFolder(db, mb, path.folders[0]!);
    for (const child of path.folders.slice(1)) {
      const f = await getFolder(db, mb, child);
      if (f.parentId !== folder.id) throw errors.mail.folderNotFound();
      folder = f;
    }
    out = { mailboxId: user.id, folderId: folder.id, exclude: [], filter: path.filter };
  }
  // A $filter must compile as it does on the message list (same errors).
  if (out.filter !== null) filterQuery(ctx.store.db, { tenantId: user.tenantId, ...out }, out.filter);
  return out;
}

/**
 * `POST /subscriptions` (reference mail §7.1): checks the body and the resource, the per-mailbox
 * limit, runs the validation handshake with the receivers, stores the subscription; 201 with `Location`.
 * @throws ApiError 400 (body, resource, `$filter`), 403, 404, 403 past the per-mailbox limit, 400 when the receiver's validation fails or times out
 */
export async function create(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const p = await mailPrincipal(ctx, req);
  const s = ctx.config.settings;
  const input = parseCreateBody(req.body, s.mailSubscriptionMaxMinutes);
  const target = await resolveResource(ctx, p, input.resource);
  const db = ctx.store.db;
  if ((await countActiveSubscriptions(db, p.tenantId, target.mailboxId)) >= maxSubscriptionsPerMailbox) throw errors.mail.subscriptionLimit({ max: maxSubscriptionsPerMailbox });
  await validateReceivers(ctx.outbound, [input.notificationUrl, ...(input.lifecycleUrl ? [input.lifecycleUrl] : [])], s.mailSubscriptionValidationTimeoutMs);
  const prefer = String(req.headers.prefer ?? '');
  const sub: Subscription = {
    id: newUuid(),
    tenantId: p.tenantId,
    mailboxId: target.mailboxId,
    appId: p.appId,
    creatorId: p.objectId,
    resource: input.resource,
    folderId: target.folderId,
    excludeFolders: target.exclude,
    filter: target.filter,
    changeTypes: input.changeTypes,
    notificationUrl: input.notificationUrl,
    lifecycleUrl: input.lifecycleUrl,
    clientState: input.clientState,
    expiration: input.expiration,
    tlsVersion: input.tlsVersion,
    notificationUrlAppId: input.notificationUrlAppId,
    immutable: /IdType\s*=\s*"?ImmutableId"?/i.test(prefer),
    startSeq: await latestMailChangeSeq(db),
    reauthSent: false,
    createdAt: nowIso(),
  };
  await insertSubscription(db, sub);
  await signal(db, 'mail');
  reply.code(201).header('Location', `${ctx.origin()}/${version(req)}/subscriptions/${sub.id}`);
  return { '@odata.context': contextUrl(ctx, req, 'subscriptions/$entity'), ...renderSubscription(sub) };
}

/** `GET /subscriptions`: the caller's unexpired subscriptions, by id, with `@odata.nextLink`.
 * @throws ApiError 400 for a `$skiptoken` that does not decode */
export async function list(ctx: AppContext, req: FastifyRequest): Promise<unknown> {
  const p = await mailPrincipal(ctx, req);
  const o = owner(p);
  const q = req.query as Record<string, string | undefined>;
  let after = '';
  if (q.$skiptoken !== undefined) {
    const t = decodeToken<{ a?: unknown }>(q.$skiptoken);
    if (!t || typeof t.a !== 'string' || !isUuid(t.a)) throw errors.mail.invalidSkipToken();
    after = t.a;
  }
  const rows = await listSubscriptions(ctx.store.db, o, after, pageSize + 1);
  const subs = rows.slice(0, pageSize);
  const body: Record<string, unknown> = { '@odata.context': contextUrl(ctx, req, 'subscriptions'), value: subs.map(renderSubscription) };
  if (rows.length > pageSize) body['@odata.nextLink'] = absoluteUrl(ctx.origin(), `/${version(req)}/subscriptions`, { $skiptoken: encodeToken({ a: subs[subs.length - 1]!.id }) });
  return body;
}

/** `GET /subscriptions/{id}`.
 * @throws ApiError 404 `ErrorSubscriptionNotFound` */
export async function get(ctx: AppContext, req: FastifyRequest): Promise<unknown> {
  const p = await mailPrincipal(ctx, req);
  const s = await load(ctx, p, (req.params as { id: string }).id);
  return { '@odata.context': contextUrl(ctx, req, 'subscriptions/$entity'), ...renderSubscription(s) };
}

/**
 * `PATCH /subscriptions/{id}` (renewal, reference mail §7.1): a new `expirationDateTime` and/or
 * `notificationUrl` (validated again); queued change notifications follow the new receiver.
 * @throws ApiError 400 for another property or a bad value, 404 `ErrorSubscriptionNotFound`
 */
export async function update(ctx: AppContext, req: FastifyRequest): Promise<unknown> {
  const p = await mailPrincipal(ctx, req);
  const s = await load(ctx, p, (req.params as { id: string }).id);
  const body = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badPayload();
  const b = body as Record<string, unknown>;
  // Renewal needs the access creation needed (read scope or role, the mailbox still reachable).
  await resolveResource(ctx, p, s.resource);
  const changes: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(b)) {
    if (k.startsWith('@odata.')) continue;
    if (k === 'expirationDateTime') {
      if (typeof v !== 'string') throw badPayload();
      s.expiration = checkExpiration(v, ctx.config.settings.mailSubscriptionMaxMinutes);
      changes.expiration = s.expiration;
      changes.reauth_sent = 0;
    } else if (k === 'notificationUrl') {
      if (typeof v !== 'string') throw badPayload();
      s.notificationUrl = checkReceiverUrl('notificationUrl', v);
      changes.notification_url = s.notificationUrl;
    } else if (k === 'lifecycleNotificationUrl') {
      throw errors.mail.lifecycleUrlImmutable();
    } else throw errors.mail.subscriptionPropertyImmutable({ property: k });
  }
  if (changes.notification_url !== undefined) await validateReceivers(ctx.outbound, [s.notificationUrl], ctx.config.settings.mailSubscriptionValidationTimeoutMs);
  if (Object.keys(changes).length > 0) {
    await ctx.store.transaction(async (trx) => {
      if (!(await updateSubscriptionRow(trx, s.id, s.tenantId, changes))) throw subscriptionNotFound(s.id);
      await signal(trx, 'mail');
      if (changes.notification_url === undefined) return;
      // Queued notifications follow the subscription to its new receiver, due now (the old one's backoff does not apply).
      await retargetChangeNotifications(trx, s.id, s.notificationUrl);
    });
  }
  return { '@odata.context': contextUrl(ctx, req, 'subscriptions/$entity'), ...renderSubscription(s) };
}

/** `DELETE /subscriptions/{id}`: 204; queued change notifications go with it.
 * @throws ApiError 404 `ErrorSubscriptionNotFound` */
export async function remove(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const p = await mailPrincipal(ctx, req);
  const s = await load(ctx, p, (req.params as { id: string }).id);
  await ctx.store.transaction((trx) => deleteSubscriptionRows(trx, s.id, s.tenantId));
  reply.code(204);
  return reply.send();
}

/** `POST /subscriptions/{id}/reauthorize`: 204; a `reauthorizationRequired` notification may be sent again.
 * @throws ApiError 403, 404 */
export async function reauthorize(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const p = await mailPrincipal(ctx, req);
  const s = await load(ctx, p, (req.params as { id: string }).id);
  await resolveResource(ctx, p, s.resource);
  await resetReauthorization(ctx.store.db, s.id, s.tenantId);
  await signal(ctx.store.db, 'mail');
  reply.code(204);
  return reply.send();
}
