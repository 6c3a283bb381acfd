/**
 * The platform area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The platform module. */
export const platformModule: ServiceModule = {
  name: 'platform',
  migrations: {},
  tables: [],
  register() {},
};
