/**
 * Queries of the mail store: mailboxes and their well-known folders (created on first use),
 * messages with their child rows, and every write together with its entry in the mail change
 * log (`recordMailChanges`, same transaction; a move is `deleted` in the old folder plus
 * `created` in the new one). Every query is scoped by tenant and mailbox.
 */
import type { Insertable, Kysely } from 'kysely';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { lazyJson, toJson, bool } from '../../store/db.ts';
import { recordMailChanges, type MailChange } from './changes.ts';
import { isWellFormedId, newAttachmentId, newChangeKey, newFolderId, newImmutableId, newMessageId } from './ids.ts';
import { bodyText, rememberBodyText, searchBodyMax, type MessageDoc, type MessageRecord } from './message.ts';
import type { Database } from '../../store/database.ts';
import type { CacheHub } from '../../core/cache.ts';
import { param, prepared } from '../../store/prepared.ts';

/**
 * The `mail_messages` columns a {@link MessageRecord} is made of (see {@link messageFromRow}):
 * reads select these, not the filter columns derived from the document. The body's text
 * (`search_body`, as large as the body) is among them: nearly every whole-row read renders the
 * message, and a preview made from it skips converting the HTML again (issue 31).
 */
export const messageRowColumns = ['pk', 'id', 'immutable_id', 'tenant_id', 'mailbox_id', 'folder_id', 'created_at', 'modified_at', 'received_at', 'sent_at', 'is_read', 'is_draft', 'has_attachments', 'change_key', 'search_body', 'doc'] as const;

/** {@link messageRowColumns} qualified by the table (for queries that join). */
export const qualifiedMessageRowColumns = messageRowColumns.map((c) => `mail_messages.${c}` as const);

/** The request path's reads of a mailbox, compiled once (issue 9). */
const wellKnownFoldersOf = prepared((db: Kysely<Database>) =>
  db.selectFrom('mail_folders').select(['id', 'well_known']).where('tenant_id', '=', param(0)).where('mailbox_id', '=', param(1)).where('well_known', 'is not', null),
);
const folderById = prepared((db: Kysely<Database>) =>
  db.selectFrom('mail_folders').selectAll().where('id', '=', param(0)).where('tenant_id', '=', param(1)).where('mailbox_id', '=', param(2)),
);
const messageById = prepared((db: Kysely<Database>) =>
  db
    .selectFrom('mail_messages')
    .select(messageRowColumns)
    .where('tenant_id', '=', param(0))
    .where('mailbox_id', '=', param(1))
    .where((eb) => eb.or([eb('id', '=', param(2)), eb('immutable_id', '=', param(2))]))
    .where('folder_id', '<>', param(3)),
);
import type { MailDatabase } from './tables.ts';
import { KeyInterner } from '../../core/keys.ts';

/** A mailbox: the owner's tenant and object id, with its well-known folders' ids. */
export interface Mailbox {
  tenantId: string;
  /** The owner's object id. */
  mailboxId: string;
  /** The owner's address and display name (for `from` / `sender`). */
  address: string;
  displayName: string;
  /** well-known name (lower case) → folder id. */
  wellKnown: Map<string, string>;
}

/** A stored folder. */
export interface FolderRow {
  id: string;
  tenantId: string;
  mailboxId: string;
  parentId: string | null;
  wellKnown: string | null;
  displayName: string;
  isHidden: boolean;
}

