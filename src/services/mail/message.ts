/**
 * The message resource's document: input validation (create, PATCH, send), the rules of
 * spec mail §2.3 / §3 that live in the document (bodyPreview, enums, recipient cap, custom
 * headers, draft-only properties) and rendering with `$select` and
 * `Prefer: outlook.body-content-type` (reference mail.md §2.3, §2.4, §3, §5).
 */
import { ApiError } from '../../core/errors/index.ts';

/** `emailAddress` (reference §3). */
export interface EmailAddress {
  name: string;
  address: string;
}
/** `recipient` (reference §3). */
export interface Recipient {
  emailAddress: EmailAddress;
}
/** `itemBody`: `contentType` lower-case. */
export interface ItemBody {
  contentType: 'text' | 'html';
  content: string;
}
/** `followupFlag`. */
export interface FollowupFlag {
  flagStatus: 'notFlagged' | 'complete' | 'flagged';
  startDateTime?: { dateTime: string; timeZone: string };
  dueDateTime?: { dateTime: string; timeZone: string };
  completedDateTime?: { dateTime: string; timeZone: string };
}
/** `mention` (beta; only `mentioned`, `createdBy`, `createdDateTime` are set for messages). */
export interface Mention {
  id: string;
  mentioned: EmailAddress;
  createdBy?: EmailAddress;
  createdDateTime?: string;
}

/** The stored document of a message: everything not kept in a column of its own. */
export interface MessageDoc {
  subject: string;
  body: ItemBody;
  /** The part unique to this message (the comment of a reply), same content type as body. */
  uniqueBody: ItemBody;
  toRecipients: Recipient[];
  ccRecipients: Recipient[];
  bccRecipients: Recipient[];
  replyTo: Recipient[];
  from: Recipient | null;
  sender: Recipient | null;
  categories: string[];
  flag: FollowupFlag;
  importance: 'low' | 'normal' | 'high';
  inferenceClassification: 'focused' | 'other';
  internetMessageId: string;
  internetMessageHeaders: { name: string; value: string }[];
  isDeliveryReceiptRequested: boolean;
  isReadReceiptRequested: boolean;
  conversationId: string;
  conversationIndex: string;
  mentions: Mention[];
  unsubscribeData: string[];
  unsubscribeEnabled: boolean;
}

/** A stored message: columns plus its document. Times are ISO 8601 UTC with milliseconds. */
export interface MessageRecord {
  pk: number;
  id: string;
  immutableId: string;
  tenantId: string;
  mailboxId: string;
  folderId: string;
  createdAt: string;
  modifiedAt: string;
  receivedAt: string;
  sentAt: string | null;
  isRead: boolean;
  isDraft: boolean;
  hasAttachments: boolean;
  changeKey: string;
  doc: MessageDoc;
}

/** Maximum recipients in to + cc + bcc (spec mail §8). */
export const maxRecipients = 500;

const bad = (message: string, code = 'RequestBodyRead') => new ApiError(400, code, message);

/** An empty draft document. */
export function emptyDoc(): MessageDoc {
  return {
    subject: '',
    body: { contentType: 'text', content: '' },
    uniqueBody: { contentType: 'text', content: '' },
    toRecipients: [],
    ccRecipients: [],
    bccRecipients: [],
    replyTo: [],
    from: null,
    sender: null,
    categories: [],
    flag: { flagStatus: 'notFlagged' },
    importance: 'normal',
    inferenceClassification: 'focused',
    internetMessageId: '',
    internetMessageHeaders: [],
    isDeliveryReceiptRequested: false,
    isReadReceiptRequested: false,
    conversationId: '',
    conversationIndex: '',
    mentions: [],
    unsubscribeData: [],
    unsubscribeEnabled: false,
  };
}

// ---------------------------------------------------------------------------------------
// Bodies

const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Plain text of an HTML fragment: tags dropped, entities decoded, blocks turned into line breaks. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|li|tr|h[1-6])>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#\d+|#x[0-9a-f]+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
      return entities[e.toLowerCase()] ?? m;
    })
    .replace(/\r\n/g, '\n')
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n+/g, '\n')
    .trim();
}

