/**
 * The last delivery attempts of change notifications, in memory (for the console's
 * subscription view, issue 12 item 1): per app, the newest {@link keptAttempts} POSTs to
 * receivers with their outcome. Nothing durable: the outbox rows (`mail_notifications`) keep
 * what is still to be delivered and when (the console reads it through `store.ts`).
 */
import type { AppContext } from '../../context.ts';

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
