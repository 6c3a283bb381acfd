/**
 * What a start loads (issue 28 items 1–2): the world files of `--world` / `STRATUS_WORLD` when
 * given (again only when they changed since the store was loaded from them: they then replace the
 * whole state), else the demo data set into an empty store (a store already loaded, from a world
 * file, an import or the demo, is left as it is); either is then kept as the world snapshot a
 * reset restores. An invalid world refuses the start before anything is written.
 */
import type { AppContext, ServiceModule } from '../context.ts';
import { isSeeded, seedAll } from '../seed/index.ts';
import { readWorld, type World } from './file.ts';
import { loadWorld } from './load.ts';
import { afterRestore, followSharedState, keepWorld, setWorldClock } from './shared.ts';

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
    await applyWorld(ctx, modules, world);
    return;
  }
  if (!(await isSeeded(ctx))) {
    await seedAll(ctx, [...modules]);
    await keepWorld(ctx, modules);
  }
}

/**
 * Replaces the whole state with `world` (checked first: nothing is written when it does not
 * resolve), keeps it as the world a reset restores and sets its clock, on every instance
 * (`PUT /_stratus/world`, `stratus world import`, a start with changed world files).
 * @throws WorldError when the world does not resolve.
 */
export async function applyWorld(ctx: AppContext, modules: readonly ServiceModule[], world: World): Promise<void> {
  const d = ctx.identity.directory;
  const resolved = await loadWorld(ctx, modules, world);
  setWorldClock(ctx, resolved.clockMs);
  await d.setMeta(worldHashKey, world.hash);
  await d.setMeta(seededKey, new Date().toISOString());
  await keepWorld(ctx, modules);
  await afterRestore(ctx, resolved.clockMs);
}
