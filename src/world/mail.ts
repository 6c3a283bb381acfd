/**
 * The mail part of a world file: a tenant's `mailboxes`, one per user (`user`: UPN or id), each
 * with `folders` — a well-known folder named by `wellKnownName` (`inbox`, `sentitems`, …) or a
 * folder of its own (`id`, `displayName`, `parentFolderId`: a folder of the same mailbox by id,
 * display name or well-known name; default the top of the store) — holding `messages` in the
 * message resource's shape (`subject`, `body`, `from`, `toRecipients`, …, `isRead`, `isDraft`,
 * the `…DateTime` fields, file `attachments` with `contentBytes`), and optionally `generate`:
 * `{count, seed, peer}` deterministic generated messages (the area's bulk generator; the demo
 * world uses it). Written through the area's `openMailbox` (well-known folders), folder rows and
 * `messageColumns` (every derived column; the triggers keep the counts and the search index).
 * A message may come from an `.eml` file (`eml`: a path relative to the world file, read with the
 * area's MIME reader `mime.ts`; the entry's fields override the file's). Ids omitted are made
 * from the mailbox, folder and position. Not covered: item attachments, extended properties,
 * extensions (an export leaves them out; an export writes `.eml` messages as plain messages).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../store/database.ts';
import { fromJson, toJson } from '../store/db.ts';
import { newAttachmentId, newFolderId, newImmutableId, newMessageId } from '../services/mail/ids.ts';
import { emptyDoc, type MessageDoc } from '../services/mail/message.ts';
import { messageColumns, openMailbox, wellKnownFolders } from '../services/mail/store.ts';
import { demoMessages, insertSeedMessages } from '../services/mail/seed.ts';
import { mimeAddresses, parseMime } from '../services/mail/mime.ts';
import type { WorldFileData } from './schema.ts';
import { byKey, type DataContext } from './data.ts';
import { jsonObject } from './resource.ts';

const strict = { additionalProperties: false } as const;
const time = Type.String({ format: 'date-time' });
const recipient = Type.Object({ emailAddress: Type.Object({ name: Type.Optional(Type.String({ maxLength: 400 })), address: Type.String({ maxLength: 400 }) }, strict) }, strict);
const recipients = Type.Array(recipient, { maxItems: 500 });
const itemBody = Type.Object({ contentType: Type.Union([Type.Literal('text'), Type.Literal('html')]), content: Type.String({ maxLength: 4_000_000 }) }, strict);
const wellKnownNames = wellKnownFolders.map((f) => f.name);

/** A file attachment (the fileAttachment resource). */
const WorldAttachment = Type.Object(
  {
    '@odata.type': Type.Optional(Type.Literal('#vendor.graph.fileAttachment')),
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
    name: Type.String({ minLength: 1, maxLength: 255 }),
    contentType: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    contentBytes: Type.String({ pattern: '^[A-Za-z0-9+/=\\s]*$', maxLength: 10_000_000 }),
    isInline: Type.Optional(Type.Boolean()),
    contentId: Type.Optional(Type.Union([Type.String({ maxLength: 255 }), Type.Null()])),
    contentLocation: Type.Optional(Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])),
    size: Type.Optional(Type.Integer({ minimum: 0 })),
    lastModifiedDateTime: Type.Optional(time),
  },
  strict,
);

