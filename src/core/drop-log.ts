/**
 * Which keys of a cache were dropped while a load of one of them ran (issue 31: keyed
 * invalidation that does not cost every other load its store).
 *
 * A cache whose entries are dropped one key at a time (the keyed tables' rows, a mailbox's or a
 * message's kept version) must not store a value read before a drop of its key and returned
 * after it. Counting every drop against every load (one generation for the whole cache) keeps
 * that rule but also throws away loads of other keys: in the 90/10 mix on PostgreSQL a webhook
 * `PUT` arrives every few milliseconds and most webhook loads overlapped one, so the row cache
 * missed on ~60 % of reads. This log remembers, for each of the last dropped keys (at most
 * {@link size} of them), when it was last dropped: a load takes a {@link ticket} before it reads
 * and asks {@link droppedSince} before it stores, in O(1). The answer errs only on the safe side
 * (true when the log was emptied since the ticket, by a {@link clear} or by reaching its size).
 * Also what kept ARM answers check their keyed rows against (`core/cache-keyed.ts`).
 */
export class DropLog {
  /** When each remembered key was last dropped (the drop count then). */
  private readonly last = new Map<string, number>();
  /** Drops and clears so far; a ticket is this count when it was taken. */
  private n = 0;
  /** The count right after the log was last emptied: tickets below it overlapped that. */
  private clearedAt = 0;

  /** @param size how many dropped keys are remembered (past that the log starts empty again, and every load under way counts as overlapping a drop) */
  constructor(private readonly size = 16_384) {}

  /** Taken before a load reads its value. */
  ticket(): number {
    return this.n;
  }

  /** `key` was dropped (its stored value, and any value read before now, is out of date). */
  drop(key: string): void {
    if (this.last.size >= this.size && !this.last.has(key)) {
      this.last.clear();
      this.clearedAt = this.n + 1;
    }
    this.last.set(key, this.n);
    this.n++;
  }

  /** Every key was dropped. */
  clear(): void {
    this.last.clear();
    this.clearedAt = ++this.n;
  }

  /**
   * Whether `key` may have been dropped since `ticket` was taken: true when it was, or when the
   * log was emptied since (a {@link clear}, or more distinct keys dropped than it remembers); O(1).
   */
  droppedSince(key: string, ticket: number): boolean {
    if (ticket === this.n) return false;
    if (ticket < this.clearedAt) return true;
    const at = this.last.get(key);
    return at !== undefined && at >= ticket;
  }
}
