/**
 * Reads (or counts) batched per event-loop turn (issue 9: "looks nothing up twice"). Requests
 * that need the same kind of small database round trip in one turn of the event loop — a
 * mailbox's version, a rate-limit count — share one: the first caller opens a batch, the
 * callers that arrive before it is sent join it, and it is sent from `setImmediate` (after the
 * turn's I/O callbacks ran). A batch is never shared with a caller that arrived after it was
 * sent, so every caller sees what was committed before it asked — the rule
 * {@link CacheHub.sync} follows for the cache versions.
 */

/** What {@link TickBatch.join} resolves to: the key's value and the caller's place among the batch's callers of that key. */
export interface BatchShare<V> {
  /** The key's value as loaded (undefined when `load` left it out). */
  value: V | undefined;
  /** 0 for the first caller of the key in the batch, 1 for the next… */
  place: number;
  /** How many callers of the key the batch had. */
  of: number;
}

interface Waiter<V> {
  resolve: (share: BatchShare<V>) => void;
  reject: (e: unknown) => void;
}

/**
 * A batched loader of values by key.
 * @param load reads (or writes) the distinct keys of one batch at once, given how many callers
 *   asked for each; a key missing from its result reads as `undefined`. Its error rejects every caller of the batch.
 */
export class TickBatch<K, V> {
  private pending: Map<K, Waiter<V>[]> | undefined;

  constructor(private readonly load: (keys: Map<K, number>) => Promise<Map<K, V>>) {}

  /** The value of `key` as loaded by this turn's batch. @throws what `load` throws. */
  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => this.add(key, { resolve: (share) => resolve(share.value), reject }));
  }

  /** The value of `key` and this caller's place among the batch's callers of it. @throws what `load` throws. */
  join(key: K): Promise<BatchShare<V>> {
    return new Promise((resolve, reject) => this.add(key, { resolve, reject }));
  }

  private add(key: K, waiter: Waiter<V>): void {
    let batch = this.pending;
    if (!batch) {
      const b = (batch = this.pending = new Map<K, Waiter<V>[]>());
      setImmediate(() => {
        if (this.pending === b) this.pending = undefined;
        this.load(new Map([...b].map(([k, waiters]) => [k, waiters.length]))).then(
          (values) => {
            for (const [k, waiters] of b) waiters.forEach((w, place) => w.resolve({ value: values.get(k), place, of: waiters.length }));
          },
          (e: unknown) => {
            for (const waiters of b.values()) for (const w of waiters) w.reject(e);
          },
        );
      });
    }
    const waiters = batch.get(key);
    if (waiters) waiters.push(waiter);
    else batch.set(key, [waiter]);
  }
}
