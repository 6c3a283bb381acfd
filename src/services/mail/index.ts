/**
 * The mail area (spec: analytics-platform-mail-wopi §2.3, §3, §4.3, §5–§9; reference mail.md):
 * mailboxes for every directory user, folders, messages with every method, queries, delta,
 * attachments, extensions, delivery inside the tenant and outbound mail.
 */
import type { ServiceModule } from '../../context.ts';
import { mailMigrations, mailTables } from './migrations.ts';
import { registerMailRoutes } from './routes.ts';
import { seedMail } from './seed.ts';
import { registerUploadRoutes } from './upload.ts';

/** The mail module. */
export const mailModule: ServiceModule = {
  name: 'mail',
  migrations: mailMigrations,
  tables: mailTables,
  seed: seedMail,
  register(app, ctx) {
    registerMailRoutes(app, ctx);
    registerUploadRoutes(app, ctx);
  },
};
