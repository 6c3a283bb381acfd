/**
 * A message by id without `$expand` (issue 31: "GET among 10,000 distinct messages").
 *
 * The kept texts of `kept.ts` are keyed by the mailbox version and the request, and hold 1,000
 * answers per app: a client reading many different messages misses them nearly every time, and
 * pays for the version read, the message's whole row (its stored document, 1–2 KB of JSON), the
 * splice and the UTF-8 encoding each time. This path answers the bytes kept for the message's
 * version (row key, change key) and these render options instead: every write of a message gives
 * it a new change key (spec mail §2; `rendered.ts` relies on the same), so the bytes of a version
 * never go stale and no mailbox version is needed. The version comes from:
 *
 * - **SQLite**: one statement reading only the row key and change key (no document), or none
 *   when the version last read still holds: the embedded store's kept versions
 *   (`local-versions.ts`) vouch for it until any mail write of this process but the read-state
 *   PATCH of another message, or a commit of another connection. A client reading many
 *   messages reads no message row at all, also while other messages of the mailbox are marked
 *   read. While a caller holds the connection, the mailbox's version decides instead: every
 *   write of a message moves it in the write's transaction (`mail_0007_mailbox_versions`, by
 *   trigger), so at the version this message was last read at it is as it was.
 * - **PostgreSQL, live instance** (`core/cache-presence.ts`): memory. The message version
 *   triggers (`mail_0013_message_version_notices`) notify `msg:<tenant>/<pk>` for every written
 *   message, and the writer answers once every live instance applied that notification. So a
 *   version kept here (with what a read by id checks: the ids, the mailbox, the folder) is the
 *   stored one until its entry drops it; one read while a drop of its key arrived is not kept
 *   (`core/kept-versions.ts`). The other writes of the mailbox do not touch it: before, the
 *   90/10 mix's read-state PATCHes moved every mailbox's version several times a second and
 *   every message read on PostgreSQL was a statement.
 * - **PostgreSQL, not live**: nothing kept; the whole row is read (a round trip either way).
 *
 * Only when the version is not known, or its bytes not kept, is the whole row read (as
 * `getMessage` reads it) and rendered.
 */
import { sql, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Database } from '../../store/database.ts';
import { param, prepared } from '../../store/prepared.ts';
import { contextUrl, need, type MailRequest } from './request.ts';
import { parseSelect } from './query.ts';
import { renderOptions } from './lists.ts';
import { mailboxVersionOf } from './kept.ts';
import { isWellFormedId } from './ids.ts';
import { findMessage, malformed, messageFromRow, messageRowColumns, notFound, type Mailbox } from './store.ts';
import { rowInTurn, type RowRead } from '../../core/row-batch.ts';
import { messageJsonUncached, optionsKey, withFirstMember } from './rendered.ts';
import type { MessageRecord, RenderOptions } from './message.ts';
import { isPostgres } from '../../store/db.ts';
import { freshLocalVersions } from './local-versions.ts';

/** The row key and change key of a message by REST or immutable id; purged items are invisible (as `findMessage`). */
const versionById = prepared((db: Kysely<Database>) =>
  db
    .selectFrom('mail_messages')
    .select(['pk', 'change_key'])
    .where('tenant_id', '=', param(0))
    .where('mailbox_id', '=', param(1))
    .where((eb) => eb.or([eb('id', '=', param(2)), eb('immutable_id', '=', param(2))]))
    .where('folder_id', '<>', param(3)),
);

/**
 * Answers (UTF-8 bytes, `@odata.context` first) by message version and render options; at most
 * 32 MiB of bytes and keys (about 15,000 messages of the generated mailboxes, 2.1 KB each).
 */
const answers = new LRUCache<string, Buffer>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (v, k) => v.length + k.length });

/**
 * The key of an answer: the message version (row key, change key) and everything else the
 * answer holds — the render options, the API version of the context URL (its mailbox is the
 * message's own).
 */
function keyOf(pk: number, changeKey: string, o: RenderOptions, version: string): string {
  return `${pk}|${changeKey}|${optionsKey(o)}|${version}`;
}

/**
 * What a live PostgreSQL instance keeps of a message (key `tenant NUL pk`, dropped by the
 * notification entry `msg:<tenant>/<pk>`): its change key, and what a read by id checks.
 */
interface KeptMessage {
  changeKey: string;
  id: string;
  immutableId: string;
  mailboxId: string;
  folderId: string;
}

/** Kept messages per app (`CacheHub.keptVersions`): at most this many. */
const keptMessagesMax = 100_000;

