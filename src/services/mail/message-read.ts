/**
 * A message by id without `$expand` on SQLite (issue 31: "GET among 10,000 distinct messages").
 *
 * The kept texts of `kept.ts` are keyed by the mailbox version and the request, and hold 1,000
 * answers per app: a client reading many different messages misses them nearly every time, and
 * pays for the version read, the message's whole row (its stored document, 1–2 KB of JSON), the
 * splice and the UTF-8 encoding each time. On SQLite the version is a statement of its own, so
 * this path reads instead only the message's row key and change key (one statement, no document)
 * and answers the bytes kept for that message version and these render options: every write of
 * a message gives it a new change key (spec mail §2; `rendered.ts` relies on the same), so the
 * bytes of a version never go stale and no mailbox version is needed. Only when they are not kept
 * is the whole row read (as `getMessage` reads it) and rendered.
 *
 * PostgreSQL keeps the `kept.ts` path: there a live instance knows the mailbox version without a
 * statement, and a not-live one reads it in the turn's one statement, while the row key read here
 * would be a round trip of its own.
 */
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Database } from '../../store/database.ts';
import { param, prepared } from '../../store/prepared.ts';
import { contextUrl, need, type MailRequest } from './request.ts';
import { parseSelect } from './query.ts';
import { isWellFormedId } from './ids.ts';
import { findMessage, malformed, notFound } from './store.ts';
import { messageJsonUncached, withFirstMember } from './rendered.ts';
import type { RenderOptions } from './message.ts';

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
  return `${pk}|${changeKey}|${o.immutable ? 'i' : 'r'}|${o.bodyType ?? ''}|${o.select ? o.select.join(',') : '*'}|${o.webmailOrigin}|${version}`;
}

/**
 * The answer of `GET …/messages/{id}` without `$expand` (SQLite; see the module note), in the
 * order of checks of the general path: the id, the message, the caller's permission, `$select`.
 * @throws ApiError 400 `ErrorInvalidIdMalformed`, 404 `ErrorItemNotFound`, 403 `ErrorAccessDenied`, 400 for a bad `$select`
 */
export async function messageAnswer(mr: MailRequest, id: string): Promise<Buffer> {
  if (!isWellFormedId(id)) throw malformed();
  const db = mr.ctx.store.db as Kysely<Database>;
  const mb = mr.mb;
  const [v] = await versionById(db, mb.tenantId, mb.mailboxId, id, mb.wellKnown.get('recoverableitemspurges')!);
  if (!v) throw notFound();
  need(mr, 'read');
  const o: RenderOptions = { select: parseSelect(mr.q), bodyType: mr.bodyType, immutable: mr.immutable, webmailOrigin: mr.ctx.origin() };
  const kept = answers.get(keyOf(Number(v.pk), v.change_key, o, mr.version));
  if (kept !== undefined) {
    // The request log may hold this answer by reference: the cache keeps it anyway.
    mr.ctx.requestLog.heldBody(mr.req.raw, kept);
    return kept;
  }
  // The whole row, read as the general path reads it; kept under its own change key (a write
  // between the two reads makes a new version, never a wrong text for the old one).
  const m = await findMessage(db, mb, id);
  if (!m) throw notFound();
  const bytes = Buffer.from(withFirstMember('@odata.context', contextUrl(mr, 'messages/$entity'), messageJsonUncached(m, o)), 'utf8');
  answers.set(keyOf(m.pk, m.changeKey, o, mr.version), bytes);
  return bytes;
}
