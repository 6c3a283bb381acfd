/**
 * A ring of byte records in one preallocated buffer, for logs that keep the last few thousand
 * records without holding a JavaScript object per record (issue 9: the request log's retained
 * header arrays and body strings survived the young generation and cost about a fifth of a
 * light read's CPU in garbage collection; bench/README.md, fifth pass).
 *
 * Positions are absolute byte counts since the ring was made (a `number`, exact to 2^53). A
 * record written at absolute position `start` is intact while fewer than `capacity` bytes were
 * written after its start ({@link ByteRing.intact}); a record never straddles the buffer's end
 * (the writer skips to the beginning instead).
 */
export class ByteRing {
  private readonly buf: Buffer;
  /** Absolute position of the next byte to write. */
  private head = 0;
  /** Physical offset of the record being written. */
  private at = 0;

  /** @param capacity bytes of the buffer (allocated once, filled as records arrive). */
  constructor(readonly capacity: number) {
    this.buf = Buffer.allocUnsafeSlow(capacity);
  }

  /**
   * Starts a record of at most `maxBytes` bytes and returns its absolute start, or -1 when no
   * record that large fits in the ring.
   */
  begin(maxBytes: number): number {
    if (maxBytes > this.capacity) return -1;
    let phys = this.head % this.capacity;
    if (phys + maxBytes > this.capacity) {
      this.head += this.capacity - phys;
      phys = 0;
    }
    this.at = phys;
    return this.head;
  }

  /** Appends a Latin-1 string (Node's header text is Latin-1: one byte a character) and returns the bytes written. */
  latin1(s: string): number {
    const n = this.buf.latin1Write(s, this.at);
    this.at += n;
    this.head += n;
    return n;
  }

  /** Appends a string as UTF-8 (at most 3 bytes a UTF-16 unit) and returns the bytes written. */
  utf8(s: string): number {
    const n = this.buf.utf8Write(s, this.at);
    this.at += n;
    this.head += n;
    return n;
  }

  /** Appends bytes and returns how many were written. */
  bytes(b: Uint8Array): number {
    this.buf.set(b, this.at);
    this.at += b.length;
    this.head += b.length;
    return b.length;
  }

  /** Whether the record starting at absolute position `start` has not been overwritten. */
  intact(start: number): boolean {
    return start >= 0 && this.head - start <= this.capacity;
  }

  /** `length` bytes at absolute position `at` as Latin-1 text (the record must be {@link intact}). */
  readLatin1(at: number, length: number): string {
    const p = at % this.capacity;
    return this.buf.latin1Slice(p, p + length);
  }

  /** `length` bytes at absolute position `at` as UTF-8 text. */
  readUtf8(at: number, length: number): string {
    const p = at % this.capacity;
    return this.buf.utf8Slice(p, p + length);
  }

  /** A copy of `length` bytes at absolute position `at`. */
  readBytes(at: number, length: number): Buffer {
    const p = at % this.capacity;
    return Buffer.from(this.buf.subarray(p, p + length));
  }
}

declare global {
  interface Buffer {
    latin1Write(s: string, offset?: number, length?: number): number;
    utf8Write(s: string, offset?: number, length?: number): number;
    latin1Slice(start?: number, end?: number): string;
    utf8Slice(start?: number, end?: number): string;
  }
}
