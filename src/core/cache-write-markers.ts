/**
 * Write markers (PostgreSQL, live instances; issue 31 item 3): a write that notifies its own
 * marker as its transaction's last notification, after every trigger of the write, so that its
 * request needs no marker statement afterwards (`cache-presence.ts`, `CacheHub.settle`).
 *
 * - The payload is `w <instance> <k>` on the presence channel; `k` counts this instance's write
 *   markers. Only the writer uses it: once it came back on the writer's listening connection,
 *   the writer has applied every notification of its write (they came before it in the one
 *   queue). Other instances neither apply nor acknowledge it: concurrent writes commit in any
 *   order, and an acknowledgement names a point of the queue by the writer's in-order markers.
 * - So a request whose last write carried one is answered as soon as it came back while the
 *   writer knows no other instance (as a marker sent afterwards would be: nobody else to wait
 *   for). With other instances it sends a marker afterwards and waits for their
 *   acknowledgements, as any write.
 * - Write paths that carry one: `services/mail/handlers.ts` (the read-state PATCH, through
 *   `stratus_mail_read_state`, `services/mail/write-migrations.ts`); `services/automation/store.ts`
 *   (a webhook's PUT and PATCH, through `stratus_automation_update_webhook`). A write of a cached
 *   table made so is told to the hub explicitly (`CacheHub.withWriteMarker`): the statement watch
 *   sees only `insert`/`update`/`delete`/`with` texts.
 */

import { presenceChannelSql } from './cache-peers.ts';

/**
 * Creates the PL/pgSQL function `signature` (a migration's, PostgreSQL only) whose `body`
 * statements write, followed by the notify of the write marker in its parameter `p_marker` when
 * not null: each statement of a function fires its AFTER triggers when it ends, so the marker is
 * the transaction's last notification. @returns the `CREATE FUNCTION` text.
 */
export function functionWithWriteMarker(signature: string, body: string): string {
  return `CREATE FUNCTION ${signature} RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      ${body}
      IF p_marker IS NOT NULL THEN
        PERFORM pg_notify(${presenceChannelSql}, p_marker);
      END IF;
    END $$`;
}

/** The listening connection's side: write markers handed out and not yet seen back. */
export class WriteMarkerWaiters {
  private readonly waiters = new Map<number, (ok: boolean) => void>();
  private last = 0;

  /** @param id this instance's id (the payload's second word) */
  constructor(private readonly id: string) {}

  /** A new marker: its payload, number, and a promise of its return (true) or of its loss (false). */
  issue(): { payload: string; k: number; seen: Promise<boolean> } {
    const k = ++this.last;
    const seen = new Promise<boolean>((resolve) => this.waiters.set(k, resolve));
    return { payload: `w ${this.id} ${k}`, k, seen };
  }

  /** Marker `k` came back on the listening connection. */
  seen(k: number): void {
    const w = this.waiters.get(k);
    this.waiters.delete(k);
    w?.(true);
  }

  /** Marker `k` will not come back (its write failed). */
  drop(k: number): void {
    const w = this.waiters.get(k);
    this.waiters.delete(k);
    w?.(false);
  }

  /** The listening connection was lost: no marker handed out will be seen. */
  fail(): void {
    const ws = [...this.waiters.values()];
    this.waiters.clear();
    for (const w of ws) w(false);
  }
}

/** What the requests' side needs of the instance's presence (`CachePresence`). */
export interface WriteMarkerSource {
  /** A marker when connected, else undefined. */
  writeMarker(): { payload: string; k: number; seen: Promise<boolean> } | undefined;
  /** Forgets marker `k` (its write failed). */
  dropWriteMarker(k: number): void;
}

/** A request's last write's marker: its return (true: seen; false: lost), and what its return confirms. */
export interface RequestWriteMarker {
  seen: Promise<boolean>;
  /** How many of the hub's counted writes are confirmed once it came back while alone (`CacheHub.withWriteMarker`). */
  confirms: number;
}

/** A marker handed out for a write ({@link RequestWriteMarkers.issue}). */
export interface IssuedWriteMarker extends RequestWriteMarker {
  payload: string;
  /** Forgets it at the presence that issued it (its write failed). */
  drop(): void;
}

/** The requests' side (`CacheHub.writeMarkers`): which request's last write carried which marker. */
export class RequestWriteMarkers {
  private readonly byRequest = new WeakMap<object, RequestWriteMarker>();

  /** @param source the presence while this instance is live and knows no other instance (a marker would not spare one then), else undefined */
  constructor(private readonly source: () => WriteMarkerSource | undefined) {}

  /**
   * A marker for a request's write, to notify on the presence channel
   * (`'stratus_cache_' || current_schema()`) as the write transaction's last act ({@link carry}).
   * @param confirms what its return confirms ({@link RequestWriteMarker.confirms})
   * @returns undefined when not live or not alone (write without one)
   */
  issue(confirms: number): IssuedWriteMarker | undefined {
    const source = this.source();
    const m = source?.writeMarker();
    return m && { payload: m.payload, seen: m.seen, confirms, drop: () => source!.dropWriteMarker(m.k) };
  }

  /**
   * Runs `write` with marker `m`'s payload; once it committed, request `raw`'s (its Node request
   * object's) last write carried `m`. @throws what `write` throws (the marker is dropped then)
   */
  async carry<T>(raw: object, m: IssuedWriteMarker, write: (payload: string) => Promise<T>): Promise<T> {
    let out: T;
    try {
      out = await write(m.payload);
    } catch (e) {
      m.drop();
      throw e;
    }
    this.byRequest.set(raw, { seen: m.seen, confirms: m.confirms });
    return out;
  }

  /** The marker request `raw`'s last write carried, or undefined. */
  of(raw: object): RequestWriteMarker | undefined {
    return this.byRequest.get(raw);
  }
}
