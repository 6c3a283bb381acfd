/**
 * Mail read handlers (reference mail.md §2): the message list and its count, delta, and the
 * rendering every message answer shares — spliced from the cached texts of message versions
 * (`rendered.ts`) when there is no `$expand`, else rendered whole.
 */
import { contextUrl, nextLink, paging, send, sendJson, type MailRequest } from './request.ts';
import { countMessages, listMessageRows, loadExpansions, opt, parseExpand, parseSelect, type ExpandItem } from './query.ts';
import { deltaPage, deltaToken } from './delta.ts';
import { renderMessage, type MessageRecord, type RenderOptions } from './message.ts';
import { messageFromRow, immutableIdsOf, type FolderRow } from './store.ts';
import { lightMessageColumns, rowProperties } from './columns.ts';
import { keyColumns, pageJson, versionColumns, withFirstMember } from './rendered.ts';
import { freshLocalVersions } from './local-versions.ts';
import * as att from './attachments.ts';
import { keySegment } from './paths.ts';
import { keptMailBytes } from './kept.ts';

/** Renders messages with `$select`, `Prefer` and `$expand`. */
export async function present(mr: MailRequest, recs: MessageRecord[], select: string[] | undefined, expand: ExpandItem[], context?: string): Promise<Record<string, unknown>[]> {
  const webmailOrigin = mr.ctx.origin();
  const exp = expand.length ? await loadExpansions(mr.ctx.store.db, recs.map((r) => r.pk), expand) : undefined;
  return recs.map((r) => {
    const out = renderMessage(r, { select, bodyType: mr.bodyType, immutable: mr.immutable, webmailOrigin, context });
    for (const e of expand) {
      if (e.name === 'mentions') out.mentions = r.doc.mentions.map((m) => ({ id: m.id, mentioned: m.mentioned, createdBy: r.doc.from?.emailAddress ?? null, createdDateTime: out.createdDateTime ?? r.createdAt }));
      else out[e.name] = e.name === 'attachments' ? exp!.get(r.pk)![e.name]!.map((a) => att.renderAttachment(a as Record<string, unknown>)) : exp!.get(r.pk)![e.name];
    }
    return out;
  });
}

/** One message rendered whole (the answers of writes: create, update, the reply family), with `$expand`-style extras. */
export async function presentOne(mr: MailRequest, r: MessageRecord, expand: ExpandItem[] = []): Promise<Record<string, unknown>> {
  return (await present(mr, [r], undefined, expand))[0]!;
}

/**
 * GET messages (mailbox-wide or one folder). Without `$expand` the answer depends only on the
 * mailbox's messages and the request: its text is kept per mailbox version (`kept.ts`).
 */
export async function listMessages(mr: MailRequest, folder: FolderRow | undefined, exclude: string[]): Promise<unknown> {
  if (withoutExpand(mr)) return sendJson(mr, 200, await keptMailBytes(mr, 'list', () => pageBytes(mr, folder, exclude)));
  const select = parseSelect(mr.q);
  const expand = parseExpand(mr.q);
  const { pageSize, skip } = paging(mr);
  const { rows, more, count } = await listMessageRows(mr.ctx.store.db, { tenantId: mr.mb.tenantId, mailboxId: mr.mb.mailboxId, folderId: folder?.id, excludeFolderIds: exclude, q: mr.q, pageSize, skip });
  const body: Record<string, unknown> = { '@odata.context': contextUrl(mr, contextSuffix(folder, select)) };
  if (count !== undefined) body['@odata.count'] = count;
  body.value = await present(mr, rows.map(messageFromRow), select, expand);
  if (more) body['@odata.nextLink'] = nextLink(mr, skip + pageSize);
  return send(mr, 200, body);
}

/** True when the request has no `$expand` (false also when it is malformed: its error comes where the handlers check it, after `$select`'s). */
export function withoutExpand(mr: MailRequest): boolean {
  try {
    return parseExpand(mr.q).length === 0;
  } catch {
    return false;
  }
}

function contextSuffix(folder: Pick<FolderRow, 'id'> | undefined, select: string[] | undefined): string {
  return (folder ? `${keySegment('mailFolders', folder.id)}/messages` : 'messages') + (select ? `(${select.join(',')})` : '');
}

/**
 * The UTF-8 bytes of `parts` joined, written part by part into one buffer: no joined string is
 * made (a page of 25 messages is 50 KB; joining it, then encoding the joined text, made two
 * 50 KB copies on the young heap for every page: issue 31, `bench:real` pages).
 */
function utf8Join(parts: readonly string[]): Buffer {
  let size = 0;
  for (const p of parts) size += Buffer.byteLength(p, 'utf8');
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const p of parts) at += out.write(p, at, 'utf8');
  return out;
}

/**
 * The JSON of a page of messages without `$expand`, as UTF-8 (`exclude`: folders left out of a
 * mailbox-wide page; of the folder only its id is read).
 */
