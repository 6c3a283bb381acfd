/**
 * The tables of the mailsync area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */
import type { Int8, Int8Key } from '../../store/tables.ts';

/** A row of `mail_changes` (created by migration `mailsync_0001_mail_changes`). */
export interface MailChangesTable {
  seq: Int8Key;
  tenant_id: string;
  mailbox_id: string;
  folder_id: string;
  message_id: string;
  change_type: string;
  at: string;
}

/** A row of `mail_notifications` (created by migration `mailsync_0002_subscriptions`). */
export interface MailNotificationsTable {
  seq: Int8Key;
  tenant_id: string;
  subscription_id: string;
  kind: string;
  url: string;
  payload: string;
  attempts: number;
  first_at: string;
  due_at: string;
  claim: string | null;
}

/** A row of `mail_subscriptions` (created by migration `mailsync_0002_subscriptions`). */
export interface MailSubscriptionsTable {
  id: string;
  tenant_id: string;
  mailbox_id: string;
  app_id: string;
  creator_id: string;
  resource: string;
  folder_id: string | null;
  exclude_folders: string;
  change_types: string;
  notification_url: string;
  lifecycle_url: string | null;
  client_state: string | null;
  expiration: string;
  tls_version: string;
  notification_url_app_id: string | null;
  immutable: number;
  start_seq: Int8;
  reauth_sent: number;
  created_at: string;
  filter: string | null;
}

/** A row of `mail_sync_state` (created by migration `mailsync_0002_subscriptions`). */
export interface MailSyncStateTable {
  name: string;
  seq: Int8;
}

/** A row of `mail_subscription_members` (created by migration `mailsync_0004_filters`). */
export interface MailSubscriptionMembersTable {
  subscription_id: string;
  message_id: string;
  inside: number;
}

export interface MailsyncDatabase {
  mail_changes: MailChangesTable;
  mail_notifications: MailNotificationsTable;
  mail_subscriptions: MailSubscriptionsTable;
  mail_sync_state: MailSyncStateTable;
  mail_subscription_members: MailSubscriptionMembersTable;
}
