/**
 * The mailsync area: reading the mail area's change log (`mail/changes.ts`), subscriptions to
 * message change notifications with the validation handshake (route table `routes.ts`, rules
 * `rules.ts` and `subscriptions.ts`) and their background delivery with retries and lifecycle
 * notifications (`worker.ts`, `match.ts`, `delivery.ts`); every query in `store.ts`, the
 * migrations in `migrations.ts`. Reference mail.md §7.
 */
import type { ServiceModule } from '../../context.ts';
import { mailsyncMigrations, mailsyncTables } from './migrations.ts';
import { registerSubscriptionRoutes } from './routes.ts';
import { startNotificationWorker } from './worker.ts';

/** The mailsync module. */
export const mailsyncModule: ServiceModule = {
  name: 'mailsync',
  migrations: mailsyncMigrations,
  tables: mailsyncTables,
  register(app, ctx) {
    registerSubscriptionRoutes(app, ctx);
    const worker = startNotificationWorker(ctx);
    ctx.onClose(() => worker.stop());
  },
};
