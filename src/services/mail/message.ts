/**
 * The message resource's document (reference mail.md §2.3, §3): its types, the empty draft,
 * bodies (HTML ↔ text, bodyPreview) and rendering with `$select` and
 * `Prefer: outlook.body-content-type` (§2.4, §5). Input validation is in `message-input.ts`.
 */
import { LRUCache } from 'lru-cache';

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

/** Characters of a body's text stored with its message (`search_body`, the full-text index's source): longer texts are cut. */
export const searchBodyMax = 100_000;

/** The body text stored with a document read from its row, with the body it was made from ({@link rememberBodyText}). */
const storedBodyTexts = new WeakMap<MessageDoc, { contentType: string; content: string; text: string }>();

/**
 * Records the body text stored with `doc` in its row (`search_body`: `bodyText(doc.body)`, cut at
 * {@link searchBodyMax}), so that a preview of this document needs no conversion of its HTML
 * (issue 31: `htmlToText` was about two thirds of a message's first rendering, 18–21 µs of
 * 27 µs, and each instance renders each message it reads once). Call it when the document is
 * parsed from the row; a body changed later in the object is detected ({@link knownBodyText}).
 */
export function rememberBodyText(doc: MessageDoc, text: string): void {
  if (doc?.body && typeof doc.body.content === 'string') storedBodyTexts.set(doc, { contentType: doc.body.contentType, content: doc.body.content, text });
}

/** `bodyText(doc.body)` as stored with the document, when known whole and the body is still the one it was made from. */
function knownBodyText(doc: MessageDoc): string | undefined {
  const s = storedBodyTexts.get(doc);
  return s !== undefined && s.text.length < searchBodyMax && s.content === doc.body.content && s.contentType === doc.body.contentType ? s.text : undefined;
}

/** `bodyPreview`: the first 255 characters of the body as text, mentions included (spec mail §2.3, §8). */
export function bodyPreview(doc: MessageDoc): string {
  let text = (knownBodyText(doc) ?? bodyText(doc.body)).replace(/\s+/g, ' ').trim();
  const names = doc.mentions.map((m) => '@' + (m.mentioned.name || m.mentioned.address)).filter((n) => !text.includes(n));
  if (names.length) text = (names.join(' ') + ' ' + text).trim();
  return firstCodePoints(text, 255);
}

/**
 * The first `n` code points of `s` (a surrogate pair counts once, a lone surrogate once), as
 * `[...s].slice(0, n).join('')` gives them, without making an array of the whole text.
 */
export function firstCodePoints(s: string, n: number): string {
  if (s.length <= n) return s;
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
  }
  return s.slice(0, i);
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
  /** `@odata.context` to put first (a single message's answer). */
  context?: string;
}

/** What a message's `bodyPreview` was made from, and the preview. */
interface Preview {
  contentType: string;
  content: string;
  mentions: string;
  text: string;
}

/**
 * `bodyPreview` of recently rendered messages, by row key, with what it was made from: the
 * preview is made from the whole body (HTML to text, whitespace folding), the costliest part of
 * rendering a message, and a write that leaves the body as it is (a read-state PATCH: a new change
 * key) keeps it. The body is compared as a string (a memory comparison, far cheaper than the
 * conversion). Per process (equal inputs give equal previews, whichever app asks); 2,000 entries
 * hold up to ~8 MB of bodies: enough for a message rendered again soon after it was written.
 */
const previews = new LRUCache<number, Preview>({ max: 2_000 });

function cachedPreview(m: MessageRecord, d: MessageDoc): string {
  const mentions = d.mentions.length ? d.mentions.map((x) => x.mentioned.name || x.mentioned.address).join('\u0001') : '';
  const p = previews.get(m.pk);
  if (p !== undefined && p.content === d.body.content && p.contentType === d.body.contentType && p.mentions === mentions) return p.text;
  const text = bodyPreview(d);
  previews.set(m.pk, { contentType: d.body.contentType, content: d.body.content, mentions, text });
  return text;
}

/** Every property in output order: the default set, then the select-only ones. */
const orderedProperties = [...defaultProperties, ...selectOnlyProperties];

/** The value of one property of a message (a name of {@link orderedProperties}). */
function property(m: MessageRecord, d: MessageDoc, name: string, o: RenderOptions): unknown {
  switch (name) {
    case 'createdDateTime': return toSecond(m.createdAt);
    case 'lastModifiedDateTime': return toSecond(m.modifiedAt);
    case 'changeKey': return m.changeKey;
    case 'categories': return d.categories;
    case 'receivedDateTime': return toSecond(m.receivedAt);
    case 'sentDateTime': return toSecond(m.sentAt);
    case 'hasAttachments': return m.hasAttachments;
    case 'internetMessageId': return d.internetMessageId;
    case 'subject': return d.subject;
    case 'bodyPreview': return cachedPreview(m, d);
    case 'importance': return d.importance;
    case 'parentFolderId': return m.folderId;
    case 'conversationId': return d.conversationId;
    case 'conversationIndex': return d.conversationIndex;
    case 'isDeliveryReceiptRequested': return d.isDeliveryReceiptRequested;
    case 'isReadReceiptRequested': return d.isReadReceiptRequested;
    case 'isRead': return m.isRead;
    case 'isDraft': return m.isDraft;
    case 'webLink': return `${o.webmailOrigin}/mail/?ItemID=${encodeURIComponent(m.id)}&exvsurl=1&viewmodel=ReadMessageItem`;
    case 'inferenceClassification': return d.inferenceClassification;
    case 'body': return convertBody(d.body, o.bodyType);
    case 'sender': return d.sender;
    case 'from': return d.from;
    case 'toRecipients': return d.toRecipients;
    case 'ccRecipients': return d.ccRecipients;
    case 'bccRecipients': return d.bccRecipients;
    case 'replyTo': return d.replyTo;
    case 'flag': return d.flag;
    case 'mentionsPreview': return d.mentions.length ? { isMentioned: true } : null;
    case 'unsubscribeEnabled': return d.unsubscribeEnabled;
    case 'unsubscribeData': return d.unsubscribeData;
    case 'uniqueBody': return convertBody(d.uniqueBody ?? d.body, o.bodyType);
    case 'internetMessageHeaders': return d.internetMessageHeaders;
    default: throw new Error(`unknown message property ${name}`);
  }
}

/** The JSON representation of a message (without navigation expansions). */
export function renderMessage(m: MessageRecord, o: RenderOptions): Record<string, unknown> {
  const out: Record<string, unknown> = o.context === undefined ? {} : { '@odata.context': o.context };
  out['@odata.etag'] = `W/"${m.changeKey}"`;
  out.id = o.immutable ? m.immutableId : m.id;
  const names = o.select ? orderedProperties.filter((p) => o.select!.includes(p.toLowerCase())) : defaultProperties;
  for (const n of names) out[n] = property(m, m.doc, n, o);
  return out;
}
