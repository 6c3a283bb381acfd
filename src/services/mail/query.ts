/**
 * Message queries (reference mail.md §2.2, §5): `$select`, `$expand`, `$filter` (OData core
 * over real columns and child tables), `$orderby` with the InefficientFilter rule, `$top`
 * (1–1000, default 10), `$skip`, `$count`, `$search` through the database's full-text index
 * (SQLite FTS5 / PostgreSQL tsvector) with the SearchWithOrderBy rule; every page is one SQL
 * query, next links absolute with `$skip` as the service writes them.
 */
import { sql, type Kysely, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { errors, type ApiError } from '../../core/errors/index.ts';
import { ODataError, compileFilter, compileOrderBy, filterProperties, parseFilter, parseOrderBy, type FieldMap, type FilterNode } from '../../core/odata/index.ts';
import { fromJson, isPostgres } from '../../store/db.ts';
import { selectableProperties } from './message.ts';
import { readOffThread } from './read-worker.ts';
import type { Database } from '../../store/database.ts';
import { qualifiedMessageRowColumns } from './store.ts';
import { param, runTemplate, template, type Template } from '../../store/prepared.ts';
import { LRUCache } from 'lru-cache';

/** `$filter` / `$orderby` properties of a message and where they live. */
export const messageFields: FieldMap = {
  id: { column: 'mail_messages.id', type: 'string', sortable: false },
  subject: { column: 'mail_messages.subject_lc', type: 'string', caseInsensitive: true },
  'from/emailAddress/address': { column: 'mail_messages.from_address_lc', type: 'string', caseInsensitive: true },
  'from/emailAddress/name': { column: 'mail_messages.from_name', type: 'string' },
  'sender/emailAddress/address': { column: 'mail_messages.sender_address_lc', type: 'string', caseInsensitive: true },
  receivedDateTime: { column: 'mail_messages.received_at', type: 'datetime' },
  sentDateTime: { column: 'mail_messages.sent_at', type: 'datetime' },
  createdDateTime: { column: 'mail_messages.created_at', type: 'datetime' },
  lastModifiedDateTime: { column: 'mail_messages.modified_at', type: 'datetime' },
  isRead: { column: 'mail_messages.is_read', type: 'boolean' },
  isDraft: { column: 'mail_messages.is_draft', type: 'boolean' },
  hasAttachments: { column: 'mail_messages.has_attachments', type: 'boolean' },
  importance: { column: 'mail_messages.importance', type: 'enum', values: ['low', 'normal', 'high'] },
  inferenceClassification: { column: 'mail_messages.inference', type: 'enum', values: ['focused', 'other'] },
  'flag/flagStatus': { column: 'mail_messages.flag_status', type: 'enum', values: ['notFlagged', 'complete', 'flagged'] },
  conversationId: { column: 'mail_messages.conversation_id', type: 'string' },
  internetMessageId: { column: 'mail_messages.internet_message_id', type: 'string' },
  parentFolderId: { column: 'mail_messages.folder_id', type: 'string' },
  'mentionsPreview/isMentioned': { column: 'mail_messages.is_mentioned', type: 'boolean', sortable: false },
  categories: { type: 'collection', table: 'mail_categories', parentKey: 'message_pk', parentColumn: 'mail_messages.pk', fields: { '': { column: 'name', type: 'string' } } },
  singleValueExtendedProperties: {
    type: 'collection',
    table: 'mail_single_props',
    parentKey: 'message_pk',
    parentColumn: 'mail_messages.pk',
    fields: { id: { column: 'prop_id', type: 'string' }, value: { column: 'value_lc', type: 'string', caseInsensitive: true } },
  },
};

const unsupportedFilterProps = ['torecipients', 'ccrecipients', 'bccrecipients', 'replyto', 'body', 'uniquebody', 'bodypreview'];

/** Reads a query option given as `$name` (literal or `%24`-encoded, already decoded). */
export function opt(q: URLSearchParams, name: string): string | undefined {
  const v = q.get('$' + name) ?? q.get('$' + name.toLowerCase());
  if (v !== null) return v;
  for (const [k, val] of q) if (k.toLowerCase() === '$' + name.toLowerCase()) return val;
  return undefined;
}

/** Parsed `$select`: lower-cased names, or undefined. @throws ApiError 400 `RequestBroker--ParseUri` */
export function parseSelect(q: URLSearchParams): string[] | undefined {
  const s = opt(q, 'select');
  if (s === undefined || s.trim() === '') return undefined;
  const names = s.split(',').map((x) => x.trim()).filter(Boolean);
  for (const n of names) if (!selectableProperties.has(n.toLowerCase())) throw parseUri(n);
  return names.map((n) => n.toLowerCase());
}

const parseUri = (n: string) => errors.mail.selectPropertyNotFound({ property: n });

/** One `$expand` item. */
export interface ExpandItem {
  name: 'attachments' | 'extensions' | 'singleValueExtendedProperties' | 'multiValueExtendedProperties' | 'mentions';
  /** For extended properties / extensions: the ids named by `$filter=id eq '…'` (or `or`-joined). */
  ids?: string[];
}

/** Parsed `$expand`. @throws ApiError 400 `RequestBroker--ParseUri` */
export function parseExpand(q: URLSearchParams): ExpandItem[] {
  const s = opt(q, 'expand');
  if (!s) return [];
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  const names = ['attachments', 'extensions', 'singleValueExtendedProperties', 'multiValueExtendedProperties', 'mentions'] as const;
  return parts
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const m = /^([A-Za-z.\/]+)\s*(?:\((.*)\))?$/s.exec(p);
      const raw = (m?.[1] ?? p).replace(/^vendor\.graph\.itemattachment\/item$/i, 'attachments');
      const name = names.find((n) => n.toLowerCase() === raw.toLowerCase());
      if (!name) throw parseUri(raw);
      const item: ExpandItem = { name };
      if (m?.[2]) {
        const ids = [...m[2].matchAll(/id\s+eq\s+'((?:[^']|'')*)'/gi)].map((x) => x[1]!.replace(/''/g, "'"));
        if (ids.length === 0) throw errors.mail.invalidExpand({ clause: p });
        item.ids = ids;
      }
      return item;
    });
}