export async function pageBytes(mr: MailRequest, folder: Pick<FolderRow, 'id'> | undefined, exclude: string[]): Promise<Buffer> {
  const select = parseSelect(mr.q);
  const { pageSize, skip } = paging(mr);
  // A page selecting only what the rows' own columns hold does not read the stored documents;
  // else a page reads its messages' versions and splices their cached texts.
  const light = select !== undefined && select.every((s) => rowProperties.has(s)) ? lightMessageColumns(select) : undefined;
  const db = mr.ctx.store.db;
  // On the embedded store, a page of whole messages reads only its row keys when the kept
  // versions can vouch for the kept texts (`pageJson` with them); a `$search` page is read off the
  // event loop, on another connection, and reads the change keys as before.
  const local = light === undefined && opt(mr.q, 'search') === undefined ? freshLocalVersions(mr.ctx.cache.store, db) : undefined;
  const { rows, more, count } = await listMessageRows(db, { tenantId: mr.mb.tenantId, mailboxId: mr.mb.mailboxId, folderId: folder?.id, excludeFolderIds: exclude, q: mr.q, pageSize, skip }, light ?? (local ? keyColumns : versionColumns));
  let head = `{"@odata.context":${JSON.stringify(contextUrl(mr, contextSuffix(folder, select)))}`;
  if (count !== undefined) head += `,"@odata.count":${count}`;
  const tail = more ? `,"@odata.nextLink":${JSON.stringify(nextLink(mr, skip + pageSize))}}` : '}';
  if (light) return utf8Join([head, `,"value":${JSON.stringify(await present(mr, rows.map(messageFromRow), select, []))}`, tail]);
  const parts = [head, ',"value":['];
  let first = true;
  for (const t of await pageJson(db, rows, renderOptions(mr, select), local)) {
    if (t === undefined) continue;
    if (!first) parts.push(',');
    parts.push(t);
    first = false;
  }
  parts.push(']', tail);
  return utf8Join(parts);
}

/** The render options of a request (its `$select`, and its `Prefer` body type and id type). */
export function renderOptions(mr: MailRequest, select: string[] | undefined): RenderOptions {
  return { select, bodyType: mr.bodyType, immutable: mr.immutable, webmailOrigin: mr.ctx.origin() };
}

/** GET messages/$count: a plain-text integer. */
export async function countOnly(mr: MailRequest, folder: FolderRow | undefined, exclude: string[]): Promise<unknown> {
  const n = await countMessages(mr.ctx.store.db, { tenantId: mr.mb.tenantId, mailboxId: mr.mb.mailboxId, folderId: folder?.id, excludeFolderIds: exclude, q: mr.q });
  return mr.reply.code(200).header('content-type', 'text/plain; charset=utf-8').send(String(n));
}

/**
 * GET mailFolders/{id}/messages/delta. A first page (no `$skiptoken` or `$deltatoken`) depends
 * only on the mailbox's messages and folders and the request, so its text is kept per mailbox
 * version (`kept.ts`) like a list page. Its links carry the change log's position when the
 * text was made: a later change of this mailbox makes a new version (and a new text), and
 * changes of other mailboxes after that position are never this folder's, so a round started
 * from a kept page returns exactly what one started from a fresh page would.
 */
export async function delta(mr: MailRequest, folder: FolderRow): Promise<unknown> {
  if (deltaToken(mr.q) === undefined) return sendJson(mr, 200, await keptMailBytes(mr, 'delta', () => deltaBytes(mr, folder)));
  return sendJson(mr, 200, await deltaBytes(mr, folder));
}

/** The JSON of a delta page ({@link delta}), as UTF-8 ({@link utf8Join}). @throws ApiError as `deltaPage` does. */
async function deltaBytes(mr: MailRequest, folder: FolderRow): Promise<Buffer> {
  const pageSize = mr.maxPageSize ?? (parseInt(mr.q.get('$top') ?? '', 10) || 10);
  const path = `/${mr.version}/${mr.userSegment}/${keySegment('mailFolders', folder.id)}/messages/delta`;
  const db = mr.ctx.store.db;
  const page = await deltaPage(db, { mb: mr.mb, folder, q: mr.q, pageSize: Math.min(Math.max(pageSize, 1), 1000), origin: mr.ctx.origin(), path });
  const select = page.select ? parseSelect(new URLSearchParams({ $select: page.select })) : undefined;
  const rows = page.items.filter((i): i is { row: unknown } => 'row' in i).map((i) => i.row);
  const rendered = await pageJson(db, rows, renderOptions(mr, select));
  let k = 0;
  const immutable = mr.immutable ? await immutableIdsOf(db, mr.mb, page.items.flatMap((i) => ('removed' in i ? [i.removed] : []))) : new Map<string, string>();
  let head = `{"@odata.context":${JSON.stringify(`${mr.ctx.origin()}/${mr.version}/$metadata#Collection(message)`)}`;
  if (page.nextLink) head += `,"@odata.nextLink":${JSON.stringify(page.nextLink)}`;
  if (page.deltaLink) head += `,"@odata.deltaLink":${JSON.stringify(page.deltaLink)}`;
  const parts = [head, ',"value":['];
  for (const i of page.items) {
    let item: string | undefined;
    if ('removed' in i) item = JSON.stringify({ '@odata.type': '#vendor.graph.message', id: immutable.get(i.removed) ?? i.removed, '@removed': { reason: 'deleted' } });
    else {
      // A message deleted since the page was read is left out: its removal is in a later round.
      const t = rendered[k++];
      if (t !== undefined) item = withFirstMember('@odata.type', '#vendor.graph.message', t);
    }
    if (item === undefined) continue;
    if (parts.length > 2) parts.push(',');
    parts.push(item);
  }
  parts.push(']}');
  return utf8Join(parts);
}