/** The well-known folders every mailbox has (reference mail.md §4): name, display name, parent, hidden. */
export const wellKnownFolders: { name: string; displayName: string; parent: string | null; hidden: boolean }[] = [
  { name: 'root', displayName: 'Root', parent: null, hidden: true },
  { name: 'msgfolderroot', displayName: 'Top of Information Store', parent: 'root', hidden: false },
  { name: 'inbox', displayName: 'Inbox', parent: 'msgfolderroot', hidden: false },
  { name: 'drafts', displayName: 'Drafts', parent: 'msgfolderroot', hidden: false },
  { name: 'sentitems', displayName: 'Sent Items', parent: 'msgfolderroot', hidden: false },
  { name: 'deleteditems', displayName: 'Deleted Items', parent: 'msgfolderroot', hidden: false },
  { name: 'junkemail', displayName: 'Junk Email', parent: 'msgfolderroot', hidden: false },
  { name: 'archive', displayName: 'Archive', parent: 'msgfolderroot', hidden: false },
  { name: 'outbox', displayName: 'Outbox', parent: 'msgfolderroot', hidden: false },
  { name: 'conversationhistory', displayName: 'Conversation History', parent: 'msgfolderroot', hidden: false },
  { name: 'clutter', displayName: 'Clutter', parent: 'msgfolderroot', hidden: true },
  { name: 'recoverableitemsroot', displayName: 'Recoverable Items', parent: 'root', hidden: true },
  { name: 'recoverableitemsdeletions', displayName: 'Deletions', parent: 'recoverableitemsroot', hidden: true },
  { name: 'recoverableitemspurges', displayName: 'Purges', parent: 'recoverableitemsroot', hidden: true },
  { name: 'recoverableitemsversions', displayName: 'Versions', parent: 'recoverableitemsroot', hidden: true },
];
/** Folders outside the mailbox-wide message list (`/me/messages`): the recoverable-items tree and the roots. */
export const hiddenFromMailboxList = ['root', 'msgfolderroot', 'recoverableitemsroot', 'recoverableitemsdeletions', 'recoverableitemspurges', 'recoverableitemsversions'];

/** 404 `ErrorItemNotFound` (reference §8.2). */
export const notFound = () => errors.mail.itemNotFound();
/** 404 `ErrorFolderNotFound` (reference §8.2). */
export const folderNotFound = () => errors.mail.folderNotFound();
/** 400 `ErrorInvalidIdMalformed` "Id is malformed." (reference §8.2). */
export const malformed = () => errors.mail.idMalformed();

/**
 * The mailbox of a directory user, creating its well-known folders on first use
 * (folder ids are deterministic per mailbox, so concurrent first uses agree).
 * @param wrote called after it wrote folders (a request's caller passes `CacheHub.markWritten`:
 *   on PostgreSQL the request then answers once every live instance applied the write)
 */
export async function openMailbox(db: Kysely<Database>, user: { tenantId: string; id: string; mail: string; displayName: string }, wrote?: () => void): Promise<Mailbox> {
  const read = async () =>
    (await wellKnownFoldersOf(db, user.tenantId, user.id)) as { id: string; well_known: string }[];
  let rows = await read();
  if (rows.length < wellKnownFolders.length) {
    const at = nowIso();
    const ids = new Map(wellKnownFolders.map((f) => [f.name, newFolderId(`${user.tenantId}/${user.id}/${f.name}`)]));
    const have = new Set(rows.map((r) => r.well_known));
    const values = wellKnownFolders
      .filter((f) => !have.has(f.name))
      .map((f) => ({ id: ids.get(f.name)!, tenant_id: user.tenantId, mailbox_id: user.id, parent_id: f.parent ? ids.get(f.parent)! : null, well_known: f.name, display_name: f.displayName, is_hidden: f.hidden ? 1 : 0, created_at: at }));
    await db.insertInto('mail_folders').values(values).onConflict((oc) => oc.doNothing()).execute();
    wrote?.();
    rows = await read();
  }
  return { tenantId: user.tenantId, mailboxId: user.id, address: user.mail, displayName: user.displayName, wellKnown: new Map(rows.map((r) => [r.well_known, r.id])) };
}

/** The keys of mailboxes, made once (`core/keys.ts`). */
const mailboxKeys = new KeyInterner('\u0000');

/**
 * The key of a mailbox, `tenant NUL mailbox` (ids never hold NUL), the same string object for
 * the same mailbox: the well-known folders' cache and the kept versions and texts (`kept.ts`).
 */
