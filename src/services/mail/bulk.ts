/**
 * Bulk mailboxes on demand (`stratus seed mailbox`, benchmarks, tests of large mailboxes):
 * generated, realistic messages — threads, a few thousand correspondents, project code
 * names, order and invoice numbers, read and unread, flags, categories, importance — spread
 * over the well-known folders and over the years before the newest one. Rows go through the
 * same columns as API writes ({@link messageColumns}), so the full-text index and the folder
 * counters are kept by the same triggers; inserts are multi-row statements in transactions
 * of a few thousand rows. Deterministic for a given seed (ids are random).
 */
import { sql, type Kysely } from 'kysely';
import { seededRandom } from '../../core/random.ts';
import { conversationIndex, newConversationId, newImmutableId, newMessageId } from './ids.ts';
import { emptyDoc, wrapHtml, type MessageDoc, type MessageRecord, type Recipient } from './message.ts';
import { messageColumns, openMailbox, type Mailbox } from './store.ts';
import type { Database } from '../../store/database.ts';
import { isPostgres } from '../../store/db.ts';

const first = ['Ada', 'Ben', 'Chloe', 'Dev', 'Elena', 'Farah', 'Gus', 'Hana', 'Ivan', 'Jade', 'Kofi', 'Lena', 'Marco', 'Nina', 'Omar', 'Pia', 'Quinn', 'Rosa', 'Sam', 'Tara', 'Uma', 'Victor', 'Wen', 'Ximena', 'Yusuf', 'Zoe', 'Arjun', 'Bea', 'Carlos', 'Dana', 'Emil', 'Fiona', 'Goran', 'Helga', 'Ines', 'Jonas', 'Kira', 'Liam', 'Mei', 'Noor'];
const last = ['Abbott', 'Brandt', 'Castillo', 'Dubois', 'Eriksen', 'Fischer', 'Gallo', 'Hughes', 'Ito', 'Jansen', 'Kowalski', 'Lindqvist', 'Moreau', 'Nakamura', 'Okafor', 'Petrov', 'Quint', 'Rossi', 'Schmidt', 'Tanaka', 'Ueda', 'Varga', 'Weber', 'Xu', 'Yilmaz', 'Zhang', 'Almeida', 'Bauer', 'Costa', 'Dahl'];
const domains = ['northwind.example', 'tailspin.example', 'woodgrove.example', 'adatum.example', 'litware.example', 'fabrikam.example', 'proseware.example', 'wingtip.example', 'alpine.example', 'lucerne.example', 'margie.example', 'coho.example'];
const adjectives = ['amber', 'brisk', 'cobalt', 'dusky', 'ember', 'frost', 'gilded', 'hollow', 'ivory', 'jade', 'kinetic', 'lunar', 'maple', 'nimble', 'onyx', 'polar', 'quartz', 'russet', 'silver', 'tidal', 'umber', 'velvet', 'willow', 'zephyr'];
const nouns = ['falcon', 'harbor', 'lantern', 'meadow', 'summit', 'canyon', 'beacon', 'orchard', 'glacier', 'compass', 'anchor', 'cedar', 'delta', 'ember', 'fjord', 'grove', 'heron', 'island', 'juniper', 'kestrel'];
const subjects = [
  'Status of {p}',
  '{p}: next steps',
  'Invoice {n} for {p}',
  'Purchase order {n}',
  'Meeting notes — {p} sync',
  'Question about {p} timeline',
  'Budget review for {p}',
  'Travel booking {n}',
  'Contract renewal with {c}',
  'Customer visit from {c}',
  'Build {n} failed on main',
  'Release {v} status',
  'Hiring loop feedback',
  'Security training reminder',
  'Team offsite planning',
  'Quarterly planning: {p}',
  'Support ticket {n} from {c}',
  'Shipment {n} delayed',
  'Draft proposal for {c}',
  'Lunch on Friday?',
];
const sentences = [
  'Please review the attached numbers for {p} before our call.',
  'The {c} team confirmed the dates; we still need a room for the workshop.',
  'Invoice {n} is due in 30 days; finance asked for the cost centre.',
  'I moved the {p} milestone by one week because the vendor slipped.',
  'Can you send me the latest figures from the {c} account?',
  'The nightly run passed after the fix; release {v} can go to staging.',
  'We agreed to split the work on {p} between the two teams.',
  'Order {n} shipped yesterday and should arrive on Thursday.',
  'Let me know if the proposal for {c} needs another pass.',
  'The workshop notes are in the shared folder under {p}.',
  'Security asked every team to rotate the credentials this month.',
  'Thanks for the quick turnaround on the {c} question.',
  'I will be out of office next week; {f} covers for me.',
  'The budget for {p} is approved with a small reduction.',
  'Please add your agenda items for the {p} review by Wednesday.',
  'Ticket {n} is resolved; the customer confirmed the fix.',
];
const categories = ['Red category', 'Blue category', 'Green category', 'Yellow category', 'Orange category', 'Purple category'];
const companies = domains.map((d) => d.split('.')[0]!.replace(/^./, (c) => c.toUpperCase()));

