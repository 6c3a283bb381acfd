/**
 * The tables of the mailsync area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). MailsyncDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, autoKey, bigint, integer, nullable, text, type Tables } from '../../store/columns.ts';

/** The columns of the mailsync tables, by table (see the file comment). */
export const mailsyncColumns = defineTables({
  /** Created by `mailsync_0002_subscriptions`. */
  mail_notifications: {
    seq: autoKey(),
    tenant_id: text(),
    subscription_id: text(),
    kind: text(),
    url: text(),
    payload: text(),
    attempts: integer(),
    first_at: text(),
    due_at: text(),
    claim: nullable(text()),
  },
  /** Created by `mailsync_0002_subscriptions`. */
  mail_subscriptions: {
    id: text(),
    tenant_id: text(),
    mailbox_id: text(),
    app_id: text(),
    creator_id: text(),
    resource: text(),
    folder_id: nullable(text()),
    exclude_folders: text(),
    change_types: text(),
    notification_url: text(),
    lifecycle_url: nullable(text()),
    client_state: nullable(text()),
    expiration: text(),
    tls_version: text(),
    notification_url_app_id: nullable(text()),
    immutable: integer(),
    start_seq: bigint(),
    reauth_sent: integer(),
    created_at: text(),
    filter: nullable(text()),
  },
  /** Created by `mailsync_0002_subscriptions`. */
  mail_sync_state: {
    name: text(),
    seq: bigint(),
  },
  /** Created by `mailsync_0004_filters`. */
  mail_subscription_members: {
    subscription_id: text(),
    message_id: text(),
    inside: integer(),
  },
});

/** The mailsync tables as Kysely sees them. */
export type MailsyncDatabase = Tables<typeof mailsyncColumns>;