/**
 * SQLite: a message's version as read by id, with its mailbox's version then, and the last
 * answer made for it with what that answer depends on (so that a client repeating one request
 * gets it with no key built and no other lookup).
 */
interface SeenMessage {
  /** The mailbox version it was read at (the path while a caller holds the connection). */
  mailboxVersion?: string;
  /** The epoch and ticket of the embedded store's kept versions taken before it was read (`LocalMailVersions.holds`). */
  epoch?: number;
  ticket?: number;
  pk: number;
  changeKey: string;
  bytes?: Buffer;
  /** What {@link bytes} was made for: the raw `$select`, `Prefer` options, origin, API version. */
  select?: string | null;
  immutable?: boolean;
  bodyType?: string;
  origin?: string;
  apiVersion?: string;
}

/**
 * SQLite: per app (its cache hub), the {@link SeenMessage} of each id read (`tenant NUL mailbox
 * NUL id`); used while the mailbox version is the same (module note). At most 32 MiB of answers
 * and entries.
 */
const seenByApp = new WeakMap<object, LRUCache<string, SeenMessage>>();

/**
 * PostgreSQL: per app (its cache hub), the row key a requested id (`tenant NUL mailbox NUL id`)
 * was last found under. Only a hint: a kept message is used only when its own ids, mailbox and
 * folder match the request.
 */
const hintsByApp = new WeakMap<object, LRUCache<string, number>>();

/** The app's row-key hints ({@link hintsByApp}). */
function rowKeyHints(mr: MailRequest): LRUCache<string, number> {
  return perApp(hintsByApp, mr.ctx.cache, () => new LRUCache<string, number>({ max: keptMessagesMax }));
}

/**
 * PostgreSQL, live instance: the whole rows of messages read by id (as the turn's statement
 * returns them: columns, the stored document and body text as text), by version
 * (`pk|changeKey`: every write of a message gives it a new change key, so a row never goes
 * stale under its key), at most {@link keptRowsMax} rows and {@link keptRowsBytes} of their
 * texts per app (about 2.5 KB a row in the generated mailboxes). What it serves: a client that
 * reads a message and then writes it — opens it, then marks it read (`PATCH`,
 * {@link messageForWrite}) — needs no read of its row for the write.
 */
const rowsByApp = new WeakMap<object, LRUCache<string, Record<string, unknown>>>();

/** Rows kept per app ({@link rowsByApp}). */
const keptRowsMax = 10_000;
/** Characters of text (and 256 a row besides) kept per app ({@link rowsByApp}). */
const keptRowsBytes = 32 * 1024 * 1024;

/** The characters a kept row holds, about. */
function rowSize(row: Record<string, unknown>): number {
  let n = 256;
  for (const v of Object.values(row)) if (typeof v === 'string') n += v.length;
  return n;
}

/** The app's kept rows ({@link rowsByApp}). */
function keptRows(mr: MailRequest): LRUCache<string, Record<string, unknown>> {
  return perApp(rowsByApp, mr.ctx.cache, () => new LRUCache<string, Record<string, unknown>>({ max: keptRowsMax, maxSize: keptRowsBytes, sizeCalculation: rowSize }));
}

/**
 * PostgreSQL, live instance: the version kept in memory (module note) of the message `id` of the
 * request's mailbox, when it is kept and is what a read by id may see (its ids, mailbox, and a
 * folder other than the purges); else undefined (read the row).
 */
function keptVersionOf(mr: MailRequest, id: string, purges: string): { pk: number; changeKey: string } | undefined {
  const mb = mr.mb;
  const pk = rowKeyHints(mr).get(`${mb.tenantId}\u0000${mb.mailboxId}\u0000${id}`);
  if (pk === undefined) return undefined;
  const e = mr.ctx.cache.keptVersions<KeptMessage>('msg', keptMessagesMax).get(`${mb.tenantId}\u0000${pk}`);
  if (e === undefined || e.mailboxId !== mb.mailboxId || (e.id !== id && e.immutableId !== id) || e.folderId === purges) return undefined;
  return { pk, changeKey: e.changeKey };
}

/**
 * The message `id` of the request's mailbox, for a `PATCH` of it: on a live PostgreSQL instance
 * made from the row kept for its kept version ({@link rowsByApp}: no read of its row, so the
 * write waits for one round trip less), else as {@link getMessageInTurn} reads it.
 * @throws ApiError 400 `ErrorInvalidIdMalformed`, 404 `ErrorItemNotFound`
 */
