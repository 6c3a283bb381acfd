/**
 * Versions of keyed rows (one per mailbox) kept in memory while this instance is live on
 * PostgreSQL (`cache-presence.ts`), so that a read keyed by such a version needs no read of it
 * (issue 9: mail GET at the framework's speed on PostgreSQL too).
 *
 * A write of such a row notifies every instance with the entry `<name>:<tenant>/<id>` (or
 * `<name>` alone for many rows, or ids holding other characters than `[A-Za-z0-9._@-]`), from
 * a trigger in the write's transaction, so no write path can forget it; its writer then sends a
 * marker (`cache-presence.ts`) and answers once every live instance acknowledged the marker, that is,
 * applied the write's notification. The notification drops the kept version ({@link drop}).
 *
 * A version is kept only when it was read while live and no notification dropping its key (or
 * all of the name) arrived while it was read ({@link ticket}, `drop-log.ts`); it is used only
 * while live. Leaving or entering live mode empties it. In a PostgreSQL instance that is not live
 * nothing is kept: every read reads the version (one statement per turn). The embedded store
 * (SQLite) keeps mailbox versions with its own rule (`services/mail/local-versions.ts`).
 */
import { LRUCache } from 'lru-cache';
import { DropLog } from './drop-log.ts';

/** One name's kept versions: a bounded LRU from key (`tenant NUL id`) to version (a text unless the name keeps more). */
export class KeptVersions<V extends {} = string> {
  private readonly lru: LRUCache<string, V>;
  /** The keys dropped lately: a read that overlapped a drop of its key (or a clear) is not kept. */
  private readonly drops = new DropLog();

  /**
   * @param live whether the instance is live now (`CacheHub.live`)
   * @param max the number of keys kept (least recently used dropped first)
   */
  constructor(
    private readonly live: () => boolean,
    max: number,
  ) {
    this.lru = new LRUCache<string, V>({ max });
  }

  /** The kept version of `key` while live, else undefined (then read it, and {@link set} it with a {@link ticket} taken before the read). */
  get(key: string): V | undefined {
    return this.lru.size && this.live() ? this.lru.get(key) : undefined;
  }

  /** Taken before a read of a version: -1 when not live (nothing will be kept). */
  ticket(): number {
    return this.live() ? this.drops.ticket() : -1;
  }

  /** Keeps `version` of `key` when `key` was not dropped (nor everything cleared) since `ticket` was taken and the instance is still live. */
  set(key: string, version: V, ticket: number): void {
    if (ticket >= 0 && this.live() && !this.drops.droppedSince(key, ticket)) this.lru.set(key, version);
  }

  /** A notification named `key` (`tenant NUL id`): its version moved. */
  drop(key: string): void {
    this.drops.drop(key);
    this.lru.delete(key);
  }

  /** Empties it (a notification of many keys; entering or leaving live mode). */
  clear(): void {
    this.drops.clear();
    this.lru.clear();
  }
}

/**
 * The key of a notification entry's `<tenant>/<id>` part: `tenant NUL id` (ids in such an
 * entry never hold `/`: the trigger names the whole set instead).
 */
export function keyOfEntry(entry: string): string {
  const slash = entry.indexOf('/');
  return entry.slice(0, slash) + '\u0000' + entry.slice(slash + 1);
}
