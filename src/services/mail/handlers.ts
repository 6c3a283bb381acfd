/**
 * Message handlers (reference mail.md §2; list, count and delta are in `lists.ts`): create, get, update, delete,
 * copy, move, the reply / forward family, send, sendMail, permanent delete, beta actions,
 * attachments, open extensions and `$value`. Every write runs in one transaction with its
 * change-log entries.
 */
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { contextUrl, destinationId, need, send, sendJson, type MailRequest } from './request.ts';
import { parseExpand, parseSelect } from './query.ts';
import { emptyDoc, type MessageRecord } from './message.ts';
import { messageJson, withFirstMember } from './rendered.ts';
import { present, presentOne, renderOptions } from './lists.ts';
import { parseMessageInput, type MessageInput } from './message-input.ts';
import { bodyLeavesDocument, leavesDocument, lacksNames, writePatchedMessage, writeReadStateInOne, writeReadStateNow } from './writes.ts';
import { getFolder, insertMessages, messageFromRow, moveMessage, copyMessage, writeExtendedProperties, notFound, type FolderRow, computeHasAttachments, change } from './store.ts';
import { recordMailChanges } from './changes.ts';
import { buildResponseDraft, checkFrom, draftRecord, readReplyInput, resolveNames, sendMessage } from './actions.ts';
import * as att from './attachments.ts';
import { newChangeKey } from './ids.ts';
import { writtenMessageAnswer } from './message-read.ts';
import { createUploadSession } from './upload.ts';
import { keySegment } from './paths.ts';
import { parseMime } from './mime.ts';

/** Parses a MIME (base64) create body into a message document. @throws ApiError 400 `ErrorMimeContentInvalidBase64String` */
function mimeToInput(buf: Buffer | string): Record<string, unknown> {
  const text = (typeof buf === 'string' ? buf : buf.toString('utf8')).trim();
  if (!/^[A-Za-z0-9+/=\r\n]+$/.test(text)) throw errors.mail.mimeInvalidBase64();
  const parsed = parseMime(Buffer.from(text, 'base64').toString('utf8'));
  if (!parsed) throw errors.mail.mimeInvalidBase64();
  return parsed.input;
}

async function applyExtras(mr: MailRequest, trx: any, m: MessageRecord, parsed: MessageInput): Promise<MessageRecord> {
  await writeExtendedProperties(trx, m.pk, parsed.singleValueExtendedProperties, parsed.multiValueExtendedProperties);
  for (const e of parsed.extensions ?? []) await att.createExtension(trx, m.pk, e);
  if (parsed.attachments?.length) {
    for (const a of parsed.attachments) await att.insertAttachment(trx, m.pk, a);
    m.hasAttachments = await computeHasAttachments(trx, m.pk);
    await trx.updateTable('mail_messages').set({ has_attachments: m.hasAttachments ? 1 : 0 }).where('pk', '=', m.pk).execute();
  }
  return m;
}

/** POST messages: a new draft (JSON or base64 MIME). */
export async function createMessage(mr: MailRequest, folder: FolderRow): Promise<unknown> {
  const input = Buffer.isBuffer(mr.body) || typeof mr.body === 'string' ? mimeToInput(mr.body) : mr.body;
  const doc = emptyDoc();
  const parsed = parseMessageInput(doc, input, 'create', true);
  checkFrom(doc, mr.mb);
  await resolveNames(mr.ctx.identity.directory, doc);
  const rec = draftRecord(mr.mb, folder.id, doc);
  if (parsed.isRead !== undefined) rec.isRead = parsed.isRead;
  const m = await mr.ctx.store.transaction(async (trx) => applyExtras(mr, trx, (await insertMessages(trx, [rec]))[0]!, parsed));
  const out = await presentOne(mr, m, parsed.extensions?.length ? [{ name: 'extensions' }] : []);
  return send(mr, 201, { '@odata.context': contextUrl(mr, 'messages/$entity'), ...out });
}