export async function messageForWrite(mr: MailRequest, id: string): Promise<MessageRecord> {
  const db = mr.ctx.store.db as Kysely<Database>;
  if (isPostgres(db) && isWellFormedId(id)) {
    const v = keptVersionOf(mr, id, mr.mb.wellKnown.get('recoverableitemspurges')!);
    const row = v === undefined ? undefined : rowsByApp.get(mr.ctx.cache)?.get(`${v.pk}|${v.changeKey}`);
    if (row !== undefined) return messageFromRow(row);
  }
  return getMessageInTurn(db, mr.mb, id);
}

/** The app's own map of `byApp` (its cache hub `hub`), made by `make` on first use. */
function perApp<T extends object>(byApp: WeakMap<object, T>, hub: object, make: () => T): T {
  let t = byApp.get(hub);
  if (!t) byApp.set(hub, (t = make()));
  return t;
}

/**
 * The answer of `GET …/messages/{id}` without `$expand` (see the module note), in the order of
 * checks of the general path: the id, the message, the caller's permission, `$select`.
 * @throws ApiError 400 `ErrorInvalidIdMalformed`, 404 `ErrorItemNotFound`, 403 `ErrorAccessDenied`, 400 for a bad `$select`
 */
export async function messageAnswer(mr: MailRequest, id: string): Promise<Buffer> {
  if (!isWellFormedId(id)) throw malformed();
  const db = mr.ctx.store.db as Kysely<Database>;
  const mb = mr.mb;
  const purges = mb.wellKnown.get('recoverableitemspurges')!;
  if (isPostgres(db)) return keptMessageAnswer(mr, id, purges);
  const seenAt = perApp(seenByApp, mr.ctx.cache, () => new LRUCache<string, SeenMessage>({ max: keptMessagesMax, maxSize: 32 * 1024 * 1024, sizeCalculation: (e, k) => 64 + k.length + (e.bytes?.length ?? 0) }));
  const seenKey = `${mb.tenantId}\u0000${mb.mailboxId}\u0000${id}`;
  let v = seenAt.get(seenKey);
  // What vouches for the version last read: the embedded store's kept versions (an epoch and a
  // ticket, both taken before a read), else, while a caller holds the connection, the mailbox's version.
  const local = freshLocalVersions(mr.ctx.cache.store, db);
  const mailboxVersion = local === undefined ? await mailboxVersionOf(mr) : undefined;
  if (v === undefined || !(local !== undefined ? v.epoch !== undefined && local.holds(v.epoch, v.ticket!, v.pk) : v.mailboxVersion === mailboxVersion)) {
    const mark: Pick<SeenMessage, 'epoch' | 'ticket' | 'mailboxVersion'> = local !== undefined ? { epoch: local.epoch(), ticket: local.ticket() } : { mailboxVersion };
    const [row] = await versionById(db, mb.tenantId, mb.mailboxId, id, purges);
    if (!row) throw notFound();
    // The same row and change key (read after the mark): what was kept for it holds under the new mark too.
    if (v !== undefined && v.pk === Number(row.pk) && v.changeKey === row.change_key) Object.assign(v, mark);
    else seenAt.set(seenKey, (v = { ...mark, pk: Number(row.pk), changeKey: row.change_key }));
  }
  need(mr, 'read');
  const select = mr.q.get('$select');
  const origin = mr.ctx.origin();
  if (v.bytes !== undefined && v.select === select && v.immutable === mr.immutable && v.bodyType === mr.bodyType && v.origin === origin && v.apiVersion === mr.version) return held(mr, v.bytes);
  const o = renderOptions(mr, parseSelect(mr.q));
  let bytes = answers.get(keyOf(v.pk, v.changeKey, o, mr.version));
  if (bytes === undefined) {
    // The whole row, read as the general path reads it; kept under its own change key (a write
    // between the two reads makes a new version, never a wrong text for the old one).
    const m = await findMessage(db, mb, id);
    if (!m) throw notFound();
    bytes = render(mr, m, o);
    if (m.changeKey !== v.changeKey) return bytes;
  }
  if (seenAt.peek(seenKey) === v) {
    Object.assign(v, { bytes, select, immutable: mr.immutable, bodyType: mr.bodyType, origin, apiVersion: mr.version });
    seenAt.set(seenKey, v); // its size again, with the answer
  }
  return held(mr, bytes);
}

