/**
 * The one source of time. Everything that stamps or compares times asks this module;
 * nothing reads `Date.now()` directly. The control plane can move the clock forward, back or
 * to an absolute time (`POST /_stratus/clock`) so that tests see windows expire and operations
 * progress without sleeping. The offset is shared state of the store (`shared-values.ts`): the
 * app writes it there and sets it here with {@link setOffset} when any instance moved it.
 */

let offsetMs = 0;

/** Current time in milliseconds since the epoch, including the control-plane offset. */
export function nowMs(): number {
  return Date.now() + offsetMs;
}

/** Current time as a Date. */
export function now(): Date {
  return new Date(nowMs());
}

/** Current time as an ISO 8601 UTC string with milliseconds (`2026-01-02T03:04:05.678Z`). */
export function nowIso(): string {
  return now().toISOString();
}

/** Current time in whole seconds since the epoch (JWT `iat`/`exp`). */
export function nowSeconds(): number {
  return Math.floor(nowMs() / 1000);
}

/** Moves the clock forward by `ms` milliseconds (never backward); returns the new offset. */
export function advance(ms: number): number {
  if (ms > 0) offsetMs += ms;
  for (const fn of clockListeners) fn();
  return offsetMs;
}

const clockListeners = new Set<() => void>();

/** Calls `fn` after every move of the clock (advance, reset): timers waiting for a Stratus time look again. Returns a function that stops it. */
export function onClockChange(fn: () => void): () => void {
  clockListeners.add(fn);
  return () => clockListeners.delete(fn);
}

/** Current offset in milliseconds from the machine clock. */
export function offset(): number {
  return offsetMs;
}

/** Resets the offset to zero (control-plane reset). */
export function resetClock(): void {
  setOffset(0);
}

/** Sets the offset from the machine clock to `ms` (negative: the Stratus clock is behind); calls the clock listeners when it changed. */
export function setOffset(ms: number): void {
  if (!Number.isFinite(ms) || ms === offsetMs) return;
  offsetMs = ms;
  for (const fn of clockListeners) fn();
}

/** The offset that puts the Stratus clock at `epochMs` now (for {@link setOffset}). */
export function offsetFor(epochMs: number): number {
  return Math.round(epochMs - Date.now());
}
