/**
 * What a start loads (issue 28 items 1–2): the world files of `--world` / `STRATUS_WORLD` when
 * given (again only when they changed since the store was loaded from them), else the demo data
 * set into an empty store; either is then kept as the world snapshot a reset restores. An invalid
 * world refuses the start before anything is written.
 */
import type { AppContext, ServiceModule } from '../context.ts';
import { offsetFor, setOffset } from '../core/clock.ts';
import { isSeeded, seedAll } from '../seed/index.ts';
import { readWorld } from './file.ts';
import { loadWorld } from './load.ts';
import { followSharedState, keepWorld, setWorldClock } from './shared.ts';
import { worldTables } from './snapshots.ts';

/** `stratus_meta` key of the loaded world files' hash. */
const worldHashKey = 'world_hash';
/** `stratus_meta` key that marks a loaded store (the demo's, kept for stores made before worlds). */
const seededKey = 'demo_seeded_at';

/**
 * Follows the shared clock, then loads the configured world or the demo data set as above.
 * @throws WorldError (a ConfigError) for world files that do not read, validate or resolve.
 */
export async function startWorld(ctx: AppContext, modules: readonly ServiceModule[]): Promise<void> {
  await followSharedState(ctx);
  if (!ctx.config.seed) return;
  const d = ctx.identity.directory;
  const loaded = await d.getMeta(worldHashKey);
  if (ctx.config.world.length) {
    const world = readWorld(ctx.config.world);
    if (loaded === world.hash && (await isSeeded(ctx))) return;
    const resolved = await loadWorld(ctx, modules, world);
    setWorldClock(ctx, resolved.clockMs);
    await d.setMeta(worldHashKey, world.hash);
    await d.setMeta(seededKey, new Date().toISOString());
    await keepWorld(ctx, modules);
    const offset = resolved.clockMs === null ? 0 : offsetFor(resolved.clockMs);
    await ctx.cache.setShared(ctx.store.db, { clock: offset });
    setOffset(offset);
    return;
  }
  if (loaded !== undefined) {
    // The store holds a world file's data: back to the demo data set.
    for (const t of worldTables(modules)) await ctx.store.db.deleteFrom(t as 'tenants').execute();
    await ctx.store.db.deleteFrom('stratus_meta').where('key', 'in', [worldHashKey, seededKey]).execute();
  }
  if (!(await isSeeded(ctx))) {
    await seedAll(ctx, [...modules]);
    await keepWorld(ctx, modules);
  }
}
