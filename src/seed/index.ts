/**
 * The demo data set: the demo world file (directory, resource-manager hierarchy and the areas'
 * data: generic resources, mailboxes, workspaces, automation, data share, billing, analytics).
 * Loaded into an empty store at first start; kept as the world snapshot that
 * `POST /_stratus/reset` restores.
 */
import { sql } from 'kysely';
import type { AppContext, ServiceModule } from '../context.ts';
import { directoryTables } from '../core/identity/directory.ts';
import { demoSecretHashes } from './demo.ts';
import { readWorld } from '../world/file.ts';
import { loadWorld } from '../world/load.ts';
import { demoWorldToLoad } from '../world/demo.ts';

const seededKey = 'demo_seeded_at';

/** True when the demo data set has been loaded into this store. */
export async function isSeeded(ctx: AppContext): Promise<boolean> {
  return (await ctx.identity.directory.getMeta(seededKey)) !== undefined;
}

/**
 * Loads the demo world file (`src/world/worlds/demo.yaml`). The demo credentials' hashes are
 * precomputed (`demoSecretHashes`), so none is hashed at load.
 */
async function seedDirectory(ctx: AppContext, modules: ServiceModule[]): Promise<void> {
  // The shipped demo world is valid (test/world.test.ts checks it against the schema): not validated again here.
  await loadWorld(ctx, modules, readWorld([demoWorldToLoad()], undefined, true), demoSecretHashes);
}

/** Loads the whole demo data set (the demo world file) and marks the store seeded. */
export async function seedAll(ctx: AppContext, modules: ServiceModule[]): Promise<void> {
  // On SQLite the demo data's many small commits skip their fsync (WAL, synchronous = NORMAL:
  // safe against a crash of the process, not a power loss during the first start); the
  // "seeded" mark is written last with the store's own setting back in force.
  const sqlite = ctx.store.dialect === 'sqlite';
  const prev = sqlite ? Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(ctx.store.db)).rows[0]?.synchronous ?? 2) : 0;
  if (sqlite) await sql`pragma synchronous = NORMAL`.execute(ctx.store.db);
  try {
    await seedDirectory(ctx, modules);
  } finally {
    if (sqlite) await sql.raw(`pragma synchronous = ${prev}`).execute(ctx.store.db);
  }
  await ctx.identity.directory.setMeta(seededKey, new Date().toISOString());
}

/** Empties every area's tables and the directory, then loads the demo data set again. */
export async function resetAll(ctx: AppContext, modules: ServiceModule[]): Promise<void> {
  const db = ctx.store.db;
  for (const m of [...modules].reverse()) for (const t of m.tables) await db.deleteFrom(t).execute();
  for (const t of directoryTables) await db.deleteFrom(t).execute();
  await ctx.rateLimiter.clear();
  await seedAll(ctx, modules);
  // Every cached look-up of this and the other instances is void now.
  await ctx.cache.changed(db);
}
