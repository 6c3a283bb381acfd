/**
 * Sending and the reply / forward family (reference mail.md §2.7, §2.8; spec mail §3):
 * send a draft, sendMail, createReply / createReplyAll / createForward, reply / replyAll /
 * forward. Sending delivers a new message into the Inbox of every recipient of the same
 * tenant (own ids, unread, `receivedDateTime` set), saves the sender's copy in Sent Items
 * and records recipients outside the tenant as outbound mail. Callers run these inside one
 * transaction.
 */
import type { Kysely } from 'kysely';
import { randomBytes } from 'node:crypto';
import { errors } from '../../core/errors/index.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { Directory } from '../../core/identity/directory.ts';
import { conversationIndex, newChangeKey, newConversationId, newImmutableId, newMessageId } from './ids.ts';
import { bodyText, emptyDoc, toSecond, wrapHtml, type MessageDoc, type MessageRecord, type Recipient } from './message.ts';
import { checkRecipientCount, parseMessageInput } from './message-input.ts';
import { copyMessage, insertMessages, moveMessage, openMailbox, updateMessage, type Mailbox } from './store.ts';
import { recordOutbound } from './outbound.ts';
import type { Database } from '../../store/database.ts';

const emailPattern = /^[^@\s<>()",;]+@[^@\s<>()",;]+\.[^@\s<>()",;]+$/;

/** A fresh RFC 5322 message id on the mailbox's domain. */
export function newInternetMessageId(mb: Mailbox): string {
  const domain = mb.address.split('@')[1] ?? 'stratus.test';
  return `<${randomBytes(12).toString('hex').toUpperCase()}@${domain}>`;
}

/** The mailbox owner as a recipient. */
export function ownerRecipient(mb: Mailbox): Recipient {
  return { emailAddress: { name: mb.displayName, address: mb.address } };
}

/**
 * Checks `from` / `sender` against the mailbox (spec mail §2.3: from must be the mailbox).
 * @throws ApiError 403 `ErrorSendAsDenied`
 */
export function checkFrom(doc: MessageDoc, mb: Mailbox): void {
  for (const r of [doc.from, doc.sender]) {
    if (r && r.emailAddress.address && r.emailAddress.address.toLowerCase() !== mb.address.toLowerCase()) {
      throw errors.mail.sendAsDenied();
    }
  }
}

/** Fills recipient names from the directory (the address when unknown), as the service resolves them. */
export async function resolveNames(dir: Directory, doc: MessageDoc): Promise<void> {
  for (const list of [doc.toRecipients, doc.ccRecipients, doc.bccRecipients, doc.replyTo, doc.from ? [doc.from] : [], doc.sender ? [doc.sender] : []]) {
    for (const r of list) {
      if (r.emailAddress.name) continue;
      const u = r.emailAddress.address ? await dir.findUser(r.emailAddress.address) : undefined;
      r.emailAddress.name = u?.displayName ?? r.emailAddress.address;
    }
  }
}

/** A new draft record in `folderId` of `mb`. */
export function draftRecord(mb: Mailbox, folderId: string, doc: MessageDoc): Omit<MessageRecord, 'pk'> {
  const at = nowIso();
  if (!doc.internetMessageId) doc.internetMessageId = newInternetMessageId(mb);
  if (!doc.conversationId) doc.conversationId = newConversationId();
  if (!doc.conversationIndex) doc.conversationIndex = conversationIndex(undefined, nowMs());
  return { id: newMessageId(), immutableId: newImmutableId(), tenantId: mb.tenantId, mailboxId: mb.mailboxId, folderId, createdAt: at, modifiedAt: at, receivedAt: at, sentAt: at, isRead: true, isDraft: true, hasAttachments: false, changeKey: newChangeKey(), doc };
}

/**
 * Sends a message record of `mb` (a draft, or a new message of sendMail): validates the
 * recipients, marks it sent, moves it to Sent Items (or drops it when `saveToSentItems` is
 * false), delivers local copies and records outbound ones.
 * @throws ApiError 400 `ErrorInvalidRecipients`, `ErrorExceededMaxRecipientLimit`; 403 `ErrorSendAsDenied`
 */
export async function sendMessage(trx: Kysely<Database>, _dir: Directory, mb: Mailbox, m: MessageRecord, o: { saveToSentItems: boolean; sender?: Recipient }): Promise<MessageRecord | undefined> {
  // Directory reads go through the transaction (SQLite has one connection).
  const dir = new Directory(trx);
  const d = m.doc;
  const all = [...d.toRecipients, ...d.ccRecipients, ...d.bccRecipients];
  if (all.length === 0) throw errors.mail.noRecipients();
  for (const r of all) {
    if (!emailPattern.test(r.emailAddress.address)) throw errors.mail.recipientUnresolved({ address: r.emailAddress.address });
  }
  checkRecipientCount(d);
  checkFrom(d, mb);
  const at = nowIso();
  d.from ??= ownerRecipient(mb);
  d.sender ??= o.sender ?? ownerRecipient(mb);
  if (!d.internetMessageId) d.internetMessageId = newInternetMessageId(mb);
  const sent: MessageRecord = { ...m, isDraft: false, isRead: true, sentAt: at, receivedAt: at, modifiedAt: at, changeKey: newChangeKey() };
  let saved: MessageRecord | undefined;
  if (o.saveToSentItems) {
    await updateMessage(trx, sent);
    saved = await moveMessage(trx, sent, mb.wellKnown.get('sentitems')!);
  }
  // Deliver: one copy per distinct local recipient; the rest go outbound.
  const seen = new Set<string>();
  const external: string[] = [];
  for (const r of all) {
    const addr = r.emailAddress.address.toLowerCase();
    if (seen.has(addr)) continue;
    seen.add(addr);
    const user = await dir.findUser(addr);
    if (!user || user.tenantId !== mb.tenantId) {
      external.push(r.emailAddress.address);
      continue;
    }
    const rmb = await openMailbox(trx, { tenantId: user.tenantId, id: user.id, mail: user.mail, displayName: user.displayName });
    const doc = structuredClone(d);
    doc.bccRecipients = [];
    doc.internetMessageHeaders = d.internetMessageHeaders;
    doc.flag = { flagStatus: 'notFlagged' };
    doc.categories = [];
    await copyMessage(trx, { ...sent, doc }, { tenantId: rmb.tenantId, mailboxId: rmb.mailboxId, folderId: rmb.wellKnown.get('inbox')! }, { isRead: false, isDraft: false, receivedAt: at, sentAt: at, doc });
  }
  if (external.length) await recordOutbound(trx, mb, { ...sent, doc: d }, external);
  return saved;
}

/** Body of createReply / reply / createForward / forward (reference §2.7). */
export interface ReplyInput {
  comment?: string;
  toRecipients?: Recipient[];
  message?: Record<string, unknown>;
}

/**
 * Reads a reply / forward body; parameter names are accepted in camelCase or PascalCase.
 * @throws ApiError 400 for a body that is not an object, or `comment` together with `message.body`
 */
export function readReplyInput(body: unknown, forward: boolean): ReplyInput {
  if (body === undefined || body === null || (Buffer.isBuffer(body) && body.length === 0)) return {};
  if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) throw errors.mail.bodyNotObject();
  const o = body as Record<string, unknown>;
  const get = (k: string) => o[k] ?? o[k[0]!.toUpperCase() + k.slice(1)];
  for (const k of Object.keys(o)) {
    if (!['comment', 'message', ...(forward ? ['torecipients'] : [])].includes(k.toLowerCase())) {
      throw errors.mail.unknownParameter({ parameter: k });
    }
  }
  const out: ReplyInput = {};
  const comment = get('comment');
  if (comment !== undefined && comment !== null) {
    if (typeof comment !== 'string') throw errors.mail.mustBeString({ property: 'comment' });
    out.comment = comment;
  }
  const msg = get('message');
  if (msg !== undefined && msg !== null) {
    if (typeof msg !== 'object' || Array.isArray(msg)) throw errors.mail.messageNotObject();
    out.message = msg as Record<string, unknown>;
  }
  const to = get('toRecipients');
  if (to !== undefined && to !== null) {
    if (!Array.isArray(to)) throw errors.mail.mustBeRecipientCollection({ property: 'toRecipients' });
    out.toRecipients = to as Recipient[];
  }
  if (out.comment !== undefined && out.message && 'body' in out.message) throw errors.mail.commentAndBody();
  if (forward && out.toRecipients && out.message && 'toRecipients' in out.message) throw errors.mail.toRecipientsTwice();
  return out;
}