export const mailboxKey = (tenantId: string, mailboxId: string): string => mailboxKeys.key(tenantId, mailboxId);

/**
 * {@link openMailbox} for the request path: a mailbox's well-known folders, once they all
 * exist, are kept in memory (a `directory`-area cache). They cannot be renamed, moved or
 * deleted (reference §4), so only a reset removes them — and a reset empties every cache area,
 * on this instance and, through the version rows, on the others.
 * @param raw the request's Node object: a read that first opens the mailbox is marked as one that
 *   wrote (`core/cache-requests.ts`)
 */
export async function openCachedMailbox(db: Kysely<Database>, cache: CacheHub, user: { tenantId: string; id: string; mail: string; displayName: string }, raw?: object): Promise<Mailbox> {
  const c = cache.shared<ReadonlyMap<string, string>>('mail.wellKnownFolders', 'directory', 10_000);
  const key = mailboxKey(user.tenantId, user.id);
  const wellKnown = (c.peek(key) ??
    (await c.get(key, async () => (await openMailbox(db, user, () => cache.markWritten(raw))).wellKnown))) as Map<string, string>;
  return { tenantId: user.tenantId, mailboxId: user.id, address: user.mail, displayName: user.displayName, wellKnown };
}

function folderFromRow(r: any): FolderRow {
  return { id: r.id, tenantId: r.tenant_id, mailboxId: r.mailbox_id, parentId: r.parent_id, wellKnown: r.well_known, displayName: r.display_name, isHidden: bool(r.is_hidden) };
}

/**
 * A folder by id or well-known name (case-insensitive).
 * @throws ApiError 404 `ErrorFolderNotFound`, 400 `ErrorInvalidIdMalformed`
 */
export async function getFolder(db: Kysely<Database>, mb: Mailbox, idOrName: string): Promise<FolderRow> {
  const wk = mb.wellKnown.get(idOrName.toLowerCase());
  const id = wk ?? idOrName;
  if (!wk && !isWellFormedId(id)) throw malformed();
  const [r] = await folderById(db, id, mb.tenantId, mb.mailboxId);
  if (!r) throw folderNotFound();
  return folderFromRow(r);
}

/** Child folders of `parentId`, by display name, paged in SQL. */
export async function listChildFolders(db: Kysely<Database>, mb: Mailbox, parentId: string, o: { includeHidden: boolean; top: number; skip: number }): Promise<FolderRow[]> {
  let q = db.selectFrom('mail_folders').selectAll().where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('parent_id', '=', parentId);
  if (!o.includeHidden) q = q.where('is_hidden', '=', 0);
  const rows = await q.orderBy('display_name').orderBy('id').limit(o.top).offset(o.skip).execute();
  return rows.map(folderFromRow);
}

/** Counts of folders: total and unread from the folder counters (`mail_folder_counts`), child folders by index. */
export async function folderCounts(db: Kysely<Database>, mb: Mailbox, ids: string[]): Promise<Map<string, { total: number; unread: number; children: number }>> {
  const out = new Map(ids.map((id) => [id, { total: 0, unread: 0, children: 0 }]));
  if (ids.length === 0) return out;
  const msgs = await db.selectFrom('mail_folder_counts').select(['folder_id', 'total', 'unread']).where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('folder_id', 'in', ids).execute();
  for (const r of msgs as any[]) {
    const c = out.get(r.folder_id)!;
    c.total = Number(r.total);
    c.unread = Number(r.unread);
  }
  const kids = await db
    .selectFrom('mail_folders')
    .select('parent_id')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('tenant_id', '=', mb.tenantId)
    .where('mailbox_id', '=', mb.mailboxId)
    .where('parent_id', 'in', ids)
    .groupBy('parent_id')
    .execute();
  for (const r of kids as any[]) out.get(r.parent_id)!.children = Number(r.n);
  return out;
}

// ---------------------------------------------------------------------------------------
// Messages

