/**
 * Which requests wrote (PostgreSQL, issue 31 item 3): a request that wrote nothing — a read —
 * is answered without waiting for the acknowledgements of other requests' writes
 * (`CacheHub.settle`, the app's `onSend` hook). Each request of a PostgreSQL app runs in an
 * `AsyncLocalStorage` context holding its Node request object (entered in `onRequest`); every
 * write statement of a cached table the store runs (`cache-tables.ts` `watchOwnWrites`), every
 * mailbox opened for the first time (`CacheHub.markWritten`) and every explicit version bump
 * (`CacheHub.changed` / `setShared`) marks the request it runs for.
 *
 * What a read no longer waits for: a write of another request still waiting for its own
 * acknowledgements (that writer is not answered before they arrive), or a write made outside any
 * request (a background worker). A read that wrote a cached table (settled at read time) still
 * waits, as does every request that is not a `GET`/`HEAD` (its body parsing may run outside the
 * context, so it keeps the former rule). The context is only entered on PostgreSQL: SQLite
 * apps never enable it (and never wait: every request reads the versions).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The requests that wrote, and how many reads were answered without waiting (tests, diagnostics). */
export class RequestWrites {
  private readonly als = new AsyncLocalStorage<object>();
  private readonly writers = new WeakSet<object>();
  /** Reads answered at once although a write of this instance was not yet confirmed everywhere. */
  readsNotWaited = 0;
  /** Markers sent by `CacheHub.settle` (each one statement). */
  markersSent = 0;

  /** Runs `fn` (the rest of the request's hooks) in the context of the request `raw`. */
  run<R>(raw: object, fn: () => R): R {
    return this.als.run(raw, fn);
  }

  /** Marks the request whose context is current (if any) as one that wrote. */
  noteWrite(): void {
    const raw = this.als.getStore();
    if (raw) this.writers.add(raw);
  }

  /** Whether the request `raw` wrote (a cached table, or an explicit version bump). */
  wrote(raw: object): boolean {
    return this.writers.has(raw);
  }
}
