/**
 * The mail change log: one row per change to a message, written by the mail area in the
 * same transaction as the change itself (an outbox). Delta queries (spec: mail §6, delta)
 * read it by folder; change notifications (mailsync; spec: mail §6, subscriptions) read it by
 * mailbox in `seq` order. `seq` grows strictly, so "everything after seq N" is an index range
 * scan. The mail area owns the log (its table and migration); mailsync only reads it.
 */
import { performance } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import { autoIncrementKey, isPostgres, type Migrations } from '../../store/db.ts';
import { signal } from '../../core/cache-bus.ts';
import { compiledOnce } from '../../store/compiled.ts';
import { param } from '../../store/prepared.ts';
import type { Database } from '../../store/database.ts';
import type { MailDatabase } from './tables.ts';

/** What happened to a message, in the notification vocabulary (`created`, `updated`, `deleted`). */
export type MailChangeType = 'created' | 'updated' | 'deleted';

/** One change to record. A move is `deleted` in the old folder plus `created` in the new one. */
export interface MailChange {
  tenantId: string;
  /** The mailbox owner's object id (the directory user's `oid`). */
  mailboxId: string;
  /** The folder the message is (or was, for `deleted`) in. */
  folderId: string;
  /** The message id as the API shows it in that folder. */
  messageId: string;
  changeType: MailChangeType;
  /** ISO 8601 UTC time of the change (`nowIso()`). */
  at: string;
}

/** A stored change: a {@link MailChange} with its position in the log. */
export interface MailChangeRow extends MailChange {
  seq: number;
}

/** The change log's table, for `POST /_stratus/reset` (no foreign keys: any order). */
export const mailChangeTables: (keyof MailDatabase)[] = ['mail_changes'];

/** A `mail_changes` row → {@link MailChangeRow} (`seq` comes back as a string from PostgreSQL). */
function changeFromRow(r: any): MailChangeRow {
  return { seq: Number(r.seq), tenantId: r.tenant_id, mailboxId: r.mailbox_id, folderId: r.folder_id, messageId: r.message_id, changeType: r.change_type, at: r.at };
}

/**
 * Migration of the `mail_changes` table (dialect-aware auto-increment key). Its name keeps the
 * `mailsync_` prefix it was first applied under, so stores migrated before the log moved to
 * the mail area do not run it again.
 */
export const mailChangeMigrations: Migrations = {
  mailsync_0001_mail_changes: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mail_changes')
        .addColumn('seq', ...autoIncrementKey(db))
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('folder_id', 'varchar(512)', (c) => c.notNull())
        .addColumn('message_id', 'varchar(512)', (c) => c.notNull())
        .addColumn('change_type', 'varchar(16)', (c) => c.notNull())
        .addColumn('at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_changes_folder').on('mail_changes').columns(['tenant_id', 'mailbox_id', 'folder_id', 'seq']).execute();
      await db.schema.createIndex('mail_changes_mailbox').on('mail_changes').columns(['tenant_id', 'mailbox_id', 'seq']).execute();
    },
  },
};

/** One change-log row (compiled once per dialect): tenant, mailbox, folder, message id, change type, time. */
export const insertOneChange = compiledOnce((db: Kysely<Database>) =>
  db.insertInto('mail_changes').values({ tenant_id: param<string>(0), mailbox_id: param<string>(1), folder_id: param<string>(2), message_id: param<string>(3), change_type: param<string>(4), at: param<string>(5) }),
);

/**
 * Appends changes to the log. Call it with the transaction that makes the change.
 * @param db the transaction (or the database, outside one)
 */
export async function recordMailChanges(db: Kysely<Database>, changes: MailChange[]): Promise<void> {
  if (changes.length === 0) return;
  if (changes.length === 1) {
    // The common case (a PATCH, a delete): one statement compiled once (issue 31).
    const c = changes[0]!;
    await insertOneChange(db, c.tenantId, c.mailboxId, c.folderId, c.messageId, c.changeType, c.at);
  } else {
    await db
      .insertInto('mail_changes')
      .values(changes.map((c) => ({ tenant_id: c.tenantId, mailbox_id: c.mailboxId, folder_id: c.folderId, message_id: c.messageId, change_type: c.changeType, at: c.at })))
      .execute();
  }
  // Wakes the notification workers (PostgreSQL: on commit, every instance).
  await signal(db, 'mail');
}