/**
 * Converts a `mail_messages` row. The stored document is parsed when `doc` is first read (a
 * message whose rendered text is cached, `rendered.ts`, is answered without parsing it).
 */
export function messageFromRow(r: any): MessageRecord {
  const m = {
    pk: Number(r.pk),
    id: r.id,
    immutableId: r.immutable_id,
    tenantId: r.tenant_id,
    mailboxId: r.mailbox_id,
    folderId: r.folder_id,
    createdAt: r.created_at,
    modifiedAt: r.modified_at,
    receivedAt: r.received_at,
    sentAt: r.sent_at,
    isRead: bool(r.is_read),
    isDraft: bool(r.is_draft),
    hasAttachments: bool(r.has_attachments),
    changeKey: r.change_key,
  } as MessageRecord;
  // A light row (lightMessageColumns) has no document: at most its subject, which is all a rowProperties page renders of it.
  // A whole row has the body's text stored beside the document (`messageColumns`): the preview is made from it (`message.ts`).
  if (r.doc === undefined) m.doc = { subject: r.subject } as MessageDoc;
  else lazyJson(m, 'doc', r.doc, typeof r.search_body === 'string' ? (doc) => rememberBodyText(doc, r.search_body) : undefined);
  return m;
}

/**
 * Rejects a value longer than the column that stores it (PostgreSQL enforces `varchar(n)`,
 * SQLite does not: checked here so both databases answer the same clear 400).
 * @param max the column's length in characters
 * @throws ApiError 400 `ErrorInvalidRequest`
 */
export function checkLength(value: string | null | undefined, max: number, what: string): void {
  if (value != null && value.length > max) throw errors.mail.valueTooLong({ property: what, length: value.length, max });
}

/**
 * The `mail_messages` columns of a record (every filter column derived from the document).
 * @throws ApiError 400 `ErrorInvalidRequest` when an indexed value is longer than its column
 */
export function messageColumns(m: Omit<MessageRecord, 'pk'>): Insertable<MailDatabase['mail_messages']> {
  const d = m.doc;
  const from = d.from?.emailAddress;
  checkLength(from?.address, 400, 'from/emailAddress/address');
  checkLength(from?.name, 400, 'from/emailAddress/name');
  checkLength(d.sender?.emailAddress.address, 400, 'sender/emailAddress/address');
  checkLength(d.internetMessageId, 600, 'internetMessageId');
  checkLength(d.conversationId, 200, 'conversationId');
  return {
    id: m.id,
    immutable_id: m.immutableId,
    tenant_id: m.tenantId,
    mailbox_id: m.mailboxId,
    folder_id: m.folderId,
    created_at: m.createdAt,
    modified_at: m.modifiedAt,
    received_at: m.receivedAt,
    sent_at: m.sentAt,
    is_read: m.isRead ? 1 : 0,
    is_draft: m.isDraft ? 1 : 0,
    has_attachments: m.hasAttachments ? 1 : 0,
    is_mentioned: d.mentions.length ? 1 : 0,
    importance: d.importance,
    inference: d.inferenceClassification,
    flag_status: d.flag.flagStatus,
    subject: d.subject,
    subject_lc: d.subject.toLowerCase(),
    from_address_lc: from?.address ? from.address.toLowerCase() : null,
    from_name: from?.name ?? null,
    sender_address_lc: d.sender?.emailAddress.address ? d.sender.emailAddress.address.toLowerCase() : null,
    conversation_id: d.conversationId,
    internet_message_id: d.internetMessageId,
    change_key: m.changeKey,
    from_text: from ? `${from.name} ${from.address}` : '',
    search_body: bodyText(d.body).slice(0, searchBodyMax),
    doc: toJson(d),
  };
}

async function writeChildren(db: Kysely<Database>, pk: number, doc: MessageDoc): Promise<void> {
  for (const c of doc.categories) checkLength(c, 400, 'categories');
  await db.deleteFrom('mail_categories').where('message_pk', '=', pk).execute();
  if (doc.categories.length) await db.insertInto('mail_categories').values(doc.categories.map((name) => ({ message_pk: pk, name }))).execute();
}

