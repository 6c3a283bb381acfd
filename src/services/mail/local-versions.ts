/**
 * Mailbox versions kept in memory by the embedded store (SQLite), so that a message GET or a
 * page reads its mailbox's version without a statement (issue 31: a primary-key read of
 * `mail_mailbox_versions` per request was 5–8 % of a message GET's CPU among 10,000 distinct
 * messages). PostgreSQL keeps them while live instead (`core/kept-versions.ts`, by notification).
 *
 * A mailbox's version moves only by the triggers of `mail_messages` and `mail_folders` (and
 * writes of `mail_mailbox_versions` itself), so a kept version is right until
 * - **this process writes a mail table**: every write statement whose text names a `mail_`
 *   table empties the kept versions before it runs (`Store.watchWrites`; the statement hook
 *   sees every statement of the store's connection, Kysely's and the direct ones alike);
 * - **another connection commits** (the `stratus seed` bulk generators, another process on the
 *   same file): SQLite's `data_version` moves. It is read once per shared read transaction
 *   (`store/read-snapshot.ts`), inside it, before a kept version is used; when it moved since
 *   the last look, the kept versions are emptied. So a kept version is never older than what a
 *   read in the same read transaction would return.
 * A read of a version that overlapped an emptying is not kept (`KeptVersions` tickets). While a
 * caller holds the connection (a transaction between its statements) nothing is used or kept:
 * the read goes through Kysely and waits its turn, as before.
 */
import type { Kysely } from 'kysely';
import type { Store } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';
import { directConnection, type DirectReader } from '../../store/prepared.ts';
import { KeptVersions } from '../../core/kept-versions.ts';

/** Write texts that may move a mailbox's version (any mail table: the cheap, safe side). */
const mailTable = /\bmail_/i;

/** `data_version` as a select, so it runs inside the shared read transaction. */
const dataVersionSql = 'select data_version as v from pragma_data_version';

/** Mailboxes whose version is kept (an entry is a short text: the key and the version). */
const keptMailboxes = 50_000;

/** The kept mailbox versions of one embedded store (see the module note). */
export class LocalMailVersions {
  private readonly kept = new KeptVersions<string>(() => true, keptMailboxes);
  /** The read transaction in which `data_version` was last read (0: never), and what it was. */
  private checkedIn = 0;
  private dataVersion: number | undefined;

  constructor(private readonly reader: DirectReader) {}

  /** A write statement of this process (before it runs): empties the kept versions when it names a mail table. */
  wrote(text: string): void {
    if (mailTable.test(text)) this.kept.clear();
  }

  /**
   * The kept versions, fresh for the shared read transaction open now (opened here when none
   * is), or undefined while a caller holds the connection (then read the version as before).
   * @throws the database error of the `data_version` read
   */
  current(): KeptVersions<string> | undefined {
    const reader = this.reader;
    if (reader.busy()) return undefined;
    const open = reader.snapshot();
    if (open === 0 || open !== this.checkedIn) {
      const [row] = reader.statement(dataVersionSql).all([]) as { v: number }[];
      const now = reader.snapshot();
      // No shared read transaction (the statement ran on its own): nothing can be vouched for.
      if (now === 0) return undefined;
      if (row?.v !== this.dataVersion) {
        if (this.dataVersion !== undefined) this.kept.clear();
        this.dataVersion = row?.v;
      }
      this.checkedIn = now;
    }
    return this.kept;
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
