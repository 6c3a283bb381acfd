/**
 * What is derived from named rows of keyed tables, and when it is still current (issue 31: kept
 * ARM answers that outlive writes of other rows; `CacheHub.keyed`, `services/arm/kernel.ts`).
 *
 * A keyed table's write drops only the cache entries of the keys it wrote (`cache-tables.ts`
 * `keyed`; the drops are remembered by `drop-log.ts`). Something derived from whole cache areas
 * and from named keys of such tables is current while no area was invalidated (the hub's
 * `areaEpoch`) and none of those keys was dropped since it was derived. Besides:
 * - on SQLite, this instance's own keyed writes are dropped by the next version read, which
 *   reads the key log (`cache-keys.ts`): until a read sent after the last of them is applied,
 *   nothing derived counts as current;
 * - on PostgreSQL only while live: a keyed write's keys are notified in its transaction, and its
 *   writer answers after its own marker came back, so after every notification committed before
 *   it was applied here (and, for another instance's write, after this one acknowledged it);
 *   entering or leaving live mode invalidates every area. An instance that is not live derives
 *   nothing current here (the hub's `epoch` alone decides).
 */
import type { AreaCache } from './cache-area.ts';

/** A key of a named cache something was derived from, with that cache's drop ticket then ({@link KeyedDependencies.current}). */
export interface KeyDependency {
  /** The named cache (`CacheHub.shared`; a keyed table's cache, `cache-tables.ts`). */
  cache: string;
  key: string;
  ticket: number;
}

/** One hub's bookkeeping of keyed dependencies (see the module note). */
export class KeyedDependencies {
  /** SQLite: this instance's writes of keyed tables so far. */
  private ownWrites = 0;
  /** SQLite: how many of {@link ownWrites} an applied version read has dropped the keys of. */
  private applied = 0;
  /** SQLite: {@link ownWrites} when the last version read was sent (applied with it: no other read is sent before it is). */
  private sent = 0;

  /**
   * @param named the hub's named cache called `name`, if made
   * @param mode `live` (PostgreSQL, live), `key-log` (SQLite) or `none` (nothing derived is current)
   * @param keyedCaches the names of the keyed tables' caches
   */
  constructor(
    private readonly named: (name: string) => AreaCache<unknown> | undefined,
    private readonly mode: () => 'live' | 'key-log' | 'none',
    private readonly keyedCaches: readonly string[],
  ) {}

  /** SQLite: this instance wrote a keyed table (its keys are dropped by a later version read). */
  ownWrite(): void {
    this.ownWrites++;
  }

  /** SQLite: a version read is being sent now (it sees every write committed so far). */
  readSent(): void {
    this.sent = this.ownWrites;
  }

  /** SQLite: the version read last sent has been applied (its key-log entries dropped). */
  readApplied(): void {
    if (this.sent > this.applied) this.applied = this.sent;
  }

  /**
   * Whether something derived at `areaEpoch` (the hub's then; `now` is the hub's now) from whole
   * areas and the keys `deps` is still current (see the module note); {@link unchanged} moves the
   * tickets of `deps` up. Call it after the hub's `sync`.
   */
  current(areaEpoch: number, now: number, deps: KeyDependency[]): boolean {
    const mode = this.mode();
    if (mode === 'none' || (mode === 'key-log' && this.applied !== this.ownWrites)) return false;
    return this.unchanged(areaEpoch, now, deps);
  }

  /**
   * Whether no area was invalidated since `areaEpoch` (`now` is the hub's now) and none of the
   * keys `deps` was dropped since its ticket. Each ticket found so is moved up to now (nothing of
   * its key was dropped up to now), so that a value used often is checked against the drops
   * since its last use only.
   */
  unchanged(areaEpoch: number, now: number, deps: KeyDependency[]): boolean {
    if (areaEpoch !== now) return false;
    for (const d of deps) {
      const c = this.named(d.cache);
      if (c === undefined || c.droppedSince(d.key, d.ticket)) return false;
      d.ticket = c.dropTicket();
    }
    return true;
  }

  /** The drop tickets of the keyed tables' caches now, by cache name (a cache not made yet has none): taken before something is derived from their rows. */
  tickets(): Map<string, number> {
    const out = new Map<string, number>();
    for (const name of this.keyedCaches) {
      const c = this.named(name);
      if (c !== undefined) out.set(name, c.dropTicket());
    }
    return out;
  }
}
