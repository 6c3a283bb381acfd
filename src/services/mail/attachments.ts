/**
 * Attachments (file, item, reference; reference mail.md §2.9) and open extensions (§2.10)
 * of a message, and the MIME rendering used by `$value`.
 */
import type { Kysely } from 'kysely';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { fromJson, toJson } from '../../store/db.ts';
import { newAttachmentId, newChangeKey } from './ids.ts';
import { bodyText, toSecond, type MessageRecord, type Recipient } from './message.ts';
import { checkLength, computeHasAttachments, updateMessage } from './store.ts';
import type { Database } from '../../store/database.ts';

/** Largest attachment accepted in one POST, bytes (reference §2.9: under 3 MB). */
export const maxAttachmentBytes = 3 * 1024 * 1024;

const kindOf = (t: unknown): 'file' | 'item' | 'reference' | undefined => {
  if (typeof t !== 'string') return undefined;
  const m = /\.?(file|item|reference)Attachment$/i.exec(t);
  return m ? (m[1]!.toLowerCase() as 'file' | 'item' | 'reference') : undefined;
};

/**
 * Validates an attachment body and stores it on the message (no change-log entry; the caller
 * updates the message).
 * @throws ApiError 400 `RequestBodyRead` / `ErrorInvalidRequest`, 413 `ErrorAttachmentSizeLimitExceeded`
 */
export async function insertAttachment(db: Kysely<Database>, messagePk: number, input: unknown, maxBytes = maxAttachmentBytes): Promise<Record<string, unknown>> {
  if (!input || typeof input !== 'object' || Array.isArray(input) || Buffer.isBuffer(input)) throw errors.mail.attachmentBodyNotObject();
  const o = input as Record<string, unknown>;
  const kind = kindOf(o['@odata.type']);
  if (!kind) throw errors.mail.attachmentTypeRequired();
  if (typeof o.name !== 'string' || o.name === '') throw errors.mail.attachmentNameRequired();
  checkLength(o.name, 400, 'name');
  if (typeof o.contentType === 'string') checkLength(o.contentType, 200, 'contentType');
  const id = newAttachmentId();
  const at = nowIso();
  const isInline = o.isInline === true || o.isInline === 'true';
  let doc: Record<string, unknown>;
  let size: number;
  let contentType: string | null;
  if (kind === 'file') {
    if (typeof o.contentBytes !== 'string' || !/^[A-Za-z0-9+/=\s]*$/.test(o.contentBytes)) throw errors.mail.fileAttachmentBytes();
    const bytes = Buffer.from(o.contentBytes, 'base64');
    size = bytes.length;
    if (size > maxBytes) throw errors.mail.attachmentTooLarge({ size, max: maxAttachmentBytes });
    contentType = typeof o.contentType === 'string' ? o.contentType : 'application/octet-stream';
    doc = { '@odata.type': '#vendor.graph.fileAttachment', id, lastModifiedDateTime: toSecond(at), name: o.name, contentType, size, isInline, contentId: typeof o.contentId === 'string' ? o.contentId : null, contentLocation: null, contentBytes: bytes.toString('base64') };
  } else if (kind === 'item') {
    if (!o.item || typeof o.item !== 'object') throw errors.mail.itemAttachmentItem();
    const item = { '@odata.type': '#vendor.graph.message', ...(o.item as Record<string, unknown>) };
    size = Buffer.byteLength(JSON.stringify(item));
    contentType = null;
    doc = { '@odata.type': '#vendor.graph.itemAttachment', id, lastModifiedDateTime: toSecond(at), name: o.name, contentType: null, size, isInline: false, _item: item };
  } else {
    const sourceUrl = typeof o.sourceUrl === 'string' ? o.sourceUrl : null;
    size = 0;
    contentType = typeof o.contentType === 'string' ? o.contentType : null;
    doc = { '@odata.type': '#vendor.graph.referenceAttachment', id, lastModifiedDateTime: toSecond(at), name: o.name, contentType, size, isInline: false, sourceUrl };
  }
  await db.insertInto('mail_attachments').values({ id, message_pk: messagePk, kind, name: o.name, content_type: contentType, size, is_inline: isInline ? 1 : 0, modified_at: at, doc: toJson(doc) }).execute();
  return doc;
}

