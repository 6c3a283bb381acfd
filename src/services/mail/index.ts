/**
 * The mail area (spec: analytics-platform-mail-wopi §2.3, §3, §4.3, §5–§9; reference mail.md):
 * mailboxes for every directory user, folders, messages with every method, queries, delta,
 * attachments, extensions, delivery inside the tenant and outbound mail, and the change log
 * every write records (`changes.ts`, read by delta and by mailsync's notifications).
 */
import type { ServiceModule } from '../../context.ts';
import { mailChangeMigrations, mailChangeTables } from './changes.ts';
import { mailMigrations, mailTables } from './migrations.ts';
import { registerMailRoutes } from './routes.ts';
import { registerUploadRoutes } from './upload.ts';
import { mailWriteMigrations } from './write-migrations.ts';

/** The mail module. */
export const mailModule: ServiceModule = {
  name: 'mail',
  migrations: { ...mailMigrations, ...mailChangeMigrations, ...mailWriteMigrations },
  tables: [...mailChangeTables, ...mailTables],
  register(app, ctx) {
    registerMailRoutes(app, ctx);
    registerUploadRoutes(app, ctx);
  },
};