function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Wraps HTML body content the way the service stores it (reference §2.3), scripts stripped. */
export function wrapHtml(content: string): string {
  const safe = content.replace(/<script[^>]*>[\s\S]*?<\/script>/gi, '');
  if (/^\s*<html/i.test(safe)) return safe;
  return `<html>\r\n<head>\r\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8">\r\n</head>\r\n<body>\r\n${safe}\r\n</body>\r\n</html>\r\n`;
}

/** Converts a body to the requested content type (`Prefer: outlook.body-content-type`). */
export function convertBody(body: ItemBody, to: 'text' | 'html' | undefined): ItemBody {
  if (!to || to === body.contentType) return body;
  if (to === 'text') return { contentType: 'text', content: htmlToText(body.content) };
  return { contentType: 'html', content: wrapHtml(escapeHtml(body.content).replace(/\r?\n/g, '<br>\r\n')) };
}

/** Text of a body (for previews and the full-text index). */
export function bodyText(body: ItemBody): string {
  return body.contentType === 'html' ? htmlToText(body.content) : body.content.replace(/\r\n/g, '\n').trim();
}

/** `bodyPreview`: the first 255 characters of the body as text, mentions included (spec mail §2.3, §8). */
export function bodyPreview(doc: MessageDoc): string {
  let text = bodyText(doc.body).replace(/\s+/g, ' ').trim();
  const names = doc.mentions.map((m) => '@' + (m.mentioned.name || m.mentioned.address)).filter((n) => !text.includes(n));
  if (names.length) text = (names.join(' ') + ' ' + text).trim();
  return [...text].slice(0, 255).join('');
}

// ---------------------------------------------------------------------------------------
// Input

/** Properties a client may write (create / PATCH); everything else is read-only or unknown. */
const writable = new Set([
  'subject', 'body', 'toRecipients', 'ccRecipients', 'bccRecipients', 'replyTo', 'from', 'sender', 'categories', 'flag', 'importance',
  'inferenceClassification', 'internetMessageId', 'internetMessageHeaders', 'isDeliveryReceiptRequested', 'isReadReceiptRequested', 'isRead',
  'attachments', 'extensions', 'singleValueExtendedProperties', 'multiValueExtendedProperties', 'mentions',
]);
/** Read-only properties a client may echo back; ignored on input. */
const readOnly = new Set([
  'id', '@odata.etag', '@odata.context', 'createdDateTime', 'lastModifiedDateTime', 'changeKey', 'receivedDateTime', 'sentDateTime', 'hasAttachments',
  'bodyPreview', 'uniqueBody', 'parentFolderId', 'conversationId', 'conversationIndex', 'isDraft', 'webLink', 'mentionsPreview', 'unsubscribeData', 'unsubscribeEnabled',
]);
/** Properties editable only while the message is a draft (reference §2.4). */
export const draftOnly = ['body', 'subject', 'replyTo', 'internetMessageId'];

/** Everything {@link parseMessageInput} extracted besides the document. */
export interface MessageInput {
  /** Top-level properties present in the body. */
  present: Set<string>;
  isRead?: boolean;
  attachments?: Record<string, unknown>[];
  extensions?: Record<string, unknown>[];
  singleValueExtendedProperties?: { id: string; value: string }[];
  multiValueExtendedProperties?: { id: string; value: string[] }[];
}

function enumValue<T extends string>(v: unknown, values: readonly T[], prop: string): T {
  const s = typeof v === 'string' ? values.find((x) => x.toLowerCase() === v.toLowerCase()) : undefined;
  if (s === undefined) throw bad(`Cannot convert the literal '${String(v)}' to the expected type 'vendor.graph.${prop}'.`);
  return s;
}

function recipient(v: unknown, prop: string): Recipient {
  const e = (v as { emailAddress?: { address?: unknown; name?: unknown } } | null)?.emailAddress;
  if (!e || typeof e !== 'object') throw bad(`Each entry of '${prop}' must be a recipient: {"emailAddress":{"address":"…"}}.`);
  if (e.address !== undefined && e.address !== null && typeof e.address !== 'string') throw bad(`'${prop}/emailAddress/address' must be a string.`);
  if (e.name !== undefined && e.name !== null && typeof e.name !== 'string') throw bad(`'${prop}/emailAddress/name' must be a string.`);
  return { emailAddress: { name: (e.name as string) ?? '', address: (e.address as string) ?? '' } };
}

function recipients(v: unknown, prop: string): Recipient[] {
  if (v === null) return [];
  if (!Array.isArray(v)) throw bad(`'${prop}' must be a collection of recipients.`);
  return v.map((x) => recipient(x, prop));
}

