/**
 * The message PATCH's write (issue 31: "fewer statements and triggers per PATCH, the full-text
 * index updated only when indexed text changes"). A PATCH that changes no document property
 * (`isRead`, extended properties) writes three columns of the row — `is_read`, `modified_at`,
 * `change_key` — with one statement compiled once, instead of rewriting every column and the
 * 3–4 KB document: no index of an unchanged column is touched, the full-text trigger
 * (`mail_0010_fts_update_guard`) does not fire, the categories are not deleted and inserted
 * again. Any other PATCH rewrites the row with `updateMessage` of `store.ts`, and its
 * categories only when they were sent.
 */
import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../../store/database.ts';
import { compiledOnce } from '../../store/compiled.ts';
import { directConnection, param } from '../../store/prepared.ts';
import { insertOneChange, recordMailChanges } from './changes.ts';
import { signal } from '../../core/cache-bus.ts';
import { isPostgres } from '../../store/db.ts';
import type { MessageDoc, MessageRecord } from './message.ts';
import { change, mailboxKey, updateMessage } from './store.ts';
import { writingMailbox } from './local-versions.ts';

/** Body members of a PATCH that change no column but `is_read` and no part of the document. */
const rowOnlyMembers = new Set(['isRead', 'singleValueExtendedProperties', 'multiValueExtendedProperties']);

/** Whether a PATCH with these members (`MessageInput.present`) leaves the stored document as it is. */
export function leavesDocument(present: ReadonlySet<string>): boolean {
  for (const k of present) if (!rowOnlyMembers.has(k)) return false;
  return true;
}

/**
 * Whether a PATCH body (parsed JSON) names only members that leave the stored document as it is
 * ({@link rowOnlyMembers}, and `@odata.type`): then `parseMessageInput` writes nothing into the
 * document, and the handler needs no copy of it (issue 31: `structuredClone` of a 1.6 KB
 * document was about 45 µs of a read-state PATCH). False for anything but a plain object.
 */
export function bodyLeavesDocument(body: unknown): boolean {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  for (const k of Object.keys(body)) if (k !== '@odata.type' && !rowOnlyMembers.has(k)) return false;
  return true;
}

/** Whether some recipient of `doc` has no display name (`resolveNames` of `actions.ts` would fill it in). */
export function lacksNames(doc: MessageDoc): boolean {
  for (const list of [doc.toRecipients, doc.ccRecipients, doc.bccRecipients, doc.replyTo]) for (const r of list) if (!r.emailAddress.name) return true;
  return (doc.from !== null && doc.from !== undefined && !doc.from.emailAddress.name) || (doc.sender !== null && doc.sender !== undefined && !doc.sender.emailAddress.name);
}

/** `is_read`, `modified_at`, `change_key` of one message by its key (compiled once per dialect). */
const setReadState = compiledOnce((db: Kysely<Database>) =>
  db
    .updateTable('mail_messages')
    .set({ is_read: param<number>(0), modified_at: param<string>(1), change_key: param<string>(2) })
    .where('pk', '=', param<number>(3)),
);

/**
 * The read-state write of a PATCH that keeps the document (see {@link writePatchedMessage}) as
 * one synchronous SQLite transaction on the store's connection — `begin`, the row's three
 * columns, the change-log row, `commit` — when `db` is the root handle of a SQLite store and no
 * caller holds its connection (`directConnection` of `store/prepared.ts`). Nothing waits on the
 * connection's mutex and the connection is never held across an await, so the reads of other
 * requests keep running on it directly. Wakes the change-notification workers after the commit.
 * @returns false (nothing written) when it cannot run so: PostgreSQL, a transaction handle, a busy connection
 * @throws the database error (the transaction is rolled back)
 */
export function writeReadStateNow(db: Kysely<Database>, after: MessageRecord): boolean {
  const w = directConnection(db);
  if (!w || w.busy()) return false;
  const row = setReadState.bind(db, [after.isRead ? 1 : 0, after.modifiedAt, after.changeKey, after.pk]);
  const log = insertOneChange.bind(db, [after.tenantId, after.mailboxId, after.folderId, after.id, 'updated', after.modifiedAt]);
  // Only this message's mailbox version moves (its row's trigger; the change log has none).
  writingMailbox(db, mailboxKey(after.tenantId, after.mailboxId), after.pk, () => {
    w.statement('begin').run([]);
    try {
      w.statement(row.sql).run(row.parameters);
      w.statement(log.sql).run(log.parameters);
      w.statement('commit').run([]);
    } catch (e) {
      try {
        w.statement('rollback').run([]);
      } catch {
        // Already rolled back by SQLite (e.g. a constraint failure ends the transaction): nothing to undo.
      }
      throw e;
    }
  });
  void signal(db, 'mail');
  return true;
}

/**
 * PostgreSQL: the read-state write of {@link writeReadStateNow} as one call of
 * `stratus_mail_read_state` (`mail_0017_read_state_function`): the row's three columns, the
 * change-log row (only when the row was still there), the change notifications' wake-up
 * (`signal(db, 'mail')`, delivered at commit) and, when given, the writer's write marker after
 * the row's triggers (`core/cache-write-markers.ts`) — so one round trip instead of five (`begin`,
 * update, insert, `pg_notify`, `commit`), and no marker statement after it. Measured in the
 * 90/10 mix (bench/README.md, fourth and sixteenth passes).
 */
const readStateStatement = 'select stratus_mail_read_state($1, $2, $3, $4, $5, $6, $7, $8, $9)';

/**
 * {@link writeReadStateNow} on PostgreSQL: one statement on the root handle (see {@link readStateStatement}).
 * @param marker the payload of the request's write marker (`core/cache-write-markers.ts`), notified after the write's triggers
 * @returns false (nothing written) on SQLite
 * @throws the database error (nothing is written)
 */
export async function writeReadStateInOne(db: Kysely<Database>, after: MessageRecord, marker?: string): Promise<boolean> {
  if (!isPostgres(db)) return false;
  await db.executeQuery(CompiledQuery.raw(readStateStatement, [after.isRead ? 1 : 0, after.modifiedAt, after.changeKey, after.pk, after.tenantId, after.mailboxId, after.folderId, after.id, marker ?? null]));
  return true;
}

/**
 * Writes a PATCHed message (`after`: new change key and modification time set by the caller)
 * and records `updated` in the change log. Call it in the PATCH's transaction.
 * @param present the body members of the PATCH (`MessageInput.present`)
 * @param documentKept the document is the stored one (no member of the PATCH and no name
 *   resolution changed it): only the row's read state, time and change key are written
 * @throws ApiError 400 of `messageColumns` (a property longer than its column) on a full rewrite
 */
export async function writePatchedMessage(db: Kysely<Database>, after: MessageRecord, present: ReadonlySet<string>, documentKept: boolean): Promise<void> {
  if (!documentKept) return updateMessage(db, after, { categories: present.has('categories') });
  await setReadState(db, after.isRead ? 1 : 0, after.modifiedAt, after.changeKey, after.pk);
  await recordMailChanges(db, [change(after, 'updated', after.modifiedAt)]);
}
