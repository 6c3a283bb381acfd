/**
 * What a reset, a snapshot restore and a clock move do to every instance (issue 28 items 5–6):
 * the store's rows, the shared clock offset and the world generation (`core/shared-values.ts`),
 * this instance's fault rules, rate-limit windows and caches, and the other instances' (they
 * follow at their next request, or before the writer answers when live on PostgreSQL).
 */
import type { AppContext, ServiceModule } from '../context.ts';
import { offset, offsetFor, setOffset } from '../core/clock.ts';
import { resetAll } from '../seed/index.ts';
import { signal } from '../core/cache-bus.ts';
import { Snapshots, worldSnapshotName } from './snapshots.ts';

/** The Stratus time a world starts at (epoch ms), or null for the machine's time (the demo world). */
const worldClocks = new WeakMap<object, number | null>();

/** Sets the Stratus time of the world `ctx` loads (null: the machine's time); used when the world snapshot is kept. */
export function setWorldClock(ctx: AppContext, clockMs: number | null): void {
  worldClocks.set(ctx, clockMs);
}

/**
 * Makes this instance follow the shared clock offset and world generation: reads them once now
 * (a moved clock of the store applies at once) and watches them with the caches' invalidation.
 */
export async function followSharedState(ctx: AppContext): Promise<void> {
  const shared = ctx.cache.sharedValues;
  shared.watch('clock', (ms) => setOffset(ms));
  shared.watch('world', () => forgetLocalState(ctx, false));
  const now = await shared.read(ctx.store.db);
  // A fresh store (offset 0) leaves the clock alone: several test servers in one process share it.
  if (now.clock !== 0) setOffset(now.clock);
}

/** Empties what this instance holds of the world in memory: fault rules, rate-limit leases (and SQLite windows), every cache; wakes the workers. */
function forgetLocalState(ctx: AppContext, self: boolean): void {
  ctx.faults.clear();
  if (ctx.store.dialect === 'postgres' || self) ctx.rateLimiter.forgetLeases();
  else void ctx.rateLimiter.clear().catch((e) => ctx.log.warn({ err: e }, 'rate-limit windows not cleared'));
  ctx.cache.invalidate();
}

/** Keeps the state just loaded as the world snapshot (what {@link resetWorld} restores); replaces an older one. */
export async function keepWorld(ctx: AppContext, modules: readonly ServiceModule[]): Promise<void> {
  const snaps = new Snapshots(ctx.store, modules);
  if (await snaps.has(worldSnapshotName)) await snaps.delete(worldSnapshotName);
  await snaps.save(worldSnapshotName, worldClocks.get(ctx) ?? null);
}

/**
 * Moves the shared clock: to `epochMs` (absolute, also into the past) or by `deltaMs` (negative
 * moves it back). Every instance follows. @returns the new offset from the machine clock (ms).
 */
export async function moveClock(ctx: AppContext, to: { epochMs: number } | { deltaMs: number }): Promise<number> {
  const next = 'epochMs' in to ? offsetFor(to.epochMs) : offset() + Math.round(to.deltaMs);
  await ctx.cache.setShared(ctx.store.db, { clock: next });
  setOffset(next);
  return next;
}

/** After the rows were put back: the clock, the world generation, every cache and the in-memory state, here and on every instance. */
export async function afterRestore(ctx: AppContext, clockMs: number | null): Promise<void> {
  const next = clockMs === null ? 0 : offsetFor(clockMs);
  await ctx.rateLimiter.clear();
  await ctx.cache.changed(ctx.store.db);
  await ctx.cache.setShared(ctx.store.db, { clock: next, world: 'next' });
  setOffset(next);
  forgetLocalState(ctx, true);
  await signal(ctx.store.db, 'mail');
}

/**
 * Puts the world the store was loaded with back (rows, clock, faults, rate-limit windows,
 * caches, on every instance). A store without a kept world (made before snapshots existed) is
 * emptied and loaded again, then kept.
 */
export async function resetWorld(ctx: AppContext, modules: readonly ServiceModule[]): Promise<void> {
  const snaps = new Snapshots(ctx.store, modules);
  if (!(await snaps.has(worldSnapshotName))) {
    await resetAll(ctx, [...modules]);
    await keepWorld(ctx, modules);
    await afterRestore(ctx, worldClocks.get(ctx) ?? null);
    return;
  }
  const { clockMs } = await snaps.restore(worldSnapshotName);
  await afterRestore(ctx, clockMs);
}

/**
 * Restores snapshot `name` as {@link resetWorld} restores the world.
 * @throws errors.control.snapshotNotFound
 */
export async function restoreSnapshot(ctx: AppContext, modules: readonly ServiceModule[], name: string): Promise<void> {
  const { clockMs } = await new Snapshots(ctx.store, modules).restore(name);
  await afterRestore(ctx, clockMs);
}
