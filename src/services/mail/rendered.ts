/**
 * Rendered JSON of message versions (issue 9: the inbox default page, the delta first page and
 * a message by id under load). A message's JSON text depends only on its row version and the
 * render options: every write of a message gives it a new change key (spec mail §2: "changeKey
 * … changes when the message is changed"; `updateMessage`, `moveMessage` and `sendMessage` all
 * set one), so a text cached under the row key, the change key and the options is never stale.
 *
 * A page then reads only the row keys and change keys of its messages
 * ({@link versionColumns}) and splices the cached texts; the stored documents of the messages
 * not cached are read in one query by row key, rendered and cached.
 */
import { LRUCache } from 'lru-cache';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/database.ts';
import { renderMessage, type MessageRecord, type RenderOptions } from './message.ts';
import { messageFromRow, qualifiedMessageRowColumns } from './store.ts';
import type { LocalMailVersions } from './local-versions.ts';

/**
 * The rendered texts of one message version (its row key is the cache key): its change key and
 * its texts by {@link optionsKey}.
 */
interface VersionTexts {
  changeKey: string;
  byOptions: Map<string, string>;
  /** Characters of the texts and their option keys. */
  chars: number;
  /**
   * Set when the embedded store's kept versions vouch for {@link changeKey} (`local-versions.ts`):
   * the keeper, and its epoch and ticket taken before the change key was read. A page may then
   * name the row by its row key alone ({@link pageJson} with kept versions).
   */
  vouch?: { by: LocalMailVersions; epoch: number; ticket: number };
}

/**
 * Rendered texts by row key, for the version last rendered (a newer change key replaces it); at
 * most 32 Mi characters of texts and keys. Keyed by the row key, a number: a lookup hashes no
 * text built for it (the page's option key is interned, its hash made once).
 */
const texts = new LRUCache<number, VersionTexts>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (e) => 64 + e.changeKey.length + e.chars });

/** The text kept for this message version and options, if any. */
function keptText(pk: number, changeKey: string, options: string): string | undefined {
  const e = texts.get(pk);
  return e !== undefined && e.changeKey === changeKey ? e.byOptions.get(options) : undefined;
}

/** Keeps a text of this message version and options (a text of another version of the row is dropped, and so is its vouch). */
function keepText(pk: number, changeKey: string, options: string, text: string): void {
  let e = texts.peek(pk);
  if (e === undefined || e.changeKey !== changeKey) e = { changeKey, byOptions: new Map(), chars: 0 };
  const before = e.byOptions.get(options);
  e.chars += text.length - (before === undefined ? -options.length : before.length);
  e.byOptions.set(options, text);
  // Set again: the cache sizes the entry anew.
  texts.set(pk, e);
}

/** Short names of the render options seen (at most 1,000; further ones are named by their own text). */
const optionNames = new Map<string, string>();

/**
 * The render options (all but `context`) as a short, interned key part: one text hashed once a
 * page, not once a message. Also the options part of `message-read.ts`'s answer keys.
 */
export function optionsKey(o: RenderOptions): string {
  const text = `${o.immutable ? 'i' : 'r'}|${o.bodyType ?? ''}|${o.select ? o.select.join(',') : '*'}|${o.webmailOrigin}`;
  let name = optionNames.get(text);
  if (name === undefined) {
    if (optionNames.size >= 1000) return text;
    optionNames.set(text, (name = `#${optionNames.size}`));
  }
  return name;
}

/**
 * The JSON text of a message as {@link renderMessage} renders it with these options (its
 * `context` is ignored: a text is an object without `@odata.context`, to splice).
 */
export function messageJson(m: MessageRecord, o: RenderOptions): string {
  return messageJsonKeyed(m, o, optionsKey(o));
}

function messageJsonKeyed(m: MessageRecord, o: RenderOptions, options: string): string {
  let t = keptText(m.pk, m.changeKey, options);
  if (t === undefined) keepText(m.pk, m.changeKey, options, (t = JSON.stringify(renderMessage(m, { ...o, context: undefined }))));
  return t;
}

