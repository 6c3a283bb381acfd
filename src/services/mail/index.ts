/**
 * The mail area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The mail module. */
export const mailModule: ServiceModule = {
  name: 'mail',
  migrations: {},
  tables: [],
  register() {},
};
