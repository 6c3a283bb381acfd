/**
 * The mailsync area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';

/** The mailsync module. */
export const mailsyncModule: ServiceModule = {
  name: 'mailsync',
  migrations: {},
  tables: [],
  register() {},
};
