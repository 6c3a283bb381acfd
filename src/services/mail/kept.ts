/**
 * Answer texts of mail reads kept per mailbox version (issue 9: reads at the framework's speed).
 *
 * Every insert, update or delete of a message or a folder increments its mailbox's row of
 * `mail_mailbox_versions` in the same transaction (triggers of migration
 * `mail_0007_mailbox_versions`, so no write path can forget it; the counter is never reset,
 * also not by `POST /_stratus/reset`). A read that depends only on the mailbox's messages —
 * a message by id, a page of messages without `$expand` — reads that one counter (a primary-key
 * read) and answers the text kept for the same mailbox, version and request (URL as sent,
 * origin, `Prefer` options). The versions wanted in one turn of the event loop are read in
 * one batch (`tick-batch.ts`), never shared with a request that arrived after it was sent; on
 * PostgreSQL in the turn's one statement, with the cache versions and the rate-limit counts.
 * So a write is seen by the very next read, on this instance and on every other one sharing
 * the database, and a text is never invalidated by time: none of these answers depends on
 * the clock. A live instance on PostgreSQL keeps the versions themselves in memory
 * (`core/kept-versions.ts`; the triggers notify, `mail_0008_mailbox_version_notices`), and so
 * does the embedded store (`local-versions.ts`: emptied by its own mail writes and when SQLite's
 * `data_version` says another connection committed).
 */
import { sql, type Kysely } from 'kysely';
import type { CacheHub } from '../../core/cache.ts';
import { KeyInterner } from '../../core/keys.ts';
import { param, prepared } from '../../store/prepared.ts';
import type { Database } from '../../store/database.ts';
import type { MailRequest } from './request.ts';
import { mailboxKey } from './store.ts';
import { TickBatch, turnTrip, type TripPart } from '../../core/tick-batch.ts';
import { Sightings } from '../../core/sightings.ts';
import { localMailVersions, type VersionKeeper } from './local-versions.ts';

/** Answers longer than this (UTF-8 bytes) are answered but not kept (bounds the cache's memory: {@link keptTexts} × 64 KiB). */
const maxKeptBytes = 64 * 1024;

/** How many answer texts are kept (all mailboxes of this instance). */
const keptTexts = 1000;

/**
 * The requests asked lately (mailbox, URL as sent): a text is kept only on a request's second
 * sighting (`core/sightings.ts`), so a client paging through more distinct requests than are
 * kept pays no key, no version wait and no store for them (issue 31: the 3,000 inbox page
 * variants, CPU −9 %). Twice {@link keptTexts}: a request asked again only after more first
 * sightings than that would mostly find its text evicted anyway.
 */
const sightings = new Sightings(2 * keptTexts);

/**
 * Whether this mailbox was asked for this URL (as sent) lately; remembers it when not. A page
 * or delta answer is kept only when it was (see {@link sightings}).
 */
export function askedBefore(tenantId: string, mailboxId: string, url: string): boolean {
  return sightings.again(mailboxKey(tenantId, mailboxId), url);
}

const mailboxVersion = prepared((db: Kysely<Database>) =>
  db.selectFrom('mail_mailbox_versions').select('version').where('tenant_id', '=', param(0)).where('mailbox_id', '=', param(1)),
);

/** The keys of kept texts, made once (`core/keys.ts`). */
const textKeys = new KeyInterner('\u0000');

/** Splits a batch key of a mailbox ({@link mailboxKey}: `tenant NUL mailbox`). */
const mailboxOfKey = (key: string) => key.split('\u0000') as [tenantId: string, mailboxId: string];

/**
 * The mailbox versions as a branch of the turn's PostgreSQL statement (`tick-batch.ts`):
 * tenant in `k1`, mailbox in `k2`, version in `v1`; a mailbox never written has no row.
 */
const versionPart: TripPart<string, string> = {
  branch(keys) {
    const pairs = [...keys.keys()].map((key) => {
      const [tenantId, mailboxId] = mailboxOfKey(key);
      return sql`(${tenantId}, ${mailboxId})`;
    });
    return sql`select tenant_id::text as k1, mailbox_id::text as k2, version::text as v1, null::text as v2 from mail_mailbox_versions where (tenant_id, mailbox_id) in (${sql.join(pairs)})`;
  },
  decode(rows) {
    return new Map(rows.map((r) => [mailboxKey(r.k1!, r.k2!), r.v1!]));
  },
};

/**
 * The mailbox versions read in one batch per event-loop turn (`tick-batch.ts`; on PostgreSQL in
 * the turn's one statement), per database handle; keys are `tenant NUL mailbox`.
 */
const versionBatches = new WeakMap<Kysely<Database>, TickBatch<string, string>>();
function versionBatch(db: Kysely<Database>, cache: CacheHub): TickBatch<string, string> {
  let b = versionBatches.get(db);
  if (!b) {
    b = new TickBatch(
      async (keys) => {
        const out = new Map<string, string>();
        // The embedded store's kept versions, checked fresh in this read transaction ('0': no row).
        const kept = localKept(db, cache);
        for (const key of keys.keys()) {
          const v = kept?.get(key);
          if (v !== undefined) {
            if (v !== '0') out.set(key, v);
            continue;
          }
          const ticket = kept ? kept.ticket() : -1;
          const [tenantId, mailboxId] = mailboxOfKey(key);
          const [row] = await mailboxVersion(db, tenantId, mailboxId);
          if (row) out.set(key, String(row.version));
          if (ticket >= 0) kept!.set(key, row ? String(row.version) : '0', ticket);
        }
        return out;
      },
      { trip: turnTrip(db), part: versionPart },
    );
    versionBatches.set(db, b);
  }
  return b;
}

