/**
 * The mailsync area (work in progress: a module with no tables and no routes yet).
 */
import type { ServiceModule } from '../../context.ts';
import { mailChangeMigrations } from './changes.ts';

/** The mailsync module. */
export const mailsyncModule: ServiceModule = {
  name: 'mailsync',
  migrations: { ...mailChangeMigrations },
  tables: ['mail_changes'],
  register() {},
};
