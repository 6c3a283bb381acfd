/**
 * Input of the message resource (reference mail.md §2.3, §2.4, §3; spec mail §2.3, §8): the
 * create / PATCH / send body applied to a document, with the rules that live in the document —
 * writable and read-only properties, enums, recipients, the flag, custom internet message
 * headers, draft-only properties, extended properties and the recipient cap. Every refusal
 * comes from the mail catalogue.
 */
import { errors } from '../../core/errors/index.ts';
import { wrapHtml, type FollowupFlag, type MessageDoc, type Recipient } from './message.ts';

/** The longest subject the mail store keeps (characters; the mail store's published limit of an item's subject). */
export const maxSubjectLength = 255;

/** Maximum recipients in to + cc + bcc (spec mail §8). */
export const maxRecipients = 500;

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
  if (s === undefined) throw errors.mail.invalidLiteral({ literal: String(v), type: prop });
  return s;
}

function recipient(v: unknown, prop: string): Recipient {
  const e = (v as { emailAddress?: { address?: unknown; name?: unknown } } | null)?.emailAddress;
  if (!e || typeof e !== 'object') throw errors.mail.notARecipient({ property: prop });
  if (e.address !== undefined && e.address !== null && typeof e.address !== 'string') throw errors.mail.mustBeString({ property: `${prop}/emailAddress/address` });
  if (e.name !== undefined && e.name !== null && typeof e.name !== 'string') throw errors.mail.mustBeString({ property: `${prop}/emailAddress/name` });
  return { emailAddress: { name: (e.name as string) ?? '', address: (e.address as string) ?? '' } };
}

function recipients(v: unknown, prop: string): Recipient[] {
  if (v === null) return [];
  if (!Array.isArray(v)) throw errors.mail.mustBeRecipientCollection({ property: prop });
  return v.map((x) => recipient(x, prop));
}

function boolish(v: unknown, prop: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === 'false') return v === 'true';
  throw errors.mail.mustBeBoolean({ property: prop });
}

function dtz(v: unknown, prop: string): { dateTime: string; timeZone: string } | undefined {
  if (v === undefined || v === null) return undefined;
  const o = v as { dateTime?: unknown; timeZone?: unknown };
  if (typeof o !== 'object' || typeof o.dateTime !== 'string' || Number.isNaN(Date.parse(o.dateTime))) throw errors.mail.notADateTimeTimeZone({ property: prop });
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
  if (typeof input !== 'object' || Array.isArray(input)) throw errors.mail.messageBodyNotObject();
  const o = input as Record<string, unknown>;
  const out: MessageInput = { present: new Set() };
  for (const key of Object.keys(o)) {
    if (key === '@odata.type') continue;
    if (!writable.has(key)) {
      if (readOnly.has(key)) continue;
      throw errors.mail.unknownProperty({ property: key, type: 'vendor.graph.message' });
    }
    out.present.add(key);
  }
  if (mode === 'update' && !isDraft) {
    for (const p of draftOnly) if (out.present.has(p)) throw errors.mail.notDraft();
  }
  for (const key of out.present) {
    const v = o[key];
    switch (key) {
      case 'subject':
        if (v !== null && typeof v !== 'string') throw errors.mail.mustBeString({ property: 'subject' });
        // The mail store's subject limit (255 characters; issue 30 row 3): never stored longer.
        if (typeof v === 'string' && v.length > maxSubjectLength) throw errors.mail.propertyTooLong({ property: 'subject', length: String(v.length), max: String(maxSubjectLength) });
        doc.subject = (v as string) ?? '';
        break;
      case 'body': {
        const b = v as { contentType?: unknown; content?: unknown } | null;
        if (b === null) {
          doc.body = { contentType: 'text', content: '' };
          break;
        }
        if (typeof b !== 'object' || (b.content !== undefined && b.content !== null && typeof b.content !== 'string')) throw errors.mail.notAnItemBody();
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
        if (!Array.isArray(v) || v.some((c) => typeof c !== 'string')) throw errors.mail.mustBeStringCollection({ property: 'categories' });
        doc.categories = [...new Set(v as string[])];
        break;
      case 'flag': {
        const f = v as Record<string, unknown> | null;
        if (f === null) {
          doc.flag = { flagStatus: 'notFlagged' };
          break;
        }
        if (typeof f !== 'object') throw errors.mail.notAFollowupFlag();
        const flag: FollowupFlag = { flagStatus: f.flagStatus === undefined ? doc.flag.flagStatus : enumValue(f.flagStatus, ['notFlagged', 'complete', 'flagged'] as const, 'followupFlagStatus') };
        const start = dtz(f.startDateTime, 'flag/startDateTime');
        const due = dtz(f.dueDateTime, 'flag/dueDateTime');
        const done = dtz(f.completedDateTime, 'flag/completedDateTime');
        if (due && !start) throw errors.mail.dueNeedsStart();
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
        if (typeof v !== 'string' || !/^<[^<>@\s]+@[^<>@\s]+>$/.test(v)) throw errors.mail.invalidInternetMessageId();
        doc.internetMessageId = v;
        break;
      case 'internetMessageHeaders': {
        if (mode !== 'create') throw errors.mail.headersOnlyOnCreate();
        if (!Array.isArray(v)) throw errors.mail.headersNotCollection();
        doc.internetMessageHeaders = v.map((h) => {
          const hh = h as { name?: unknown; value?: unknown };
          if (!hh || typeof hh.name !== 'string' || typeof hh.value !== 'string') throw errors.mail.headerNeedsNameValue();
          if (!/^x-/i.test(hh.name)) throw errors.mail.invalidHeaderName({ name: hh.name });
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
        if (!Array.isArray(v)) throw errors.mail.mustBeCollection({ property: 'mentions' });
        doc.mentions = v.map((m, i) => {
          const e = (m as { mentioned?: { address?: unknown; name?: unknown } })?.mentioned;
          if (!e || typeof e.address !== 'string') throw errors.mail.mentionNeedsAddress();
          return { id: String(i + 1), mentioned: { name: typeof e.name === 'string' ? e.name : e.address, address: e.address } };
        });
        break;
      case 'attachments':
      case 'extensions':
        if (mode !== 'create') throw errors.mail.onlyOnCreate({ property: key });
        if (!Array.isArray(v)) throw errors.mail.mustBeCollection({ property: key });
        out[key] = v as Record<string, unknown>[];
        break;
      case 'singleValueExtendedProperties':
        if (!Array.isArray(v)) throw errors.mail.mustBeCollection({ property: key });
        out.singleValueExtendedProperties = v.map((p) => {
          const pp = p as { id?: unknown; value?: unknown };
          if (!pp || typeof pp.id !== 'string' || !/^\S+ /.test(pp.id)) throw errors.mail.singleValuePropertyId();
          if (pp.value === undefined || pp.value === null || typeof pp.value === 'object') throw errors.mail.singleValuePropertyValue();
          return { id: pp.id, value: String(pp.value) };
        });
        break;
      case 'multiValueExtendedProperties':
        if (!Array.isArray(v)) throw errors.mail.mustBeCollection({ property: key });
        out.multiValueExtendedProperties = v.map((p) => {
          const pp = p as { id?: unknown; value?: unknown };
          if (!pp || typeof pp.id !== 'string' || !/^\S+Array /.test(pp.id)) throw errors.mail.multiValuePropertyId();
          if (!Array.isArray(pp.value)) throw errors.mail.multiValuePropertyValue();
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
  if (n > maxRecipients) throw errors.mail.tooManyRecipients({ count: n, max: maxRecipients });
}

