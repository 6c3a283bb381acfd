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
 * - A write path that carries one: `services/mail/handlers.ts` (the read-state PATCH, through
 *   `stratus_mail_read_state`, `services/mail/write-migrations.ts`).
 */

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

/** The requests' side (`CacheHub.writeMarkers`): which request's last write carried which marker. */
export class RequestWriteMarkers {
  private readonly pending = new Map<number, Promise<boolean>>();
  private readonly byRequest = new WeakMap<object, Promise<boolean>>();

  /** @param source the presence while this instance is live and knows no other instance (a marker would not spare one then), else undefined */
  constructor(private readonly source: () => WriteMarkerSource | undefined) {}

  /**
   * A marker for a request's last write, to notify on the presence channel
   * (`'stratus_cache_' || current_schema()`) as the write transaction's last act. Then call
   * {@link committed} once the write committed, or {@link failed} when it did not.
   * @returns the payload and number, or undefined when not live or not alone (write without one)
   */
  issue(): { payload: string; k: number } | undefined {
    const m = this.source()?.writeMarker();
    if (!m) return undefined;
    this.pending.set(m.k, m.seen);
    return { payload: m.payload, k: m.k };
  }

  /** The write of request `raw` (its Node request object) that carried marker `k` committed. */
  committed(raw: object, k: number): void {
    const seen = this.pending.get(k);
    this.pending.delete(k);
    if (seen) this.byRequest.set(raw, seen);
  }

  /** The write that was to carry marker `k` failed. */
  failed(k: number): void {
    this.pending.delete(k);
    this.source()?.dropWriteMarker(k);
  }

  /** The return of the marker request `raw`'s last write carried (true: seen; false: lost), or undefined. */
  of(raw: object): Promise<boolean> | undefined {
    return this.byRequest.get(raw);
  }
}
