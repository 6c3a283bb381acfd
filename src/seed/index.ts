/**
 * The demo data set: the directory (tenants, users, applications) and every area's part.
 * Loaded into an empty store at first start and again by `POST /_stratus/reset`.
 */
import { sql } from 'kysely';
import type { AppContext, ServiceModule } from '../context.ts';
import { directoryTables } from '../core/identity/directory.ts';
import { demoAdmin, demoManagedIdentity, demoPublicClient, demoSecretHashes, demoServicePrincipal, demoTenant, demoUser, otherTenant, otherUser } from './demo.ts';

const seededKey = 'demo_seeded_at';

/** True when the demo data set has been loaded into this store. */
export async function isSeeded(ctx: AppContext): Promise<boolean> {
  return (await ctx.identity.directory.getMeta(seededKey)) !== undefined;
}

/** Loads the directory part of the demo data set. */
async function seedDirectory(ctx: AppContext): Promise<void> {
  const d = ctx.identity.directory;
  await d.addTenant(demoTenant);
  await d.addTenant(otherTenant);
  // The demo credentials' hashes are precomputed (`demoSecretHashes`); one missing there is hashed on the thread pool, all at once.
  await Promise.all([
    d.addUser({ ...demoAdmin, tenantId: demoTenant.id, mail: demoAdmin.userPrincipalName, isTenantAdmin: true }, demoAdmin.password, demoSecretHashes[demoAdmin.password]),
    d.addUser({ ...demoUser, tenantId: demoTenant.id, mail: demoUser.userPrincipalName, isTenantAdmin: false }, demoUser.password, demoSecretHashes[demoUser.password]),
    d.addUser({ ...otherUser, tenantId: otherTenant.id, mail: otherUser.userPrincipalName, isTenantAdmin: true }, otherUser.password, demoSecretHashes[otherUser.password]),
    d.addApp(
      { ...demoServicePrincipal, tenantId: demoTenant.id, kind: 'ServicePrincipal', redirectUris: [] },
      demoServicePrincipal.secret,
      [
        { audience: 'mail', role: 'Mail.Read' },
        { audience: 'mail', role: 'Mail.ReadWrite' },
        { audience: 'mail', role: 'Mail.Send' },
      ],
      demoSecretHashes[demoServicePrincipal.secret],
    ),
    d.addApp({ ...demoManagedIdentity, tenantId: demoTenant.id, kind: 'ManagedIdentity', redirectUris: [] }, demoManagedIdentity.secret, [], demoSecretHashes[demoManagedIdentity.secret]),
    d.addApp({ ...demoPublicClient, redirectUris: [...demoPublicClient.redirectUris], tenantId: demoTenant.id, kind: 'PublicClient' }, undefined),
  ]);
}

/** Loads the whole demo data set (directory first, then each area in order) and marks the store seeded. */
export async function seedAll(ctx: AppContext, modules: ServiceModule[]): Promise<void> {
  // On SQLite the demo data's many small commits skip their fsync (WAL, synchronous = NORMAL:
  // safe against a crash of the process, not a power loss during the first start); the
  // "seeded" mark is written last with the store's own setting back in force.
  const sqlite = ctx.store.dialect === 'sqlite';
  const prev = sqlite ? Number((await sql<{ synchronous: number }>`pragma synchronous`.execute(ctx.store.db)).rows[0]?.synchronous ?? 2) : 0;
  if (sqlite) await sql`pragma synchronous = NORMAL`.execute(ctx.store.db);
  try {
    await seedDirectory(ctx);
    for (const m of modules) if (m.seed) await m.seed(ctx);
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
