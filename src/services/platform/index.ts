/**
 * The data platform area: eventstream creation as a long-running operation (spec
 * analytics-platform-mail-wopi §2.2, §3, §4.2, §5, §7, §8, §9; reference §2–§5), with the
 * operation state and result endpoints and get / list / update / delete / getDefinition /
 * updateDefinition of eventstreams, over workspaces with role assignments, folders and
 * sensitivity labels.
 */
import type { ServiceModule } from '../../context.ts';
import { platformMigrations, platformTables } from './store.ts';
import { registerPlatformRoutes } from './routes.ts';

/** The platform module. */
export const platformModule: ServiceModule = {
  name: 'platform',
  migrations: platformMigrations,
  tables: platformTables,
  register: registerPlatformRoutes,
};