/** The project code names of the generated mail (`amberfalcon`, …); 480 of them, each a single search word. */
export const bulkProjectNames: string[] = adjectives.flatMap((a) => nouns.map((n) => a + n));

/** Options of {@link seedMailbox}. */
export interface SeedMailboxOptions {
  /** Random seed of the content (default 7). */
  seed?: number;
  /** Received time of the newest message, ms since the epoch (default: now); older ones go back about 5 minutes each. */
  newestMs?: number;
  /** Rows per transaction (default 5000). */
  batch?: number;
  /** Called after each committed transaction with the number of messages written so far. */
  onProgress?: (done: number) => void;
  /** Runs `fn` in one transaction (the store's `transaction`). */
  transaction: <T>(fn: (trx: Kysely<Database>) => Promise<T>) => Promise<T>;
  /**
   * PostgreSQL: refresh the messages' planner statistics at the end (default true). An
   * `analyze` reads a sample of the whole table (about 0.46 s at 10,600 messages), so a caller
   * seeding many mailboxes in a row passes false for all but the last.
   */
  analyze?: boolean;
}

/** Folder of a generated message (fractions of a lived-in mailbox). */
function pickFolder(r: number, outgoing: boolean): string {
  if (outgoing) return r < 0.03 ? 'drafts' : 'sentitems';
  if (r < 0.8) return 'inbox';
  if (r < 0.92) return 'archive';
  if (r < 0.97) return 'deleteditems';
  return 'junkemail';
}

/**
 * Generates `count` messages for a mailbox, oldest last: message `i` is received about
 * 5 minutes × i before `newestMs`. Pure (no database).
 */
export function* bulkMessages(mb: Mailbox, count: number, seed = 7, newestMs = Date.now()): Generator<Omit<MessageRecord, 'pk'>> {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const me: Recipient = { emailAddress: { name: mb.displayName, address: mb.address } };
  const people: Recipient[] = [];
  for (const f of first) for (const l of last) people.push({ emailAddress: { name: `${f} ${l}`, address: `${f}.${l}@${domains[(f.length * 7 + l.length) % domains.length]}`.toLowerCase() } });
  let thread: { conversationId: string; index: string; subject: string; other: Recipient; left: number; fill: (t: string) => string } | undefined;
  let at = newestMs;
  for (let i = 0; i < count; i++) {
    at -= Math.floor(60_000 + rand() * 480_000);
    const iso = new Date(at).toISOString();
    if (!thread || thread.left <= 0) {
      const project = pick(bulkProjectNames);
      const fill = (t: string) => t.replace('{p}', project).replace('{n}', String(10000 + Math.floor(rand() * 90000))).replace('{c}', pick(companies)).replace('{v}', `${1 + Math.floor(rand() * 9)}.${Math.floor(rand() * 20)}`);
      const key = `${mb.mailboxId}/bulk/${seed}/${i}`;
      thread = { conversationId: newConversationId(key), index: conversationIndex(undefined, at, key), subject: fill(pick(subjects)), other: pick(people), left: rand() < 0.35 ? 2 + Math.floor(rand() * 4) : 1, fill };
    }
    const fill = thread.fill;
    // Generated newest first: every message of a thread but its oldest (the last generated) is a reply.
    thread.left--;
    const reply = thread.left > 0;
    const outgoing = rand() < 0.2;
    const folder = pickFolder(rand(), outgoing);
    const other = thread.other;
    const d: MessageDoc = emptyDoc();
    d.subject = (reply ? 'RE: ' : '') + thread.subject;
    const n = 2 + Math.floor(rand() * 4);
    const parts: string[] = [];
    for (let s = 0; s < n; s++) parts.push(fill(pick(sentences)).replace('{f}', pick(first)));
    const to = (outgoing ? other : me).emailAddress.name.split(' ')[0];
    const html = `<p>Hi ${to},</p><p>${parts.join(' ')}</p><p>Regards,<br>${(outgoing ? me : other).emailAddress.name}</p>`;
    d.body = { contentType: 'html', content: wrapHtml(html) };
    d.uniqueBody = { contentType: 'html', content: html };
    d.from = outgoing ? me : other;
    d.sender = d.from;
    d.toRecipients = [outgoing ? other : me];
    if (rand() < 0.2) d.ccRecipients = [pick(people)];
    d.importance = rand() < 0.06 ? 'high' : rand() < 0.04 ? 'low' : 'normal';
    d.inferenceClassification = rand() < 0.8 ? 'focused' : 'other';
    d.flag = rand() < 0.04 ? { flagStatus: 'flagged', startDateTime: { dateTime: iso.slice(0, 19), timeZone: 'UTC' }, dueDateTime: { dateTime: iso.slice(0, 19), timeZone: 'UTC' } } : rand() < 0.03 ? { flagStatus: 'complete' } : { flagStatus: 'notFlagged' };
    if (rand() < 0.12) d.categories = [pick(categories)];
    d.conversationId = thread.conversationId;
    d.conversationIndex = thread.index;
    thread.index = conversationIndex(thread.index, at);
    const id = newMessageId();
    d.internetMessageId = `<${id.slice(4, 28)}@${d.from.emailAddress.address.split('@')[1] ?? 'stratus.test'}>`;
    const isDraft = folder === 'drafts';
    yield {
      id,
      immutableId: newImmutableId(),
      tenantId: mb.tenantId,
      mailboxId: mb.mailboxId,
      folderId: mb.wellKnown.get(folder)!,
      createdAt: iso,
      modifiedAt: iso,
      receivedAt: iso,
      sentAt: isDraft ? null : iso,
      // Recent mail is more often unread.
      isRead: outgoing || (i < 200 ? rand() < 0.5 : rand() < 0.97),
      isDraft,
      hasAttachments: false,
      changeKey: 'CQAAAB' + newImmutableId().slice(4, 24),
      doc: d,
    };
  }
}

