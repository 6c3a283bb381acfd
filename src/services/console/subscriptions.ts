/**
 * Console page of mail change-notification subscriptions (issue 12 item 1, "Subscriptions"):
 * each subscription with its receiver and expiry, its delivery queue, and the last delivery
 * attempts (status, error, next retry) — from the mailsync area in-process.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { nowMs } from '../../core/clock.ts';
import { deliveryAttempts } from '../mailsync/attempts.ts';
import { deliveryQueue, listAllSubscriptions } from '../mailsync/store.ts';
import { html, page, sendPage, table } from './html.ts';

/** Registers `/_stratus/console/subscriptions`. */
export function registerSubscriptionPages(app: FastifyInstance, ctx: AppContext): void {
  app.get('/_stratus/console/subscriptions', async (_req, reply) => {
    const subs = await listAllSubscriptions(ctx.store.db);
    const queue = await deliveryQueue(ctx.store.db);
    const attempts = deliveryAttempts(ctx);
    const now = nowMs();
    const lastOf = (id: string) => attempts.find((a) => a.subscriptionIds.includes(id));
    const subRows = subs.map((s) => {
      const last = lastOf(s.id);
      const expired = Date.parse(s.expiration) <= now;
      return [
        s.id,
        s.resource,
        s.changeTypes.join(', '),
        s.notificationUrl + (s.lifecycleUrl ? ` (lifecycle: ${s.lifecycleUrl})` : ''),
        html`${s.expiration}${expired ? html` <span class="bad">expired</span>` : ''}`,
        s.appId,
        last ? html`<span class="${last.ok ? 'ok' : 'bad'}">${last.ok ? 'delivered' : 'failed'}</span> ${last.at}` : html`<span class="muted">none yet</span>`,
      ];
    });
    const queueRows = queue.map((q) => [q.subscriptionId, q.kind, q.queued, q.attempts, q.firstQueued, q.nextDue]);
    const attemptRows = attempts.slice(0, 100).map((a) => [
      a.at,
      a.url,
      a.subscriptionIds.join(', '),
      a.notifications,
      html`<span class="${a.ok ? 'ok' : 'bad'}">${a.ok ? 'delivered' : a.dropped ? 'failed, dropped' : 'failed'}</span>`,
      a.status ?? '',
      a.error ?? '',
      a.nextRetry ?? '',
    ]);
    const body = html`<section aria-labelledby="subs"><h2 id="subs">Subscriptions</h2>${table('Mail change-notification subscriptions', ['Id', 'Resource', 'Changes', 'Receiver', 'Expires', 'App', 'Last delivery'], subRows, 'No subscriptions.')}</section>
      <section aria-labelledby="queue"><h2 id="queue">Delivery queue</h2>${table('Notifications waiting for delivery', ['Subscription', 'Kind', 'Queued', 'Attempts', 'First queued', 'Next attempt'], queueRows, 'The queue is empty.')}</section>
      <section aria-labelledby="attempts"><h2 id="attempts">Last delivery attempts</h2>${table('Delivery attempts, newest first (since start)', ['Time', 'Receiver', 'Subscriptions', 'Notifications', 'Outcome', 'HTTP status', 'Error', 'Next retry'], attemptRows, 'No delivery attempts since start.')}</section>`;
    return sendPage(reply, page('Subscriptions', '/subscriptions', body));
  });
}
