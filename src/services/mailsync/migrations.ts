/**
 * Tables of the change-notification area (reference mail.md §7): subscriptions, the
 * notification outbox (pending deliveries with their retry state, so a restart resumes) and
 * the worker's cursor over the mail change log.
 */
import type { Kysely } from 'kysely';
import { autoIncrementKey, type Migrations } from '../../store/db.ts';
import type { MailsyncDatabase } from './tables.ts';

/** Migrations of `mail_subscriptions`, `mail_subscription_members`, `mail_notifications` and `mail_sync_state`. */
export const mailsyncMigrations: Migrations = {
  mailsync_0002_subscriptions: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mail_subscriptions')
        .addColumn('id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('creator_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('resource', 'varchar(2048)', (c) => c.notNull())
        .addColumn('folder_id', 'varchar(512)')
        .addColumn('exclude_folders', 'text', (c) => c.notNull())
        .addColumn('change_types', 'varchar(64)', (c) => c.notNull())
        .addColumn('notification_url', 'text', (c) => c.notNull())
        .addColumn('lifecycle_url', 'text')
        .addColumn('client_state', 'varchar(256)')
        .addColumn('expiration', 'varchar(32)', (c) => c.notNull())
        .addColumn('tls_version', 'varchar(8)', (c) => c.notNull())
        .addColumn('notification_url_app_id', 'varchar(64)')
        .addColumn('immutable', 'integer', (c) => c.notNull())
        .addColumn('start_seq', 'bigint', (c) => c.notNull())
        .addColumn('reauth_sent', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_subscriptions_mailbox').on('mail_subscriptions').columns(['tenant_id', 'mailbox_id', 'expiration']).execute();
      await db.schema.createIndex('mail_subscriptions_app').on('mail_subscriptions').columns(['tenant_id', 'app_id', 'creator_id', 'id']).execute();
      await db.schema.createIndex('mail_subscriptions_expiration').on('mail_subscriptions').columns(['expiration']).execute();

      await db.schema
        .createTable('mail_notifications')
        .addColumn('seq', ...autoIncrementKey(db))
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('subscription_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('first_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('due_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('claim', 'varchar(64)')
        .execute();
      await db.schema.createIndex('mail_notifications_due').on('mail_notifications').columns(['due_at', 'seq']).execute();
      await db.schema.createIndex('mail_notifications_subscription').on('mail_notifications').columns(['subscription_id', 'kind']).execute();
      await db.schema.createIndex('mail_notifications_claim').on('mail_notifications').columns(['claim']).execute();

      await db.schema
        .createTable('mail_sync_state')
        .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
  mailsync_0003_notifications_by_receiver: {
    async up(db: Kysely<unknown>) {
      // Due notifications grouped per receiver (delivery picks receivers, then their rows).
      await db.schema.createIndex('mail_notifications_receiver').on('mail_notifications').columns(['kind', 'url', 'due_at', 'seq']).execute();
    },
  },
  mailsync_0004_filters: {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('mail_subscriptions').addColumn('filter', 'text').execute();
      // What a filtered subscription knows of a message: inside or outside its filter (reference mail §7.3).
      await db.schema
        .createTable('mail_subscription_members')
        .addColumn('subscription_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('message_id', 'varchar(512)', (c) => c.notNull())
        .addColumn('inside', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('mail_subscription_members_pk', ['subscription_id', 'message_id'])
        .execute();
    },
  },
  mailsync_0005_start_index: {
    /** The worker reads the oldest subscription's start every tick (`readWorkerState`): `min(start_seq)` from this index, not a scan of the subscriptions. */
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('mail_subscriptions_start').on('mail_subscriptions').columns(['start_seq']).execute();
    },
  },
};

/** The area's data tables, children first (cleared by the control-plane reset). */
export const mailsyncTables: (keyof MailsyncDatabase)[] = ['mail_subscription_members', 'mail_notifications', 'mail_subscriptions', 'mail_sync_state'];
