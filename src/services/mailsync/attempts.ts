/**
 * The last delivery attempts of change notifications, in memory (for the console's
 * subscription view, issue 12 item 1): per app, the newest {@link keptAttempts} POSTs to
 * receivers with their outcome. Nothing durable: the outbox rows (`mail_notifications`) keep
 * what is still to be delivered and when.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { subscriptionFromRow, type Subscription } from './subscriptions.ts';
import type { Database } from '../../store/database.ts';

/** Attempts kept per app. */
export const keptAttempts = 200;

/** One POST of a batch of notifications to a receiver. */
export interface DeliveryAttempt {
  /** ISO 8601 UTC (the server clock, with the control-plane offset). */
  at: string;
  kind: string;
  url: string;
  /** Subscriptions whose notifications were in the batch. */
  subscriptionIds: string[];
  notifications: number;
  ok: boolean;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** What went wrong: a non-2xx answer, a timeout, a refused connection. */
  error?: string;
  /** When the batch is due again (failed and retried), ISO 8601 UTC. */
  nextRetry?: string;
  /** The batch was past the retry window and dropped. */
  dropped?: boolean;
}

const byApp = new WeakMap<AppContext, DeliveryAttempt[]>();

/** Records an attempt (the oldest is dropped past {@link keptAttempts}). */
export function recordAttempt(ctx: AppContext, a: DeliveryAttempt): void {
  let list = byApp.get(ctx);
  if (!list) byApp.set(ctx, (list = []));
  list.push(a);
  if (list.length > keptAttempts) list.splice(0, list.length - keptAttempts);
}

/** The recorded attempts, newest first. */
export function deliveryAttempts(ctx: AppContext): DeliveryAttempt[] {
  return [...(byApp.get(ctx) ?? [])].reverse();
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