/** POST sendMail: `{message, saveToSentItems}` (or base64 MIME). */
export async function sendMail(mr: MailRequest): Promise<unknown> {
  let messageInput: unknown;
  let save = true;
  if (Buffer.isBuffer(mr.body) || typeof mr.body === 'string') messageInput = mimeToInput(mr.body);
  else {
    if (!mr.body || typeof mr.body !== 'object' || Array.isArray(mr.body)) throw errors.mail.sendMailBody();
    const o = mr.body as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!['message', 'savetosentitems'].includes(k.toLowerCase())) throw errors.mail.unknownOperationParameter({ parameter: k, operation: 'sendMail' });
    messageInput = o.message ?? o.Message;
    if (!messageInput || typeof messageInput !== 'object') throw errors.mail.messageRequired();
    const s = o.saveToSentItems ?? o.SaveToSentItems;
    if (s !== undefined && s !== null) {
      if (s !== true && s !== false && s !== 'true' && s !== 'false') throw errors.mail.mustBeBoolean({ property: 'saveToSentItems' });
      save = s === true || s === 'true';
    }
  }
  const doc = emptyDoc();
  const parsed = parseMessageInput(doc, messageInput, 'create', true);
  checkFrom(doc, mr.mb);
  await resolveNames(mr.ctx.identity.directory, doc);
  const rec = draftRecord(mr.mb, mr.mb.wellKnown.get('sentitems')!, doc);
  await mr.ctx.store.transaction(async (trx) => {
    const [m] = await insertMessages(trx, [rec], { record: false });
    await applyExtras(mr, trx, m!, parsed);
    await sendMessage(trx, mr.ctx.identity.directory, mr.mb, m!, { saveToSentItems: false });
    if (save) {
      const at = nowIso();
      const sent: MessageRecord = { ...m!, isDraft: false, sentAt: at, receivedAt: at, modifiedAt: at, changeKey: newChangeKey() };
      await trx.updateTable('mail_messages').set({ is_draft: 0, sent_at: at, received_at: at, modified_at: at, change_key: sent.changeKey, doc: JSON.stringify(m!.doc), from_address_lc: m!.doc.from?.emailAddress.address.toLowerCase() ?? null, from_name: m!.doc.from?.emailAddress.name ?? null, sender_address_lc: m!.doc.sender?.emailAddress.address.toLowerCase() ?? null, from_text: m!.doc.from ? `${m!.doc.from.emailAddress.name} ${m!.doc.from.emailAddress.address}` : '' }).where('pk', '=', m!.pk).execute();
      await recordMailChanges(trx, [change(sent, 'created', at)]);
    } else {
      for (const t of ['mail_categories', 'mail_single_props', 'mail_multi_props', 'mail_extensions', 'mail_attachments'] as const) await trx.deleteFrom(t).where('message_pk', '=', m!.pk).execute();
      await trx.deleteFrom('mail_messages').where('pk', '=', m!.pk).execute();
    }
  });
  return send(mr, 202);
}

const actionNames = ['copy', 'move', 'createReply', 'createReplyAll', 'createForward', 'reply', 'replyAll', 'forward', 'send', 'permanentDelete', 'recall', 'unsubscribe', 'reportMessage', 'markAsJunk', 'markAsNotJunk'];

/** The JSON text of one message with the request's `$select` and `Prefer` options (no `$expand`). */
export function messageText(mr: MailRequest, m: MessageRecord): string {
  return withFirstMember('@odata.context', contextUrl(mr, 'messages/$entity'), messageJson(m, renderOptions(mr, parseSelect(mr.q))));
}