/**
 * The embedded store's kept mailbox versions (`local-versions.ts`), fresh for the read
 * transaction open now; undefined on PostgreSQL, while a caller holds the connection, or when
 * the freshness check failed (then every version is read).
 */
function localKept(db: Kysely<Database>, cache: CacheHub): VersionKeeper | undefined {
  try {
    return localMailVersions(cache.store, db)?.current();
  } catch {
    // The read of `data_version` failed: the versions are read (their error, if any, comes there).
    return undefined;
  }
}

/**
 * A mailbox's version ('0' for a mailbox never written: undefined here): kept in memory while
 * this instance is live on PostgreSQL (`core/kept-versions.ts`: every write of the mailbox
 * notifies, and its writer answers once every live instance dropped it), else by this turn's
 * batch: on the embedded store from its kept versions when it can vouch for them
 * ({@link localKept}), else read.
 * @throws the database error of the read (also when awaited later).
 */
function readVersion(db: Kysely<Database>, cache: CacheHub, tenantId: string, mailboxId: string): string | undefined | Promise<string | undefined> {
  const key = mailboxKey(tenantId, mailboxId);
  const kept = cache.keptVersions('mail');
  const v = kept.get(key);
  if (v !== undefined) return v;
  const ticket = kept.ticket();
  const read = versionBatch(db, cache).get(key);
  if (ticket < 0) return read;
  return read.then((version) => {
    kept.set(key, version ?? '0', ticket);
    return version;
  });
}

/**
 * A mailbox's version ({@link readVersion}), asked for ahead: a request that knows its mailbox
 * before it has checked its caller asks here, so that a read joins the turn's cache-version
 * read (one round trip), and hands the result to {@link keptMailBytes} through
 * {@link MailRequest.versionAhead}.
 * @throws the database error of the read (also when awaited later).
 */
export function mailboxVersionAhead(db: Kysely<Database>, cache: CacheHub, tenantId: string, mailboxId: string): NonNullable<MailRequest['versionAhead']> {
  const version = readVersion(db, cache, tenantId, mailboxId);
  // Awaited only when the request gets that far; an error is then thrown there.
  if (version instanceof Promise) version.catch(() => undefined);
  return { tenantId, mailboxId, version };
}

/**
 * The version of the request's mailbox (`'0'` for one never written): the one asked for ahead
 * ({@link mailboxVersionAhead}) when it is the request's mailbox, else {@link readVersion}'s.
 * @throws the database error of the read
 */
export async function mailboxVersionOf(mr: MailRequest): Promise<string> {
  return (await versionRead(mr)) ?? '0';
}

/** The read of {@link mailboxVersionOf} as it comes (a value when kept: awaited once by the caller). */
function versionRead(mr: MailRequest): string | undefined | Promise<string | undefined> {
  const ahead = mr.versionAhead;
  return ahead && ahead.tenantId === mr.mb.tenantId && ahead.mailboxId === mr.mb.mailboxId ? ahead.version : readVersion(mr.ctx.store.db, mr.ctx.cache, mr.mb.tenantId, mr.mb.mailboxId);
}

/**
 * The answer of a mailbox read, as UTF-8: the one kept for this mailbox's current version and
 * this request, else `produce()`'s bytes (kept when at most {@link maxKeptBytes} long and the
 * request was asked before, {@link askedBefore}). Used by pages and delta first pages
 * (`lists.ts`, written as bytes part by part) and, on a PostgreSQL instance that is not live,
 * messages by id (`message-read.ts`, which keeps answers per message version too).
 *
 * Kept as bytes, not as a string: Node writes a string body by joining it to the head and
 * encoding the whole anew for every answer (about 4,000 instructions for a 2 KB message,
 * callgrind, bench/README.md tenth pass); a buffer goes to the socket as it is, beside the head.
 * @param what names the kind of read (part of the key).
 * @throws what `produce` throws (not kept)
 */
export async function keptMailBytes(mr: MailRequest, what: string, produce: () => Promise<Buffer>): Promise<Buffer> {
  const url = mr.req.raw.url ?? mr.req.url;
  // A first sighting is produced and not kept: no version, no key (see `sightings`).
  if (!(mr.askedBefore ?? askedBefore(mr.mb.tenantId, mr.mb.mailboxId, url))) return produce();
  const texts = mr.ctx.cache.shared<Buffer>('mail.keptTexts', 'directory', keptTexts);
  const gen = mr.ctx.cache.generation('directory');
  const version = (await versionRead(mr)) ?? '0';
  const key = textKeys.key(what, mr.ctx.origin(), mr.immutable ? 'i' : 'r', mr.bodyType ?? '', mr.maxPageSize === undefined ? '' : String(mr.maxPageSize), mailboxKey(mr.mb.tenantId, mr.mb.mailboxId), version, url);
  const kept = texts.peek(key);
  if (kept !== undefined) {
    // The request log may hold this answer by reference: the cache keeps it anyway.
    mr.ctx.requestLog.heldBody(mr.req.raw, kept);
    return kept;
  }
  const bytes = await produce();
  if (bytes.length <= maxKeptBytes) texts.set(key, bytes, gen);
  return bytes;
}
