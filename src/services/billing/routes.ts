/**
 * Routes of the billing area (spec: resource-manager §2.3, §4.4, §9; reference §4): the
 * transactions of an invoice and their summary. A route table on the resource-manager
 * kernel; what each operation means is in `rules.ts`. Access is checked in the rules against
 * the billing account's own role assignments (no RBAC action at the gateway).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { armArea } from '../arm/kernel.ts';
import { accountScope, billingRules } from './rules.ts';

/**
 * api-versions of the transaction listing, newest first: the spec's (§9) and the published
 * stable one the official clients send (2020-05-01, served in its own shape: `legacyTransaction`).
 */
export const transactionApiVersions = ['2024-04-01', '2020-05-01'];

const invoiceUrl = '/providers/Vendor.Billing/billingAccounts/:billingAccountName/invoices/:invoiceName';

/** Registers the billing routes. */
export function registerBillingRoutes(app: FastifyInstance, ctx: AppContext): void {
  const route = armArea(app, ctx, { apiVersions: transactionApiVersions });
  const rules = billingRules(ctx);
  route({ method: 'GET', url: `${invoiceUrl}/transactions`, scope: accountScope, handler: rules.listTransactions });
  route({ method: 'GET', url: `${invoiceUrl}/transactionSummary`, scope: accountScope, handler: rules.transactionSummary });
}
