/**
 * Attachment upload sessions for files of 3–150 MB (reference mail.md §2.9):
 * `POST …/attachments/createUploadSession` returns an absolute `uploadUrl` that takes the
 * bytes in order with `PUT` + `Content-Range` (≤ 4 MB per chunk, no `Authorization`: the URL
 * carries the session token); the last chunk creates the attachment (201 + `Location`);
 * `DELETE {uploadUrl}` cancels.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { randomToken } from '../../core/ids.ts';
import { newChangeKey } from './ids.ts';
import { keySegment } from './paths.ts';
import { insertAttachment } from './attachments.ts';
import { checkLength, computeHasAttachments, messageFromRow, updateMessage } from './store.ts';
import type { MessageRecord } from './message.ts';

/** Smallest and largest attachment accepted through a session, and largest chunk (bytes). */
export const uploadLimits = { min: 3 * 1024 * 1024, max: 150 * 1024 * 1024, chunk: 4 * 1024 * 1024 } as const;
const lifetimeMs = 24 * 3600 * 1000;

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * Opens a session for a message. Body `{"AttachmentItem":{attachmentType:"file", name, size, isInline?, contentId?, contentType?}}`.
 * @throws ApiError 400 `ErrorAttachmentSizeShouldNotBeLessThanMinimumSize`, `ErrorAttachmentSizeLimitExceeded`, `ErrorInvalidRequest`
 */
export async function createUploadSession(ctx: AppContext, m: MessageRecord, body: unknown, version: string): Promise<Record<string, unknown>> {
  const o = (body ?? {}) as Record<string, unknown>;
  const item = (o.AttachmentItem ?? o.attachmentItem) as Record<string, unknown> | undefined;
  if (!item || typeof item !== 'object') throw errors.mail.attachmentItemRequired();
  if (item.attachmentType !== undefined && String(item.attachmentType).toLowerCase() !== 'file') throw errors.mail.uploadFileOnly();
  if (typeof item.name !== 'string' || !item.name) throw errors.mail.attachmentItemName();
  checkLength(item.name, 400, 'name');
  if (typeof item.contentType === 'string') checkLength(item.contentType, 200, 'contentType');
  if (typeof item.contentId === 'string') checkLength(item.contentId, 400, 'contentId');
  const size = Number(item.size);
  if (!Number.isInteger(size) || size < 0) throw errors.mail.attachmentItemSize();
  if (size < uploadLimits.min) throw errors.mail.uploadTooSmall({ min: uploadLimits.min });
  if (size > uploadLimits.max) throw errors.mail.uploadTooLarge({ max: uploadLimits.max });
  const token = randomToken(32);
  const expires = nowMs() + lifetimeMs;
  await ctx.store.db
    .insertInto('mail_upload_sessions')
    .values({ token, tenant_id: m.tenantId, mailbox_id: m.mailboxId, message_pk: m.pk, name: item.name, size, content_type: typeof item.contentType === 'string' ? item.contentType : 'application/octet-stream', is_inline: item.isInline === true ? 1 : 0, content_id: typeof item.contentId === 'string' ? item.contentId : null, next_offset: 0, expires_at: new Date(expires).toISOString() })
    .execute();
  return { '@odata.context': `${ctx.origin()}/${version}/$metadata#vendor.graph.uploadSession`, uploadUrl: `${ctx.origin()}/${version}/_mailupload/${token}`, expirationDateTime: iso(expires), nextExpectedRanges: ['0-'] };
}

/** Registers the upload URL routes (PUT a chunk, DELETE to cancel). */
export function registerUploadRoutes(app: FastifyInstance, ctx: AppContext): void {
  const find = async (token: string) => {
    if (!/^[A-Za-z0-9_-]{1,100}$/.test(token)) throw errors.mail.uploadSessionNotFound();
    const r: any = await ctx.store.db.selectFrom('mail_upload_sessions').selectAll().where('token', '=', token).executeTakeFirst();
    if (!r || r.expires_at < nowIso()) throw errors.mail.uploadSessionNotFound();
    return r;
  };
  for (const version of ['v1.0', 'beta']) {
    app.delete(`/${version}/_mailupload/:token`, { config: { family: 'mail' } as any }, async (req, reply) => {
      const s = await find((req.params as { token: string }).token);
      await ctx.store.transaction(async (trx) => {
        await trx.deleteFrom('mail_upload_chunks').where('token', '=', s.token).execute();
        await trx.deleteFrom('mail_upload_sessions').where('token', '=', s.token).execute();
      });
      return reply.code(204).send();
    });
    app.put(`/${version}/_mailupload/:token`, { config: { family: 'mail' } as any }, async (req, reply) => {
      const s = await find((req.params as { token: string }).token);
      const body = Buffer.isBuffer(req.body) ? req.body : typeof req.body === 'string' ? Buffer.from(req.body) : undefined;
      if (!body) throw errors.mail.chunkNotOctetStream();
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(req.headers['content-range'] ?? ''));
      if (!m) throw errors.mail.contentRangeRequired();
      const [start, end, total] = [Number(m[1]), Number(m[2]), Number(m[3])];
      if (total !== s.size || start !== Number(s.next_offset) || end < start || end >= total || end - start + 1 !== body.length || body.length > uploadLimits.chunk) {
        throw errors.mail.contentRangeUnexpected({ offset: s.next_offset, size: s.size, chunk: uploadLimits.chunk });
      }
      const next = end + 1;
      const done = await ctx.store.transaction(async (trx) => {
        // Claim the range first, conditionally: of two concurrent PUTs of the same range one wins, the other gets the 416 (not a duplicate-key 500).
        const claimed = await trx.updateTable('mail_upload_sessions').set({ next_offset: next }).where('token', '=', s.token).where('next_offset', '=', start).executeTakeFirst();
        if (Number(claimed.numUpdatedRows) !== 1) throw errors.mail.contentRangeReceived({ start });
        await trx.insertInto('mail_upload_chunks').values({ token: s.token, start_offset: start, data: body.toString('base64') }).execute();
        if (next < total) return undefined;
        const chunks = await trx.selectFrom('mail_upload_chunks').select('data').where('token', '=', s.token).orderBy('start_offset').execute();
        const bytes = Buffer.concat(chunks.map((c: any) => Buffer.from(c.data, 'base64')));
        const row = await trx.selectFrom('mail_messages').selectAll().where('pk', '=', s.message_pk).executeTakeFirst();
        if (!row) throw errors.mail.itemNotFound();
        const msg = messageFromRow(row);
        const att = await insertAttachment(trx, msg.pk, { '@odata.type': '#vendor.graph.fileAttachment', name: s.name, contentType: s.content_type, contentBytes: bytes.toString('base64'), isInline: !!Number(s.is_inline), contentId: s.content_id ?? undefined }, uploadLimits.max);
        await updateMessage(trx, { ...msg, hasAttachments: await computeHasAttachments(trx, msg.pk), modifiedAt: nowIso(), changeKey: newChangeKey() });
        await trx.deleteFrom('mail_upload_chunks').where('token', '=', s.token).execute();
        await trx.deleteFrom('mail_upload_sessions').where('token', '=', s.token).execute();
        return { msg, att };
      });
      if (!done) return reply.code(200).header('content-type', 'application/json').send(JSON.stringify({ expirationDateTime: iso(Date.parse(s.expires_at)), nextExpectedRanges: [String(next)] }));
      reply.header('Location', `${ctx.origin()}/${version}/${keySegment('users', done.msg.mailboxId)}/${keySegment('messages', done.msg.id)}/${keySegment('attachments', String(done.att.id))}`);
      return reply.code(201).send();
    });
  }
}
