/**
 * The billing area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The billing module. */
export const billingModule: ServiceModule = {
  name: 'billing',
  migrations: {},
  tables: [],
  register() {},
};
