/**
 * The mail generator (deterministic): realistic messages — threads, attachments, flags,
 * categories, importance, read and unread — spread over Inbox, Sent Items, Archive, Drafts,
 * Deleted Items and Junk Email. The demo world's mailboxes use it (`generate` of a world
 * mailbox, `src/world/mail.ts`), and so do the bulk loader for tests of large mailboxes and
 * `stratus seed mailbox` (real rows through the same columns).
 */
import type { Kysely } from 'kysely';
import type { SeedContext } from '../../context.ts';
import { toJson } from '../../store/db.ts';
import { conversationIndex, newAttachmentId, newConversationId, newImmutableId, newMessageId } from './ids.ts';
import { emptyDoc, wrapHtml, type MessageDoc, type MessageRecord, type Recipient } from './message.ts';
import { messageColumns, openMailbox, type Mailbox } from './store.ts';
import { seededRandom } from '../../core/random.ts';
import type { Database } from '../../store/database.ts';

const rng = seededRandom;

const externals: Recipient[] = [
  ['Dana Swope', 'dana.swope@northwind.example'],
  ['Kai Mori', 'kai.mori@tailspin.example'],
  ['Priya Raman', 'priya.raman@woodgrove.example'],
  ['Luis Ortega', 'luis.ortega@adatum.example'],
  ['Mina Park', 'mina.park@litware.example'],
  ['Build Bot', 'noreply@ci.example'],
  ['Travel Desk', 'travel@margie.example'],
].map(([name, address]) => ({ emailAddress: { name: name!, address: address! } }));

const topics = [
  ['Quarterly planning', 'Here is the draft agenda for the quarterly planning session. Please add your items by Thursday.'],
  ['Budget review', 'The budget spreadsheet is updated with the latest numbers from finance. Two lines still need owners.'],
  ['Release 4.2 status', 'All blocking bugs are fixed; the release candidate passed the nightly run. Sign-off meeting tomorrow.'],
  ['Customer visit next week', 'The customer team arrives Tuesday at 10:00. Lunch is booked; we need a demo environment.'],
  ['Invoice 2026-118', 'Please find the invoice attached. Payment terms are 30 days from the invoice date.'],
  ['Team offsite', 'We are looking at venues for the offsite. Vote for your preferred dates in the poll.'],
  ['Security training reminder', 'The annual security training is due by the end of the month. It takes about 40 minutes.'],
  ['Build failed on main', 'The pipeline failed at the integration test stage. The log excerpt is attached.'],
  ['Flight confirmation', 'Your flight is confirmed. Check-in opens 24 hours before departure.'],
  ['Hiring loop feedback', 'Please submit your interview feedback for the backend candidate before Friday noon.'],
  ['Pizza Friday', 'Pizza arrives at noon in the kitchen. Vegetarian options included.'],
  ['Contract renewal', 'The support contract renews next month. Legal reviewed the new terms; see the redlines.'],
];
const categories = ['Red category', 'Blue category', 'Green category', 'Yellow category', 'Orange category', 'Purple category'];

interface SeedMessage {
  rec: Omit<MessageRecord, 'pk'>;
  attachments: { name: string; contentType: string; content: string; isInline: boolean }[];
}

