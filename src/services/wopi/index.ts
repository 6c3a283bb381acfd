/**
 * The wopi area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The wopi module. */
export const wopiModule: ServiceModule = {
  name: 'wopi',
  migrations: {},
  tables: [],
  register() {},
};