/** The JSON of a stored attachment (`withItem`: expand an item attachment's `item`). */
export function renderAttachment(doc: Record<string, unknown>, withItem = false): Record<string, unknown> {
  const { _item, ...rest } = doc;
  return withItem && _item ? { ...rest, item: _item } : rest;
}

/** Adds attachments and refreshes the message's `hasAttachments`, change key and time (records `updated`). */
export async function addAttachments(db: Kysely<Database>, m: MessageRecord, inputs: unknown[]): Promise<{ message: MessageRecord; attachments: Record<string, unknown>[] }> {
  const out = [];
  for (const a of inputs) out.push(await insertAttachment(db, m.pk, a));
  const message: MessageRecord = { ...m, hasAttachments: await computeHasAttachments(db, m.pk), modifiedAt: nowIso(), changeKey: newChangeKey() };
  await updateMessage(db, message);
  return { message, attachments: out };
}

/** Attachments of a message, oldest first. */
export async function listAttachments(db: Kysely<Database>, pk: number): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom('mail_attachments').select('doc').where('message_pk', '=', pk).orderBy('modified_at').orderBy('id').execute();
  return rows.map((r: any) => fromJson<Record<string, unknown>>(r.doc));
}

/** One attachment. @throws ApiError 404 `ErrorItemNotFound` */
export async function getAttachment(db: Kysely<Database>, pk: number, id: string): Promise<Record<string, unknown>> {
  const r = await db.selectFrom('mail_attachments').select('doc').where('message_pk', '=', pk).where('id', '=', id).executeTakeFirst();
  if (!r) throw errors.mail.itemNotFound();
  return fromJson<Record<string, unknown>>((r as any).doc);
}

/** Deletes an attachment and refreshes the message. @throws ApiError 404 */
export async function deleteAttachment(db: Kysely<Database>, m: MessageRecord, id: string): Promise<void> {
  await getAttachment(db, m.pk, id);
  await db.deleteFrom('mail_attachments').where('message_pk', '=', m.pk).where('id', '=', id).execute();
  await updateMessage(db, { ...m, hasAttachments: await computeHasAttachments(db, m.pk), modifiedAt: nowIso(), changeKey: newChangeKey() });
}

// ---------------------------------------------------------------------------------------
// Open extensions

const extPrefix = 'vendor.graph.openTypeExtension.';

/** The extension name an id or name refers to. */
export function extensionName(idOrName: string): string {
  return idOrName.replace(/^[A-Za-z.]*openTypeExtension\./i, '');
}

/**
 * Creates an open extension; `extensionName` is required and unique per message.
 * @throws ApiError 400 `ErrorInvalidRequest`, 409 `ErrorItemAlreadyExists`
 */
export async function createExtension(db: Kysely<Database>, pk: number, input: unknown): Promise<Record<string, unknown>> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw errors.mail.extensionBodyNotObject();
  const o = { ...(input as Record<string, unknown>) };
  const name = o.extensionName;
  if (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,200}$/.test(name)) throw errors.mail.extensionNameRequired();
  const exists = await db.selectFrom('mail_extensions').select('name').where('message_pk', '=', pk).where('name', '=', name).executeTakeFirst();
  if (exists) throw errors.mail.extensionExists({ name });
  delete o['@odata.type'];
  delete o.id;
  const doc = { '@odata.type': '#vendor.graph.openTypeExtension', id: extPrefix + name, ...o, extensionName: name };
  await db.insertInto('mail_extensions').values({ message_pk: pk, name, doc: toJson(doc) }).execute();
  return doc;
}

/** An open extension by name or id. @throws ApiError 404 */
export async function getExtension(db: Kysely<Database>, pk: number, idOrName: string): Promise<Record<string, unknown>> {
  const r = await db.selectFrom('mail_extensions').select('doc').where('message_pk', '=', pk).where('name', '=', extensionName(idOrName)).executeTakeFirst();
  if (!r) throw errors.mail.itemNotFound();
  return fromJson((r as any).doc);
}