/** How long a reader of the log waits for the writers in progress before answering from what is final. */
const settleWaitMs = 1_000;

/**
 * The highest `seq` in the log (0 when empty) and whether every `seq` up to it is final: on
 * PostgreSQL a writer still in progress may hold a lower `seq` (a hole that fills when it
 * commits), so this waits (yielding, at most {@link settleWaitMs}) for the writers of the log seen
 * after reading the maximum to finish. SQLite serialises writers: always final.
 */
async function settledMax(db: Kysely<Database>): Promise<{ max: number; final: boolean }> {
  const row = await db.selectFrom('mail_changes').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst();
  const max = Number(row?.m ?? 0);
  if (!isPostgres(db)) return { max, final: true };
  const writers = await mailChangeWriters(db);
  const until = performance.now() + settleWaitMs;
  while (!(await writersFinished(db, writers))) {
    if (performance.now() >= until) return { max, final: false };
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return { max, final: true };
}

/**
 * The highest `seq` in the log (0 when empty): the point a new delta link or subscription starts
 * from. On PostgreSQL it first lets the mail writes in progress finish (at most 1 s), so a write
 * that drew a lower `seq` is not left behind the starting point.
 */
export async function latestMailChangeSeq(db: Kysely<Database>): Promise<number> {
  return (await settledMax(db)).max;
}

/**
 * Changes after `afterSeq`, oldest first, for one folder (delta) or a whole mailbox
 * (`folderId` omitted), at most `limit` rows, up to the final part of the log (PostgreSQL: after the
 * writers in progress have finished; empty when they take longer than 1 s, so nothing is skipped).
 */
export async function mailChangesSince(db: Kysely<Database>, q: { tenantId: string; mailboxId: string; folderId?: string; afterSeq: number; limit: number }): Promise<MailChangeRow[]> {
  let query = db
    .selectFrom('mail_changes')
    .selectAll()
    .where('tenant_id', '=', q.tenantId)
    .where('mailbox_id', '=', q.mailboxId)
    .where('seq', '>', q.afterSeq);
  if (q.folderId !== undefined) query = query.where('folder_id', '=', q.folderId);
  // Only the final part of the log: a change a writer in progress may still insert below a later one
  // would otherwise be passed over for good. Writers that do not finish in time → nothing new yet.
  const horizon = await settledMax(db);
  if (!horizon.final) return [];
  const rows = await query.where('seq', '<=', horizon.max).orderBy('seq').limit(q.limit).execute();
  return rows.map(changeFromRow);
}

/**
 * Changes of every mailbox after `afterSeq`, oldest first, at most `limit` rows (the
 * notification worker's global cursor; a primary-key range scan).
 */
export async function mailChangesAfter(db: Kysely<Database>, afterSeq: number, limit: number): Promise<MailChangeRow[]> {
  const rows = await db.selectFrom('mail_changes').selectAll().where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
  return rows.map(changeFromRow);
}

/**
 * The transactions writing the change log now (PostgreSQL; empty on SQLite, whose writes are
 * serialised on one connection so a hole in `seq` is never filled later): the virtual
 * transaction ids holding a write lock on `mail_changes`. A writer takes that lock before it
 * draws a `seq` and keeps it until it commits or rolls back, so, asked after reading the log up
 * to `seq` M, every writer that can still fill a hole below M is among them. Transactions of
 * other tables are not, so an unrelated long transaction never holds notifications back.
 */
export async function mailChangeWriters(db: Kysely<Database>): Promise<string[]> {
  if (!isPostgres(db)) return [];
  const r = await sql<{ v: string }>`select distinct virtualtransaction as v from pg_locks where locktype = 'relation' and relation = to_regclass('mail_changes') and pid is distinct from pg_backend_pid() and mode in ('RowExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')`.execute(db);
  return r.rows.map((row) => String(row.v));
}

/** Whether every writer of `ids` (from {@link mailChangeWriters}) has committed or rolled back. */
export async function writersFinished(db: Kysely<Database>, ids: string[]): Promise<boolean> {
  if (ids.length === 0 || !isPostgres(db)) return true;
  const r = await sql<{ n: string }>`select count(*) as n from pg_locks where locktype = 'relation' and relation = to_regclass('mail_changes') and virtualtransaction = any(${ids})`.execute(db);
  return Number(r.rows[0]?.n ?? 0) === 0;
}
