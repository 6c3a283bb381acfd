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
 * 1. **Match**: read the mail change log after the worker's cursor (`mail_sync_state`) up to the
 *    first hole a writer still in progress may fill (PostgreSQL; see `mailChangeWriters`), find
 *    the active subscriptions of the changed mailboxes (index on tenant, mailbox, expiration),
 *    keep the changes each one watches (folder or whole mailbox, change type, after its
 *    creation) and write one outbox row per notification, moving the cursor in the same
 *    transaction (compare-and-set, so several instances never deliver a change twice).
 * 2. **Lifecycle**: queue `reauthorizationRequired` shortly before expiry, remove expired
 *    subscriptions (queueing `subscriptionRemoved`).
 * 3. **Deliver**: claim due outbox rows, batch them per receiver URL and POST them, a bounded
 *    number of receivers at a time, each request with a timeout; a slow receiver only holds
 *    its own slot. Failures are retried with exponential backoff stored in the row (a restart
 *    resumes); after four hours the notifications are dropped and a `missed` lifecycle
 *    notification is queued.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { nowIso, nowMs, onClockChange } from '../../core/clock.ts';
import { newUuid, randomToken } from '../../core/ids.ts';
import { isPostgres, toJson } from '../../store/db.ts';
import { sql } from 'kysely';
import { latestMailChangeSeq, mailChangesAfter, mailChangeWriters, writersFinished, type MailChangeRow } from '../mail/changes.ts';
import { deleteSubscriptionRows, filterQuery, subscriptionFromRow, type Subscription } from './subscriptions.ts';
import { openMailbox, findMessage, type Mailbox } from '../mail/store.ts';
import { recordAttempt, type DeliveryAttempt } from './attempts.ts';
import type { MessageRecord } from '../mail/message.ts';

/** Changes read per tick. */
const changeBatch = 500;
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
const yieldEvery = 32;

/** Lets pending I/O (API requests) run: with better-sqlite3 every query is synchronous and only microtasks separate them. */
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The lifecycle events (reference mail §7.4). */
export type LifecycleEvent = 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed';