/** Everything under `messages/{id}`. */
export async function messageItem(mr: MailRequest, method: string, m: MessageRecord, rest: string[]): Promise<unknown> {
  const db = mr.ctx.store.db;
  const tx = <T>(fn: (trx: any) => Promise<T>) => mr.ctx.store.transaction(fn);
  if (rest.length === 0) {
    if (method === 'GET') {
      need(mr, 'read');
      const select = parseSelect(mr.q);
      const expand = parseExpand(mr.q);
      if (expand.length === 0) return sendJson(mr, 200, messageText(mr, m));
      const [out] = await present(mr, [m], select, expand, contextUrl(mr, 'messages/$entity'));
      return send(mr, 200, out);
    }
    if (method === 'PATCH') {
      need(mr, 'write');
      // The stored document is copied only when this PATCH may change it: a body of row members on a
      // document with every name resolved changes no part of it (nothing below writes into it then).
      const doc = bodyLeavesDocument(mr.body) && !lacksNames(m.doc) ? m.doc : structuredClone(m.doc);
      const parsed = parseMessageInput(doc, mr.body, 'update', m.isDraft);
      if (parsed.present.has('from') || parsed.present.has('sender')) checkFrom(doc, mr.mb);
      // A PATCH of `isRead` (or extended properties) on a document with every name resolved writes only the row's read state (writes.ts).
      const documentKept = leavesDocument(parsed.present) && !lacksNames(doc);
      if (!documentKept) await resolveNames(mr.ctx.identity.directory, doc);
      const updated: MessageRecord = { ...m, doc, isRead: parsed.isRead ?? m.isRead, modifiedAt: nowIso(), changeKey: newChangeKey() };
      const readStateOnly = documentKept && !parsed.singleValueExtendedProperties?.length && !parsed.multiValueExtendedProperties?.length;
      if (!readStateOnly || !(writeReadStateNow(mr.ctx.store.db, updated) || (await mr.ctx.cache.withWriteMarker(mr.req.raw, undefined, (marker) => writeReadStateInOne(mr.ctx.store.db, updated, marker))))) {
        await tx(async (trx) => {
          await writePatchedMessage(trx, updated, parsed.present, documentKept);
          await writeExtendedProperties(trx, m.pk, parsed.singleValueExtendedProperties, parsed.multiValueExtendedProperties);
        });
      }
      // The bytes a GET of it answers (`$select` does not apply to this answer), kept for that GET.
      return sendJson(mr, 200, writtenMessageAnswer(mr, updated));
    }
    if (method === 'DELETE') {
      need(mr, 'write');
      const deletions = mr.mb.wellKnown.get('recoverableitemsdeletions')!;
      await tx((trx) => moveMessage(trx, m, m.folderId === deletions ? mr.mb.wellKnown.get('recoverableitemspurges')! : deletions, { hidden: true }));
      return send(mr, 204);
    }
    throw errors.mail.methodNotAllowedHere({ method });
  }
  const [seg, ...more] = rest;
  const lower = seg!.toLowerCase();
  if (lower === '$value' && more.length === 0) {
    if (method !== 'GET') throw errors.mail.valueGetOnly();
    need(mr, 'read');
    return mr.reply.code(200).header('content-type', 'text/plain').send(await att.toMime(db, m));
  }
  if (lower === 'attachments') return attachments(mr, method, m, more);
  if (lower === 'extensions') return extensions(mr, method, m, more);
  const action = actionNames.find((a) => a.toLowerCase() === lower);
  if (!action || more.length) throw errors.mail.segmentNotFound({ segment: seg! });
  if (method !== 'POST') throw errors.mail.methodNotAllowedForAction({ method, action });
  const dir = mr.ctx.identity.directory;
  switch (action) {
    case 'copy':
    case 'move': {
      need(mr, 'write');
      const dest = await getFolder(db, mr.mb, destinationId(mr.body));
      const out = await tx((trx) => (action === 'copy' ? copyMessage(trx, m, { tenantId: m.tenantId, mailboxId: m.mailboxId, folderId: dest.id }) : moveMessage(trx, m, dest.id)));
      return send(mr, 201, { '@odata.context': `${mr.ctx.origin()}/${mr.version}/$metadata#message`, '@odata.type': '#vendor.graph.message', ...(await presentOne(mr, out)) });
    }
    case 'createReply':
    case 'createReplyAll':
    case 'createForward':
    case 'reply':
    case 'replyAll':
    case 'forward': {
      const kind = action === 'createReply' || action === 'reply' ? 'reply' : action === 'createReplyAll' || action === 'replyAll' ? 'replyAll' : 'forward';
      const sendNow = !action.startsWith('create');
      need(mr, sendNow ? 'send' : 'write');
      // The MIME variant (base64, text/plain) carries the whole response message.
      const isMime = (typeof mr.body === 'string' || Buffer.isBuffer(mr.body)) && String(mr.body).trim() !== '';
      const input = isMime ? { message: mimeToInput(mr.body as string | Buffer) } : readReplyInput(mr.body, kind === 'forward');
      const draft = await tx(async (trx) => {
        const d = await buildResponseDraft(trx, dir, mr.mb, m, kind, input);
        const parsed = (d as MessageRecord & { parsed?: MessageInput }).parsed;
        if (parsed) await applyExtras(mr, trx, d, parsed);
        if (sendNow) await sendMessage(trx, dir, mr.mb, d, { saveToSentItems: true });
        return d;
      });
      if (sendNow) return send(mr, 202);
      return send(mr, 201, { '@odata.context': contextUrl(mr, 'messages/$entity'), ...(await presentOne(mr, draft)) });
    }
    case 'send': {
      need(mr, 'send');
      if (!m.isDraft) throw errors.mail.notADraftToSend();
      await tx((trx) => sendMessage(trx, dir, mr.mb, m, { saveToSentItems: true }));
      return send(mr, 202);
    }
    case 'permanentDelete': {
      need(mr, 'write');
      await tx((trx) => moveMessage(trx, m, mr.mb.wellKnown.get('recoverableitemspurges')!, { hidden: true }));
      return send(mr, 204);
    }
    case 'recall': {
      need(mr, 'write');
      if (m.folderId !== mr.mb.wellKnown.get('sentitems')) throw errors.mail.recallNotSent();
      // Unread delivered copies in the tenant are withdrawn into their mailboxes' Deletions folder.
      const copies = await db.selectFrom('mail_messages').selectAll().where('tenant_id', '=', m.tenantId).where('internet_message_id', '=', m.doc.internetMessageId).where('mailbox_id', '<>', m.mailboxId).where('is_read', '=', 0).execute();
      await tx(async (trx) => {
        for (const r of copies) {
          const c = messageFromRow(r);
          const f = await trx.selectFrom('mail_folders').select('id').where('tenant_id', '=', c.tenantId).where('mailbox_id', '=', c.mailboxId).where('well_known', '=', 'recoverableitemsdeletions').executeTakeFirst();
          if (f) await moveMessage(trx, c, (f as any).id, { hidden: true });
        }
      });
      return send(mr, 202, { '@odata.context': contextUrl(mr, 'messages/$entity'), ...(await presentOne(mr, m)) });
    }
    case 'unsubscribe': {
      need(mr, 'write');
      if (!m.doc.unsubscribeEnabled || !m.doc.unsubscribeData.some((d) => /^mailto:/i.test(d))) throw errors.mail.noUnsubscribe();
      const target = m.doc.unsubscribeData.find((d) => /^mailto:/i.test(d))!.slice(7).split('?')[0]!;
      await tx(async (trx) => {
        const doc = emptyDoc();
        doc.subject = 'Unsubscribe';
        doc.toRecipients = [{ emailAddress: { address: target, name: target } }];
        const [u] = await insertMessages(trx, [draftRecord(mr.mb, mr.mb.wellKnown.get('drafts')!, doc)]);
        await sendMessage(trx, dir, mr.mb, u!, { saveToSentItems: true });
        await moveMessage(trx, m, mr.mb.wellKnown.get('deleteditems')!);
      });
      return send(mr, 202);
    }
    case 'reportMessage': {
      need(mr, 'write');
      const o = (mr.body ?? {}) as Record<string, unknown>;
      const action = String(o.ReportAction ?? o.reportAction ?? '');
      const moveReq = o.IsMessageMoveRequested ?? o.isMessageMoveRequested;
      if (!['unknown', 'junk', 'notjunk', 'phish', 'unknownfuturevalue'].includes(action.toLowerCase())) throw errors.mail.invalidReportAction();
      let out = m;
      if (moveReq === true || moveReq === 'true') {
        const dest = action.toLowerCase() === 'notjunk' ? 'inbox' : action.toLowerCase() === 'junk' ? 'junkemail' : 'deleteditems';
        if (mr.mb.wellKnown.get(dest) !== m.folderId) out = await tx((trx) => moveMessage(trx, m, mr.mb.wellKnown.get(dest)!));
      }
      return send(mr, 200, { '@odata.context': contextUrl(mr, 'messages/$entity'), ...(await presentOne(mr, out)) });
    }
    case 'markAsJunk':
    case 'markAsNotJunk': {
      need(mr, 'write');
      const o = (mr.body ?? {}) as Record<string, unknown>;
      const flag = action === 'markAsJunk' ? (o.moveToJunk ?? o.MoveToJunk) : (o.moveToInbox ?? o.MoveToInbox);
      let out = m;
      const dest = action === 'markAsJunk' ? 'junkemail' : 'inbox';
      if ((flag === true || flag === 'true') && mr.mb.wellKnown.get(dest) !== m.folderId) out = await tx((trx) => moveMessage(trx, m, mr.mb.wellKnown.get(dest)!));
      // Spec mail §4.3: deprecated; they stop returning data on 30 December 2025.
      if (nowIso() >= '2025-12-30T00:00:00.000Z') return send(mr, 202);
      return send(mr, 202, { '@odata.context': contextUrl(mr, 'messages/$entity'), ...(await presentOne(mr, out)) });
    }
  }
  throw notFound();
}

