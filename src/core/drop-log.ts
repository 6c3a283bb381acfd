/**
 * Which keys of a cache were dropped while a load of one of them ran (issue 31: keyed
 * invalidation that does not cost every other load its store).
 *
 * A cache whose entries are dropped one key at a time (the keyed tables' rows, a mailbox's or a
 * message's kept version) must not store a value read before a drop of its key and returned
 * after it. Counting every drop against every load (one generation for the whole cache) keeps
 * that rule but also throws away loads of other keys: in the 90/10 mix on PostgreSQL a webhook
 * `PUT` arrives every few milliseconds and most webhook loads overlapped one, so the row cache
 * missed on ~60 % of reads. This log remembers the last {@link size} dropped keys in a ring: a
 * load takes a {@link ticket} before it reads and asks {@link droppedSince} before it stores.
 * The answer errs only on the safe side (true when the ring has wrapped since the ticket, or the
 * cache was cleared).
 */
export class DropLog {
  private readonly keys: (string | undefined)[];
  /** Drops and clears so far; a ticket is this count when it was taken. */
  private n = 0;
  /** The count right after the last {@link clear}: tickets below it overlapped a clear. */
  private clearedAt = 0;

  /** @param size how many dropped keys are remembered (a load overlapping more drops than this is not stored) */
  constructor(private readonly size = 256) {
    this.keys = new Array<string | undefined>(size);
  }

  /** Taken before a load reads its value. */
  ticket(): number {
    return this.n;
  }

  /** `key` was dropped (its stored value, and any value read before now, is out of date). */
  drop(key: string): void {
    this.keys[this.n % this.size] = key;
    this.n++;
  }

  /** Every key was dropped. */
  clear(): void {
    this.keys[this.n % this.size] = undefined;
    this.clearedAt = ++this.n;
  }

  /**
   * Whether `key` may have been dropped since `ticket` was taken: true when it was, when the
   * cache was cleared, or when more drops than the ring holds happened; O(drops since the ticket).
   */
  droppedSince(key: string, ticket: number): boolean {
    const n = this.n;
    if (ticket === n) return false;
    if (ticket < this.clearedAt || n - ticket > this.size) return true;
    for (let i = ticket; i < n; i++) if (this.keys[i % this.size] === key) return true;
    return false;
  }
}