/** One queued notification. */
interface OutboxRow {
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

/** The lifecycle notification of a subscription (reference mail §7.4: no resource data). */
export function lifecycleRow(s: Subscription, event: LifecycleEvent, at: string): OutboxRow {
  const payload = { subscriptionId: s.id, subscriptionExpirationDateTime: s.expiration, tenantId: s.tenantId, clientState: s.clientState, lifecycleEvent: event };
  return { tenant_id: s.tenantId, subscription_id: s.id, kind: 'lifecycle', url: s.lifecycleUrl!, payload: toJson(payload), attempts: 0, first_at: at, due_at: at, claim: null };
}

/** The worker's handle: `stop()` ends the loop and aborts deliveries in flight. */
export interface NotificationWorker {
  stop(): Promise<void>;
}

/** Starts the worker; call once per app, stop it at shutdown. */
export function startNotificationWorker(ctx: AppContext): NotificationWorker {
  const db = ctx.store.db;
  const abort = new AbortController();
  const inflight = new Map<string, Promise<void>>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  /** Holes in the log at or below this `seq` are final. */
  let settled = 0;
  /** A hole was seen: the log read up to `upTo`, the writers of the log then in progress. */
  let wait: { upTo: number; ids: string[] } | undefined;

  /** Matches one batch of the change log; true when more changes may be waiting right away. */
  async function match(): Promise<boolean> {
    const state = await db.selectFrom('mail_sync_state').select('seq').where('name', '=', 'cursor').executeTakeFirst();
    if (!state) {
      const latest = await latestMailChangeSeq(db);
      await db.insertInto('mail_sync_state').values({ name: 'cursor', seq: latest }).onConflict((oc) => oc.column('name').doNothing()).execute();
      return true;
    }
    const cursor = Number(state.seq);
    // A hole in `seq` is a writer still in progress (it may commit later) or one rolled back. The
    // writers in progress when a hole was seen are waited for; once they have all finished, every
    // hole up to what had been read then is final and skipped (nothing is lost, nothing waits on time).
    if (wait && (await writersFinished(db, wait.ids))) {
      settled = Math.max(settled, wait.upTo);
      wait = undefined;
    }
    const changes = await mailChangesAfter(db, cursor, changeBatch);
    if (changes.length === 0) return false;
    const usable: MailChangeRow[] = [];
    let expect = cursor + 1;
    for (const c of changes) {
      if (c.seq !== expect && c.seq - 1 > settled && isPostgres(db)) {
        if (!wait) wait = { upTo: changes[changes.length - 1]!.seq, ids: await mailChangeWriters(db) };
        break;
      }
      usable.push(c);
      expect = c.seq + 1;
    }
    if (usable.length === 0) return false;
    const next = usable[usable.length - 1]!.seq;
    const now = nowIso();
    const pairs = [...new Map(usable.map((c) => [`${c.tenantId}\n${c.mailboxId}`, c])).values()];
    const subs = (
      await db
        .selectFrom('mail_subscriptions')
        .selectAll()
        .where((eb) => eb.or(pairs.map((c) => eb.and([eb('tenant_id', '=', c.tenantId), eb('mailbox_id', '=', c.mailboxId)]))))
        .where('expiration', '>', now)
        .execute()
    ).map(subscriptionFromRow);
    const byMailbox = new Map<string, Subscription[]>();
    for (const s of subs) {
      const key = `${s.tenantId}\n${s.mailboxId}`;
      byMailbox.set(key, [...(byMailbox.get(key) ?? []), s]);
    }
    // A filtered subscription judges a message by its current state, so only its last change in the batch counts.
    const lastSeq = new Map(usable.map((c) => [`${c.tenantId}\n${c.mailboxId}\n${c.messageId}`, c.seq]));
    const rows: OutboxRow[] = [];
    const mailboxes = new Map<string, Mailbox>();
    const members = new Map<string, boolean | null>();
    const found = new Map<number, MessageRecord | undefined>();
    let steps = 0;
    for (const c of usable) {
      for (const s of byMailbox.get(`${c.tenantId}\n${c.mailboxId}`) ?? []) {
        // SQLite queries run synchronously: let requests in between, so matching never holds the API.
        if (++steps % yieldEvery === 0) await yieldToIo();
        if (c.seq <= s.startSeq || (s.filter === null && !s.changeTypes.includes(c.changeType))) continue;
        if (s.folderId !== null ? c.folderId !== s.folderId : s.excludeFolders.includes(c.folderId)) continue;
        let changeType: string = c.changeType;
        if (s.filter !== null) {
          if (lastSeq.get(`${c.tenantId}\n${c.mailboxId}\n${c.messageId}`) !== c.seq) continue;
          const mapped = await filtered(s, c, members);
          if (mapped === undefined || !s.changeTypes.includes(mapped)) continue;
          changeType = mapped;
        }
        let id = c.messageId;
        let etag: string | undefined;
        if (changeType !== 'deleted') {
          const key = `${c.tenantId}\n${c.mailboxId}`;
          let mb = mailboxes.get(key);
          if (!mb) {
            mb = await openMailbox(db, { tenantId: c.tenantId, id: c.mailboxId, mail: '', displayName: '' });
            mailboxes.set(key, mb);
          }
          // One lookup per change, however many subscriptions watch it.
          if (!found.has(c.seq)) found.set(c.seq, await findMessage(db, mb, c.messageId).catch(() => undefined));
          const m = found.get(c.seq);
          if (m) {
            etag = `W/"${m.changeKey}"`;
            if (s.immutable) id = m.immutableId;
          }
        }
        const path = `Users/${c.mailboxId}/Messages/${id}`;
        const payload = {
          id: newUuid(),
          subscriptionId: s.id,
          subscriptionExpirationDateTime: s.expiration,
          changeType,
          resource: path,
          resourceData: { '@odata.type': '#Vendor.Graph.Message', '@odata.id': path, ...(etag ? { '@odata.etag': etag } : {}), id },
          clientState: s.clientState,
          tenantId: s.tenantId,
        };
        rows.push({ tenant_id: s.tenantId, subscription_id: s.id, kind: 'change', url: s.notificationUrl, payload: toJson(payload), attempts: 0, first_at: now, due_at: now, claim: null });
      }
    }
    await ctx.store.transaction(async (trx) => {
      const r = await trx.updateTable('mail_sync_state').set({ seq: next }).where('name', '=', 'cursor').where('seq', '=', cursor).executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) throw new CursorMoved();
      for (let i = 0; i < rows.length; i += 200) await trx.insertInto('mail_notifications').values(rows.slice(i, i + 200)).execute();
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
    });
    return usable.length === changes.length && changes.length === changeBatch;
  }

