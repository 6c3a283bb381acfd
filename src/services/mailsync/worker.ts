/**
 * The background delivery of message change notifications (reference mail.md §7.3, §7.4).
 *
 * The worker is idle while there is nothing to do (issue 9 item 5): after a tick it sleeps until
 * the earliest moment something becomes due (a queued notification's `due_at`, a subscription's
 * reauthorization time or expiry), or without a timer when there is none (no subscription, no
 * queued notification), and it is woken by a `mail` signal (`core/cache-bus.ts`: a mail change,
 * a subscription created/updated/reauthorized — on PostgreSQL also from another instance through
 * `LISTEN/NOTIFY`), by a move of the Stratus clock and by the end of a delivery. It polls every
 * `mailNotificationPollMs` only while something is due but cannot go yet (a receiver's slot is
 * busy) or a hole in the PostgreSQL change log is being waited out.
 *
 * A tick:
 * 1. **Match** (`match.ts`): read the mail change log after the worker's cursor (`mail_sync_state`)
 *    up to the first hole a writer still in progress may fill (PostgreSQL; see `mailChangeWriters`),
 *    find the active subscriptions of the changed mailboxes (index on tenant, mailbox,
 *    expiration), keep the changes each one watches (folder or whole mailbox, change type, after
 *    its creation) and write one outbox row per notification, moving the cursor in the same
 *    transaction (compare-and-set, so several instances never deliver a change twice).
 * 2. **Lifecycle** (`delivery.ts`): queue `reauthorizationRequired` shortly before expiry, remove
 *    expired subscriptions (queueing `subscriptionRemoved`).
 * 3. **Deliver** (`delivery.ts`): claim due outbox rows, batch them per receiver URL and POST
 *    them, a bounded number of receivers at a time, each request with a timeout; a slow receiver
 *    only holds its own slot. Failures are retried with exponential backoff stored in the row (a
 *    restart resumes); after four hours the notifications are dropped and a `missed` lifecycle
 *    notification is queued.
 */
import type { AppContext } from '../../context.ts';
import { nowMs, onClockChange } from '../../core/clock.ts';
import { sql } from 'kysely';
import { createMatcher, CursorMoved } from './match.ts';
import { createDelivery, reauthorizationLeadMs } from './delivery.ts';

/**
 * The least time (ms) between the starts of two ticks started by signals (a signal to a worker
 * idle for longer starts one at once): a burst of writes is matched together.
 */
const signalGapMs = 20;

/** The worker's handle: `stop()` ends the loop and aborts deliveries in flight. */
export interface NotificationWorker {
  stop(): Promise<void>;
}

/** Starts the worker; call once per app, stop it at shutdown. */
export function startNotificationWorker(ctx: AppContext): NotificationWorker {
  const db = ctx.store.db;
  const abort = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const matcher = createMatcher(ctx);
  const delivery = createDelivery(ctx, { signal: abort.signal, stopped: () => stopped, kick });

  /** Runs one tick; returns whether another should follow right away. */
  async function tick(): Promise<boolean> {
    let more = false;
    try {
      more = await matcher.match();
      // No subscription and nothing queued (seen in the match's one statement): nothing to expire or deliver.
      if (matcher.idle()) return more;
    } catch (e) {
      if (e instanceof CursorMoved) more = true;
      else if (!stopped) ctx.log.warn({ err: e }, 'mail change matching failed');
    }
    try {
      await delivery.lifecycle();
      await delivery.deliver();
    } catch (e) {
      if (!stopped) ctx.log.warn({ err: e }, 'mail notification worker failed');
    }
    return more;
  }

  /**
   * The Stratus time (ms) at which something queued becomes due: the earliest `due_at` of a
   * queued notification (also a claim's lease), subscription expiry, or reauthorization time;
   * undefined when nothing is queued and no subscription exists.
   */
  async function nextDeadline(): Promise<number | undefined> {
    const r = await sql<{ due: string | null; expires: string | null; reauth: string | null }>`select
      (select min(due_at) from mail_notifications) as due,
      (select min(expiration) from mail_subscriptions) as expires,
      (select min(expiration) from mail_subscriptions where lifecycle_url is not null and reauth_sent = 0) as reauth`.execute(db);
    const row = r.rows[0];
    const times = [row?.due, row?.expires].filter((x): x is string => !!x).map((x) => Date.parse(x));
    if (row?.reauth) times.push(Date.parse(row.reauth) - reauthorizationLeadMs);
    return times.length ? Math.min(...times) : undefined;
  }

  /** Whether a wake-up arrived while a tick was running. */
  let woken = false;

  /** Look for work now (a signal, a clock move, a finished delivery). */
  function kick(): void {
    if (stopped) return;
    if (running) {
      woken = true;
      return;
    }
    // A tick already follows within the gap: this signal's changes are matched by it.
    if (timer && gapArmed) return;
    // At most one signalled tick per gap: a steady stream of writes is matched in bursts.
    armAfterGap();
  }

  /** When the last tick started (monotonic ms). */
  let lastRunAt = -Infinity;

  /** Whether the armed timer is the wait for the end of a gap ({@link signalGapMs}) before a signalled tick. */
  let gapArmed = false;

  function arm(delayMs: number, gap = false): void {
    if (timer) clearTimeout(timer);
    gapArmed = gap;
    timer = setTimeout(run, Math.min(Math.max(0, delayMs), 2 ** 31 - 1));
  }

  /** Arms the next tick for the end of the gap after the last tick's start ({@link signalGapMs}). */
  function armAfterGap(): void {
    arm(lastRunAt + signalGapMs - performance.now(), true);
  }

  function run(): void {
    timer = undefined;
    gapArmed = false;
    if (stopped || running) return;
    lastRunAt = performance.now();
    woken = false;
    running = (async () => {
      const more = await tick();
      if (stopped) return;
      if (more) return arm(0);
      // Woken while it ran (a mail write during the tick): the next tick comes after the gap
      // (`finally` below), so that a steady stream of writes costs a few ticks a second, not one
      // per write burst (issue 31: each tick was about eight statements; the 90/10 mix ran 100–240 a second).
      if (woken) return;
      const poll = ctx.config.settings.mailNotificationPollMs;
      // A hole in the PostgreSQL log: wait for its writers by polling (they give no signal).
      if (matcher.waiting()) return arm(poll);
      // Nothing subscribed or queued: idle until a signal (no deadline to read).
      const deadline = matcher.idle() ? undefined : await nextDeadline().catch((e) => {
        ctx.log.warn({ err: e }, 'mail notification worker failed');
        return nowMs() + poll;
      });
      if (stopped || woken) return;
      if (deadline === undefined) return; // idle until a signal
      const inMs = deadline - nowMs();
      // Due but not started (a receiver's slot is busy, its delivery ends with a kick): poll.
      arm(inMs <= 0 ? poll : inMs);
    })().finally(() => {
      running = undefined;
      // A wake-up during the tick: the next one after the gap, whatever the tick decided.
      if (woken && !stopped) armAfterGap();
    });
  }

  const unsubscribe = [ctx.cache.bus.on('mail', kick), onClockChange(kick)];
  arm(0);

  return {
    async stop() {
      stopped = true;
      for (const u of unsubscribe) u();
      if (timer) clearTimeout(timer);
      abort.abort();
      await running?.catch(() => undefined);
      await delivery.settle();
    },
  };
}
