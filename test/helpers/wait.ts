/**
 * Waits with their own deadline: a condition that never comes fails the test after `ms` with a
 * message naming what was awaited, instead of hanging until the runner's 300 s timeout.
 */

/**
 * Resolves once `pred` holds, checking every `intervalMs`.
 * @throws Error `waited <s> s for <what>` when it does not hold within `ms`.
 */
export async function waitFor(pred: () => boolean | Promise<boolean>, what: string, ms = 30_000, intervalMs = 20): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() >= deadline) throw new Error(`waited ${ms / 1000} s for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * `promise`, or a rejection `waited <s> s for <what>` after `ms` (the promise itself is not cancelled).
 */
export function withDeadline<T>(promise: Promise<T>, what: string, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${ms / 1000} s for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