  /**
   * The notification a change gives a filtered subscription (reference mail §7.3): entering the
   * filter → `created`, leaving it → `deleted`, other changes inside → `updated`, changes outside →
   * none. `members` holds this batch's view of which messages are inside (null: forgotten).
   * A message the subscription has never seen (older than the subscription) counts as inside when
   * it matches now, and as possibly inside when it is deleted.
   */
  async function filtered(s: Subscription, c: MailChangeRow, members: Map<string, boolean | null>): Promise<string | undefined> {
    const key = `${s.id}\n${c.messageId}`;
    let prior: boolean | null | undefined = members.get(key);
    if (prior === undefined && !members.has(key)) {
      const r = await db.selectFrom('mail_subscription_members').select('inside').where('subscription_id', '=', s.id).where('message_id', '=', c.messageId).executeTakeFirst();
      prior = r ? Number((r as any).inside) === 1 : undefined;
    }
    if (c.changeType === 'deleted') {
      members.set(key, null);
      return prior === false ? undefined : 'deleted';
    }
    const inside = !!(await filterQuery(db, { tenantId: s.tenantId, mailboxId: s.mailboxId, folderId: s.folderId, exclude: s.excludeFolders }, s.filter!)
      .where('mail_messages.id', '=', c.messageId)
      .select('mail_messages.pk')
      .executeTakeFirst()
      .catch(() => undefined));
    members.set(key, inside);
    if (c.changeType === 'created') return inside ? 'created' : undefined;
    if (inside) return prior === false ? 'created' : 'updated';
    return prior === true ? 'deleted' : undefined;
  }

  async function lifecycle(): Promise<void> {
    const now = nowIso();
    const soon = new Date(nowMs() + reauthorizationLeadMs).toISOString();
    const due = (
      await db
        .selectFrom('mail_subscriptions')
        .selectAll()
        .where('expiration', '<=', soon)
        .where((eb) => eb.or([eb('expiration', '<=', now), eb.and([eb('lifecycle_url', 'is not', null), eb('reauth_sent', '=', 0)])]))
        .orderBy('expiration')
        .limit(200)
        .execute()
    ).map(subscriptionFromRow);
    for (const [i, s] of due.entries()) {
      if (i % yieldEvery === yieldEvery - 1) await yieldToIo();
      if (s.expiration <= now) {
        await ctx.store.transaction(async (trx) => {
          if (!(await deleteSubscriptionRows(trx, s.id, s.tenantId))) return;
          if (s.lifecycleUrl) await trx.insertInto('mail_notifications').values(lifecycleRow(s, 'subscriptionRemoved', now)).execute();
        });
      } else if (s.lifecycleUrl && !s.reauthSent) {
        await ctx.store.transaction(async (trx) => {
          const r = await trx.updateTable('mail_subscriptions').set({ reauth_sent: 1 }).where('id', '=', s.id).where('reauth_sent', '=', 0).where('expiration', '=', s.expiration).executeTakeFirst();
          if (Number(r.numUpdatedRows) === 1) await trx.insertInto('mail_notifications').values(lifecycleRow(s, 'reauthorizationRequired', now)).execute();
        });
      }
    }
  }

  async function deliver(): Promise<void> {
    const free = maxConcurrentReceivers - inflight.size;
    if (free <= 0) return;
    const now = nowIso();
    // Receivers with due notifications, longest waiting first; one receiver's backlog never hides another's.
    const receivers = (await db
      .selectFrom('mail_notifications')
      .select(['kind', 'url', (eb) => eb.fn.min('due_at').as('first_due')])
      .where('due_at', '<=', now)
      .groupBy(['kind', 'url'])
      .orderBy('first_due')
      .limit(free + inflight.size)
      .execute()) as { kind: string; url: string }[];
    const lease = new Date(nowMs() + ctx.config.settings.mailSubscriptionValidationTimeoutMs + 60_000).toISOString();
    let started = 0;
    for (const r of receivers) {
      const key = `${r.kind}\n${r.url}`;
      if (inflight.has(key) || started >= free) continue;
      const seqs = (await db.selectFrom('mail_notifications').select('seq').where('kind', '=', r.kind).where('url', '=', r.url).where('due_at', '<=', now).orderBy('due_at').orderBy('seq').limit(deliveryBatch).execute()).map((x: any) => Number(x.seq));
      if (seqs.length === 0) continue;
      const claim = randomToken(16);
      await db.updateTable('mail_notifications').set({ claim, due_at: lease }).where('seq', 'in', seqs).where('due_at', '<=', now).execute();
      started++;
      const p = post(r.kind, r.url, claim)
        .catch((e) => ctx.log.warn({ err: e }, 'mail notification delivery failed'))
        .finally(() => {
          inflight.delete(key);
          kick();
        });
      inflight.set(key, p);
    }
  }

