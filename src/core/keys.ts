/**
 * Composite string keys made once (issue 9: reads at the framework's speed).
 *
 * A request path that builds the same key for every request (a rate-limit bucket such as
 * `mail:<tenant>:<app>:<user>`, a kept answer's key) pays three times for it: the
 * concatenation, then the flattening and the hashing of the new string at its `Map` look-up.
 * Measured with callgrind on a mail GET (bench/README.md, tenth pass), that was about 20
 * instructions per character, 2,000–3,000 per key.
 *
 * A {@link KeyInterner} answers the same string object for the same parts. Its look-up walks one
 * `Map` per part. The parts are mostly the same string objects request after request (the
 * claims of a cached token, the ids of a cached mailbox), and V8 keeps a string's hash once
 * computed, so only a part that is new each time (a URL as sent) is hashed, once. The key it
 * answers is flat and its hash is kept too, so the caller's own look-up is cheap as well.
 */

/** One level of the trie: the key of the parts so far (when a key ends here) and the next parts. */
interface Node {
  key: string | undefined;
  next: Map<string, Node> | undefined;
}

/**
 * Interns the keys of one kind (one call site, one separator).
 *
 * Bounded: after `max` keys, or keys of `maxChars` characters in all (a key may hold a URL as
 * sent), the table starts again empty. Keys are compared as values by every user, never by
 * identity, so a key made again after that is only slower, never different.
 */
export class KeyInterner {
  private root: Node = { key: undefined, next: undefined };
  private count = 0;
  private chars = 0;

  /**
   * @param separator put between the parts (choose one the parts never hold, e.g. NUL)
   * @param max keys kept before the table starts again empty
   * @param maxChars characters of the keys kept (UTF-16 units; the trie holds the parts too, so
   *   about twice this) before the table starts again empty
   */
  constructor(
    private readonly separator = '\u0000',
    private readonly max = 10_000,
    private readonly maxChars = 2 * 1024 * 1024,
  ) {}

  /** The key `parts.join(separator)`, as the same string object as last time for the same parts. */
  key(...parts: string[]): string {
    let node = this.root;
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      let next = node.next;
      if (next === undefined) next = node.next = new Map();
      let child = next.get(part);
      if (child === undefined) {
        child = { key: undefined, next: undefined };
        next.set(part, child);
      }
      node = child;
    }
    if (node.key !== undefined) return node.key;
    const key = parts.join(this.separator);
    if (this.count >= this.max || this.chars + key.length > this.maxChars) {
      // Full: start again empty; this key is answered as it is (the next call keeps it, if it fits).
      this.root = { key: undefined, next: undefined };
      this.count = 0;
      this.chars = 0;
      return key;
    }
    this.count++;
    this.chars += key.length;
    return (node.key = key);
  }
}
