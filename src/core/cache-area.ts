/**
 * One bounded LRU cache of a cached area (`cache.ts`: made by `CacheHub.cache` / `shared`,
 * emptied by the hub's invalidations). Kept apart from `cache.ts` for its length.
 */
import { LRUCache } from 'lru-cache';
import type { CacheArea } from './cache.ts';
import { DropLog } from './drop-log.ts';

interface Box<V> {
  v: V;
  /** The cache's {@link AreaCache} epoch when the value was stored. */
  e: number;
}

/**
 * One bounded LRU cache of an area; `undefined` results (not found) are cached too.
 *
 * Emptying is O(1): {@link clear} starts a new epoch and entries of an older one count as
 * absent (dropped when met, or evicted by recency like any other). `LRUCache.clear` fills its
 * arrays over the whole capacity, and every write empties its area's caches: that was 11 % of
 * the CPU of a 90 % read / 10 % write workload on SQLite (issue 31, bench/README.md).
 */
export class AreaCache<V> {
  private readonly lru: LRUCache<string, Box<V>>;
  private epoch = 0;
  /** Keys removed one by one ({@link delete}): a load of such a key that overlapped its removal is not stored. */
  private readonly drops = new DropLog();

  constructor(
    private readonly hub: { generation(area: CacheArea): number },
    readonly area: CacheArea,
    max: number,
  ) {
    this.lru = new LRUCache<string, Box<V>>({ max });
  }

  /** The current entry of `key`, or undefined (an entry of an older epoch is dropped). */
  private current(key: string): Box<V> | undefined {
    const hit = this.lru.get(key);
    if (hit === undefined || hit.e === this.epoch) return hit;
    this.lru.delete(key);
    return undefined;
  }

  /**
   * The cached value of `key`, or the result of `load()` (stored unless the area was
   * invalidated, or this key {@link delete}d, while it ran). Errors of `load` propagate and are
   * not cached.
   */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.current(key);
    if (hit) return hit.v;
    const gen = this.hub.generation(this.area);
    const ticket = this.drops.ticket();
    const v = await load();
    if (this.hub.generation(this.area) === gen && !this.drops.droppedSince(key, ticket)) this.lru.set(key, { v, e: this.epoch });
    return v;
  }

  /** The cached value of `key`, or undefined (no load). */
  peek(key: string): V | undefined {
    return this.current(key)?.v;
  }

  /**
   * Sets a value directly (same generation rule as {@link get}: pass the generation read before
   * loading). Not for a cache whose keys are {@link delete}d one by one: that rule is {@link get}'s.
   */
  set(key: string, v: V, gen: number): void {
    if (this.hub.generation(this.area) === gen) this.lru.set(key, { v, e: this.epoch });
  }

  /** Removes one key; a load of it under way is not stored ({@link get}). */
  delete(key: string): void {
    this.lru.delete(key);
    this.drops.drop(key);
  }

  /** A ticket of this cache's drops ({@link droppedSince}): taken when something is derived from one of its keys. */
  dropTicket(): number {
    return this.drops.ticket();
  }

  /** Whether `key` may have been {@link delete}d since `ticket` (errs only on the safe side: see `DropLog`). */
  droppedSince(key: string, ticket: number): boolean {
    return this.drops.droppedSince(key, ticket);
  }

  /** Empties the cache (O(1): a new epoch; see the class note). */
  clear(): void {
    if (this.lru.size !== 0) this.epoch++;
  }

  /** Number of entries, those of older epochs included (tests, diagnostics). */
  get size(): number {
    return this.lru.size;
  }
}
