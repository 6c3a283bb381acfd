/**
 * The automation area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The automation module. */
export const automationModule: ServiceModule = {
  name: 'automation',
  migrations: {},
  tables: [],
  register() {},
};
