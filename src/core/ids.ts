/**
 * Identifiers: the one helper every area uses to mint ids.
 */
import { randomUUID, createHash, randomBytes } from 'node:crypto';

/** A random RFC 4122 v4 UUID, lower case. */
export function newUuid(): string {
  return randomUUID();
}

/** Two lower-case hex digits of each byte value. */
const hexPairs = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
/** The first 28 characters (`xxxxxxxx-xxxx-4xxx-yxxx-xxxx`) of this process's request ids, and the count after them. */
let requestIdPrefix = randomUUID().slice(0, 28);
let requestIdCount = randomBytes(4).readUInt32BE(0);

/**
 * A request id (the `request-id` family headers): an RFC 4122 v4 UUID, lower case, made cheaply
 * for every request (issue 9). Its first 28 characters are a random UUID's (90 random bits), drawn
 * once per process and again after every 2^32 ids; its last 8 hex digits count up. So no two ids
 * of one process are equal, and two processes share a prefix with negligible probability. Not
 * unpredictable, as no request id needs to be: use {@link newUuid} for ids that must be.
 * Measured: a random UUID per request cost about 2,000 instructions, most of them in building
 * and then flattening its string (bench/README.md, tenth pass).
 */
export function newRequestUuid(): string {
  const c = (requestIdCount = (requestIdCount + 1) >>> 0);
  if (c === 0) requestIdPrefix = randomUUID().slice(0, 28);
  return requestIdPrefix + (hexPairs[c >>> 24]! + hexPairs[(c >>> 16) & 255]! + hexPairs[(c >>> 8) & 255]! + hexPairs[c & 255]!);
}

/**
 * A stable UUID derived from the given parts (SHA-256 folded into the v4 layout), so the
 * same inputs always give the same id (used for default role management policy names).
 */
export function stableUuid(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest();
  h[6] = (h[6]! & 0x0f) | 0x40;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** `n` random bytes as base64url (tokens, secrets). */
export function randomToken(n = 32): string {
  return randomBytes(n).toString('base64url');
}

/** True when `s` is a UUID in the 8-4-4-4-12 hex layout (any version). */
export function isUuid(s: string): boolean {
  return /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s);
}
