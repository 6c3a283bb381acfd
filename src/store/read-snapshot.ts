/**
 * One read transaction per event-loop turn for the embedded store's direct reads (issue 31).
 *
 * In WAL mode a statement run outside a transaction opens and closes a read transaction of its
 * own: two `fcntl` calls on the database file's locks and an `fstat`, about 6 µs — a
 * primary-key read of `mail_mailbox_versions` measured 7.4 µs alone against 1.1 µs inside a
 * transaction (bench/README.md, "bench:real — third pass"). A message GET runs two such reads,
 * a page two, so that was a fifth of a request's CPU. Here the direct reads of one turn
 * (`store/prepared.ts` `runTemplate` on a free connection) share one read transaction: the
 * first opens it (`begin`, deferred: the read lock is taken by its first select), and it ends
 * - before any other statement on the connection: every statement that is not a `select` —
 *   a write, `begin` of a Kysely transaction, a pragma, `VACUUM INTO` — ends it first
 *   ({@link ReadSnapshot.beforeStatement}), so a write of this process is seen by the very
 *   next read, and writes never run inside it;
 * - at the end of the turn (`setImmediate`), and at the latest 1 ms after it opened (a timer,
 *   for a snapshot opened in the check phase while the loop then waits for I/O), so a write
 *   another process commits is seen by a read that starts 1 ms later at most.
 * Selects that Kysely runs while it is open join it (they would see the same rows).
 */
import type SQLite from 'better-sqlite3';
import type { DirectStatement } from './prepared.ts';

/** Where a statement text is a plain select (may join the open snapshot). */
const selectText = /^\s*select\b/i;

/** The shared read transaction of one SQLite connection (see the module note). */
export class ReadSnapshot {
  private open = false;
  private scheduled = false;
  private readonly begin: SQLite.Statement;
  private readonly commit: SQLite.Statement;
  private readonly timer: NodeJS.Timeout;

  /** @param database the store's connection (WAL mode). */
  constructor(private readonly database: SQLite.Database) {
    this.begin = database.prepare('begin');
    this.commit = database.prepare('commit');
    this.timer = setTimeout(() => this.end(), 1);
    // Never cleared (a cleared timer cannot be refreshed): when it fires with nothing open it does nothing.
    this.timer.unref();
  }

  /** Read transactions opened so far: the number of the open one is {@link current}. */
  private opened = 0;

  /** The number of the open read transaction (they are numbered from 1 as they open), 0 when none is open. */
  current(): number {
    return this.open ? this.opened : 0;
  }

  /** Before a direct read: opens the turn's read transaction when none is open (and no other transaction is). */
  enter(): void {
    if (this.open || this.database.inTransaction) return;
    this.begin.run();
    this.open = true;
    this.opened++;
    this.timer.refresh();
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.closeAtTurnEnd);
    }
  }

  /** Before a statement of text `text` is prepared to run: ends the snapshot unless it is a select. */
  beforeStatement(text: string): void {
    if (this.open && !selectText.test(text)) this.end();
  }

  /** Ends the snapshot if open (a read-only transaction: its commit writes nothing). */
  end(): void {
    if (!this.open) return;
    this.open = false;
    if (this.database.inTransaction) this.commit.run();
  }

  private readonly closeAtTurnEnd = (): void => {
    this.scheduled = false;
    this.end();
  };
}

/** Direct statements by the statement they run (one wrapper each). */
const snapshotted = new WeakMap<object, DirectStatement>();

/**
 * A direct statement whose reads run in the turn's shared read transaction ({@link ReadSnapshot}).
 * Its other statements ended the snapshot when they were prepared (`cachingSqlite`).
 */
export function inSnapshot(stmt: DirectStatement & { reader: boolean }, snapshot: ReadSnapshot): DirectStatement {
  if (!stmt.reader) return stmt;
  let s = snapshotted.get(stmt);
  if (s === undefined) {
    s = {
      get busy() {
        return stmt.busy;
      },
      all(parameters) {
        snapshot.enter();
        return stmt.all(parameters);
      },
      run(parameters) {
        snapshot.enter();
        return stmt.run(parameters);
      },
    };
    snapshotted.set(stmt, s);
  }
  return s;
}