function filterError(e: ODataError, text: string): ApiError {
  if (e.kind === 'syntax') return errors.mail.invalidFilterSyntax({ reason: e.message.replace(/\.$/, ''), filter: text });
  if (e.kind === 'unknown_property') {
    if (e.property && unsupportedFilterProps.includes(e.property.split('/')[0]!.toLowerCase())) return errors.mail.filterUnsupportedProperty();
    // The examples' error catalogue: an unknown property in $filter is a 400 BadRequest "Invalid filter clause" (ParseUri is for $select / $orderby).
    return errors.mail.filterPropertyNotFound({ property: e.property ?? '?' });
  }
  return errors.mail.filterInvalidNodes({ reason: e.message });
}

/** Parses `$filter`. @throws ApiError 400 */
export function parseMessageFilter(text: string): FilterNode {
  try {
    return parseFilter(text);
  } catch (e) {
    if (e instanceof ODataError) throw filterError(e, text);
    throw e;
  }
}

/** Options of a list query. */
export interface ListQuery {
  tenantId: string;
  mailboxId: string;
  /** One folder, or the mailbox-wide list without these folder ids. */
  folderId?: string;
  excludeFolderIds: string[];
  q: URLSearchParams;
  pageSize: number;
  skip: number;
}

function searchTerms(text: string): { terms: string[]; hasAttachments?: boolean; importance?: string } {
  let s = text.trim();
  if (s.startsWith('"') && s.endsWith('"') && s.length >= 2) s = s.slice(1, -1);
  const out: { terms: string[]; hasAttachments?: boolean; importance?: string } = { terms: [] };
  for (const tok of s.split(/\s+/).filter(Boolean)) {
    const m = /^(\w+):(.+)$/.exec(tok);
    if (m) {
      const k = m[1]!.toLowerCase();
      if (k === 'hasattachments') {
        out.hasAttachments = m[2]!.toLowerCase() === 'true';
        continue;
      }
      if (k === 'importance') {
        out.importance = m[2]!.toLowerCase();
        continue;
      }
      if (k === 'kind') continue;
      out.terms.push(...(m[2]!.match(/[\p{L}\p{N}]+/gu) ?? []));
      continue;
    }
    if (/^(and|or|not)$/i.test(tok)) continue;
    out.terms.push(...(tok.match(/[\p{L}\p{N}]+/gu) ?? []));
  }
  out.terms = out.terms.map((t) => t.toLowerCase());
  return out;
}

