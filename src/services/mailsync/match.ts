/**
 * Matching (reference mail.md §7.3; step 1 of the notification worker's tick, see `worker.ts`):
 * read the mail change log (`mail/changes.ts`) after the worker's cursor (`mail_sync_state`) up
 * to the first hole a writer still in progress may fill (PostgreSQL; see `mailChangeWriters`),
 * find the active subscriptions of the changed mailboxes, keep the changes each one watches
 * (folder or whole mailbox, change type, `$filter` membership, after its creation) and write one
 * outbox row per notification, moving the cursor in the same transaction (compare-and-set, so
 * several instances never deliver a change twice).
 */
import type { AppContext } from '../../context.ts';
import { nowIso } from '../../core/clock.ts';
import { newUuid } from '../../core/ids.ts';
import { isPostgres, toJson } from '../../store/db.ts';
import { mailChangesAfter, mailChangeWriters, writersFinished, type MailChangeRow } from '../mail/changes.ts';
import { openMailbox, findMessage, type Mailbox } from '../mail/store.ts';
import type { MessageRecord } from '../mail/message.ts';
import { filterQuery } from './subscriptions.ts';
import { advanceCursor, initCursor, insertNotifications, memberInside, readWorkerState, subscriptionsOnMailboxes, writeMembers, type OutboxRow, type Subscription } from './store.ts';
import { yieldEvery, yieldToIo } from './delivery.ts';

/** Changes read per tick. */
const changeBatch = 500;

/** Another instance moved the cursor first; this tick's matches are discarded. */
export class CursorMoved extends Error {}

/** The matching step of the worker, with its view of the holes in the change log. */
export interface Matcher {
  /**
   * Matches one batch of the change log.
   * @returns true when more changes may be waiting right away
   * @throws CursorMoved when another instance moved the cursor first
   */
  match(): Promise<boolean>;
  /** Whether a hole in the PostgreSQL log is being waited out (its writers give no signal: poll). */
  waiting(): boolean;
  /**
   * Whether the last {@link match} found no subscription and no queued notification (in one
   * statement): then nothing is due or can expire, and the worker skips its other steps.
   */
  idle(): boolean;
}

/** The matcher of one worker. */
export function createMatcher(ctx: AppContext): Matcher {
  const db = ctx.store.db;
  /** The last match found no subscription and no queued notification: nothing to deliver or expire. */
  let idle = false;
  /** Holes in the log at or below this `seq` are final. */
  let settled = 0;
  /** A hole was seen: the log read up to `upTo`, the writers of the log then in progress. */
  let wait: { upTo: number; ids: string[] } | undefined;

  /** Matches one batch of the change log; true when more changes may be waiting right away. */
  async function match(): Promise<boolean> {
    idle = false;
    const state = await readWorkerState(db);
    // No subscription at all (the common case of a busy mail store): nothing to match.
    if (state.floor === undefined) {
      idle = !state.queued;
      wait = undefined;
      return false;
    }
    if (state.cursor === undefined) {
      await initCursor(db, state.floor);
      return true;
    }
    let cursor = state.cursor;
    if (state.floor > cursor) {
      // Left behind while nothing was subscribed: the changes up to the oldest subscription's
      // start notify nobody (the `startSeq` rule below), so they are not read at all.
      if (!(await advanceCursor(db, cursor, state.floor))) throw new CursorMoved();
      cursor = state.floor;
    }
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
    const subs = await subscriptionsOnMailboxes(db, pairs, now);
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
    if (rows.length === 0 && members.size === 0) {
      // Nothing to write but the cursor (no subscription watched these changes, the common case):
      // its compare-and-set alone is atomic, no transaction around it (three round trips fewer on PostgreSQL).
      if (!(await advanceCursor(db, cursor, next))) throw new CursorMoved();
    } else {
      await ctx.store.transaction(async (trx) => {
        if (!(await advanceCursor(trx, cursor, next))) throw new CursorMoved();
        await insertNotifications(trx, rows);
        await writeMembers(trx, members);
      });
    }
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
      prior = await memberInside(db, s.id, c.messageId);
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

  return { match, waiting: () => wait !== undefined, idle: () => idle };
}
