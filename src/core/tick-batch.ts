/**
 * Reads batched per event-loop turn (issue 9: "looks nothing up twice"). Requests that need the
 * same kind of small read — a mailbox's version, say — in one turn of the event loop share one
 * read: the first caller opens a batch, the callers that arrive before it is sent join it, and
 * it is sent from `setImmediate` (after the turn's I/O callbacks ran). A read is never shared
 * with a caller that arrived after it was sent, so every caller sees what was committed before
 * it asked — the rule {@link CacheHub.sync} follows for the cache versions.
 */

/**
 * A batched reader of values by key.
 * @param load reads the values of distinct keys at once; a key missing from its result reads as `undefined`.
 */
export class TickBatch<K, V> {
  private pending: { keys: Map<K, { resolve: (v: V | undefined) => void; reject: (e: unknown) => void }[]> } | undefined;

  constructor(private readonly load: (keys: K[]) => Promise<Map<K, V>>) {}

  /** The value of `key` as read by the batch of this turn. @throws what `load` throws. */
  get(key: K): Promise<V | undefined> {
    let batch = this.pending;
    if (!batch) {
      const b = (batch = this.pending = { keys: new Map() });
      setImmediate(() => {
        if (this.pending === b) this.pending = undefined;
        this.load([...b.keys.keys()]).then(
          (values) => {
            for (const [k, waiters] of b.keys) for (const w of waiters) w.resolve(values.get(k));
          },
          (e: unknown) => {
            for (const waiters of b.keys.values()) for (const w of waiters) w.reject(e);
          },
        );
      });
    }
    return new Promise((resolve, reject) => {
      const waiters = batch.keys.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else batch.keys.set(key, [{ resolve, reject }]);
    });
  }
}
