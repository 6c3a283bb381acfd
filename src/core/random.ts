/**
 * A small seeded pseudo-random generator (mulberry32) for deterministic demo data and replayable
 * fault rules: the same seed always yields the same sequence, so tests can compute the right
 * answers from the seed.
 */

/**
 * Returns a generator of floats in [0, 1) determined by `seed` (any 32-bit integer).
 * Not for anything security-related.
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