/** A change-log entry for `m`. */
export function change(m: { tenantId: string; mailboxId: string; folderId: string; id: string }, changeType: MailChange['changeType'], at: string): MailChange {
  return { tenantId: m.tenantId, mailboxId: m.mailboxId, folderId: m.folderId, messageId: m.id, changeType, at };
}

/**
 * Inserts messages (and their categories) and records `created` for each.
 * @returns the records with their `pk`
 */
export async function insertMessages(db: Kysely<Database>, recs: Omit<MessageRecord, 'pk'>[], opts: { record?: boolean } = {}): Promise<MessageRecord[]> {
  const out: MessageRecord[] = [];
  for (const r of recs) {
    const row = await db.insertInto('mail_messages').values(messageColumns(r)).returning('pk').executeTakeFirstOrThrow();
    const m = { ...r, pk: Number((row as any).pk) };
    await writeChildren(db, m.pk, m.doc);
    out.push(m);
  }
  if (opts.record !== false) await recordMailChanges(db, out.map((m) => change(m, 'created', m.modifiedAt)));
  return out;
}

/**
 * Rewrites a message (new change key and modification time set by the caller) and records
 * `updated`. `opts.categories: false` leaves its categories rows as they are (a PATCH that did
 * not send `categories`, `writes.ts`).
 */
export async function updateMessage(db: Kysely<Database>, m: MessageRecord, opts: { categories?: boolean } = {}): Promise<void> {
  await db.updateTable('mail_messages').set(messageColumns(m)).where('pk', '=', m.pk).execute();
  if (opts.categories !== false) await writeChildren(db, m.pk, m.doc);
  await recordMailChanges(db, [change(m, 'updated', m.modifiedAt)]);
}

/** Whether an id names a message in this mailbox by REST or immutable id; purged items are invisible. */
export async function findMessage(db: Kysely<Database>, mb: Mailbox, id: string): Promise<MessageRecord | undefined> {
  if (!isWellFormedId(id)) throw malformed();
  const purges = mb.wellKnown.get('recoverableitemspurges')!;
  const [r] = await messageById(db, mb.tenantId, mb.mailboxId, id, purges);
  return r ? messageFromRow(r) : undefined;
}

/**
 * A message by REST or immutable id.
 * @throws ApiError 404 `ErrorItemNotFound` (also for a stale id after a move), 400 `ErrorInvalidIdMalformed`
 */
export async function getMessage(db: Kysely<Database>, mb: Mailbox, id: string): Promise<MessageRecord> {
  const m = await findMessage(db, mb, id);
  if (!m) throw notFound();
  return m;
}

/**
 * Moves a message to another folder: new REST id (the immutable id stays), new change key;
 * records `deleted` in the old folder and `created` in the new one (only `deleted` when
 * `hidden`: a move into the Recoverable Items folders).
 */
export async function moveMessage(db: Kysely<Database>, m: MessageRecord, folderId: string, opts: { hidden?: boolean } = {}): Promise<MessageRecord> {
  const at = nowIso();
  const moved: MessageRecord = { ...m, id: newMessageId(), folderId, modifiedAt: at, changeKey: newChangeKey() };
  await db.updateTable('mail_messages').set({ id: moved.id, folder_id: folderId, modified_at: at, change_key: moved.changeKey }).where('pk', '=', m.pk).execute();
  await rememberId(db, m);
  // A move into the hidden Recoverable Items folders (delete, permanent delete) is only a `deleted`.
  await recordMailChanges(db, opts.hidden ? [change(m, 'deleted', at)] : [change(m, 'deleted', at), change(moved, 'created', at)]);
  return moved;
}