async function attachments(mr: MailRequest, method: string, m: MessageRecord, rest: string[]): Promise<unknown> {
  const db = mr.ctx.store.db;
  const base = `${keySegment('messages', m.id)}/attachments`;
  if (rest.length === 0) {
    if (method === 'GET') {
      need(mr, 'read');
      const expandItem = /itemattachment\/item/i.test(mr.q.get('$expand') ?? '');
      return send(mr, 200, { '@odata.context': contextUrl(mr, base), value: (await att.listAttachments(db, m.pk)).map((a) => att.renderAttachment(a, expandItem)) });
    }
    if (method === 'POST') {
      need(mr, 'write');
      const { attachments: [a] } = await mr.ctx.store.transaction((trx) => att.addAttachments(trx, m, [mr.body]));
      return send(mr, 201, { '@odata.context': contextUrl(mr, `${base}/$entity`), ...att.renderAttachment(a!) });
    }
    throw errors.mail.methodNotAllowedHere({ method });
  }
  if (rest[0]!.toLowerCase() === 'createuploadsession' && rest.length === 1) {
    if (method !== 'POST') throw errors.mail.methodNotAllowedHere({ method });
    need(mr, 'write');
    return send(mr, 201, await createUploadSession(mr.ctx, m, mr.body, mr.version));
  }
  // The permission of the method is checked before the attachment is looked up (403 before 404, reference §9).
  need(mr, method === 'GET' ? 'read' : 'write');
  const a = await att.getAttachment(db, m.pk, rest[0]!);
  if (rest.length === 2 && rest[1] === '$value' && method === 'GET') {
    need(mr, 'read');
    if (a['@odata.type'] === '#vendor.graph.referenceAttachment') throw errors.mail.referenceAttachmentNoContent();
    if (a['@odata.type'] === '#vendor.graph.itemAttachment') {
      const item = (a as any)._item ?? {};
      const doc = emptyDoc();
      try {
        parseMessageInput(doc, Object.fromEntries(Object.entries(item).filter(([k]) => k !== '@odata.type')), 'create', true);
      } catch {
        /* an item with properties we do not model renders with what we have */
      }
      const tmp: MessageRecord = { ...m, pk: -1, doc };
      return mr.reply.code(200).header('content-type', 'message/rfc822').send(await att.toMime(db, tmp));
    }
    return mr.reply.code(200).header('content-type', String(a.contentType ?? 'application/octet-stream')).send(Buffer.from(String(a.contentBytes), 'base64'));
  }
  if (rest.length !== 1) throw errors.mail.segmentNotFound({ segment: String(rest[1]) });
  if (method === 'GET') {
    need(mr, 'read');
    const expandItem = /itemattachment\/item/i.test(mr.q.get('$expand') ?? '');
    return send(mr, 200, { '@odata.context': contextUrl(mr, `${base}/$entity`), ...att.renderAttachment(a, expandItem) });
  }
  if (method === 'DELETE') {
    need(mr, 'write');
    await mr.ctx.store.transaction((trx) => att.deleteAttachment(trx, m, rest[0]!));
    return send(mr, 204);
  }
  throw errors.mail.methodNotAllowedHere({ method });
}