/**
 * Builds the filtered, searched base query (no ordering, no paging).
 * @throws ApiError 400 for bad `$filter` / `$search`
 */
export function baseQuery(db: Kysely<Database>, lq: Omit<ListQuery, 'pageSize' | 'skip'>): SelectQueryBuilder<any, any, any> {
  const search = opt(lq.q, 'search');
  const st = search !== undefined && search.trim() !== '' ? searchTerms(search) : undefined;
  // A full-text search on SQLite is driven by the FTS match (its rowids are the messages' pks):
  // the mailbox and folder conditions are written `+column` so that SQLite cannot pick a
  // mailbox index instead and test every message of the mailbox against the match.
  const ftsDriven = !!st?.terms.length && !isPostgres(db);
  const col = (c: string) => (ftsDriven ? sql`+${sql.ref(c)}` : sql.ref(c));
  let query = db.selectFrom('mail_messages').where(col('mail_messages.tenant_id'), '=', lq.tenantId).where(col('mail_messages.mailbox_id'), '=', lq.mailboxId);
  if (lq.folderId !== undefined) query = query.where(col('mail_messages.folder_id'), '=', lq.folderId);
  else if (lq.excludeFolderIds.length) query = query.where(col('mail_messages.folder_id'), 'not in', lq.excludeFolderIds);
  const filterText = opt(lq.q, 'filter');
  if (filterText !== undefined && filterText.trim() !== '') {
    const node = parseMessageFilter(filterText);
    try {
      query = query.where(compileFilter(node, messageFields));
    } catch (e) {
      if (e instanceof ODataError) throw filterError(e, filterText);
      throw e;
    }
  }
  if (st) {
    if (st.terms.length) {
      if (isPostgres(db)) {
        const tsq = st.terms.map((t) => `${t}:*`).join(' & ');
        query = query.where(sql<boolean>`mail_messages.pk in (select pk from mail_search where search_tsv @@ to_tsquery('simple', ${tsq}))`);
      } else {
        const match = st.terms.map((t) => `"${t}"*`).join(' AND ');
        query = query.where(sql<boolean>`mail_messages.pk in (select rowid from mail_fts where mail_fts match ${match})`);
      }
    }
    if (st.hasAttachments !== undefined) query = query.where('mail_messages.has_attachments', '=', st.hasAttachments ? 1 : 0);
    if (st.importance !== undefined) query = query.where('mail_messages.importance', '=', st.importance);
  }
  return query;
}

/**
 * The ordering of a list: `$orderby` (checked against `$filter` by the InefficientFilter
 * rule and against `$search` by the SearchWithOrderBy rule), else newest first.
 * @throws ApiError 400 `InefficientFilter`, `SearchWithOrderBy`, `RequestBroker--ParseUri`
 */
export function ordering(q: URLSearchParams): { column: string | RawBuilder<unknown>; direction: 'asc' | 'desc' }[] {
  const text = opt(q, 'orderby');
  const search = opt(q, 'search');
  if (text === undefined || text.trim() === '') {
    // Search results come newest sent first; drafts (no sentDateTime) by creation time, the same on both dialects.
    if (search) return [{ column: sql`coalesce(mail_messages.sent_at, mail_messages.created_at)`, direction: 'desc' }, { column: 'mail_messages.pk', direction: 'desc' }];
    return [{ column: 'mail_messages.received_at', direction: 'desc' }, { column: 'mail_messages.pk', direction: 'desc' }];
  }
  if (search) throw errors.mail.searchWithOrderBy();
  let items;
  try {
    items = compileOrderBy(parseOrderBy(text), messageFields);
  } catch (e) {
    if (e instanceof ODataError) {
      if (e.kind === 'syntax') throw errors.mail.invalidOrderBy({ reason: e.message });
      throw parseUri(e.property ?? text);
    }
    throw e;
  }
  const filterText = opt(q, 'filter');
  if (filterText) {
    const props: string[] = [];
    for (const p of filterProperties(parseMessageFilter(filterText))) if (!props.includes(p.toLowerCase())) props.push(p.toLowerCase());
    items.forEach((o, i) => {
      if (props[i] !== o.path.toLowerCase()) throw errors.mail.inefficientFilter();
    });
  }
  // Ties are broken by the row key: in the direction of a last `receivedDateTime` key (so a page in
  // either direction is one range of the received-time indexes, read forward or backward, never
  // sorted: issue 31, an ascending inbox page 70 -> 22 us on SQLite), else newest stored first (the
  // order of `mail_messages_folder_subject`).
  const last = items.at(-1);
  const tie = last?.column === 'mail_messages.received_at' ? last.direction : 'desc';
  return [...items.map((i) => ({ column: i.column, direction: i.direction })), { column: 'mail_messages.pk', direction: tie }];
}