/** Copies a message (with attachments, categories, extended properties, extensions) into a folder: new ids. */
export async function copyMessage(db: Kysely<Database>, m: MessageRecord, target: { tenantId: string; mailboxId: string; folderId: string }, overrides: Partial<MessageRecord> = {}): Promise<MessageRecord> {
  const at = nowIso();
  const [copy] = await insertMessages(db, [{ ...m, ...target, id: newMessageId(), immutableId: newImmutableId(), createdAt: at, modifiedAt: at, changeKey: newChangeKey(), ...overrides, doc: structuredClone(overrides.doc ?? m.doc) }]);
  const atts = await db.selectFrom('mail_attachments').selectAll().where('message_pk', '=', m.pk).execute();
  if (atts.length) await db.insertInto('mail_attachments').values(atts.map((a: any) => ({ ...a, id: newAttachmentId(), message_pk: copy!.pk }))).execute();
  for (const t of ['mail_single_props', 'mail_multi_props', 'mail_extensions'] as const) {
    const rows = await db.selectFrom(t).selectAll().where('message_pk', '=', m.pk).execute();
    if (rows.length) await db.insertInto(t).values(rows.map((r: any) => ({ ...r, message_pk: copy!.pk }))).execute();
  }
  return copy!;
}

/** Recomputes `hasAttachments` (non-inline attachments only, spec mail §2.3) and returns it. */
export async function computeHasAttachments(db: Kysely<Database>, pk: number): Promise<boolean> {
  const r = await db.selectFrom('mail_attachments').select((eb) => eb.fn.countAll().as('n')).where('message_pk', '=', pk).where('is_inline', '=', 0).executeTakeFirst();
  return Number((r as any)?.n ?? 0) > 0;
}

/** Writes single- / multi-value extended properties (replacing a property of the same id). */
export async function writeExtendedProperties(db: Kysely<Database>, pk: number, single: { id: string; value: string }[] = [], multi: { id: string; value: string[] }[] = []): Promise<void> {
  for (const [table, props] of [['mail_single_props', single.map((p) => ({ id: p.id, value: p.value }))], ['mail_multi_props', multi.map((p) => ({ id: p.id, value: toJson(p.value) }))]] as const) {
    for (const p of props) {
      checkLength(p.id, 400, 'extended property id');
      await db.deleteFrom(table).where('message_pk', '=', pk).where('prop_id', '=', p.id).execute();
      await db.insertInto(table).values({ message_pk: pk, prop_id: p.id, value: p.value, value_lc: p.value.toLowerCase() }).execute();
    }
  }
}

/** Deletes a message row and its children (used for drafts consumed by send). */
export async function deleteMessageRow(db: Kysely<Database>, m: MessageRecord): Promise<void> {
  for (const t of ['mail_categories', 'mail_single_props', 'mail_multi_props', 'mail_extensions', 'mail_attachments'] as const) await db.deleteFrom(t).where('message_pk', '=', m.pk).execute();
  await db.deleteFrom('mail_messages').where('pk', '=', m.pk).execute();
  await rememberId(db, m);
  await recordMailChanges(db, [change(m, 'deleted', nowIso())]);
}

/** Keeps a former REST id → immutable id mapping (for delta `@removed` entries with immutable ids). */
async function rememberId(db: Kysely<Database>, m: MessageRecord): Promise<void> {
  await db.insertInto('mail_id_history').values({ rest_id: m.id, immutable_id: m.immutableId, tenant_id: m.tenantId, mailbox_id: m.mailboxId }).onConflict((oc) => oc.doNothing()).execute();
}

/** Immutable ids of former REST ids of a mailbox (unknown ids are left out). */
export async function immutableIdsOf(db: Kysely<Database>, mb: Mailbox, restIds: string[]): Promise<Map<string, string>> {
  if (restIds.length === 0) return new Map();
  const rows = await db.selectFrom('mail_id_history').select(['rest_id', 'immutable_id']).where('tenant_id', '=', mb.tenantId).where('mailbox_id', '=', mb.mailboxId).where('rest_id', 'in', restIds).execute();
  return new Map(rows.map((r: any) => [r.rest_id, r.immutable_id]));
}