  async function post(kind: string, url: string, claim: string): Promise<void> {
    const rows = await db.selectFrom('mail_notifications').selectAll().where('claim', '=', claim).orderBy('seq').execute();
    if (rows.length === 0) return;
    let ok = false;
    const attempt: DeliveryAttempt = { at: nowIso(), kind, url, subscriptionIds: [...new Set(rows.map((r: any) => r.subscription_id as string))], notifications: rows.length, ok: false };
    try {
      const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(ctx.config.settings.mailSubscriptionValidationTimeoutMs)]);
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
    if (stopped && !ok) return; // shutting down: the lease expires and a later run retries
    recordAttempt(ctx, attempt);
    if (ok) {
      await db.deleteFrom('mail_notifications').where('claim', '=', claim).execute();
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
      await db.updateTable('mail_notifications').set({ attempts, claim: null, due_at: due }).where('seq', 'in', retry.map((r) => Number(r.seq))).execute();
      // The receiver is failing: hold back the rest of its queue too, instead of trying it every tick.
      await db.updateTable('mail_notifications').set({ due_at: due }).where('kind', '=', kind).where('url', '=', url).where('due_at', '<', due).where('claim', 'is', null).execute();
    }
    if (dropped.length > 0) {
      attempt.dropped = true;
      await ctx.store.transaction(async (trx: Kysely<any>) => {
        await trx.deleteFrom('mail_notifications').where('seq', 'in', dropped.map((r) => Number(r.seq))).execute();
        const subIds = [...new Set(dropped.filter((r) => r.kind === 'change').map((r) => r.subscription_id as string))];
        if (subIds.length === 0) return;
        const subs = (await trx.selectFrom('mail_subscriptions').selectAll().where('id', 'in', subIds).where('lifecycle_url', 'is not', null).execute()).map(subscriptionFromRow);
        for (const s of subs) await trx.insertInto('mail_notifications').values(lifecycleRow(s, 'missed', now)).execute();
      });
    }
  }

  /** Runs one tick; returns whether another should follow right away. */
  async function tick(): Promise<boolean> {
    let more = false;
    try {
      more = await match();
    } catch (e) {
      if (e instanceof CursorMoved) more = true;
      else if (!stopped) ctx.log.warn({ err: e }, 'mail change matching failed');
    }
    try {
      await lifecycle();
      await deliver();
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
    arm(0);
  }

  function arm(delayMs: number): void {
    if (timer) clearTimeout(timer);
    timer = setTimeout(run, Math.min(Math.max(0, delayMs), 2 ** 31 - 1));
  }

  function run(): void {
    timer = undefined;
    if (stopped || running) return;
    woken = false;
    running = (async () => {
      const more = await tick();
      if (stopped) return;
      if (more || woken) return arm(0);
      const poll = ctx.config.settings.mailNotificationPollMs;
      // A hole in the PostgreSQL log: wait for its writers by polling (they give no signal).
      if (wait) return arm(poll);
      const deadline = await nextDeadline().catch((e) => {
        ctx.log.warn({ err: e }, 'mail notification worker failed');
        return nowMs() + poll;
      });
      if (stopped || woken) return arm(0);
      if (deadline === undefined) return; // idle until a signal
      const inMs = deadline - nowMs();
      // Due but not started (a receiver's slot is busy, its delivery ends with a kick): poll.
      arm(inMs <= 0 ? poll : inMs);
    })().finally(() => {
      running = undefined;
      // A wake-up that came after the tick decided how long to sleep.
      if (woken && !stopped) arm(0);
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
      await Promise.allSettled([...inflight.values()]);
    },
  };
}

/** Another instance moved the cursor first; this tick's matches are discarded. */
class CursorMoved extends Error {}
