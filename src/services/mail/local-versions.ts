/**
 * Mailbox versions kept in memory by the embedded store (SQLite), so that a message GET or a
 * page reads its mailbox's version without a statement (issue 31: a primary-key read of
 * `mail_mailbox_versions` per request was 5–8 % of a message GET's CPU among 10,000 distinct
 * messages). PostgreSQL keeps them while live instead (`core/kept-versions.ts`, by notification).
 *
 * A mailbox's version moves only by the triggers of `mail_messages` and `mail_folders` (and
 * writes of `mail_mailbox_versions` itself), so a kept version is right until
 * - **this process writes a mail table**: every write statement whose text names a `mail_`
 *   table (but those without version triggers: {@link unversioned}) empties the kept versions
 *   before it runs (`Store.watchWrites`; the statement hook sees every statement of the store's
 *   connection, Kysely's and the direct ones alike);
 * - **another connection commits** (the `stratus seed` bulk generators, another process on the
 *   same file): SQLite's `data_version` moves. It is read once per shared read transaction
 *   (`store/read-snapshot.ts`), inside it, before a kept version is used; when it moved since
 *   the last look, the kept versions are emptied. So a kept version is never older than what a
 *   read in the same read transaction would return.
 * A read of a version that overlapped an emptying is not kept ({@link VersionKeeper.ticket}). While a
 * caller holds the connection (a transaction between its statements) nothing is used or kept:
 * the read goes through Kysely and waits its turn, as before.
 *
 * **Message versions.** The same rules vouch for a message's version (row key and change key)
 * read by id (`message-read.ts`), without its mailbox's version: a version read in the current
 * {@link LocalMailVersions.epoch} (the count of emptyings of everything) is the stored one
 * unless the read-state PATCH wrote that row since ({@link LocalMailVersions.holds}). Before,
 * each such PATCH moved its mailbox's version and so made every message of the mailbox be read
 * again (issue 31: 90/10 mix, a row-key read on nearly every message GET).
 */
import type { Kysely } from 'kysely';
import type { Store } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';
import { directConnection, type DirectReader } from '../../store/prepared.ts';

/** The mail tables a write text names. */
const mailTables = /\bmail_[a-z_]+/gi;

/**
 * Mail tables whose writes move no mailbox's or message's version: no trigger of theirs writes
 * `mail_messages`, `mail_folders` or `mail_mailbox_versions` (the change-notification worker's
 * cursor and queue, the subscriptions, the change log). Before, the worker's cursor update
 * (every few ms under writes) emptied every kept version. Any other mail table empties them
 * (the cheap, safe side).
 */
const unversioned = new Set(['mail_sync_state', 'mail_notifications', 'mail_subscriptions', 'mail_subscription_members', 'mail_changes']);

/** Whether a write text names a mail table that may move a version. */
function movesVersions(text: string): boolean {
  for (const name of text.match(mailTables) ?? []) if (!unversioned.has(name.toLowerCase())) return true;
  return false;
}

/** `data_version` as a select, so it runs inside the shared read transaction. */
const dataVersionSql = 'select data_version as v from pragma_data_version';

/** Mailboxes whose version is kept (an entry is a short text: the key and the version); past it, all are dropped. */
const keptMailboxes = 50_000;

/** Kept versions by mailbox key (`tenant NUL mailbox`), as `KeptVersions` of `core/kept-versions.ts` offers them. */
export interface VersionKeeper {
  /** The kept version of `key`, if any. */
  get(key: string): string | undefined;
  /** Taken before a read of a version: {@link set} keeps it only when nothing was emptied since. */
  ticket(): number;
  set(key: string, version: string, ticket: number): void;
}

/**
 * The kept mailbox versions of one embedded store (see the module note). Emptying is O(1): a
 * write of every PATCH empties them, so the map is replaced, never cleared entry by entry.
 */
export class LocalMailVersions implements VersionKeeper {
  private kept = new Map<string, string>();
  /** Incremented by every emptying and every drop: a read's ticket. */
  private emptied = 0;
  /** Incremented by every emptying of everything (not by the drop of one mailbox): a message version's epoch. */
  private emptiedAll = 0;
  /** Row key → the ticket right after the read-state write of that message row, in this epoch. */
  private written = new Map<number, number>();
  /** The read transaction in which `data_version` was last read (0: never), and what it was. */
  private checkedIn = 0;
  private dataVersion: number | undefined;

  constructor(private readonly reader: DirectReader) {}

  /** The mailbox of the write running in {@link within}, if one is. */
  private scope: string | undefined;

