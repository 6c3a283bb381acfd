/**
 * Lifecycle and delivery (reference mail.md §7.3, §7.4; steps 2 and 3 of the notification
 * worker's tick, see `worker.ts`):
 * - **Lifecycle**: queue `reauthorizationRequired` shortly before expiry, remove expired
 *   subscriptions (queueing `subscriptionRemoved`).
 * - **Deliver**: claim due outbox rows (`mail_notifications`), batch them per receiver URL and
 *   POST them, a bounded number of receivers at a time, each request with a timeout; a slow
 *   receiver only holds its own slot. Failures are retried with exponential backoff stored in
 *   the row (a restart resumes); after four hours the notifications are dropped and a `missed`
 *   lifecycle notification is queued.
 */
import type { AppContext } from '../../context.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { randomToken } from '../../core/ids.ts';
import { toJson } from '../../store/db.ts';
import {
  claimedNotifications,
  claimNotifications,
  deleteClaimed,
  deleteNotifications,
  deleteSubscriptionRows,
  dueReceivers,
  dueSeqs,
  insertNotifications,
  markReauthorizationSent,
  rescheduleNotifications,
  subscriptionsDueForLifecycle,
  subscriptionsWithLifecycleUrl,
  type OutboxRow,
  type Subscription,
} from './store.ts';
import { recordAttempt, type DeliveryAttempt } from './attempts.ts';

/** Notifications per POST. */
const deliveryBatch = 100;
/** Receivers being posted to at once. */
const maxConcurrentReceivers = 8;
/** First retry delay; doubled per attempt up to {@link maxBackoffMs}. */
const baseBackoffMs = 5_000;
const maxBackoffMs = 10 * 60_000;
/** How long a failing notification is retried (reference mail §7.3: up to 4 hours). */
export const retryWindowMs = 4 * 3600_000;
/** `reauthorizationRequired` is queued this long before expiry (reference mail §7.4). */
export const reauthorizationLeadMs = 15 * 60_000;

/** Subscription-change pairs (or lifecycle rows) handled between two yields to the event loop. */
export const yieldEvery = 32;

/** Lets pending I/O (API requests) run: with better-sqlite3 every query is synchronous and only microtasks separate them. */
export const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The lifecycle events (reference mail §7.4). */
export type LifecycleEvent = 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed';

/** The lifecycle notification of a subscription (reference mail §7.4: no resource data). */
export function lifecycleRow(s: Subscription, event: LifecycleEvent, at: string): OutboxRow {
  const payload = { subscriptionId: s.id, subscriptionExpirationDateTime: s.expiration, tenantId: s.tenantId, clientState: s.clientState, lifecycleEvent: event };
  return { tenant_id: s.tenantId, subscription_id: s.id, kind: 'lifecycle', url: s.lifecycleUrl!, payload: toJson(payload), attempts: 0, first_at: at, due_at: at, claim: null };
}

/** The lifecycle and delivery steps of the worker, with the deliveries in flight. */
export interface Delivery {
  /** Queues reauthorization and removal notifications and removes expired subscriptions. */
  lifecycle(): Promise<void>;
  /** Starts POSTs to the receivers with due notifications, as many as there are free slots. */
  deliver(): Promise<void>;
  /** Waits for the deliveries in flight to end (at shutdown, after aborting them). */
  settle(): Promise<void>;
}

/**
 * The delivery of one worker.
 * @param o.signal aborts the POSTs in flight (shutdown)
 * @param o.stopped whether the worker is shutting down (a failed POST then leaves its lease to expire)
 * @param o.kick called when a delivery ends (its receiver's slot is free)
 */