/** Builds `count` deterministic messages for a mailbox (`peer` is the other demo user). */
export function demoMessages(mb: Mailbox, peer: Recipient, count: number, seed: number, baseMs = Date.parse('2026-10-01T09:00:00.000Z')): SeedMessage[] {
  const rand = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const me: Recipient = { emailAddress: { name: mb.displayName, address: mb.address } };
  const out: SeedMessage[] = [];
  let i = 0;
  while (out.length < count) {
    const [topic, text] = pick(topics);
    const threadLen = rand() < 0.3 ? 2 + Math.floor(rand() * 3) : 1;
    const convKey = `${mb.mailboxId}/conv/${i}`;
    const conversationId = newConversationId(convKey);
    let index = conversationIndex(undefined, baseMs - i * 3_600_000, convKey);
    for (let t = 0; t < threadLen && out.length < count; t++, i++) {
      const at = new Date(baseMs - i * 3_600_000 * (1 + rand())).toISOString();
      const outgoing = rand() < 0.25;
      const other = rand() < 0.3 ? peer : pick(externals);
      const folder = outgoing ? (rand() < 0.1 ? 'drafts' : 'sentitems') : rand() < 0.08 ? 'archive' : rand() < 0.04 ? 'deleteditems' : rand() < 0.03 ? 'junkemail' : 'inbox';
      const d: MessageDoc = emptyDoc();
      d.subject = (t > 0 ? 'RE: ' : '') + topic;
      d.body = { contentType: 'html', content: wrapHtml(`<p>Hi ${(outgoing ? other : me).emailAddress.name.split(' ')[0]},</p><p>${text}</p><p>Regards,<br>${(outgoing ? me : other).emailAddress.name}</p>`) };
      d.uniqueBody = d.body;
      d.from = outgoing ? me : other;
      d.sender = d.from;
      d.toRecipients = [outgoing ? other : me];
      if (rand() < 0.2) d.ccRecipients = [pick(externals)];
      d.importance = rand() < 0.1 ? 'high' : rand() < 0.1 ? 'low' : 'normal';
      d.inferenceClassification = rand() < 0.8 ? 'focused' : 'other';
      d.flag = rand() < 0.1 ? { flagStatus: 'flagged', startDateTime: { dateTime: at.slice(0, 19), timeZone: 'UTC' }, dueDateTime: { dateTime: at.slice(0, 19), timeZone: 'UTC' } } : rand() < 0.05 ? { flagStatus: 'complete' } : { flagStatus: 'notFlagged' };
      if (rand() < 0.25) d.categories = [pick(categories)];
      if (!outgoing && other.emailAddress.address === 'travel@margie.example') {
        // A mailing list: List-Unsubscribe with a mailto command (beta unsubscribe).
        d.unsubscribeEnabled = true;
        d.unsubscribeData = ['mailto:unsubscribe@margie.example?subject=unsubscribe', 'https://margie.example/unsubscribe'];
      }
      d.conversationId = conversationId;
      d.conversationIndex = index;
      index = conversationIndex(index, Date.parse(at));
      const key = `${mb.tenantId}/${mb.mailboxId}/${i}`;
      d.internetMessageId = `<${newImmutableId(key).slice(4, 28)}@${(d.from.emailAddress.address.split('@')[1] ?? 'stratus.test')}>`;
      const isDraft = folder === 'drafts';
      const atts: SeedMessage['attachments'] = [];
      if (rand() < 0.15) atts.push({ name: topic.toLowerCase().replace(/\W+/g, '-') + '.csv', contentType: 'text/csv', content: 'item,amount\nlicences,1200\nhardware,5400\n', isInline: false });
      if (rand() < 0.05) atts.push({ name: 'logo.png', contentType: 'image/png', content: 'PNG', isInline: true });
      out.push({
        rec: {
          id: newMessageId(key),
          immutableId: newImmutableId(key),
          tenantId: mb.tenantId,
          mailboxId: mb.mailboxId,
          folderId: mb.wellKnown.get(folder)!,
          createdAt: at,
          modifiedAt: at,
          receivedAt: at,
          sentAt: isDraft ? null : at,
          isRead: outgoing || rand() < 0.6,
          isDraft,
          hasAttachments: atts.some((a) => !a.isInline),
          changeKey: 'CQAAAB' + newImmutableId('ck' + key).slice(4, 24),
          doc: d,
        },
        attachments: atts,
      });
    }
  }
  return out;
}

/** Inserts seed messages in batches (no change-log entries: this is the initial state). */
export async function insertSeedMessages(db: Kysely<Database>, msgs: SeedMessage[]): Promise<void> {
  for (let s = 0; s < msgs.length; s += 100) {
    const batch = msgs.slice(s, s + 100);
    const rows = (await db.insertInto('mail_messages').values(batch.map((m) => messageColumns(m.rec))).returning(['pk', 'id']).execute()) as { pk: number | string; id: string }[];
    const pkOf = new Map(rows.map((r) => [r.id, Number(r.pk)]));
    const cats = batch.flatMap((m) => m.rec.doc.categories.map((name) => ({ message_pk: pkOf.get(m.rec.id)!, name })));
    if (cats.length) await db.insertInto('mail_categories').values(cats).execute();
    const atts = batch.flatMap((m) =>
      m.attachments.map((a, j) => {
        const id = newAttachmentId(`${m.rec.id}/${j}`);
        const bytes = Buffer.from(a.content);
        return {
          id,
          message_pk: pkOf.get(m.rec.id)!,
          kind: 'file',
          name: a.name,
          content_type: a.contentType,
          size: bytes.length,
          is_inline: a.isInline ? 1 : 0,
          modified_at: m.rec.createdAt,
          doc: toJson({ '@odata.type': '#vendor.graph.fileAttachment', id, lastModifiedDateTime: m.rec.createdAt.replace(/\.\d+Z$/, 'Z'), name: a.name, contentType: a.contentType, size: bytes.length, isInline: a.isInline, contentId: a.isInline ? 'logo' : null, contentLocation: null, contentBytes: bytes.toString('base64') }),
        };
      }),
    );
    if (atts.length) await db.insertInto('mail_attachments').values(atts).execute();
  }
}

/**
 * Loads `count` generated messages into a user's mailbox (for tests of large mailboxes and
 * benchmarks). Rows go through the same columns and indexes as API writes.
 */
export async function seedBulkMessages(ctx: SeedContext, user: { tenantId: string; id: string; mail: string; displayName: string }, count: number, seed = 7): Promise<void> {
  const mb = await openMailbox(ctx.store.db, user);
  const msgs = demoMessages(mb, { emailAddress: { name: 'Bulk Peer', address: 'peer@bulk.example' } }, count, seed, Date.parse('2025-06-01T00:00:00.000Z'));
  for (const m of msgs) {
    m.rec.id = newMessageId();
    m.rec.immutableId = newImmutableId();
  }
  await ctx.store.transaction((trx) => insertSeedMessages(trx, msgs));
}

/** Number of demo messages in each demo mailbox (`generate.count` of the demo world's mailboxes). */
export const demoMailboxSize = 300;