async function extensions(mr: MailRequest, method: string, m: MessageRecord, rest: string[]): Promise<unknown> {
  const db = mr.ctx.store.db;
  const base = `${keySegment('messages', m.id)}/extensions`;
  if (rest.length === 0) {
    if (method === 'GET') {
      need(mr, 'read');
      return send(mr, 200, { '@odata.context': contextUrl(mr, base), value: await att.listExtensions(db, m.pk) });
    }
    if (method === 'POST') {
      need(mr, 'write');
      const e = await att.createExtension(db, m.pk, mr.body);
      return send(mr, 201, { '@odata.context': contextUrl(mr, `${base}/$entity`), ...e });
    }
  } else if (rest.length === 1) {
    if (method === 'GET') {
      need(mr, 'read');
      return send(mr, 200, { '@odata.context': contextUrl(mr, `${base}/$entity`), ...(await att.getExtension(db, m.pk, rest[0]!)) });
    }
    if (method === 'PATCH') {
      need(mr, 'write');
      return send(mr, 200, { '@odata.context': contextUrl(mr, `${base}/$entity`), ...(await att.replaceExtension(db, m.pk, rest[0]!, mr.body)) });
    }
    if (method === 'DELETE') {
      need(mr, 'write');
      await att.deleteExtension(db, m.pk, rest[0]!);
      return send(mr, 204);
    }
  }
  throw errors.mail.methodNotAllowedHere({ method });
}
