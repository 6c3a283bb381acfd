/**
 * Storage of the change-notification area (reference mail.md §7): subscriptions, the
 * notification outbox (pending deliveries with their retry state, so a restart resumes) and
 * the worker's cursor over the mail change log — their migrations and the queries of the
 * subscription operations and the console.
 */
import type { Kysely } from 'kysely';
import { nowIso } from '../../core/clock.ts';
import { autoIncrementKey, fromJson, toJson, type Migrations } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';
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
};

/** The area's data tables, children first (cleared by the control-plane reset). */
export const mailsyncTables: (keyof MailsyncDatabase)[] = ['mail_subscription_members', 'mail_notifications', 'mail_subscriptions', 'mail_sync_state'];

/** A stored subscription. Times are ISO 8601 UTC with milliseconds. */
export interface Subscription {
  id: string;
  tenantId: string;
  /** The watched mailbox owner's object id. */
  mailboxId: string;
  /** `applicationId`: the client id of the token that created it. */
  appId: string;
  /** `creatorId`: the user (delegated) or service principal (app) that created it. */
  creatorId: string;
  /** The resource path as given (`me/mailFolders('Inbox')/messages`, …). */
  resource: string;
  /** The watched folder, or null for the whole mailbox. */
  folderId: string | null;
  /** Folders outside a mailbox-wide subscription (the recoverable-items tree and the roots). */
  excludeFolders: string[];
  /** The `$filter` of the resource, or null. */
  filter: string | null;
  /** Subset of `created`, `updated`, `deleted`, in the order given. */
  changeTypes: string[];
  notificationUrl: string;
  lifecycleUrl: string | null;
  clientState: string | null;
  expiration: string;
  tlsVersion: string;
  notificationUrlAppId: string | null;
  /** Notifications carry immutable ids (`Prefer: IdType="ImmutableId"` at creation). */
  immutable: boolean;
  /** The change-log position at creation: only later changes are notified. */
  startSeq: number;
  /** A `reauthorizationRequired` lifecycle notification was queued for the current expiration. */
  reauthSent: boolean;
  createdAt: string;
}

/** Row → {@link Subscription}. */
export function subscriptionFromRow(r: any): Subscription {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    mailboxId: r.mailbox_id,
    appId: r.app_id,
    creatorId: r.creator_id,
    resource: r.resource,
    folderId: r.folder_id ?? null,
    excludeFolders: fromJson<string[]>(r.exclude_folders) ?? [],
    filter: r.filter ?? null,
    changeTypes: String(r.change_types).split(','),
    notificationUrl: r.notification_url,
    lifecycleUrl: r.lifecycle_url ?? null,
    clientState: r.client_state ?? null,
    expiration: r.expiration,
    tlsVersion: r.tls_version,
    notificationUrlAppId: r.notification_url_app_id ?? null,
    immutable: Number(r.immutable) === 1,
    startSeq: Number(r.start_seq),
    reauthSent: Number(r.reauth_sent) === 1,
    createdAt: r.created_at,
  };
}

/** A subscription by id, visible only to the app (and, for a delegated token, the user) that created it. */
export async function findSubscription(db: Kysely<Database>, who: { tenantId: string; appId: string; creatorId?: string }, id: string): Promise<Subscription | undefined> {
  let q = db.selectFrom('mail_subscriptions').selectAll().where('id', '=', id).where('tenant_id', '=', who.tenantId).where('app_id', '=', who.appId);
  if (who.creatorId !== undefined) q = q.where('creator_id', '=', who.creatorId);
  const r = await q.executeTakeFirst();
  return r ? subscriptionFromRow(r) : undefined;
}

/**
 * Removes a subscription with its queued change notifications and its filter membership (lifecycle
 * notifications already queued stay). Call it in a transaction.
 * @returns whether the subscription existed
 */
export async function deleteSubscriptionRows(trx: Kysely<Database>, id: string, tenantId: string): Promise<boolean> {
  const r = await trx.deleteFrom('mail_subscriptions').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  await trx.deleteFrom('mail_notifications').where('subscription_id', '=', id).where('kind', '=', 'change').execute();
  await trx.deleteFrom('mail_subscription_members').where('subscription_id', '=', id).execute();
  return Number(r.numDeletedRows) === 1;
}

