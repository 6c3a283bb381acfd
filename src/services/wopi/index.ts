/**
 * The document host's bootstrapper (spec analytics §2.4, §4.4, §5, §7; reference §6): the
 * signed-in user's Bootstrap and root container in one call, with WOPI access tokens that
 * the ecosystem and container endpoints accept. Root containers are created on first use;
 * the demo users get theirs at seed time.
 */
import type { Kysely } from 'kysely';
import type { SeedContext, ServiceModule } from '../../context.ts';
import { demoAdmin, demoTenant, demoUser } from '../../seed/demo.ts';
import { ensureRootContainer, wopiMigrations, wopiTables } from './store.ts';
import { registerWopiRoutes } from './routes.ts';

/** Seeds the root containers of the demo administrator and user. */
async function seedWopi(ctx: SeedContext): Promise<void> {
  const db = ctx.store.db;
  for (const u of [demoAdmin, demoUser]) await ensureRootContainer(db, demoTenant.id, u.id);
}

/** The wopi module. */
export const wopiModule: ServiceModule = {
  name: 'wopi',
  migrations: wopiMigrations,
  tables: wopiTables,
  seed: seedWopi,
  register: registerWopiRoutes,
};