function boolish(v: unknown, prop: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  throw bad(`'${prop}' must be a boolean.`);
}

function dtz(v: unknown, prop: string): { dateTime: string; timeZone: string } | undefined {
  if (v === undefined || v === null) return undefined;
  const o = v as { dateTime?: unknown; timeZone?: unknown };
  if (typeof o !== 'object' || typeof o.dateTime !== 'string' || Number.isNaN(Date.parse(o.dateTime))) throw bad(`'${prop}' must be a dateTimeTimeZone {"dateTime":"…","timeZone":"…"}.`);
  return { dateTime: o.dateTime, timeZone: typeof o.timeZone === 'string' ? o.timeZone : 'UTC' };
}

/**
 * Applies a create / PATCH body to `doc` (mutated).
 * @param mode `create` allows `internetMessageHeaders`, attachments and extensions;
 *   `update` rejects draft-only properties when `isDraft` is false
 * @throws ApiError 400 `RequestBodyRead` (unknown property, wrong type),
 *   `ErrorInvalidPropertySet` (draft-only property on a sent message, headers after creation),
 *   `InvalidInternetMessageHeader` (a custom header not named `x-…`)
 */
export function parseMessageInput(doc: MessageDoc, input: unknown, mode: 'create' | 'update', isDraft: boolean): MessageInput {
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) throw bad('The request body must be a JSON object (a message).');
  const o = input as Record<string, unknown>;
  const out: MessageInput = { present: new Set() };
  for (const key of Object.keys(o)) {
    if (key === '@odata.type') continue;
    if (!writable.has(key)) {
      if (readOnly.has(key)) continue;
      throw bad(`The property '${key}' does not exist on type 'vendor.graph.message'. Make sure to only use property names that are defined by the type or mark the type as open type.`);
    }
    out.present.add(key);
  }
  if (mode === 'update' && !isDraft) {
    for (const p of draftOnly) if (out.present.has(p)) throw new ApiError(400, 'ErrorInvalidPropertySet', 'Message is not draft.');
  }
  for (const key of out.present) {
    const v = o[key];
    switch (key) {
      case 'subject':
        if (v !== null && typeof v !== 'string') throw bad("'subject' must be a string.");
        doc.subject = (v as string) ?? '';
        break;
      case 'body': {
        const b = v as { contentType?: unknown; content?: unknown } | null;
        if (b === null) {
          doc.body = { contentType: 'text', content: '' };
          break;
        }
        if (typeof b !== 'object' || (b.content !== undefined && b.content !== null && typeof b.content !== 'string')) throw bad("'body' must be an itemBody {\"contentType\":\"text|html\",\"content\":\"…\"}.");
        const contentType = b.contentType === undefined ? 'text' : enumValue(b.contentType, ['text', 'html'] as const, 'bodyType');
        const content = (b.content as string) ?? '';
        doc.body = { contentType, content: contentType === 'html' ? wrapHtml(content) : content };
        doc.uniqueBody = doc.body;
        break;
      }
      case 'toRecipients':
      case 'ccRecipients':
      case 'bccRecipients':
      case 'replyTo':
        doc[key] = recipients(v, key);
        break;
      case 'from':
      case 'sender':
        doc[key] = v === null ? null : recipient(v, key);
        break;
      case 'categories':
        if (!Array.isArray(v) || v.some((c) => typeof c !== 'string')) throw bad("'categories' must be a collection of strings.");
        doc.categories = [...new Set(v as string[])];
        break;
      case 'flag': {
        const f = v as Record<string, unknown> | null;
        if (f === null) {
          doc.flag = { flagStatus: 'notFlagged' };
          break;
        }
        if (typeof f !== 'object') throw bad("'flag' must be a followupFlag.");
        const flag: FollowupFlag = { flagStatus: f.flagStatus === undefined ? doc.flag.flagStatus : enumValue(f.flagStatus, ['notFlagged', 'complete', 'flagged'] as const, 'followupFlagStatus') };
        const start = dtz(f.startDateTime, 'flag/startDateTime');
        const due = dtz(f.dueDateTime, 'flag/dueDateTime');
        const done = dtz(f.completedDateTime, 'flag/completedDateTime');
        if (due && !start) throw new ApiError(400, 'ErrorInvalidRequest', "'flag/dueDateTime' requires 'flag/startDateTime'.");
        if (start) flag.startDateTime = start;
        if (due) flag.dueDateTime = due;
        if (done) flag.completedDateTime = done;
        doc.flag = flag;
        break;
      }
      case 'importance':
        doc.importance = enumValue(v, ['low', 'normal', 'high'] as const, 'importance');
        break;
      case 'inferenceClassification':
        doc.inferenceClassification = enumValue(v, ['focused', 'other'] as const, 'inferenceClassificationType');
        break;
      case 'internetMessageId':
        if (typeof v !== 'string' || !/^<[^<>@\s]+@[^<>@\s]+>$/.test(v)) throw bad("'internetMessageId' must be an RFC 5322 message id such as '<local@domain>'.");
        doc.internetMessageId = v;
        break;
      case 'internetMessageHeaders': {
        if (mode !== 'create') throw new ApiError(400, 'ErrorInvalidPropertySet', 'Custom internet message headers can be set only when the message is created.');
        if (!Array.isArray(v)) throw bad("'internetMessageHeaders' must be a collection of {name, value}.");
        doc.internetMessageHeaders = v.map((h) => {
          const hh = h as { name?: unknown; value?: unknown };
          if (!hh || typeof hh.name !== 'string' || typeof hh.value !== 'string') throw bad("Each internet message header needs a string 'name' and 'value'.");
          if (!/^x-/i.test(hh.name)) throw new ApiError(400, 'InvalidInternetMessageHeader', `The internet message header name '${hh.name}' should start with 'x-' or 'X-'.`);
          return { name: hh.name, value: hh.value };
        });
        break;
      }
      case 'isDeliveryReceiptRequested':
      case 'isReadReceiptRequested':
        doc[key] = boolish(v, key);
        break;
      case 'isRead':
        out.isRead = boolish(v, key);
        break;
      case 'mentions':
        if (!Array.isArray(v)) throw bad("'mentions' must be a collection.");
        doc.mentions = v.map((m, i) => {
          const e = (m as { mentioned?: { address?: unknown; name?: unknown } })?.mentioned;
          if (!e || typeof e.address !== 'string') throw bad("Each mention needs 'mentioned' with an 'address'.");
          return { id: String(i + 1), mentioned: { name: typeof e.name === 'string' ? e.name : e.address, address: e.address } };
        });
        break;
      case 'attachments':
      case 'extensions':
        if (mode !== 'create') throw new ApiError(400, 'ErrorInvalidPropertySet', `'${key}' cannot be set with PATCH; post to the message's ${key} collection.`);
        if (!Array.isArray(v)) throw bad(`'${key}' must be a collection.`);
        out[key] = v as Record<string, unknown>[];
        break;
      case 'singleValueExtendedProperties':
        if (!Array.isArray(v)) throw bad(`'${key}' must be a collection.`);
        out.singleValueExtendedProperties = v.map((p) => {
          const pp = p as { id?: unknown; value?: unknown };
          if (!pp || typeof pp.id !== 'string' || !/^\S+ /.test(pp.id)) throw bad("Each extended property needs an 'id' such as 'String {guid} Name X'.");
          if (pp.value === undefined || pp.value === null || typeof pp.value === 'object') throw bad("Each single-value extended property needs a 'value'.");
          return { id: pp.id, value: String(pp.value) };
        });
        break;
      case 'multiValueExtendedProperties':
        if (!Array.isArray(v)) throw bad(`'${key}' must be a collection.`);
        out.multiValueExtendedProperties = v.map((p) => {
          const pp = p as { id?: unknown; value?: unknown };
          if (!pp || typeof pp.id !== 'string' || !/^\S+Array /.test(pp.id)) throw bad("Each multi-value extended property needs an 'id' such as 'StringArray {guid} Name X'.");
          if (!Array.isArray(pp.value)) throw bad("Each multi-value extended property needs a 'value' collection.");
          return { id: pp.id, value: pp.value.map(String) };
        });
        break;
    }
  }
  checkRecipientCount(doc);
  return out;
}