/**
 * The compiled page queries of each database handle, by page shape (issue 31: "one prepared
 * statement per page shape"): the folder or the number of folders left out, the `$filter` and
 * `$orderby` texts as sent (their literals are constants of the statement), the columns, the
 * page size and `$skip`. The mailbox and the folders are its arguments ({@link pageArgs}), so one
 * shape serves every mailbox. Only shapes that compiled are kept (a refused `$filter` or
 * `$orderby` is checked again each time); a page with `$search` is built each time.
 */
const pageShapes = new WeakMap<Kysely<Database>, LRUCache<string, Template<any>>>();

/** The arguments of a page template: tenant, mailbox, then the folder or the folders left out. */
function pageArgs(lq: ListQuery): string[] {
  return lq.folderId !== undefined ? [lq.tenantId, lq.mailboxId, lq.folderId] : [lq.tenantId, lq.mailboxId, ...lq.excludeFolderIds];
}

/** Builds the page query of `lq` (no `$search`) with the mailbox and folders as placeholders ({@link pageArgs}). */
function pageTemplate(db: Kysely<Database>, lq: ListQuery, columns: typeof qualifiedMessageRowColumns): Template<any> {
  const shape: ListQuery = {
    ...lq,
    tenantId: param(0),
    mailboxId: param(1),
    folderId: lq.folderId === undefined ? undefined : param(2),
    excludeFolderIds: lq.folderId === undefined ? lq.excludeFolderIds.map((_, i) => param(2 + i)) : [],
  };
  // `$orderby` is checked before `$filter`, as every list has always checked them.
  const order = ordering(lq.q);
  let query = baseQuery(db, shape).select(columns);
  for (const o of order) query = query.orderBy(o.column as any, o.direction);
  return template(query.limit(lq.pageSize + 1).offset(lq.skip).compile());
}

/**
 * One page of message rows (one extra row fetched to know whether a next page exists).
 * @param lightColumns read only these columns (a `$select` of rowProperties only: see store.ts `lightMessageColumns`)
 */
export async function listMessageRows(db: Kysely<Database>, lq: ListQuery, lightColumns?: readonly string[]): Promise<{ rows: any[]; more: boolean; count?: number }> {
  const columns = (lightColumns ?? qualifiedMessageRowColumns) as typeof qualifiedMessageRowColumns;
  const search = opt(lq.q, 'search');
  let rows: any[];
  if (search !== undefined && search.trim() !== '') {
    // Search results are sorted, not read in index order: sort only the keys of the matches
    // (the page's pks), then read the page's rows, instead of sorting every matching row whole.
    const order = ordering(lq.q);
    let keys = baseQuery(db, lq).select('mail_messages.pk');
    for (const o of order) keys = keys.orderBy(o.column as any, o.direction);
    let query = db.selectFrom('mail_messages').select(columns).where('mail_messages.pk', 'in', keys.limit(lq.pageSize + 1).offset(lq.skip));
    for (const o of order) query = query.orderBy(o.column as any, o.direction);
    // A search may match much of the mailbox: read it off the event loop (SQLite).
    rows = await readOffThread(db, query);
  } else {
    let shapes = pageShapes.get(db);
    if (!shapes) pageShapes.set(db, (shapes = new LRUCache({ max: 2000 })));
    const key = `${lq.folderId === undefined ? `-${lq.excludeFolderIds.length}` : 'f'}\u0000${opt(lq.q, 'filter') ?? ''}\u0000${opt(lq.q, 'orderby') ?? ''}\u0000${columns.join(',')}\u0000${lq.pageSize}\u0000${lq.skip}`;
    let t = shapes.get(key);
    if (t === undefined) shapes.set(key, (t = pageTemplate(db, lq, columns)));
    rows = await runTemplate(db, t, pageArgs(lq));
  }
  const more = rows.length > lq.pageSize;
  let count: number | undefined;
  const c = opt(lq.q, 'count');
  if (c !== undefined && c.toLowerCase() === 'true') count = await countMessages(db, lq);
  return { rows: rows.slice(0, lq.pageSize), more, count };
}