const same = (a: Recipient, b: string) => a.emailAddress.address.toLowerCase() === b.toLowerCase();

function dedupe(list: Recipient[], self: string): Recipient[] {
  const seen = new Set<string>();
  return list.filter((r) => {
    const k = r.emailAddress.address.toLowerCase();
    if (same(r, self) || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/**
 * Builds the draft of a reply, reply-all or forward of `orig` in Drafts: prefixed subject,
 * recipients by RFC 2822 rules, the comment above the quoted original, the same
 * conversation and a continued conversation index.
 */
export async function buildResponseDraft(trx: Kysely<Database>, _dir: Directory, mb: Mailbox, orig: MessageRecord, kind: 'reply' | 'replyAll' | 'forward', input: ReplyInput): Promise<MessageRecord> {
  const o = orig.doc;
  const doc = emptyDoc();
  const prefix = kind === 'forward' ? 'FW: ' : 'RE: ';
  doc.subject = o.subject.toUpperCase().startsWith(prefix) ? o.subject : prefix + o.subject;
  const replyTarget = o.replyTo.length ? o.replyTo : o.from ? [o.from] : [];
  if (kind === 'reply') doc.toRecipients = structuredClone(replyTarget);
  if (kind === 'replyAll') {
    doc.toRecipients = dedupe(structuredClone([...replyTarget, ...o.toRecipients]), mb.address);
    doc.ccRecipients = dedupe(structuredClone(o.ccRecipients), mb.address);
    if (doc.toRecipients.length === 0 && replyTarget.length) doc.toRecipients = structuredClone(replyTarget);
  }
  const comment = input.comment ?? '';
  const quoted = `<hr style="display:inline-block;width:98%"><div id="divRplyFwdMsg" dir="ltr"><b>From:</b> ${o.from?.emailAddress.name ?? ''} &lt;${o.from?.emailAddress.address ?? ''}&gt;<br><b>Sent:</b> ${toSecond(orig.sentAt) ?? ''}<br><b>To:</b> ${o.toRecipients.map((r) => r.emailAddress.name).join('; ')}<br><b>Subject:</b> ${o.subject}</div><div>${bodyText(o.body).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\n/g, '<br>')}</div>`;
  doc.body = { contentType: 'html', content: wrapHtml(`<div>${comment}</div>${quoted}`) };
  doc.uniqueBody = { contentType: 'html', content: wrapHtml(`<div>${comment}</div>`) };
  doc.conversationId = o.conversationId;
  doc.conversationIndex = conversationIndex(o.conversationIndex, nowMs());
  doc.importance = o.importance;
  const parsed = input.message ? parseMessageInput(doc, input.message, 'create', true) : undefined;
  if (kind === 'forward' && input.toRecipients) {
    const tmp = emptyDoc();
    parseMessageInput(tmp, { toRecipients: input.toRecipients }, 'create', true);
    doc.toRecipients = tmp.toRecipients;
  }
  checkFrom(doc, mb);
  await resolveNames(new Directory(trx), doc);
  const rec = draftRecord(mb, mb.wellKnown.get('drafts')!, doc);
  const [draft] = await insertMessages(trx, [rec]);
  if (kind === 'forward') {
    const atts = await trx.selectFrom('mail_attachments').selectAll().where('message_pk', '=', orig.pk).execute();
    if (atts.length) {
      const { newAttachmentId } = await import('./ids.ts');
      await trx.insertInto('mail_attachments').values(atts.map((a: any) => ({ ...a, id: newAttachmentId(), message_pk: draft!.pk }))).execute();
      draft!.hasAttachments = orig.hasAttachments;
      await trx.updateTable('mail_messages').set({ has_attachments: orig.hasAttachments ? 1 : 0 }).where('pk', '=', draft!.pk).execute();
    }
  }
  return Object.assign(draft!, { parsed });
}
