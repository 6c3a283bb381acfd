/**
 * Delta per folder (reference mail.md §6; spec mail §6): the first round pages through the
 * folder in primary-key order and ends with `@odata.deltaLink`; later rounds read the mail
 * change log (`mailChangesSince`) from the link's position and return each changed message
 * once — its current representation if it is still in the folder, else `@removed`.
 * Tokens are opaque, carry the original query (`$select`, the `receivedDateTime` filter,
 * `changeType`) and are bound to the mailbox and folder.
 */
import type { Kysely } from 'kysely';
import { errors } from '../../core/errors/index.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { latestMailChangeSeq, mailChangesSince } from './changes.ts';
import { messageFromRow, messageRowColumns, type FolderRow, type Mailbox } from './store.ts';
import { opt } from './query.ts';
import type { Database } from '../../store/database.ts';

interface DeltaState {
  /** Mailbox and folder the token belongs to. */
  m: string;
  f: string;
  /** `i` first round (keyset on pk), `c` change rounds. */
  p: 'i' | 'c';
  /** Last pk returned (first round). */
  k: number;
  /** Change-log position: the round's start (first round) or the last change read. */
  s: number;
  sel?: string;
  /** `receivedDateTime` filter: operator and ISO value. */
  rop?: 'ge' | 'gt';
  rv?: string;
  ct?: string[];
}

/** What a delta page needs from the route. */
export interface DeltaRequest {
  mb: Mailbox;
  folder: FolderRow;
  q: URLSearchParams;
  pageSize: number;
  /** Absolute origin and path of the delta resource (`…/mailFolders('{id}')/messages/delta`). */
  origin: string;
  path: string;
}

/** The `$skiptoken` or `$deltatoken` of a delta request (also percent-encoded as `%24…`), if any. */
export function deltaToken(q: URLSearchParams): string | undefined {
  return q.get('$skiptoken') ?? q.get('$deltatoken') ?? q.get('%24skiptoken') ?? q.get('%24deltatoken') ?? undefined;
}

function initialState(r: DeltaRequest, startSeq: number): DeltaState {
  const st: DeltaState = { m: r.mb.mailboxId, f: r.folder.id, p: 'i', k: 0, s: startSeq };
  const sel = opt(r.q, 'select');
  if (sel) st.sel = sel;
  const filter = opt(r.q, 'filter');
  if (filter && filter.trim()) {
    const m = /^\s*receivedDateTime\s+(ge|gt)\s+(\S+)\s*$/i.exec(filter);
    const when = m ? new Date(m[2]!.replace(/^'|'$/g, '')) : undefined;
    if (!m || !when || Number.isNaN(when.getTime())) throw errors.mail.deltaFilterUnsupported();
    st.rop = m[1]!.toLowerCase() as 'ge' | 'gt';
    st.rv = when.toISOString();
  }
  const order = opt(r.q, 'orderby');
  if (order && !/^\s*receivedDateTime\s+desc\s*$/i.test(order)) throw errors.mail.deltaOrderByUnsupported();
  if (opt(r.q, 'search')) throw errors.mail.deltaSearchUnsupported();
  const ct = r.q.get('changeType');
  if (ct) {
    const types = ct.split(',').map((x) => x.trim().toLowerCase());
    if (types.some((t) => !['created', 'updated', 'deleted'].includes(t))) throw errors.mail.deltaChangeTypeInvalid();
    st.ct = types;
  }
  return st;
}

/**
 * One delta page: `{ state, items, next }` where items are `mail_messages` rows to render (the
 * first round's hold only the row key and change key: `rendered.ts`) or removed ids, and the
 * link to give back.
 * @throws ApiError 400 `ErrorInvalidUrlQuery`, 400 `syncStateNotFound`, 410 `resyncRequired`
 */
export async function deltaPage(db: Kysely<Database>, r: DeltaRequest): Promise<{ select?: string; items: ({ row: unknown } | { removed: string })[]; nextLink?: string; deltaLink?: string }> {
  const token = deltaToken(r.q);
  const latest = await latestMailChangeSeq(db);
  let st: DeltaState;
  if (token) {
    const t = decodeToken<DeltaState>(token);
    if (!t || t.m !== r.mb.mailboxId || t.f !== r.folder.id || (t.p !== 'i' && t.p !== 'c') || typeof t.s !== 'number') throw errors.mail.syncStateNotFound();
    if (t.s > latest) throw errors.mail.resyncRequired({}, { headers: { Location: absoluteUrl(r.origin, r.path) } });
    st = t;
  } else st = initialState(r, latest);

  const items: ({ row: unknown } | { removed: string })[] = [];
  const link = (kind: '$skiptoken' | '$deltatoken', s: DeltaState) => absoluteUrl(r.origin, r.path, { [kind]: encodeToken(s) });
  if (st.p === 'i') {
    // The first round reads versions only (row key, change key): the handler splices their cached texts (rendered.ts).
    let q = db.selectFrom('mail_messages').select(['pk', 'change_key']).where('tenant_id', '=', r.mb.tenantId).where('mailbox_id', '=', r.mb.mailboxId).where('folder_id', '=', r.folder.id).where('pk', '>', st.k);
    if (st.rv) q = q.where('received_at', st.rop === 'gt' ? '>' : '>=', st.rv);
    const rows = await q.orderBy('pk').limit(r.pageSize + 1).execute();
    for (const row of rows.slice(0, r.pageSize)) items.push({ row });
    if (rows.length > r.pageSize) return { select: st.sel, items, nextLink: link('$skiptoken', { ...st, k: Number((rows[r.pageSize - 1] as any).pk) }) };
    return { select: st.sel, items, deltaLink: link('$deltatoken', { ...st, p: 'c', k: 0 }) };
  }
  const changes = await mailChangesSince(db, { tenantId: r.mb.tenantId, mailboxId: r.mb.mailboxId, folderId: r.folder.id, afterSeq: st.s, limit: r.pageSize + 1 });
  const page = changes.slice(0, r.pageSize);
  const seen = new Set<string>();
  for (const c of page) {
    if (st.ct && !st.ct.includes(c.changeType)) continue;
    if (seen.has(c.messageId)) continue;
    seen.add(c.messageId);
    const row = await db.selectFrom('mail_messages').select(messageRowColumns).where('tenant_id', '=', r.mb.tenantId).where('mailbox_id', '=', r.mb.mailboxId).where('id', '=', c.messageId).executeTakeFirst();
    if (row && (row as any).folder_id === r.folder.id) {
      const m = messageFromRow(row);
      if (st.rv && !(st.rop === 'gt' ? m.receivedAt > st.rv : m.receivedAt >= st.rv)) continue;
      items.push({ row });
    } else items.push({ removed: c.messageId });
  }
  const lastSeq = page.length ? page[page.length - 1]!.seq : st.s;
  if (changes.length > r.pageSize) return { select: st.sel, items, nextLink: link('$skiptoken', { ...st, s: lastSeq }) };
  return { select: st.sel, items, deltaLink: link('$deltatoken', { ...st, s: lastSeq }) };
}