/**
 * {@link messageJson}'s text, taken from the cache when it is there but not added to it (for a
 * caller that keeps the answer itself: `message-read.ts`).
 */
export function messageJsonUncached(m: MessageRecord, o: RenderOptions): string {
  return keptText(m.pk, m.changeKey, optionsKey(o)) ?? JSON.stringify(renderMessage(m, { ...o, context: undefined }));
}

/** The table-qualified columns a page of {@link pageJson} reads: the row key and the change key. */
export const versionColumns = ['mail_messages.pk', 'mail_messages.change_key'] as const;

/** The row key alone: the page rows of {@link pageJson} on the embedded store, with its kept versions. */
export const keyColumns = ['mail_messages.pk'] as const;

/**
 * The JSON texts of a page's messages, in the order of `rows`: rows of {@link versionColumns}
 * (the texts cached for their versions; the others read in one query by row key), whole
 * `mail_messages` rows (rendered from their document), or — given the embedded store's kept
 * versions `local`, fresh for the read transaction of the page's statement
 * (`freshLocalVersions`) — rows of {@link keyColumns}: a text is then used while `local` vouches
 * for the change key it was made for (an epoch and a ticket taken before that change key was
 * read, as `message-read.ts` does for a message by id), and the rows read whole here are vouched
 * for from then on (issue 31: the page statement without the change key was 28.7 → 21.5 µs).
 * A message deleted between the page's read and the read of its document has no text
 * (undefined at its place).
 * @param rows rows of the caller's query, scoped to one mailbox (their row keys are trusted)
 */
export async function pageJson(db: Kysely<Database>, rows: readonly any[], o: RenderOptions, local?: LocalMailVersions): Promise<(string | undefined)[]> {
  const out: (string | undefined)[] = new Array(rows.length);
  const missing: number[] = [];
  const options = optionsKey(o);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r.doc !== undefined) {
      out[i] = messageJsonKeyed(messageFromRow(r), o, options);
      continue;
    }
    const t = local ? vouchedText(Number(r.pk), options, local) : keptText(Number(r.pk), r.change_key, options);
    if (t === undefined) missing.push(i);
    else out[i] = t;
  }
  if (missing.length) {
    // Taken before the read: a change key read after it is the stored one while `holds` says so.
    const mark = local && { by: local, epoch: local.epoch(), ticket: local.ticket() };
    const full = await db
      .selectFrom('mail_messages')
      .select(qualifiedMessageRowColumns)
      .where(
        'mail_messages.pk',
        'in',
        missing.map((i) => Number(rows[i].pk)),
      )
      .execute();
    const byPk = new Map(full.map((r: any) => [Number(r.pk), r]));
    for (const i of missing) {
      const r = byPk.get(Number(rows[i].pk));
      if (!r) continue;
      const m = messageFromRow(r);
      out[i] = messageJsonKeyed(m, o, options);
      const e = mark && texts.peek(m.pk);
      if (e && e.changeKey === m.changeKey) e.vouch = mark;
    }
  }
  return out;
}

/** The text kept for row `pk` with these options while `local` vouches for its change key ({@link VersionTexts.vouch}). */
function vouchedText(pk: number, options: string, local: LocalMailVersions): string | undefined {
  const e = texts.get(pk);
  const v = e?.vouch;
  return v !== undefined && v.by === local && local.holds(v.epoch, v.ticket, pk) ? e!.byOptions.get(options) : undefined;
}

/** `{"name":value,` + the rest of an object's JSON text: a member put first (`@odata.context`, `@odata.type`). */
export function withFirstMember(name: string, value: unknown, objectJson: string): string {
  const rest = objectJson.slice(1);
  return `{${JSON.stringify(name)}:${JSON.stringify(value)}${rest === '}' ? '' : ','}${rest}`;
}
