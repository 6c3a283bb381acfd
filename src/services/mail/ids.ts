/**
 * Opaque ids of the mail store (reference mail.md §2.6, §4): base64url strings, case
 * sensitive. A message has a REST id (changes on move and copy) and an immutable id (kept
 * for the life of the item, shown with `Prefer: IdType="ImmutableId"`).
 */
import { createHash, randomBytes, randomFillSync } from 'node:crypto';

/** Bytes of an id's random part (44 base64url characters). */
const idBytes = 33;
/**
 * Random bytes drawn ahead from the system's CSPRNG, 124 ids at a time: one `randomBytes(33)`
 * per id measured 15–20 µs (a call into OpenSSL each time; 10 % of `stratus seed mailbox`,
 * which makes two ids per message), as Node's own `randomUUID` draws ahead for the same reason.
 */
const pool = Buffer.alloc(idBytes * 124);
let poolAt = pool.length;
function randomPart(): string {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const text = pool.toString('base64url', poolAt, poolAt + idBytes);
  poolAt += idBytes;
  return text;
}

const body = (seed?: string) => (seed === undefined ? randomPart() : createHash('sha256').update(seed).digest().subarray(0, idBytes).toString('base64url'));

/** A new REST message id (`AAMk…`, 48 characters); deterministic when `seed` is given. */
export function newMessageId(seed?: string): string {
  return 'AAMk' + body(seed === undefined ? undefined : 'rest:' + seed);
}
/** A new immutable message id (`AAkA…`). */
export function newImmutableId(seed?: string): string {
  return 'AAkA' + body(seed === undefined ? undefined : 'imm:' + seed);
}
/** A new folder id (`AQMk…`). */
export function newFolderId(seed?: string): string {
  return 'AQMk' + body(seed === undefined ? undefined : 'folder:' + seed);
}
/** A new attachment id (`AAMkAt…`). */
export function newAttachmentId(seed?: string): string {
  return 'AAMkAt' + body(seed === undefined ? undefined : 'att:' + seed);
}
/** Random bytes for change keys, drawn ahead as for ids (a `randomBytes(15)` per PATCH was ~1 % of the 90/10 mix). */
const keyPool = Buffer.alloc(15 * 128);
let keyPoolAt = keyPool.length;

/** A new change key (26 base64url characters). */
export function newChangeKey(): string {
  if (keyPoolAt === keyPool.length) {
    randomFillSync(keyPool);
    keyPoolAt = 0;
  }
  const text = keyPool.toString('base64url', keyPoolAt, keyPoolAt + 15);
  keyPoolAt += 15;
  return 'CQAAAB' + text;
}
/** A new conversation id (`AAQk…`). */
export function newConversationId(seed?: string): string {
  return 'AAQk' + body(seed === undefined ? undefined : 'conv:' + seed);
}

/** Whether `s` has the shape of an id this store issues (else `ErrorInvalidIdMalformed`). */
export function isWellFormedId(s: string): boolean {
  return /^[A-Za-z0-9_-]{20,300}={0,2}$/.test(s);
}

/**
 * A conversation index (Edm.Binary, base64): a 22-byte header (reserved byte, 5 bytes of
 * time, 16 random bytes) for a new thread; a reply appends 5 bytes to its parent's index.
 */
export function conversationIndex(parent?: string, atMs: number = Date.now(), seed?: string): string {
  const time = Buffer.alloc(8);
  time.writeBigUInt64BE(BigInt(Math.floor(atMs / 1000)) * 10_000_000n + 116_444_736_000_000_000n);
  if (parent) {
    const child = Buffer.concat([Buffer.from(parent, 'base64'), time.subarray(3, 8)]);
    return child.toString('base64');
  }
  const rnd = seed === undefined ? randomBytes(16) : createHash('sha256').update('ci:' + seed).digest().subarray(0, 16);
  return Buffer.concat([Buffer.from([1]), time.subarray(0, 5), rnd]).toString('base64');
}
