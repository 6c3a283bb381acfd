/**
 * Identifiers: the one helper every area uses to mint ids.
 */
import { randomUUID, createHash, randomBytes } from 'node:crypto';

/** A random RFC 4122 v4 UUID, lower case. */
export function newUuid(): string {
  return randomUUID();
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
