/**
 * The automation area (spec: resource-manager §2.5, §4.6; reference §6): automation
 * accounts, runbooks, webhooks (get, create or update, update, delete, list, generateUri),
 * the webhook endpoint that starts jobs, and the jobs list of an account.
 */
import type { ServiceModule } from '../../context.ts';
import { registerAutomationRoutes } from './routes.ts';
import { AutomationStore, automationMigrations, automationTables, listedWebhooks } from './store.ts';

/** The automation module. */
export const automationModule: ServiceModule = {
  name: 'automation',
  migrations: automationMigrations,
  tables: automationTables,
  register: registerAutomationRoutes,
  deleteResourceGroup: (ctx, trx, subscriptionId, groupName) => new AutomationStore(trx, ctx.cache).deleteForGroup(subscriptionId, groupName, trx),
  listedResources: listedWebhooks,
};