/** A message (the message resource's fields Stratus keeps). */
export const WorldMessage = Type.Object(
  {
    eml: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: "A MIME file (.eml), relative to the world file: its Subject, From, To, Cc, Date, Message-ID, x- headers and body; the entry's other fields override them." })),
    id: Type.Optional(Type.String({ pattern: '^AAMk[A-Za-z0-9_-]+$' })),
    immutableId: Type.Optional(Type.String({ pattern: '^AAkA[A-Za-z0-9_-]+$', description: 'The immutable id (translateExchangeIds); default made from the id.' })),
    changeKey: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    parentFolderId: Type.Optional(Type.String({ description: 'When given: the folder it is listed under (checked).' })),
    createdDateTime: Type.Optional(time),
    lastModifiedDateTime: Type.Optional(time),
    receivedDateTime: Type.Optional(time),
    sentDateTime: Type.Optional(Type.Union([time, Type.Null()])),
    isRead: Type.Optional(Type.Boolean()),
    isDraft: Type.Optional(Type.Boolean()),
    subject: Type.Optional(Type.String({ maxLength: 4000 })),
    body: Type.Optional(itemBody),
    uniqueBody: Type.Optional(itemBody),
    toRecipients: Type.Optional(recipients),
    ccRecipients: Type.Optional(recipients),
    bccRecipients: Type.Optional(recipients),
    replyTo: Type.Optional(recipients),
    from: Type.Optional(Type.Union([recipient, Type.Null()])),
    sender: Type.Optional(Type.Union([recipient, Type.Null()])),
    categories: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 400 }), { maxItems: 100 })),
    flag: Type.Optional(Type.Object({ flagStatus: Type.Union([Type.Literal('notFlagged'), Type.Literal('complete'), Type.Literal('flagged')]) }, { additionalProperties: true })),
    importance: Type.Optional(Type.Union([Type.Literal('low'), Type.Literal('normal'), Type.Literal('high')])),
    inferenceClassification: Type.Optional(Type.Union([Type.Literal('focused'), Type.Literal('other')])),
    internetMessageId: Type.Optional(Type.String({ maxLength: 600 })),
    internetMessageHeaders: Type.Optional(Type.Array(Type.Object({ name: Type.String(), value: Type.String() }, strict), { maxItems: 500 })),
    isDeliveryReceiptRequested: Type.Optional(Type.Boolean()),
    isReadReceiptRequested: Type.Optional(Type.Boolean()),
    conversationId: Type.Optional(Type.String({ maxLength: 200 })),
    conversationIndex: Type.Optional(Type.String({ maxLength: 2000 })),
    mentions: Type.Optional(Type.Array(jsonObject, { maxItems: 500 })),
    unsubscribeData: Type.Optional(Type.Array(Type.String(), { maxItems: 50 })),
    unsubscribeEnabled: Type.Optional(Type.Boolean()),
    attachments: Type.Optional(Type.Array(WorldAttachment, { maxItems: 250 })),
  },
  { ...strict, description: 'A message in the message resource shape.' },
);

/** A folder and its messages. */
export const WorldMailFolder = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^AQMk[A-Za-z0-9_-]+$' })),
    wellKnownName: Type.Optional(Type.Union(wellKnownNames.map((n) => Type.Literal(n)), { description: 'A well-known folder of the mailbox (it always exists): its messages are listed here.' })),
    displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    parentFolderId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    isHidden: Type.Optional(Type.Boolean()),
    messages: Type.Optional(Type.Array(WorldMessage, { maxItems: 1_000_000 })),
  },
  strict,
);

/** A user's mailbox. */
export const WorldMailbox = Type.Object(
  {
    user: Type.String({ minLength: 1, maxLength: 256, description: "The owner's userPrincipalName or id." }),
    folders: Type.Optional(Type.Array(WorldMailFolder, { maxItems: 10_000 })),
    generate: Type.Optional(Type.Object({ count: Type.Integer({ minimum: 1, maximum: 1_000_000 }), seed: Type.Integer(), peer: Type.Optional(Type.String({ description: "The other party of generated threads: a user's UPN (default a made-up address)." })) }, { ...strict, description: 'Deterministic generated messages over the well-known folders (the bulk generator of `stratus seed mailbox`).' })),
  },
  strict,
);

/** Tenant-level properties of the mail kinds. */
export const mailTenantProperties = { mailboxes: Type.Optional(Type.Array(WorldMailbox, { maxItems: 100_000 })) };

const iso = (s: string) => new Date(s).toISOString();