/** @throws ApiError 400 `ErrorExceededMaxRecipientLimit` when to + cc + bcc exceed {@link maxRecipients}. */
export function checkRecipientCount(doc: MessageDoc): void {
  const n = doc.toRecipients.length + doc.ccRecipients.length + doc.bccRecipients.length;
  if (n > maxRecipients) throw new ApiError(400, 'ErrorExceededMaxRecipientLimit', `The message has ${n} recipients in toRecipients, ccRecipients and bccRecipients combined; at most ${maxRecipients} are allowed.`);
}

// ---------------------------------------------------------------------------------------
// Output

/** Properties in the default representation, in the service's order (reference message-get example). */
export const defaultProperties = [
  'createdDateTime', 'lastModifiedDateTime', 'changeKey', 'categories', 'receivedDateTime', 'sentDateTime', 'hasAttachments', 'internetMessageId', 'subject',
  'bodyPreview', 'importance', 'parentFolderId', 'conversationId', 'conversationIndex', 'isDeliveryReceiptRequested', 'isReadReceiptRequested', 'isRead', 'isDraft',
  'webLink', 'inferenceClassification', 'body', 'sender', 'from', 'toRecipients', 'ccRecipients', 'bccRecipients', 'replyTo', 'flag', 'mentionsPreview',
  'unsubscribeEnabled', 'unsubscribeData',
];
/** Properties returned only when `$select`ed (reference §5). */
export const selectOnlyProperties = ['uniqueBody', 'internetMessageHeaders'];
/** Every property `$select` accepts. */
export const selectableProperties = new Set(['id', ...defaultProperties, ...selectOnlyProperties].map((p) => p.toLowerCase()));

