/**
 * Subscriptions to message change notifications (reference mail.md §7.1, §7.2): the JSON
 * rendering of the stored record (`store.ts`), the checks of a creation or renewal body, the resource path
 * parser and the validation handshake with the receiver.
 */
import { errors } from '../../core/errors/index.ts';
import { nowMs } from '../../core/clock.ts';
import { newUuid } from '../../core/ids.ts';
import { OutboundRefused, type OutboundGuard } from '../../core/outbound.ts';
import { baseQuery } from '../mail/query.ts';
import { splitPath, subscriptionResourceRules } from '../mail/paths.ts';
import type { Subscription } from './store.ts';

/** Mail error for a subscription body that does not fit (reference mail §7.1 "Bad payload"). */
export const badPayload = () => errors.mail.subscriptionBadPayload();
/** Subscription not found (reference mail §8.2 internal code list: 404 `ErrorSubscriptionNotFound`). */
export const subscriptionNotFound = (id: string) => errors.mail.subscriptionNotFound({ id });
/** Access denied (reference mail §8.2). */
export const accessDenied = () => errors.mail.accessDenied();

/** The subscription resource as the API returns it (reference mail §7.1 response fields, in that order). */
export function renderSubscription(s: Subscription): Record<string, unknown> {
  return {
    id: s.id,
    resource: s.resource,
    applicationId: s.appId,
    changeType: s.changeTypes.join(','),
    clientState: s.clientState,
    notificationUrl: s.notificationUrl,
    notificationQueryOptions: null,
    lifecycleNotificationUrl: s.lifecycleUrl,
    expirationDateTime: s.expiration,
    creatorId: s.creatorId,
    includeResourceData: false,
    latestSupportedTlsVersion: s.tlsVersion,
    encryptionCertificate: null,
    encryptionCertificateId: null,
    notificationUrlAppId: s.notificationUrlAppId,
    notificationContentType: 'application/json',
  };
}

const creatable = new Set([
  'changeType',
  'notificationUrl',
  'resource',
  'expirationDateTime',
  'clientState',
  'lifecycleNotificationUrl',
  'latestSupportedTlsVersion',
  'includeResourceData',
  'encryptionCertificate',
  'encryptionCertificateId',
  'notificationUrlAppId',
  'notificationQueryOptions',
  'notificationContentType',
  'id',
  'applicationId',
  'creatorId',
]);
const tlsVersions = ['v1_0', 'v1_1', 'v1_2', 'v1_3'];
const changeTypeNames = ['created', 'updated', 'deleted'];

/** The checked fields of a creation body. */
export interface SubscriptionInput {
  changeTypes: string[];
  notificationUrl: string;
  lifecycleUrl: string | null;
  resource: string;
  expiration: string;
  clientState: string | null;
  tlsVersion: string;
  notificationUrlAppId: string | null;
}

function str(body: Record<string, unknown>, name: string, required: boolean): string | null {
  const v = body[name];
  if (v === undefined || v === null) {
    if (required) throw errors.mail.subscriptionPropertyRequired({ property: name });
    return null;
  }
  if (typeof v !== 'string') throw badPayload();
  checkText(name, v);
  return v;
}

/** Longest stored values (the columns of `mail_subscriptions`). */
const maxLength: Record<string, number> = { resource: 2048, notificationUrlAppId: 64, notificationUrl: 2048, lifecycleNotificationUrl: 2048 };

/**
 * Refuses a property value holding a NUL or other control character, or longer than its column.
 * @throws ApiError 400 `InvalidRequest` naming the property
 */
function checkText(name: string, v: string): void {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(v) && name !== 'clientState') throw errors.mail.subscriptionControlCharacters({ property: name });
  if (v.includes('\u0000')) throw errors.mail.subscriptionNulCharacters({ property: name });
  const max = maxLength[name];
  if (max !== undefined && v.length > max) throw errors.mail.subscriptionPropertyTooLong({ property: name, max });
}

/**
 * Checks a `changeType` value: a comma list of `created`, `updated`, `deleted`, each once.
 * @throws ApiError 400 `InvalidRequest`
 */
export function parseChangeTypes(text: string): string[] {
  const parts = text.split(',').map((p) => p.trim());
  const out: string[] = [];
  for (const p of parts) {
    const n = p.toLowerCase();
    if (!changeTypeNames.includes(n) || out.includes(n)) throw errors.mail.invalidChangeType({ changeType: text });
    out.push(n);
  }
  return out;
}