/** Checks the tenant entry's mailboxes and queues their writes. */
export function resolveMail(c: DataContext): void {
  (c.data.mailboxes ?? []).forEach((m, i) => {
    const at = (p: string) => c.at(`/mailboxes/${i}${p}`);
    const u = c.user(m.user);
    if (!u) return void c.problems.push(`${at('/user')}: no user '${m.user}' in tenant ${c.tenant.domain}`);
    if (!c.unique('mailbox', `${c.tenant.id}/${u.id}`, `/mailboxes/${i}`)) return;
    const owner = { tenantId: c.tenant.id, id: u.id, mail: u.mail, displayName: u.displayName };
    const wk = new Map(wellKnownFolders.map((f) => [f.name, newFolderId(`${owner.tenantId}/${owner.id}/${f.name}`)]));
    // Folders: well-known by name, the mailbox's own with their ids; then parents checked.
    const names = new Map<string, string>();
    for (const [n, id] of wk) names.set(n, id).set(id.toLowerCase(), id);
    for (const f of wellKnownFolders) names.set(f.displayName.toLowerCase(), wk.get(f.name)!);
    const own: { id: string; parentId: string; displayName: string; hidden: boolean; path: string; parentRef?: string }[] = [];
    const folderOf: string[] = [];
    (m.folders ?? []).forEach((f, j) => {
      if (f.wellKnownName !== undefined) {
        if (f.id !== undefined || f.parentFolderId !== undefined) c.problems.push(`${at(`/folders/${j}`)}: a well-known folder takes no id or parentFolderId`);
        folderOf[j] = wk.get(f.wellKnownName)!;
        return;
      }
      if (f.displayName === undefined) return void c.problems.push(`${at(`/folders/${j}`)}: a folder needs a wellKnownName or a displayName`);
      const id = f.id ?? newFolderId(`world/${owner.tenantId}/${owner.id}/${f.displayName}`);
      c.unique('mail folder id', id, `/mailboxes/${i}/folders/${j}`);
      names.set(id.toLowerCase(), id);
      if (!names.has(f.displayName.toLowerCase())) names.set(f.displayName.toLowerCase(), id);
      own.push({ id, parentId: '', displayName: f.displayName, hidden: f.isHidden ?? false, path: `/folders/${j}`, parentRef: f.parentFolderId });
      folderOf[j] = id;
    });
    for (const f of own) {
      const p = f.parentRef === undefined ? wk.get('msgfolderroot')! : names.get(f.parentRef.toLowerCase());
      if (!p) c.problems.push(`${at(`${f.path}/parentFolderId`)}: no folder '${f.parentRef}' in the mailbox of ${u.upn}`);
      else f.parentId = p;
    }
    const ordered: typeof own = [];
    const placed = new Set(wk.values());
    for (let progress = true; progress; ) {
      progress = false;
      for (const f of own) if (!placed.has(f.id) && placed.has(f.parentId)) (placed.add(f.id), ordered.push(f), (progress = true));
    }
    if (own.some((f) => f.parentId && !placed.has(f.id))) c.problems.push(`${at('/folders')}: folders of ${u.upn} are in a cycle of parents`);
    const records: Parameters<typeof messageColumns>[0][] = [];
    const attachments: { messageId: string; rows: { id: string; name: string; contentType: string | null; size: number; isInline: boolean; modifiedAt: string; doc: Record<string, unknown> }[] }[] = [];
    (m.folders ?? []).forEach((f, j) => {
      const folderId = folderOf[j];
      if (!folderId) return;
      (f.messages ?? []).forEach((msg, k) => {
        const rel = `/mailboxes/${i}/folders/${j}/messages/${k}`;
        if (msg.parentFolderId !== undefined && names.get(msg.parentFolderId.toLowerCase()) !== folderId) c.problems.push(`${c.at(`${rel}/parentFolderId`)}: '${msg.parentFolderId}' is not the folder it is listed in (${f.wellKnownName ?? f.displayName}) of the mailbox of ${u.upn}`);
        const id = msg.id ?? newMessageId(`world/${folderId}/${k}`);
        if (!c.unique('message id', id, rel)) return;
        const immutableId = msg.immutableId ?? newImmutableId(`world/${id}`);
        c.unique('message id', immutableId, `${rel}/immutableId`);
        const fromFile = msg.eml === undefined ? {} : readEml(c, msg.eml, `${rel}/eml`);
        const { id: _i, immutableId: _m, eml: _e, changeKey, parentFolderId: _p, createdDateTime, lastModifiedDateTime, receivedDateTime, sentDateTime, isRead, isDraft, attachments: atts, ...fields } = { ...fromFile, ...msg } as typeof msg;
        const doc = { ...emptyDoc(), ...fields } as MessageDoc;
        const received = iso(receivedDateTime ?? createdDateTime ?? c.now);
        const created = iso(createdDateTime ?? received);
        const rows = (atts ?? []).map((a, n) => {
          const aid = a.id ?? newAttachmentId(`${id}/${n}`);
          const bytes = Buffer.from(a.contentBytes, 'base64');
          const modifiedAt = a.lastModifiedDateTime ? iso(a.lastModifiedDateTime) : created;
          const docA = { '@odata.type': '#vendor.graph.fileAttachment', id: aid, lastModifiedDateTime: modifiedAt.replace(/\.\d+Z$/, 'Z'), name: a.name, contentType: a.contentType ?? null, size: bytes.length, isInline: a.isInline ?? false, contentId: a.contentId ?? null, contentLocation: a.contentLocation ?? null, contentBytes: bytes.toString('base64') };
          return { id: aid, name: a.name, contentType: a.contentType ?? null, size: bytes.length, isInline: a.isInline ?? false, modifiedAt, doc: docA };
        });
        if (rows.length) attachments.push({ messageId: id, rows });
        records.push({
          id,
          immutableId,
          tenantId: owner.tenantId,
          mailboxId: owner.id,
          folderId,
          createdAt: created,
          modifiedAt: iso(lastModifiedDateTime ?? created),
          receivedAt: received,
          sentAt: sentDateTime === null ? null : iso(sentDateTime ?? received),
          isRead: isRead ?? false,
          isDraft: isDraft ?? false,
          hasAttachments: rows.some((r) => !r.isInline),
          changeKey: changeKey ?? 'CQAAAB' + newImmutableId('ck' + id).slice(4, 24),
          doc,
        });
      });
    });
    const gen = m.generate;
    const peer = gen?.peer !== undefined ? c.user(gen.peer) : undefined;
    if (gen?.peer !== undefined && !peer) c.problems.push(`${at('/generate/peer')}: no user '${gen.peer}' in tenant ${c.tenant.domain}`);
    c.writes.push(async (_ctx, trx) => {
      const mb = await openMailbox(trx, owner);
      {
        if (ordered.length) await trx.insertInto('mail_folders').values(ordered.map((f) => ({ id: f.id, tenant_id: owner.tenantId, mailbox_id: owner.id, parent_id: f.parentId, well_known: null, display_name: f.displayName, is_hidden: f.hidden ? 1 : 0, created_at: c.now }))).execute();
        await insertRecords(trx, records, attachments);
        if (gen) await insertSeedMessages(trx, demoMessages(mb, peer ? { emailAddress: { name: peer.displayName, address: peer.mail } } : { emailAddress: { name: 'Bulk Peer', address: 'peer@bulk.example' } }, gen.count, gen.seed));
      }
    });
  });
}

