/**
 * The document host's bootstrapper (spec analytics §2.4, §4.4, §5, §7; reference §6): the
 * signed-in user's Bootstrap and root container in one call, with WOPI access tokens that
 * the ecosystem and container endpoints accept. Root containers are created on first use (ids
 * deterministic: `rootContainerId`) and stay until a reset or a world load; no world or demo data
 * makes them.
 */
import type { ServiceModule } from '../../context.ts';
import { wopiMigrations, wopiTables } from './store.ts';
import { registerWopiRoutes } from './routes.ts';

/** The wopi module. */
export const wopiModule: ServiceModule = {
  name: 'wopi',
  migrations: wopiMigrations,
  tables: wopiTables,
  register: registerWopiRoutes,
};