/**
 * Checks a notification or lifecycle URL: absolute `https://`, or `http://` to a loopback
 * receiver (127.0.0.1, ::1, localhost) for local development (issue 5). Returns it as given.
 * @throws ApiError 400 `InvalidRequest`
 */
export function checkReceiverUrl(name: string, text: string): string {
  checkText(name, text);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw errors.mail.receiverNotAbsolute({ property: name, url: text });
  }
  if (u.hash) throw errors.mail.receiverFragment({ property: name });
  if (u.protocol === 'https:') return text;
  const host = u.hostname.toLowerCase();
  if (u.protocol === 'http:' && (host === '127.0.0.1' || host === '[::1]' || host === 'localhost')) return text;
  throw errors.mail.receiverNotHttps({ property: name });
}

/**
 * Checks an `expirationDateTime`: a date-time in the future, at most `maxMinutes` ahead.
 * Returns it normalised to ISO 8601 UTC with milliseconds.
 * @throws ApiError 400 `InvalidRequest` (not a date-time, in the past), 400 `ExtensionError` (beyond the maximum lifetime)
 */
export function checkExpiration(text: string, maxMinutes: number): string {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw errors.mail.expirationInvalid({ value: text });
  const now = nowMs();
  if (ms <= now) throw errors.mail.expirationPast();
  if (ms > now + maxMinutes * 60_000) throw errors.mail.expirationTooFar({ max: maxMinutes });
  return new Date(ms).toISOString();
}

/**
 * Checks a creation body (reference mail §7.1).
 * @throws ApiError 400 `InvalidRequest` / `ExtensionError` for each broken rule
 */
export function parseCreateBody(body: unknown, maxMinutes: number): SubscriptionInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badPayload();
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (!k.startsWith('@odata.') && !creatable.has(k)) throw badPayload();
  const changeType = str(b, 'changeType', true)!;
  const notificationUrl = checkReceiverUrl('notificationUrl', str(b, 'notificationUrl', true)!);
  const resource = str(b, 'resource', true)!;
  const expiration = checkExpiration(str(b, 'expirationDateTime', true)!, maxMinutes);
  const lifecycle = str(b, 'lifecycleNotificationUrl', false);
  const clientState = str(b, 'clientState', false);
  if (clientState !== null && clientState.length > 128) throw errors.mail.clientStateTooLong();
  const tls = str(b, 'latestSupportedTlsVersion', false) ?? 'v1_2';
  if (!tlsVersions.includes(tls)) throw errors.mail.tlsVersionInvalid({ version: tls, versions: tlsVersions.join(', ') });
  if (b.includeResourceData !== undefined && b.includeResourceData !== null && typeof b.includeResourceData !== 'boolean') throw badPayload();
  if (b.includeResourceData === true) throw errors.mail.resourceDataUnsupported();
  const ct = str(b, 'notificationContentType', false);
  if (ct !== null && ct.toLowerCase() !== 'application/json') throw errors.mail.contentTypeUnsupported({ contentType: ct });
  return {
    changeTypes: parseChangeTypes(changeType),
    notificationUrl,
    lifecycleUrl: lifecycle === null ? null : checkReceiverUrl('lifecycleNotificationUrl', lifecycle),
    resource,
    expiration,
    clientState,
    tlsVersion: tls,
    notificationUrlAppId: str(b, 'notificationUrlAppId', false),
  };
}

/** A parsed message resource path: whose mailbox and which folder chain (empty: the whole mailbox). */
export interface ResourcePath {
  /** `me`, or the user id / userPrincipalName after `users/`. */
  user: 'me' | { idOrUpn: string };
  /** Folder id or well-known name, then child folder ids. */
  folders: string[];
  /** The `$filter` query option, if any. */
  filter: string | null;
}

/**
 * Parses a message resource (reference mail §7.1): `me/messages`, `users/{id|upn}/messages`,
 * `…/mailFolders/{id|name}[/childFolders/{id}]…/messages`, with key syntax
 * (`mailFolders('Inbox')`), an optional leading `/` and an optional `?$filter=…`.
 * @throws ApiError 400 `InvalidRequest` for any other resource or a query part
 */