/** PostgreSQL: {@link messageAnswer} with the message version kept in memory while live (module note). */
async function keptMessageAnswer(mr: MailRequest, id: string, purges: string): Promise<Buffer> {
  const mb = mr.mb;
  const v = keptVersionOf(mr, id, purges);
  if (v !== undefined) {
    need(mr, 'read');
    const o = renderOptions(mr, parseSelect(mr.q));
    const bytes = answers.get(keyOf(v.pk, v.changeKey, o, mr.version));
    if (bytes !== undefined) return held(mr, bytes);
  }
  const kept = mr.ctx.cache.keptVersions<KeptMessage>('msg', keptMessagesMax);
  const ticket = kept.ticket();
  const { m, row } = await messageRowInTurn(mr.ctx.store.db as Kysely<Database>, mb, id);
  if (!m) throw notFound();
  kept.set(`${mb.tenantId}\u0000${m.pk}`, { changeKey: m.changeKey, id: m.id, immutableId: m.immutableId, mailboxId: m.mailboxId, folderId: m.folderId }, ticket);
  rowKeyHints(mr).set(`${mb.tenantId}\u0000${mb.mailboxId}\u0000${id}`, m.pk);
  if (row && ticket >= 0) keptRows(mr).set(`${m.pk}|${m.changeKey}`, row);
  need(mr, 'read');
  const o = renderOptions(mr, parseSelect(mr.q));
  const bytes = answers.get(keyOf(m.pk, m.changeKey, o, mr.version));
  return bytes !== undefined ? held(mr, bytes) : render(mr, m, o);
}

/** A kept answer: the request log may hold it by reference (the cache keeps it anyway). */
function held(mr: MailRequest, bytes: Buffer): Buffer {
  mr.ctx.requestLog.heldBody(mr.req.raw, bytes);
  return bytes;
}

/**
 * The answer of the message PATCH (`handlers.ts`): the message whole, as a GET of it without
 * `$select` answers it (the same bytes), kept under its new version so that the next read of it
 * by id needs neither its row nor a rendering.
 */
export function writtenMessageAnswer(mr: MailRequest, m: MessageRecord): Buffer {
  return render(mr, m, renderOptions(mr, undefined));
}

/** Renders `m` as the answer (`@odata.context` first) and keeps it under its version. */
function render(mr: MailRequest, m: MessageRecord, o: RenderOptions): Buffer {
  const bytes = Buffer.from(withFirstMember('@odata.context', contextUrl(mr, 'messages/$entity'), messageJsonUncached(m, o)), 'utf8');
  answers.set(keyOf(m.pk, m.changeKey, o, mr.version), bytes);
  return bytes;
}

/** PostgreSQL: a message by id as a read of the turn's one statement (`core/row-batch.ts`); keys: tenant, mailbox, id, the purges folder. */
const messageInTurn: RowRead = {
  name: 'mail message by id',
  keyParts: 4,
  lookup: sql`select ${sql.raw(messageRowColumns.join(', '))} from mail_messages where tenant_id = q.k1 and mailbox_id = q.k2 and (id = q.k3 or immutable_id = q.k3) and folder_id <> q.k4 limit 1`,
  columns: messageRowColumns.filter((c) => c !== 'doc'),
  longColumn: 'doc',
};

/**
 * {@link findMessage} on the store's root handle (never a transaction's): on PostgreSQL the
 * turn's reads of messages by id go in the turn's one statement (`core/row-batch.ts`).
 * @throws ApiError 400 `ErrorInvalidIdMalformed`; the database error of the read
 */
export async function findMessageInTurn(db: Kysely<Database>, mb: Mailbox, id: string): Promise<MessageRecord | undefined> {
  if (!isWellFormedId(id)) throw malformed();
  return (await messageRowInTurn(db, mb, id)).m;
}

/**
 * {@link findMessageInTurn} without the id's check, also giving the row as the turn's statement
 * returned it (undefined when read otherwise: SQLite, a transaction's handle).
 * @throws the database error of the read
 */
async function messageRowInTurn(db: Kysely<Database>, mb: Mailbox, id: string): Promise<{ m?: MessageRecord; row?: Record<string, unknown> }> {
  const read = rowInTurn(db, messageInTurn, [mb.tenantId, mb.mailboxId, id, mb.wellKnown.get('recoverableitemspurges')!]);
  if (read === undefined) return { m: await findMessage(db, mb, id) };
  const row = await read;
  return row ? { m: messageFromRow(row), row } : {};
}

/**
 * {@link getMessage} on the store's root handle ({@link findMessageInTurn}).
 * @throws ApiError 404 `ErrorItemNotFound`, 400 `ErrorInvalidIdMalformed`
 */
export async function getMessageInTurn(db: Kysely<Database>, mb: Mailbox, id: string): Promise<MessageRecord> {
  const m = await findMessageInTurn(db, mb, id);
  if (!m) throw notFound();
  return m;
}