/** Second-precision UTC (`2018-09-09T03:15:05Z`, reference §3). */
export function toSecond(iso: string | null): string | null {
  return iso === null ? null : iso.replace(/\.\d+Z$/, 'Z');
}

/** Options of {@link renderMessage}. */
export interface RenderOptions {
  /** Lower-cased `$select` names, or undefined for the default set. */
  select?: string[];
  bodyType?: 'text' | 'html';
  immutable: boolean;
  webmailOrigin: string;
}

/** The JSON representation of a message (without navigation expansions). */
export function renderMessage(m: MessageRecord, o: RenderOptions): Record<string, unknown> {
  const d = m.doc;
  const all: Record<string, () => unknown> = {
    createdDateTime: () => toSecond(m.createdAt),
    lastModifiedDateTime: () => toSecond(m.modifiedAt),
    changeKey: () => m.changeKey,
    categories: () => d.categories,
    receivedDateTime: () => toSecond(m.receivedAt),
    sentDateTime: () => toSecond(m.sentAt),
    hasAttachments: () => m.hasAttachments,
    internetMessageId: () => d.internetMessageId,
    subject: () => d.subject,
    bodyPreview: () => bodyPreview(d),
    importance: () => d.importance,
    parentFolderId: () => m.folderId,
    conversationId: () => d.conversationId,
    conversationIndex: () => d.conversationIndex,
    isDeliveryReceiptRequested: () => d.isDeliveryReceiptRequested,
    isReadReceiptRequested: () => d.isReadReceiptRequested,
    isRead: () => m.isRead,
    isDraft: () => m.isDraft,
    webLink: () => `${o.webmailOrigin}/mail/?ItemID=${encodeURIComponent(m.id)}&exvsurl=1&viewmodel=ReadMessageItem`,
    inferenceClassification: () => d.inferenceClassification,
    body: () => convertBody(d.body, o.bodyType),
    sender: () => d.sender,
    from: () => d.from,
    toRecipients: () => d.toRecipients,
    ccRecipients: () => d.ccRecipients,
    bccRecipients: () => d.bccRecipients,
    replyTo: () => d.replyTo,
    flag: () => d.flag,
    mentionsPreview: () => (d.mentions.length ? { isMentioned: true } : null),
    unsubscribeEnabled: () => d.unsubscribeEnabled,
    unsubscribeData: () => d.unsubscribeData,
    uniqueBody: () => convertBody(d.uniqueBody ?? d.body, o.bodyType),
    internetMessageHeaders: () => d.internetMessageHeaders,
  };
  const out: Record<string, unknown> = { '@odata.etag': `W/"${m.changeKey}"`, id: o.immutable ? m.immutableId : m.id };
  const names = o.select ? [...defaultProperties, ...selectOnlyProperties].filter((p) => o.select!.includes(p.toLowerCase())) : defaultProperties;
  for (const n of names) out[n] = all[n]!();
  return out;
}