/** Subscriptions on a mailbox that have not expired, across all apps. */
export async function countActiveSubscriptions(db: Kysely<Database>, tenantId: string, mailboxId: string): Promise<number> {
  const active = await db
    .selectFrom('mail_subscriptions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('mailbox_id', '=', mailboxId)
    .where('expiration', '>', nowIso())
    .executeTakeFirst();
  return Number(active?.n ?? 0);
}

/** Stores a new subscription. */
export async function insertSubscription(db: Kysely<Database>, sub: Subscription): Promise<void> {
  await db
    .insertInto('mail_subscriptions')
    .values({
      id: sub.id,
      tenant_id: sub.tenantId,
      mailbox_id: sub.mailboxId,
      app_id: sub.appId,
      creator_id: sub.creatorId,
      resource: sub.resource,
      folder_id: sub.folderId,
      exclude_folders: toJson(sub.excludeFolders),
      filter: sub.filter,
      change_types: sub.changeTypes.join(','),
      notification_url: sub.notificationUrl,
      lifecycle_url: sub.lifecycleUrl,
      client_state: sub.clientState,
      expiration: sub.expiration,
      tls_version: sub.tlsVersion,
      notification_url_app_id: sub.notificationUrlAppId,
      immutable: sub.immutable ? 1 : 0,
      start_seq: sub.startSeq,
      reauth_sent: 0,
      created_at: sub.createdAt,
    })
    .execute();
}

/**
 * The unexpired subscriptions the app (and, for a delegated token, the user) created, by id
 * after `after` (`''` for the first page), at most `limit`.
 */
export async function listSubscriptions(db: Kysely<Database>, o: { tenantId: string; appId: string; creatorId?: string }, after: string, limit: number): Promise<Subscription[]> {
  let sel = db.selectFrom('mail_subscriptions').selectAll().where('tenant_id', '=', o.tenantId).where('app_id', '=', o.appId).where('expiration', '>', nowIso()).where('id', '>', after);
  if (o.creatorId !== undefined) sel = sel.where('creator_id', '=', o.creatorId);
  const rows = await sel.orderBy('id').limit(limit).execute();
  return rows.map(subscriptionFromRow);
}

/**
 * Writes a renewal's column changes (`expiration`, `reauth_sent`, `notification_url`).
 * @returns whether the subscription still existed
 */
export async function updateSubscriptionRow(trx: Kysely<Database>, id: string, tenantId: string, changes: Record<string, unknown>): Promise<boolean> {
  const r = await trx.updateTable('mail_subscriptions').set(changes).where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  return Number(r.numUpdatedRows) !== 0;
}

/** Points a subscription's queued change notifications at its new receiver, the unclaimed ones due now. */
export async function retargetChangeNotifications(trx: Kysely<Database>, id: string, url: string): Promise<void> {
  await trx.updateTable('mail_notifications').set({ url }).where('subscription_id', '=', id).where('kind', '=', 'change').execute();
  await trx.updateTable('mail_notifications').set({ due_at: nowIso() }).where('subscription_id', '=', id).where('kind', '=', 'change').where('claim', 'is', null).execute();
}

/** Lets a subscription be sent a `reauthorizationRequired` notification again. */
export async function resetReauthorization(db: Kysely<Database>, id: string, tenantId: string): Promise<void> {
  await db.updateTable('mail_subscriptions').set({ reauth_sent: 0 }).where('id', '=', id).where('tenant_id', '=', tenantId).execute();
}

/** Every subscription of every tenant, newest first (at most `limit`), for the console. */
export async function listAllSubscriptions(db: Kysely<Database>, limit = 500): Promise<Subscription[]> {
  const rows = await db.selectFrom('mail_subscriptions').selectAll().orderBy('created_at', 'desc').orderBy('id').limit(limit).execute();
  return rows.map(subscriptionFromRow);
}

/** The delivery queue of one subscription: queued notifications, the most attempts so far, the next due time. */
export interface QueueSummary {
  subscriptionId: string;
  kind: string;
  queued: number;
  attempts: number;
  /** ISO 8601 UTC. */
  firstQueued: string;
  nextDue: string;
}

/** The outbox grouped by subscription and kind (change / lifecycle). */
export async function deliveryQueue(db: Kysely<Database>): Promise<QueueSummary[]> {
  const rows = (await db
    .selectFrom('mail_notifications')
    .select(['subscription_id', 'kind'])
    .select((eb) => [eb.fn.countAll().as('n'), eb.fn.max('attempts').as('attempts'), eb.fn.min('first_at').as('first_at'), eb.fn.min('due_at').as('due_at')])
    .groupBy(['subscription_id', 'kind'])
    .execute()) as any[];
  return rows.map((r) => ({ subscriptionId: r.subscription_id, kind: r.kind, queued: Number(r.n), attempts: Number(r.attempts), firstQueued: r.first_at, nextDue: r.due_at }));
}