/**
 * What a count reads from the folder counters (`mail_folder_counts`) instead of the
 * messages: every message (no `$filter`, no `$search`), or only the unread / read ones
 * (`$filter=isRead eq false|true`); undefined when the query needs the messages.
 */
function counterColumn(q: URLSearchParams): 'total' | 'unread' | 'read' | undefined {
  const search = opt(q, 'search');
  if (search !== undefined && search.trim() !== '') return undefined;
  const filter = opt(q, 'filter');
  if (filter === undefined || filter.trim() === '') return 'total';
  const n = parseMessageFilter(filter);
  if (n.kind !== 'compare' || n.op !== 'eq') return undefined;
  const [p, v] = n.left.kind === 'property' ? [n.left, n.right] : [n.right, n.left];
  if (p.kind !== 'property' || v.kind !== 'literal' || p.path.join('/').toLowerCase() !== 'isread' || typeof v.value !== 'boolean') return undefined;
  return v.value ? 'read' : 'unread';
}

/**
 * Number of messages matching the list query's filter and search: from the folder counters
 * when the query allows it (one row per folder), else a count over the indexes (a `$search`
 * counts the full-text matches of the mailbox, a `$filter` the rows its index selects), read
 * off the event loop on SQLite ({@link readOffThread}).
 * @throws ApiError 400 for bad `$filter` / `$search`
 */
export async function countMessages(db: Kysely<Database>, lq: Omit<ListQuery, 'pageSize' | 'skip'>): Promise<number> {
  const kind = counterColumn(lq.q);
  if (kind) {
    let q = db.selectFrom('mail_folder_counts').where('tenant_id', '=', lq.tenantId).where('mailbox_id', '=', lq.mailboxId);
    if (lq.folderId !== undefined) q = q.where('folder_id', '=', lq.folderId);
    else if (lq.excludeFolderIds.length) q = q.where('folder_id', 'not in', lq.excludeFolderIds);
    const r = await q.select([sql<number>`coalesce(sum(total), 0)`.as('total'), sql<number>`coalesce(sum(unread), 0)`.as('unread')]).executeTakeFirst();
    const total = Number((r as any)?.total ?? 0);
    const unread = Number((r as any)?.unread ?? 0);
    return kind === 'total' ? total : kind === 'unread' ? unread : total - unread;
  }
  const [r] = await readOffThread(db, baseQuery(db, lq).select((eb) => eb.fn.countAll().as('n')));
  return Number((r as any)?.n ?? 0);
}

/** Loads the `$expand`ed navigations of messages (one query per navigation for the whole page). */
export async function loadExpansions(db: Kysely<Database>, pks: number[], expand: ExpandItem[]): Promise<Map<number, Record<string, unknown[]>>> {
  const out = new Map<number, Record<string, unknown[]>>(pks.map((pk) => [pk, {}]));
  if (pks.length === 0) return out;
  for (const e of expand) {
    for (const pk of pks) out.get(pk)![e.name] = [];
    if (e.name === 'attachments') {
      const rows = await db.selectFrom('mail_attachments').selectAll().where('message_pk', 'in', pks).orderBy('modified_at').orderBy('id').execute();
      for (const r of rows as any[]) out.get(Number(r.message_pk))!.attachments!.push(fromJson(r.doc));
    } else if (e.name === 'extensions') {
      let q = db.selectFrom('mail_extensions').selectAll().where('message_pk', 'in', pks);
      if (e.ids) q = q.where('name', 'in', e.ids.map((i) => i.replace(/^vendor\.graph\.openTypeExtension\./i, '')));
      for (const r of (await q.orderBy('name').execute()) as any[]) out.get(Number(r.message_pk))!.extensions!.push(fromJson(r.doc));
    } else if (e.name === 'singleValueExtendedProperties' || e.name === 'multiValueExtendedProperties') {
      const table = e.name === 'singleValueExtendedProperties' ? 'mail_single_props' : 'mail_multi_props';
      let q = db.selectFrom(table).selectAll().where('message_pk', 'in', pks);
      if (e.ids) q = q.where('prop_id', 'in', e.ids);
      for (const r of (await q.orderBy('prop_id').execute()) as any[]) out.get(Number(r.message_pk))![e.name]!.push({ id: r.prop_id, value: table === 'mail_multi_props' ? fromJson(r.value) : r.value });
    }
  }
  return out;
}