export function createDelivery(ctx: AppContext, o: { signal: AbortSignal; stopped: () => boolean; kick: () => void }): Delivery {
  const db = ctx.store.db;
  const inflight = new Map<string, Promise<void>>();

  async function lifecycle(): Promise<void> {
    const now = nowIso();
    const soon = new Date(nowMs() + reauthorizationLeadMs).toISOString();
    const due = await subscriptionsDueForLifecycle(db, now, soon);
    for (const [i, s] of due.entries()) {
      if (i % yieldEvery === yieldEvery - 1) await yieldToIo();
      if (s.expiration <= now) {
        await ctx.store.transaction(async (trx) => {
          if (!(await deleteSubscriptionRows(trx, s.id, s.tenantId))) return;
          if (s.lifecycleUrl) await insertNotifications(trx, [lifecycleRow(s, 'subscriptionRemoved', now)]);
        });
      } else if (s.lifecycleUrl && !s.reauthSent) {
        await ctx.store.transaction(async (trx) => {
          if (await markReauthorizationSent(trx, s.id, s.expiration)) await insertNotifications(trx, [lifecycleRow(s, 'reauthorizationRequired', now)]);
        });
      }
    }
  }

  async function deliver(): Promise<void> {
    const free = maxConcurrentReceivers - inflight.size;
    if (free <= 0) return;
    const now = nowIso();
    // Receivers with due notifications, longest waiting first; one receiver's backlog never hides another's.
    const receivers = await dueReceivers(db, now, free + inflight.size);
    const lease = new Date(nowMs() + ctx.config.settings.mailSubscriptionValidationTimeoutMs + 60_000).toISOString();
    let started = 0;
    for (const r of receivers) {
      const key = `${r.kind}\n${r.url}`;
      if (inflight.has(key) || started >= free) continue;
      const seqs = await dueSeqs(db, r.kind, r.url, now, deliveryBatch);
      if (seqs.length === 0) continue;
      const claim = randomToken(16);
      await claimNotifications(db, seqs, claim, lease, now);
      started++;
      const p = post(r.kind, r.url, claim)
        .catch((e) => ctx.log.warn({ err: e }, 'mail notification delivery failed'))
        .finally(() => {
          inflight.delete(key);
          o.kick();
        });
      inflight.set(key, p);
    }
  }

  async function post(kind: string, url: string, claim: string): Promise<void> {
    const rows = await claimedNotifications(db, claim);
    if (rows.length === 0) return;
    let ok = false;
    const attempt: DeliveryAttempt = { at: nowIso(), kind, url, subscriptionIds: [...new Set(rows.map((r: any) => r.subscription_id as string))], notifications: rows.length, ok: false };
    try {
      const signal = AbortSignal.any([o.signal, AbortSignal.timeout(ctx.config.settings.mailSubscriptionValidationTimeoutMs)]);
      const body = `{"value":[${rows.map((r: any) => r.payload).join(',')}]}`;
      // Through the outbound guard: never to Stratus itself, no redirects, no credentials; a refused receiver is a failed delivery.
      const res = await ctx.outbound.post(url, { headers: { 'content-type': 'application/json' }, body, signal, maxBytes: 64 * 1024 });
      ok = res.status >= 200 && res.status < 300;
      attempt.status = res.status;
      if (!ok) attempt.error = `HTTP ${res.status}`;
    } catch (e) {
      ok = false;
      const err = e as Error & { cause?: { code?: string; message?: string } };
      attempt.error = err.name === 'TimeoutError' ? 'timed out' : (err.cause?.code ?? err.cause?.message ?? err.message);
    }
    attempt.ok = ok;
    if (o.stopped() && !ok) return; // shutting down: the lease expires and a later run retries
    recordAttempt(ctx, attempt);
    if (ok) {
      await deleteClaimed(db, claim);
      return;
    }
    await failed(kind, url, rows, attempt);
  }

  async function failed(kind: string, url: string, rows: any[], attempt: DeliveryAttempt): Promise<void> {
    const at = nowMs();
    const now = new Date(at).toISOString();
    const retry: any[] = [];
    const dropped: any[] = [];
    for (const r of rows) (at - Date.parse(r.first_at) >= retryWindowMs ? dropped : retry).push(r);
    if (retry.length > 0) {
      // One attempt count per batch: rows of a batch fail together.
      const attempts = Math.max(...retry.map((r) => Number(r.attempts))) + 1;
      const delay = Math.min(maxBackoffMs, baseBackoffMs * 2 ** (attempts - 1));
      const due = new Date(at + delay).toISOString();
      attempt.nextRetry = due;
      await rescheduleNotifications(db, retry.map((r) => Number(r.seq)), attempts, due, kind, url);
    }
    if (dropped.length > 0) {
      attempt.dropped = true;
      await ctx.store.transaction(async (trx) => {
        await deleteNotifications(trx, dropped.map((r) => Number(r.seq)));
        const subIds = [...new Set(dropped.filter((r) => r.kind === 'change').map((r) => r.subscription_id as string))];
        if (subIds.length === 0) return;
        const subs = await subscriptionsWithLifecycleUrl(trx, subIds);
        for (const s of subs) await insertNotifications(trx, [lifecycleRow(s, 'missed', now)]);
      });
    }
  }

  return {
    lifecycle,
    deliver,
    async settle() {
      await Promise.allSettled([...inflight.values()]);
    },
  };
}
