/**
 * The datashare area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The datashare module. */
export const datashareModule: ServiceModule = {
  name: 'datashare',
  migrations: {},
  tables: [],
  register() {},
};
