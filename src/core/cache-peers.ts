/**
 * What one live instance knows in memory of the others (PostgreSQL, `cache-presence.ts`; issue 31
 * item 3): which instances hold a lease, and up to which of this instance's markers each has
 * acknowledged. A writer waits here — no statement, no pool connection — until every known
 * instance acknowledged its marker.
 *
 * Also the protocol's options and channel name, shared with `cache-presence.ts`.
 *
 * **An instance is live** while its connection is up, its lease — measured on its own monotonic
 * clock from before the renewing statement was sent, less a margin — runs, and it has seen its
 * own latest join. A writer that does not know an instance B saw its marker before B's join, so
 * B, listening since before it registered and emptying its caches then, applied the write
 * before it is live; a renewal that finds the lease had run out (others may have dropped it)
 * joins again.
 *
 * **How a peer becomes known and is dropped** (the safety argument is the paragraph above):
 * - known: listed by this instance's registration or heartbeat (rows of `stratus_instances`
 *   whose lease runs), or announced by its join notification (`j <id> <k>`);
 * - a peer that becomes known *covers* every marker of this instance already seen on the
 *   listening connection (its join notification comes after them in the one notification
 *   queue, so it applied what they confirm before it is live), and must acknowledge later ones;
 * - dropped: by its leave notification, or when a heartbeat sent after the peer was last seen
 *   does not list it (its lease ran out on the database's clock, so it stopped trusting its
 *   caches first and must join again before it is live).
 */

import type { SignalRelay } from './cache-bus.ts';

/** Options of `CachePresence` (`cache-presence.ts`). */
export interface PresenceOptions {
  /** `postgres://…` of the store. */
  databaseUrl: string;
  /** PostgreSQL schema of the store. */
  databaseSchema?: string;
  /** Lease length, ms (`STRATUS_INSTANCE_LEASE_MS`); renewed every third of it. */
  leaseMs: number;
  /** Applies a notification's entries (`undefined`: every cache, on entering and leaving live mode). */
  invalidate: (entries: string[] | undefined) => void;
  /** Called with errors of the dedicated connection (logged by the caller). */
  onError?: (e: unknown) => void;
  /**
   * The signal bus to relay (`cache-bus.ts`): the connection also `LISTEN`s on the bus's channel
   * and hands its notifications over, so an instance holds one listening connection.
   */
  signals?: SignalRelay;
}

/** The ms taken off a lease on this side (the statement's trip, timer lateness). */
export const leaseMargin = (leaseMs: number) => Math.min(1000, Math.floor(leaseMs / 4));

/** The prefix of the notification channel; the schema's name follows. */
export const presenceChannelPrefix = 'stratus_cache_';
/** The channel of the store's schema. */
export const presenceChannel = (schema: string) => presenceChannelPrefix + schema;
/** As SQL text: the channel of the connection's schema. */
export const presenceChannelSql = `'${presenceChannelPrefix}' || current_schema()`;
/** As SQL text: the database clock in ms since the epoch (`lease_until` is stored so). */
export const dbNowSql = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** One other instance. */
interface Peer {
  /** Highest marker of this instance it acknowledged (or covers). */
  acked: number;
  /** `performance.now()` by which its lease ends as last learned (a wait past it reads the leases again). */
  until: number;
  /** `performance.now()` when it was last listed or announced. */
  seenAt: number;
}

interface Waiter {
  k: number;
  resolve: (ok: boolean) => void;
}

/** The peers of one listening connection (made anew on every connection). */
export class PeerView {
  private readonly peers = new Map<string, Peer>();
  private waiters: Waiter[] = [];

  /** @param ownSeen the highest marker of this instance seen on the listening connection (read when a peer becomes known). */
  constructor(private readonly ownSeen: () => number) {}

  /** How many peers are known. */
  get size(): number {
    return this.peers.size;
  }

  /** The ids of the known peers (tests, diagnostics). */
  ids(): string[] {
    return [...this.peers.keys()];
  }

  /**
   * A peer listed with `remainingMs` of lease (registration, heartbeat) or announced by its
   * join (`join`: it covers every marker seen so far, also when known before).
   */
  seen(id: string, remainingMs: number, join = false): void {
    const now = performance.now();
    const p = this.peers.get(id);
    if (!p) this.peers.set(id, { acked: this.ownSeen(), until: now + remainingMs, seenAt: now });
    else {
      p.until = Math.max(p.until, now + remainingMs);
      p.seenAt = now;
      if (join) p.acked = Math.max(p.acked, this.ownSeen());
    }
    if (join || !p) this.check();
  }

  /**
   * A heartbeat's list (ids with their remaining lease) from a statement sent at `sentAt`: the
   * peers it lists are refreshed or added; a known peer it does not list, and not seen since
   * the statement was sent, is dropped.
   */
  listed(rows: { id: string; remaining: number }[], sentAt: number): void {
    const ids = new Set<string>();
    for (const r of rows) {
      ids.add(r.id);
      this.seen(r.id, r.remaining);
    }
    for (const [id, p] of this.peers) if (!ids.has(id) && p.seenAt < sentAt) this.peers.delete(id);
    this.check();
  }

  /** A peer left (its leave notification). */
  drop(id: string): void {
    if (this.peers.delete(id)) this.check();
  }

  /** A peer acknowledged this instance's markers up to `k`. */
  acked(id: string, k: number): void {
    const p = this.peers.get(id);
    if (p && k > p.acked) {
      p.acked = k;
      this.check();
    }
  }

  /** Whether every known peer acknowledged (or covers) marker `k`. */
  confirmed(k: number): boolean {
    for (const p of this.peers.values()) if (p.acked < k) return false;
    return true;
  }

  /** The earliest lease end among the peers that have not acknowledged `k` (Infinity when none). */
  lagUntil(k: number): number {
    let t = Infinity;
    for (const p of this.peers.values()) if (p.acked < k && p.until < t) t = p.until;
    return t;
  }

  /** Resolves true once every known peer acknowledged marker `k`; false when {@link fail}ed (connection lost). */
  wait(k: number): Promise<boolean> {
    if (this.confirmed(k)) return Promise.resolve(true);
    return new Promise((resolve) => this.waiters.push({ k, resolve }));
  }

  /** Whether anyone waits (for {@link lagUntil} checks). */
  get waiting(): boolean {
    return this.waiters.length > 0;
  }

  /** The lowest marker waited for, or undefined. */
  lowestWaited(): number | undefined {
    let k: number | undefined;
    for (const w of this.waiters) if (k === undefined || w.k < k) k = w.k;
    return k;
  }

  /** Resolves every waiter false (the connection was lost: the caller falls back to polling). */
  fail(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w.resolve(false);
  }

  private check(): void {
    if (!this.waiters.length) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) (this.confirmed(w.k) ? w.resolve(true) : still.push(w));
    this.waiters = still;
  }
}