export function parseResource(resource: string): ResourcePath {
  const unsupported = () => errors.mail.resourceUnsupported({ resource });
  const qi = resource.indexOf('?');
  let filter: string | null = null;
  if (qi >= 0) {
    for (const [k, v] of new URLSearchParams(resource.slice(qi + 1).replace(/\+/g, '%2B'))) {
      if (k.toLowerCase() === '$filter' && filter !== null) throw errors.mail.resourceFilterTwice();
      if (k.toLowerCase() === '$filter' && v.trim() === '') throw errors.mail.resourceFilterEmpty();
      if (k.toLowerCase() !== '$filter') throw errors.mail.resourceQueryOption({ option: k });
      if (v.includes('\u0000')) throw errors.mail.resourceFilterNul();
      filter = v;
    }
  }
  const segs = splitPath(qi >= 0 ? resource.slice(0, qi) : resource, subscriptionResourceRules);
  const eq = (i: number, name: string) => segs[i] !== undefined && segs[i]!.toLowerCase() === name.toLowerCase();
  let i: number;
  let user: ResourcePath['user'];
  if (eq(0, 'me')) {
    user = 'me';
    i = 1;
  } else if (eq(0, 'users') && segs[1]) {
    user = { idOrUpn: segs[1] };
    i = 2;
  } else throw unsupported();
  const folders: string[] = [];
  if (eq(i, 'mailFolders')) {
    if (!segs[i + 1]) throw unsupported();
    folders.push(segs[i + 1]!);
    i += 2;
    while (eq(i, 'childFolders') && segs[i + 1]) {
      folders.push(segs[i + 1]!);
      i += 2;
    }
  }
  if (!eq(i, 'messages') || segs.length !== i + 1) throw unsupported();
  return { user, folders, filter };
}

/** The verdict of a validation handshake. */
export type ValidationResult = 'ok' | 'failed' | 'timeout';

/**
 * The validation handshake (reference mail §7.2): `POST {url}?validationToken={token}` with
 * `Content-Type: text/plain; charset=utf-8`; the receiver must answer within `timeoutMs` with
 * 200, a `text/plain` body equal to the URL-decoded token. Any query string of `url` is kept.
 * The call goes through `guard` (never to Stratus itself, no redirects, no credentials); a
 * refused target is a failed handshake.
 */
export async function validateReceiver(guard: OutboundGuard, url: string, timeoutMs: number): Promise<ValidationResult> {
  const token = `Validation: Testing client application reachability for subscription Request-Id: ${newUuid()}`;
  const target = `${url}${url.includes('?') ? '&' : '?'}validationToken=${encodeURIComponent(token)}`;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await guard.post(target, { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '', signal, maxBytes: Buffer.byteLength(token) + 1024 });
    if (res.body === undefined) return 'failed';
    const type = String(res.headers['content-type'] ?? '').toLowerCase();
    return res.status === 200 && type.startsWith('text/plain') && res.body === token ? 'ok' : 'failed';
  } catch (e) {
    if (e instanceof OutboundRefused) return 'failed';
    return signal.aborted ? 'timeout' : 'failed';
  }
}

/**
 * Runs the handshake on every URL and turns a failure into the reference's error.
 * @throws ApiError 400 `InvalidRequest` "Subscription validation request timed out." or 400 `ValidationError`
 */
export async function validateReceivers(guard: OutboundGuard, urls: string[], timeoutMs: number): Promise<void> {
  const results = await Promise.all([...new Set(urls)].map((u) => validateReceiver(guard, u, timeoutMs)));
  if (results.includes('timeout')) throw errors.mail.validationTimedOut();
  if (results.includes('failed')) throw errors.mail.validationFailed();
}

/**
 * The message-list query of a filtered subscription: the watched folder (or mailbox) narrowed by the
 * `$filter`, compiled like the list's `$filter`.
 * @throws ApiError 400 for a filter the message list refuses
 */
export function filterQuery(db: Parameters<typeof baseQuery>[0], t: { tenantId: string; mailboxId: string; folderId: string | null; exclude: string[] }, filter: string) {
  return baseQuery(db, { tenantId: t.tenantId, mailboxId: t.mailboxId, ...(t.folderId !== null ? { folderId: t.folderId } : {}), excludeFolderIds: t.exclude, q: new URLSearchParams([['$filter', filter]]) });
}
