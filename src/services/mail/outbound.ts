/**
 * Outbound mail: messages sent to recipients outside the sender's tenant are recorded as
 * delivered outbound (issue 5; the control plane lists them). One row per sent message.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { newUuid } from '../../core/ids.ts';
import { fromJson, toJson } from '../../store/db.ts';
import type { MessageRecord } from './message.ts';
import type { Mailbox } from './store.ts';
import type { Database } from '../../store/database.ts';

/** One recorded outbound message. */
export interface OutboundMail {
  id: string;
  tenantId: string;
  /** The sending mailbox owner's object id. */
  mailboxId: string;
  /** The sender's address. */
  from: string;
  /** The external recipients' addresses. */
  recipients: string[];
  subject: string;
  internetMessageId: string;
  /** ISO 8601 UTC. */
  sentDateTime: string;
  /** The message as sent (subject, body, recipients…). */
  message: Record<string, unknown>;
}

/** Records one sent message for its external recipients (inside the send transaction). */
export async function recordOutbound(db: Kysely<Database>, mb: Mailbox, m: MessageRecord, recipients: string[]): Promise<void> {
  const d = m.doc;
  await db
    .insertInto('mail_outbound')
    .values({
      id: newUuid(),
      tenant_id: mb.tenantId,
      mailbox_id: mb.mailboxId,
      internet_message_id: d.internetMessageId,
      sender: mb.address,
      recipients: toJson(recipients),
      subject: d.subject,
      sent_at: m.sentAt ?? m.modifiedAt,
      doc: toJson({ subject: d.subject, body: d.body, from: d.from, toRecipients: d.toRecipients, ccRecipients: d.ccRecipients, bccRecipients: d.bccRecipients, internetMessageId: d.internetMessageId, conversationId: d.conversationId }),
    })
    .execute();
}

/**
 * Outbound mail of a tenant, newest first (at most `limit`, default 1000).
 * For the control plane (`GET /_stratus/...`, exposed by the lead).
 */
export async function listOutboundMail(ctx: AppContext, tenantId: string, limit = 1000): Promise<OutboundMail[]> {
  const rows = await ctx.store.db.selectFrom('mail_outbound').selectAll().where('tenant_id', '=', tenantId).orderBy('sent_at', 'desc').orderBy('id').limit(limit).execute();
  return rows.map((r: any) => ({
    id: r.id,
    tenantId: r.tenant_id,
    mailboxId: r.mailbox_id,
    from: r.sender,
    recipients: fromJson<string[]>(r.recipients),
    subject: r.subject,
    internetMessageId: r.internet_message_id,
    sentDateTime: r.sent_at,
    message: fromJson<Record<string, unknown>>(r.doc),
  }));
}