/** The message fields of `.eml` file `name` (relative to the world file), or {} after noting why it cannot be read. */
function readEml(c: DataContext, name: string, rel: string): Record<string, unknown> {
  if (c.file === 'request body') return c.problems.push(`${c.at(rel)}: a world sent in a request cannot name files; import it with stratus world import <file> or start with --world`), {};
  const file = path.resolve(path.dirname(c.file), name);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    return c.problems.push(`${c.at(rel)}: cannot read '${name}': ${(e as Error).message}`), {};
  }
  const parsed = parseMime(text);
  if (!parsed) return c.problems.push(`${c.at(rel)}: '${name}' is not a MIME message (no blank line after its headers)`), {};
  const h = parsed.headers;
  const date = h.get('date') ? Date.parse(h.get('date')!) : NaN;
  const from = mimeAddresses(h.get('from'))[0];
  return {
    ...parsed.input,
    ...(from ? { from, sender: from } : {}),
    ...(Number.isNaN(date) ? {} : { receivedDateTime: new Date(date).toISOString(), sentDateTime: new Date(date).toISOString() }),
    ...(h.get('message-id') ? { internetMessageId: h.get('message-id') } : {}),
  };
}

/** Inserts message records with their categories and file attachments, in batches. */
async function insertRecords(db: Kysely<Database>, records: Parameters<typeof messageColumns>[0][], attachments: { messageId: string; rows: { id: string; name: string; contentType: string | null; size: number; isInline: boolean; modifiedAt: string; doc: Record<string, unknown> }[] }[]): Promise<void> {
  const attsOf = new Map(attachments.map((a) => [a.messageId, a.rows]));
  // 500 rows × ~30 columns stay below SQLite's 32,766 bound parameters.
  for (let s = 0; s < records.length; s += 500) {
    const batch = records.slice(s, s + 500);
    const rows = (await db.insertInto('mail_messages').values(batch.map(messageColumns)).returning(['pk', 'id']).execute()) as { pk: number | string; id: string }[];
    const pkOf = new Map(rows.map((r) => [r.id, Number(r.pk)]));
    const cats = batch.flatMap((m) => m.doc.categories.map((name) => ({ message_pk: pkOf.get(m.id)!, name })));
    if (cats.length) await db.insertInto('mail_categories').values(cats).execute();
    const atts = batch.flatMap((m) => (attsOf.get(m.id) ?? []).map((a) => ({ id: a.id, message_pk: pkOf.get(m.id)!, kind: 'file', name: a.name, content_type: a.contentType, size: a.size, is_inline: a.isInline ? 1 : 0, modified_at: a.modifiedAt, doc: toJson(a.doc) })));
    if (atts.length) await db.insertInto('mail_attachments').values(atts).execute();
  }
}

