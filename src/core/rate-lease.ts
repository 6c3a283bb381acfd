/**
 * How many requests of a budget one PostgreSQL upsert reserves ahead for this instance (the
 * leases of `rate-limit.ts`, see its module note): a fixed share, or more for a busy bucket,
 * never more than a sixteenth of what is left.
 */

/** At most this many requests of a budget are reserved ahead by one upsert, unless the bucket's rate asks for more (PostgreSQL leases). */
export const maxLease = 64;
/** A lease takes at most 1/`leaseShare` of the budget left at the last count. */
export const leaseShare = 16;
/** A busy bucket's lease covers about this many ms of its traffic on this instance ({@link rateLease}). */
export const leaseHorizonMs = 100;
/** A lease sized by rate never exceeds this many requests. */
export const maxRateLease = 4096;

/**
 * The lease that covers {@link leaseHorizonMs} of a bucket's traffic on this instance, when the
 * last upsert granted `granted` requests (the turn's hits and its lease) and the next one is
 * wanted `elapsedMs` later (monotonic clock): all of them were used in that time. At most
 * {@link maxRateLease}; 0 when nothing is known.
 */
export function rateLease(granted: number, elapsedMs: number): number {
  if (!(granted > 0)) return 0;
  return Math.min(maxRateLease, Math.ceil((granted * leaseHorizonMs) / Math.max(elapsedMs, 1)));
}

/**
 * How many requests to reserve ahead for a bucket whose last known count was `seen` (0 when
 * unknown): {@link maxLease}, or more when its rate asks for more (`byRate`, {@link rateLease}),
 * but never more than 1/{@link leaseShare} of what is left (so none for a budget under 16).
 */
export function leaseFor(limit: number, seen: number, byRate = 0): number {
  return Math.max(0, Math.min(Math.max(maxLease, byRate), Math.floor((limit - seen) / leaseShare)));
}
