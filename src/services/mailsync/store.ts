/**
 * Storage of the change-notification area (reference mail.md §7): subscriptions, the
 * notification outbox (pending deliveries with their retry state, so a restart resumes) and
 * the worker's cursor over the mail change log: the queries of the subscription operations,
 * the notification worker and the console (the migrations are in `migrations.ts`).
 */
import { sql, type Kysely } from 'kysely';
import { nowIso } from '../../core/clock.ts';
import { fromJson, toJson } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';

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

/** One queued notification (a `mail_notifications` row to insert). */
export interface OutboxRow {
  tenant_id: string;
  subscription_id: string;
  kind: 'change' | 'lifecycle';
  url: string;
  payload: string;
  attempts: number;
  first_at: string;
  due_at: string;
  claim: null;
}

/** Queues notifications. */
export async function insertNotifications(db: Kysely<Database>, rows: OutboxRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('mail_notifications').values(rows.slice(i, i + 200)).execute();
}

// ---- the matcher's cursor over the change log and filter membership (match.ts) ----

/** What a tick of the worker starts from ({@link readWorkerState}). */
export interface WorkerState {
  /** The cursor: the last change-log `seq` matched; undefined until it is first made, with a subscription. */
  cursor: number | undefined;
  /** The oldest subscription's `start_seq`; undefined when no subscription exists. */
  floor: number | undefined;
  /** Whether some notification is queued. */
  queued: boolean;
}

/**
 * The cursor, the oldest subscription's start and whether a notification is queued, in one read
 * and no write (issue 31). Without a subscription no change can give a notification (a
 * subscription made later sees only the changes after its `startSeq`, the end of the log when it
 * was made), so the cursor is left where it is; once a subscription exists, a cursor below the
 * oldest start may jump there (`match.ts`). Before, every tick of a busy store without
 * subscriptions moved the cursor to the end of the log: a write (with its commit) up to 50 times
 * a second on SQLite, and on PostgreSQL an update of the one row that every instance's worker
 * took turns to lock.
 */
export async function readWorkerState(db: Kysely<Database>): Promise<WorkerState> {
  const r = await sql<{ seq: number | string | null; floor: number | string | null; queued: number | string }>`select
    (select seq from mail_sync_state where name = 'cursor') as seq,
    (select min(start_seq) from mail_subscriptions) as floor,
    (select count(*) from (select 1 from mail_notifications limit 1) n) as queued`.execute(db);
  const row = r.rows[0];
  const num = (x: number | string | null | undefined) => (x === null || x === undefined ? undefined : Number(x));
  return { cursor: num(row?.seq), floor: num(row?.floor), queued: Number(row?.queued ?? 0) > 0 };
}

/**
 * Makes the cursor at `floor`, the oldest subscription's start, so that no change a subscription
 * may see is passed over (another instance may have made it first).
 */
export async function initCursor(db: Kysely<Database>, floor: number): Promise<void> {
  await db.insertInto('mail_sync_state').values({ name: 'cursor', seq: floor }).onConflict((oc) => oc.column('name').doNothing()).execute();
}

/**
 * Moves the cursor from `cursor` to `next`.
 * @returns false when another worker moved it first
 */