/** Adds the mailboxes of the store to the exported tenants: every message in its folder, ids and times written out. */
export async function exportMail(db: Kysely<Database>, out: WorldFileData, names: Map<string, string>): Promise<void> {
  const [folders, messages, atts] = await Promise.all([
    db.selectFrom('mail_folders').select(['id', 'tenant_id', 'mailbox_id', 'parent_id', 'well_known', 'display_name', 'is_hidden']).orderBy('id').execute(),
    db.selectFrom('mail_messages').select(['pk', 'id', 'immutable_id', 'tenant_id', 'mailbox_id', 'folder_id', 'created_at', 'modified_at', 'received_at', 'sent_at', 'is_read', 'is_draft', 'change_key', 'doc']).orderBy('pk').execute(),
    db.selectFrom('mail_attachments').select(['message_pk', 'kind', 'doc']).where('kind', '=', 'file').orderBy('message_pk').orderBy('id').execute(),
  ]);
  const attsOf = new Map<number, Record<string, unknown>[]>();
  for (const a of atts) {
    const { '@odata.type': _t, size: _s, ...rest } = fromJson<Record<string, unknown>>(a.doc)!;
    const list = attsOf.get(Number(a.message_pk)) ?? [];
    list.push(rest);
    attsOf.set(Number(a.message_pk), list);
  }
  const msgsOf = new Map<string, typeof messages>();
  for (const m of messages) {
    const list = msgsOf.get(m.folder_id);
    if (list) list.push(m);
    else msgsOf.set(m.folder_id, [m]);
  }
  const mailboxes = new Map<string, typeof folders>();
  for (const f of folders) {
    const k = `${f.tenant_id}\u0000${f.mailbox_id}`;
    const list = mailboxes.get(k);
    if (list) list.push(f);
    else mailboxes.set(k, [f]);
  }
  for (const t of out.tenants ?? []) {
    const list = [...mailboxes.entries()].filter(([k]) => k.startsWith(`${t.id}\u0000`)).map(([k, fs]) => {
      const mailboxId = k.split('\u0000')[1]!;
      const wkOf = new Map(fs.filter((f) => f.well_known).map((f) => [f.id, f.well_known!]));
      const exported = fs
        .filter((f) => !f.well_known || msgsOf.has(f.id))
        .sort(byKey((f) => (f.well_known ? `0${wellKnownNames.indexOf(f.well_known).toString().padStart(3, '0')}` : `1${f.id}`)))
        .map((f) => ({
          ...(f.well_known ? { wellKnownName: f.well_known as 'inbox' } : { id: f.id, displayName: f.display_name, ...(f.parent_id && wkOf.get(f.parent_id) !== 'msgfolderroot' ? { parentFolderId: wkOf.get(f.parent_id) ?? f.parent_id } : {}), ...(Number(f.is_hidden) ? { isHidden: true } : {}) }),
          ...(msgsOf.has(f.id)
            ? {
                messages: msgsOf.get(f.id)!.map((m) => {
                  const a = attsOf.get(Number(m.pk));
                  return {
                    id: m.id,
                    immutableId: m.immutable_id,
                    changeKey: m.change_key,
                    createdDateTime: m.created_at,
                    lastModifiedDateTime: m.modified_at,
                    receivedDateTime: m.received_at,
                    sentDateTime: m.sent_at,
                    isRead: Number(m.is_read) === 1,
                    isDraft: Number(m.is_draft) === 1,
                    ...fromJson<MessageDoc>(m.doc)!,
                    ...(a ? { attachments: a } : {}),
                  };
                }),
              }
            : {}),
        }));
      return { user: names.get(mailboxId.toLowerCase()) ?? mailboxId, ...(exported.length ? { folders: exported } : {}) };
    });
    if (list.length) t.mailboxes = list.sort(byKey((x) => x.user.toLowerCase())) as NonNullable<typeof t.mailboxes>;
  }
}
