/**
 * The billing area (spec: resource-manager §2.3, §4.4; reference §4): billing accounts,
 * billing profiles, invoice sections, invoices, billing role assignments and invoice
 * transactions in the store, and the transaction listing
 * `GET /providers/Vendor.Billing/billingAccounts/{a}/invoices/{i}/transactions?api-version=2024-04-01`
 * with `filter`, `orderBy`, `search`, `skip`, `top` (≤ 50) and `count`.
 */
import type { ServiceModule } from '../../context.ts';
import { billingMigrations, billingTables } from './migrations.ts';
import { registerBillingRoutes } from './routes.ts';

/** The billing module. */
export const billingModule: ServiceModule = {
  name: 'billing',
  migrations: billingMigrations,
  tables: billingTables,
  register(app, ctx) {
    registerBillingRoutes(app, ctx);
  },
};
