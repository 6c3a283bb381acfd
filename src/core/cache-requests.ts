/**
 * Which requests wrote (PostgreSQL, issue 31 item 3): a read that wrote nothing is answered
 * without waiting for the acknowledgements of other requests' writes (`CacheHub.settle`, the
 * app's `onSend` hook).
 *
 * A `GET`/`HEAD` counts as a writer only when the code that writes for it names it: {@link mark}
 * with the request's Node object, before it writes a cached table. Few reads write: a mailbox
 * opened for the first time (its well-known folders: `openCachedMailbox`, the console's mailbox
 * view) and platform operations completed when they are read (`platform/operations.ts`,
 * `platform/access.ts`). Every request that is not a `GET`/`HEAD` waits regardless.
 *
 * Why not a request context: an `AsyncLocalStorage` entered for every request (how this was first
 * built) costs promise hooks on every promise of the process on Node 20 — 12 % of the req/s of the
 * PostgreSQL 90/10 mix (`bench/README.md`, eighth pass). It stays as a check: with
 * `STRATUS_VERIFY_READ_WRITES=1` (the test suite sets it, `test/helpers/server.ts`) every request
 * runs in one, every write of a cached table or version bump notes the request it runs for
 * ({@link noteWrite}), and a `GET`/`HEAD` that wrote without being marked fails with a 500 naming
 * its path ({@link unmarkedWrite}), so a new read path that writes cannot go unnoticed.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The requests that wrote, and how many reads were answered without waiting (tests, diagnostics). */
export class RequestWrites {
  private readonly writers = new WeakSet<object>();
  /** The check's context and the requests it saw write (only with `STRATUS_VERIFY_READ_WRITES=1`). */
  private readonly als: AsyncLocalStorage<object> | undefined;
  private readonly seen = new WeakSet<object>();
  /** Reads answered at once although a write of this instance was not yet confirmed everywhere. */
  readsNotWaited = 0;
  /** Markers sent by `CacheHub.settle` (each one statement). */
  markersSent = 0;

  /** @param verify whether to check the marks with a request context (default: `STRATUS_VERIFY_READ_WRITES=1`) */
  constructor(verify = process.env.STRATUS_VERIFY_READ_WRITES === '1') {
    this.als = verify ? new AsyncLocalStorage<object>() : undefined;
  }

  /** Whether the marks are checked ({@link run} must then wrap each request's hooks). */
  get verifying(): boolean {
    return this.als !== undefined;
  }

  /** The check: runs `fn` (the rest of the request's hooks) in the context of the request `raw`. */
  run<R>(raw: object, fn: () => R): R {
    return this.als ? this.als.run(raw, fn) : fn();
  }

  /** Marks the request `raw` (its Node request object) as one that writes a cached table. */
  mark(raw: object | undefined): void {
    if (raw) this.writers.add(raw);
  }

  /** The check: notes that the request whose context is current (if any) wrote. */
  noteWrite(): void {
    const raw = this.als?.getStore();
    if (raw) this.seen.add(raw);
  }

  /** Whether the request `raw` was marked as one that writes ({@link mark}). */
  wrote(raw: object): boolean {
    return this.writers.has(raw);
  }

  /** The check: whether the request `raw` wrote (seen in its context) without being marked. */
  unmarkedWrite(raw: object): boolean {
    return this.seen.has(raw) && !this.writers.has(raw);
  }
}
