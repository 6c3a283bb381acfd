/**
 * SQLite: the key log of keyed cached tables as the hub reads it (issue 31: a webhook write
 * dropped every cached webhook row, so the row cache of the 90/10 mix missed on nearly every
 * read).
 *
 * A keyed table's triggers (`cache-tables.ts` `sqliteKeyedTrigger`) append `#<cache>|<key>` of
 * each written row to `stratus_cache_keys` and bump the `#keys` version row, in the write's
 * transaction, whichever process writes. When `CacheHub.sync` finds `#keys` moved it reads the
 * entries after the last one it read, and drops only those cache entries. The log keeps its
 * last 1,000 entries: a reader that finds the sequence broken (entries deleted before it read
 * them, or a table that went back) is told so and drops the keyed areas whole.
 */
import type { Kysely } from 'kysely';
import { param, prepared } from '../store/prepared.ts';
import type { CacheDatabase } from './tables.ts';

const entriesAfter = prepared((db: Kysely<CacheDatabase>) => db.selectFrom('stratus_cache_keys').select(['seq', 'entry']).where('seq', '>', param<number>(0)).orderBy('seq'));
const lastSeq = prepared((db: Kysely<CacheDatabase>) => db.selectFrom('stratus_cache_keys').select((eb) => eb.fn.max('seq').as('seq')));

/** The reading position of one hub in `stratus_cache_keys` (see the module note). */
export class KeyLog {
  /** The last sequence number read; undefined before {@link restart}. */
  private last: number | undefined;
  /** Reads run one after the other (each starts where the one before ended). */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: Kysely<CacheDatabase>) {}

  /** Starts reading after the newest entry (the caller dropped every area, keyed ones included). */
  restart(): Promise<void> {
    return this.serial(async () => {
      this.last = await this.newest();
    });
  }

  /**
   * The entries written since the last read (`#<cache>|<key>`, possibly repeated).
   * @returns undefined when some may be missing (none read yet, entries deleted before they were read, or the log went back): drop the keyed areas whole.
   * @throws the database error of the read.
   */
  read(): Promise<string[] | undefined> {
    return this.serial(async () => {
      const from = this.last;
      if (from === undefined) {
        this.last = await this.newest();
        return undefined;
      }
      const rows = await entriesAfter(this.db, from);
      if (!rows.length) {
        const newest = await this.newest();
        if (newest >= from) return [];
        this.last = newest;
        return undefined;
      }
      this.last = Number(rows[rows.length - 1]!.seq);
      if (Number(rows[0]!.seq) !== from + 1) return undefined;
      return rows.map((r) => r.entry);
    });
  }

  private async newest(): Promise<number> {
    const [r] = await lastSeq(this.db);
    return Number(r?.seq ?? 0);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => undefined);
    return p;
  }
}
