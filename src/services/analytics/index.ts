/**
 * The analytics area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The analytics module. */
export const analyticsModule: ServiceModule = {
  name: 'analytics',
  migrations: {},
  tables: [],
  register() {},
};
