/**
 * A doorkeeper for caches of answers (issue 31: fast on real workloads).
 *
 * A cache of answers keyed by request pays on every miss: the key is built, the answer stored,
 * and a kept answer evicted (garbage for the collector). When clients ask many different
 * requests in turn — a client paging through folders with varied options, more distinct
 * requests than the cache holds — almost nothing is asked again before it is evicted, and the
 * cache is pure cost: the 3,000 inbox page variants of `bench:real` cost 9 % more CPU with the
 * 1,000-answer kept-text cache than without it. A {@link Sightings} remembers which requests
 * were asked lately, and a cache keeps an answer only for a request asked before (its second
 * sighting): a client that repeats a request (polling one folder) gets it kept from its
 * second time on, one that never repeats pays one `Set` look-up.
 */

/**
 * The requests asked lately: `(group, key)` pairs, grouped (a mailbox, say) so that the key can
 * be the request's URL as sent. Bounded: after `max` pairs it starts again empty, so a request
 * counts as asked before when fewer than `max` other first sightings came between (sized at
 * twice the cache it guards, a request asked again after that would mostly find its answer
 * evicted anyway).
 */
export class Sightings {
  private groups = new Map<string, Set<string>>();
  private count = 0;

  /** @param max pairs remembered before the table starts again empty */
  constructor(private readonly max: number) {}

  /**
   * Whether `(group, key)` was asked since the table last started again; when not, it is
   * remembered now (the next call answers true).
   */
  again(group: string, key: string): boolean {
    let keys = this.groups.get(group);
    if (keys === undefined) this.groups.set(group, (keys = new Set()));
    else if (keys.has(key)) return true;
    if (this.count >= this.max) {
      this.groups.clear();
      this.groups.set(group, (keys = new Set()));
      this.count = 0;
    }
    keys.add(key);
    this.count++;
    return false;
  }
}
