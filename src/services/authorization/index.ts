/**
 * The authorization area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The authorization module. */
export const authorizationModule: ServiceModule = {
  name: 'authorization',
  migrations: {},
  tables: [],
  register() {},
};