/** Replaces an extension's properties (PATCH replaces the whole set, reference §2.10). */
export async function replaceExtension(db: Kysely<Database>, pk: number, idOrName: string, input: unknown): Promise<Record<string, unknown>> {
  const cur = await getExtension(db, pk, idOrName);
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw errors.mail.extensionBodyNotObject();
  const o = { ...(input as Record<string, unknown>) };
  delete o['@odata.type'];
  delete o.id;
  delete o.extensionName;
  for (const k of Object.keys(o)) if (o[k] === null) delete o[k];
  const doc = { '@odata.type': cur['@odata.type'], id: cur.id, extensionName: cur.extensionName, ...o };
  await db.updateTable('mail_extensions').set({ doc: toJson(doc) }).where('message_pk', '=', pk).where('name', '=', cur.extensionName as string).execute();
  return doc;
}

/** Deletes an extension. @throws ApiError 404 */
export async function deleteExtension(db: Kysely<Database>, pk: number, idOrName: string): Promise<void> {
  const cur = await getExtension(db, pk, idOrName);
  await db.deleteFrom('mail_extensions').where('message_pk', '=', pk).where('name', '=', cur.extensionName as string).execute();
}

/** Extensions of a message. */
export async function listExtensions(db: Kysely<Database>, pk: number): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom('mail_extensions').select('doc').where('message_pk', '=', pk).orderBy('name').execute();
  return rows.map((r: any) => fromJson(r.doc));
}

// ---------------------------------------------------------------------------------------
// MIME

const addr = (r: Recipient) => (r.emailAddress.name && r.emailAddress.name !== r.emailAddress.address ? `"${r.emailAddress.name.replace(/"/g, "'")}" <${r.emailAddress.address}>` : `<${r.emailAddress.address}>`);

/** An RFC 5322 / MIME rendering of a message (`GET …/$value`), with its file attachments. */
export async function toMime(db: Kysely<Database>, m: MessageRecord): Promise<string> {
  const d = m.doc;
  const lines: string[] = [];
  if (d.from) lines.push(`From: ${addr(d.from)}`);
  if (d.toRecipients.length) lines.push(`To: ${d.toRecipients.map(addr).join(', ')}`);
  if (d.ccRecipients.length) lines.push(`Cc: ${d.ccRecipients.map(addr).join(', ')}`);
  lines.push(`Subject: ${d.subject}`);
  lines.push(`Date: ${new Date(m.sentAt ?? m.createdAt).toUTCString().replace('GMT', '+0000')}`);
  lines.push(`Message-ID: ${d.internetMessageId}`);
  for (const h of d.internetMessageHeaders) lines.push(`${h.name}: ${h.value}`);
  lines.push('MIME-Version: 1.0');
  const atts = (await listAttachments(db, m.pk)).filter((a) => a['@odata.type'] === '#vendor.graph.fileAttachment');
  const part = (b: { contentType: string; content: string }) => [`Content-Type: ${b.contentType === 'html' ? 'text/html' : 'text/plain'}; charset="utf-8"`, 'Content-Transfer-Encoding: base64', '', Buffer.from(b.content, 'utf8').toString('base64').replace(/.{76}/g, '$&\r\n')];
  if (atts.length === 0) {
    lines.push(...part(d.body));
  } else {
    const boundary = `_000_${m.immutableId.slice(4, 24)}_`;
    lines.push(`Content-Type: multipart/mixed; boundary="${boundary}"`, '', `--${boundary}`, ...part(d.body));
    for (const a of atts) {
      lines.push(`--${boundary}`, `Content-Type: ${a.contentType}; name="${a.name}"`, `Content-Disposition: ${a.isInline ? 'inline' : 'attachment'}; filename="${a.name}"`, 'Content-Transfer-Encoding: base64', '', String(a.contentBytes).replace(/.{76}/g, '$&\r\n'));
    }
    lines.push(`--${boundary}--`);
  }
  void bodyText;
  return lines.join('\r\n') + '\r\n';
}