  /**
   * A write statement of this process (before it runs) that names a mail table: drops the
   * mailbox of {@link within}'s write, else empties the kept versions.
   */
  wrote(text: string): void {
    if (!movesVersions(text)) return;
    if (this.scope === undefined) return this.empty();
    this.emptied++;
    this.kept.delete(this.scope);
  }

  /**
   * Runs `write`, a synchronous write that moves no mailbox's version but `key`'s (the read-state
   * PATCH of `writes.ts`: the message row `pk` and the change log), dropping only `key`'s version
   * and the message version of `pk` ({@link holds}).
   */
  within<T>(key: string, pk: number, write: () => T): T {
    const outer = this.scope;
    this.scope = key;
    try {
      return write();
    } finally {
      this.scope = outer;
      // After the write (also a failed one): a read whose ticket is older does not hold.
      if (this.written.size >= keptMailboxes) this.empty();
      this.written.set(pk, ++this.emptied);
    }
  }

  /** The current epoch of message versions ({@link holds}): taken before the read of a version, with a {@link ticket}. */
  epoch(): number {
    return this.emptiedAll;
  }

  /**
   * Whether the version of message row `pk` read in `epoch` with `ticket` (both taken before the
   * read) is still the stored one: nothing was emptied since, and the read-state PATCH did not
   * write that row after the ticket. Call on the keeper {@link current} returned.
   */
  holds(epoch: number, ticket: number, pk: number): boolean {
    return epoch === this.emptiedAll && (this.written.get(pk) ?? 0) <= ticket;
  }

  get(key: string): string | undefined {
    return this.kept.get(key);
  }

  ticket(): number {
    return this.emptied;
  }

  set(key: string, version: string, ticket: number): void {
    if (ticket !== this.emptied) return;
    if (this.kept.size >= keptMailboxes) this.empty();
    this.kept.set(key, version);
  }

  private empty(): void {
    this.emptied++;
    this.emptiedAll++;
    if (this.kept.size) this.kept = new Map();
    if (this.written.size) this.written = new Map();
  }

  /**
   * The kept versions, fresh for the shared read transaction open now (opened here when none
   * is), or undefined while a caller holds the connection (then read the version as before).
   * @throws the database error of the `data_version` read
   */
  current(): VersionKeeper | undefined {
    const reader = this.reader;
    if (reader.busy()) return undefined;
    const open = reader.snapshot();
    if (open === 0 || open !== this.checkedIn) {
      const [row] = reader.statement(dataVersionSql).all([]) as { v: number }[];
      const now = reader.snapshot();
      // No shared read transaction (the statement ran on its own): nothing can be vouched for.
      if (now === 0) return undefined;
      if (row?.v !== this.dataVersion) {
        if (this.dataVersion !== undefined) this.empty();
        this.dataVersion = row?.v;
      }
      this.checkedIn = now;
    }
    return this;
  }
}

const byDb = new WeakMap<object, LocalMailVersions | null>();

/**
 * The {@link LocalMailVersions} of `store` (made on first use; it then watches the store's
 * writes), or undefined on PostgreSQL or when `db` is not the store's root handle.
 */
export function localMailVersions(store: Store, db: Kysely<Database>): LocalMailVersions | undefined {
  let v = byDb.get(db);
  if (v === undefined) {
    const reader = store.dialect === 'sqlite' && store.db === db ? directConnection(db) : undefined;
    v = reader ? new LocalMailVersions(reader) : null;
    if (v) {
      const kept = v;
      store.watchWrites((text) => kept.wrote(text));
    }
    byDb.set(db, v);
  }
  return v ?? undefined;
}

/**
 * The {@link LocalMailVersions} of `store` fresh for the read transaction open now
 * ({@link LocalMailVersions.current}), or undefined on PostgreSQL, while a caller holds the
 * connection, or when the freshness check failed (then nothing kept may be used).
 */
export function freshLocalVersions(store: Store, db: Kysely<Database>): LocalMailVersions | undefined {
  const v = localMailVersions(store, db);
  try {
    return v?.current() === undefined ? undefined : v;
  } catch {
    // The read of `data_version` failed: nothing is vouched for.
    return undefined;
  }
}

/**
 * Runs `write` ({@link LocalMailVersions.within}) on the embedded store whose root handle is
 * `db`: a synchronous write that moves only the version of mailbox `key` (`tenant NUL mailbox`)
 * and of its message row `pk`. Elsewhere it just runs `write`.
 */
export function writingMailbox<T>(db: Kysely<Database>, key: string, pk: number, write: () => T): T {
  const v = byDb.get(db);
  return v ? v.within(key, pk, write) : write();
}