export async function advanceCursor(trx: Kysely<Database>, cursor: number, next: number): Promise<boolean> {
  const r = await trx.updateTable('mail_sync_state').set({ seq: next }).where('name', '=', 'cursor').where('seq', '=', cursor).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The subscriptions unexpired at `now` on any of the mailboxes. */
export async function subscriptionsOnMailboxes(db: Kysely<Database>, pairs: { tenantId: string; mailboxId: string }[], now: string): Promise<Subscription[]> {
  return (
    await db
      .selectFrom('mail_subscriptions')
      .selectAll()
      .where((eb) => eb.or(pairs.map((c) => eb.and([eb('tenant_id', '=', c.tenantId), eb('mailbox_id', '=', c.mailboxId)]))))
      .where('expiration', '>', now)
      .execute()
  ).map(subscriptionFromRow);
}

/** Whether a filtered subscription last saw the message inside its filter; undefined if it never saw it. */
export async function memberInside(db: Kysely<Database>, subscriptionId: string, messageId: string): Promise<boolean | undefined> {
  const r = await db.selectFrom('mail_subscription_members').select('inside').where('subscription_id', '=', subscriptionId).where('message_id', '=', messageId).executeTakeFirst();
  return r ? Number((r as any).inside) === 1 : undefined;
}

/** Records filter membership: key `subscriptionId\nmessageId`, value inside / outside, or null to forget. */
export async function writeMembers(trx: Kysely<Database>, members: Map<string, boolean | null>): Promise<void> {
  for (const [key, inside] of members) {
    const [subscriptionId, messageId] = key.split('\n') as [string, string];
    if (inside === null) await trx.deleteFrom('mail_subscription_members').where('subscription_id', '=', subscriptionId).where('message_id', '=', messageId).execute();
    else
      await trx
        .insertInto('mail_subscription_members')
        .values({ subscription_id: subscriptionId, message_id: messageId, inside: inside ? 1 : 0 })
        .onConflict((oc) => oc.columns(['subscription_id', 'message_id']).doUpdateSet({ inside: inside ? 1 : 0 }))
        .execute();
  }
}

// ---- lifecycle and delivery of the outbox (delivery.ts) ----

/**
 * Subscriptions that expired by `now`, or that expire by `soon` and have a lifecycle URL but
 * no `reauthorizationRequired` queued yet; soonest first, at most 200.
 */
export async function subscriptionsDueForLifecycle(db: Kysely<Database>, now: string, soon: string): Promise<Subscription[]> {
  return (
    await db
      .selectFrom('mail_subscriptions')
      .selectAll()
      .where('expiration', '<=', soon)
      .where((eb) => eb.or([eb('expiration', '<=', now), eb.and([eb('lifecycle_url', 'is not', null), eb('reauth_sent', '=', 0)])]))
      .orderBy('expiration')
      .limit(200)
      .execute()
  ).map(subscriptionFromRow);
}

/**
 * Marks `reauthorizationRequired` as queued for the subscription's current expiration.
 * @returns false when it already was, or the subscription was renewed meanwhile
 */
export async function markReauthorizationSent(trx: Kysely<Database>, id: string, expiration: string): Promise<boolean> {
  const r = await trx.updateTable('mail_subscriptions').set({ reauth_sent: 1 }).where('id', '=', id).where('reauth_sent', '=', 0).where('expiration', '=', expiration).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Receivers (kind and URL) with notifications due at `now`, longest waiting first, at most `limit`. */
export async function dueReceivers(db: Kysely<Database>, now: string, limit: number): Promise<{ kind: string; url: string }[]> {
  return (await db
    .selectFrom('mail_notifications')
    .select(['kind', 'url', (eb) => eb.fn.min('due_at').as('first_due')])
    .where('due_at', '<=', now)
    .groupBy(['kind', 'url'])
    .orderBy('first_due')
    .limit(limit)
    .execute()) as { kind: string; url: string }[];
}

/** The `seq`s of a receiver's notifications due at `now`, oldest first, at most `limit`. */
export async function dueSeqs(db: Kysely<Database>, kind: string, url: string, now: string, limit: number): Promise<number[]> {
  return (await db.selectFrom('mail_notifications').select('seq').where('kind', '=', kind).where('url', '=', url).where('due_at', '<=', now).orderBy('due_at').orderBy('seq').limit(limit).execute()).map((x: any) => Number(x.seq));
}

/** Claims the notifications still due at `now` under `claim` until `lease` (ISO 8601 UTC). */
export async function claimNotifications(db: Kysely<Database>, seqs: number[], claim: string, lease: string, now: string): Promise<void> {
  await db.updateTable('mail_notifications').set({ claim, due_at: lease }).where('seq', 'in', seqs).where('due_at', '<=', now).execute();
}

/** The notifications held by `claim`, by `seq`. */
export async function claimedNotifications(db: Kysely<Database>, claim: string) {
  return db.selectFrom('mail_notifications').selectAll().where('claim', '=', claim).orderBy('seq').execute();
}

/** Removes the notifications held by `claim` (delivered). */
export async function deleteClaimed(db: Kysely<Database>, claim: string): Promise<void> {
  await db.deleteFrom('mail_notifications').where('claim', '=', claim).execute();
}

/**
 * A failed batch: its notifications are released with `attempts` and due at `due`, and the
 * rest of the receiver's unclaimed queue is held back until then too.
 */
export async function rescheduleNotifications(db: Kysely<Database>, seqs: number[], attempts: number, due: string, kind: string, url: string): Promise<void> {
  await db.updateTable('mail_notifications').set({ attempts, claim: null, due_at: due }).where('seq', 'in', seqs).execute();
  // The receiver is failing: hold back the rest of its queue too, instead of trying it every tick.
  await db.updateTable('mail_notifications').set({ due_at: due }).where('kind', '=', kind).where('url', '=', url).where('due_at', '<', due).where('claim', 'is', null).execute();
}

/** Removes notifications by `seq` (dropped past the retry window). */
export async function deleteNotifications(trx: Kysely<Database>, seqs: number[]): Promise<void> {
  await trx.deleteFrom('mail_notifications').where('seq', 'in', seqs).execute();
}

/** The subscriptions among `ids` that have a lifecycle URL. */
export async function subscriptionsWithLifecycleUrl(trx: Kysely<Database>, ids: string[]): Promise<Subscription[]> {
  return (await trx.selectFrom('mail_subscriptions').selectAll().where('id', 'in', ids).where('lifecycle_url', 'is not', null).execute()).map(subscriptionFromRow);
}