/**
 * Adds `count` generated messages to a user's mailbox (creating its folders on first use),
 * `batch` rows per transaction, in multi-row inserts; categories go to their child table.
 * No change-log entries (bulk data is initial state, like the demo data set).
 *
 * On PostgreSQL the messages' planner statistics are refreshed at the end (`analyze`), as the
 * server's manual advises after a bulk load: until its autovacuum gets to the table (a minute
 * or more), a fresh store has none, and a message read by id (`message-read.ts`: `id = … or
 * immutable_id = …` within a mailbox) was planned as a walk of the mailbox's index entries and
 * rows instead of the two unique indexes — in the first seconds of issue 31's PostgreSQL
 * workloads a third of the database's CPU (bench/README.md, twelfth pass).
 * @returns the mailbox
 */
export async function seedMailbox(db: Kysely<Database>, user: { tenantId: string; id: string; mail: string; displayName: string }, count: number, o: SeedMailboxOptions): Promise<Mailbox> {
  const mb = await openMailbox(db, user);
  const batch = o.batch ?? 5000;
  const perInsert = 200;
  const gen = bulkMessages(mb, count, o.seed ?? 7, o.newestMs);
  let done = 0;
  while (done < count) {
    const recs: Omit<MessageRecord, 'pk'>[] = [];
    for (let k = 0; k < batch && done + recs.length < count; k++) {
      const r = gen.next();
      if (r.done) break;
      recs.push(r.value);
    }
    if (recs.length === 0) break;
    await o.transaction(async (trx) => {
      for (let s = 0; s < recs.length; s += perInsert) {
        const part = recs.slice(s, s + perInsert);
        const rows = (await trx.insertInto('mail_messages').values(part.map(messageColumns)).returning(['pk', 'id']).execute()) as { pk: number | string; id: string }[];
        const pkOf = new Map(rows.map((r) => [r.id, Number(r.pk)]));
        const cats = part.flatMap((m) => m.doc.categories.map((name) => ({ message_pk: pkOf.get(m.id)!, name })));
        if (cats.length) await trx.insertInto('mail_categories').values(cats).execute();
      }
    });
    done += recs.length;
    o.onProgress?.(done);
  }
  if (isPostgres(db) && count > 0 && o.analyze !== false) await sql`analyze mail_messages, mail_categories`.execute(db);
  return mb;
}
