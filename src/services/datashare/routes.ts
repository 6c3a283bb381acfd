/**
 * Routes of the data share area (spec: resource-manager §2.4, §4.5, §7 rule 2, §8, §9;
 * reference §5): accounts, shares, invitations, consumer share subscriptions with
 * `synchronize`, and both `listSynchronizations`. A route table on the resource-manager
 * kernel: what each operation means is in `rules.ts` (provider side) and `consumer.ts`.
 *
 * Every route renders errors as `DataShareError` (gateway errors included), refuses path
 * names holding `/` or control characters, and spends the subscription's read budget
 * (`budget.ts`) before its handler.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { armArea } from '../arm/kernel.ts';
import { addBudgetHeader, spendRead } from './budget.ts';
import { consumerRules } from './consumer.ts';
import { DataShareResources, providerRules } from './rules.ts';

/**
 * api-versions of every data share operation, newest first: the spec's (§9) and the published
 * stable ones the official clients send (2020-09-01 by the Python client; 2019-11-01, the first
 * stable one, whose resources have no `systemData`: docs/deviations/datashare.md).
 */
export const dataShareApiVersions = ['2021-08-01', '2020-09-01', '2019-11-01'];

const action = (what: string) => `Vendor.DataShare/accounts/${what}`;
const accountBase = '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Vendor.DataShare/accounts';
const accountUrl = `${accountBase}/:accountName`;
const shareUrl = `${accountUrl}/shares/:shareName`;
const ssUrl = `${accountUrl}/shareSubscriptions/:shareSubscriptionName`;

/** Registers the data share routes (inside their own plugin, for the budget header hook). */
export async function registerDataShareRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (scoped) => {
    addBudgetHeader(scoped, ctx);
    const route = armArea(scoped, ctx, {
      apiVersions: dataShareApiVersions,
      family: 'datashare',
      noSystemDataVersions: ['2019-11-01'],
      before: (_req, reply, call) => spendRead(ctx, reply, call),
      invalidPathName: (param, value) => errors.datashare.invalidPathName({ param, value }, { target: param }),
    });
    const resources = new DataShareResources(ctx);
    const provider = providerRules(resources);
    const consumer = consumerRules(resources);

    // ---- accounts (reference §5.2) ----
    route({ method: 'PUT', url: accountUrl, action: 'Vendor.DataShare/accounts/write', handler: provider.putAccount });
    route({ method: 'GET', url: accountUrl, action: 'Vendor.DataShare/accounts/read', handler: provider.getAccount });
    route({ method: 'GET', url: accountBase, action: 'Vendor.DataShare/accounts/read', handler: provider.listAccounts });
    route({ method: 'GET', url: '/subscriptions/:subscriptionId/providers/Vendor.DataShare/accounts', action: 'Vendor.DataShare/accounts/read', handler: provider.listAccountsInSubscription });
    route({ method: 'DELETE', url: accountUrl, action: 'Vendor.DataShare/accounts/delete', handler: provider.deleteAccount });
    route({ method: 'PATCH', url: accountUrl, action: 'Vendor.DataShare/accounts/write', handler: provider.patchAccount });

    // ---- shares ----
    route({ method: 'PUT', url: shareUrl, action: action('shares/write'), handler: provider.putShare });
    route({ method: 'GET', url: shareUrl, action: action('shares/read'), handler: provider.getShare });
    route({ method: 'GET', url: `${accountUrl}/shares`, action: action('shares/read'), handler: provider.listShares });
    route({ method: 'DELETE', url: shareUrl, action: action('shares/delete'), handler: provider.deleteShare });

    // ---- invitations (provider side) ----
    route({ method: 'PUT', url: `${shareUrl}/invitations/:invitationName`, action: action('shares/invitations/write'), handler: provider.putInvitation });
    route({ method: 'GET', url: `${shareUrl}/invitations/:invitationName`, action: action('shares/invitations/read'), handler: provider.getInvitation });

    // ---- share subscriptions (consumer side) ----
    route({ method: 'PUT', url: ssUrl, action: action('shareSubscriptions/write'), handler: consumer.putShareSubscription });
    route({ method: 'GET', url: ssUrl, action: action('shareSubscriptions/read'), handler: consumer.getShareSubscription });
    route({ method: 'POST', url: `${ssUrl}/synchronize`, action: action('shareSubscriptions/synchronize/action'), handler: consumer.synchronize });

    // ---- listSynchronizations (spec §4.5); the next link is fetched with GET by the official clients ----
    for (const method of ['POST', 'GET'] as const) {
      route({ method, url: `${shareUrl}/listSynchronizations`, action: action('shares/listSynchronizations/action'), handler: consumer.listShareSynchronizations });
      route({ method, url: `${ssUrl}/listSynchronizations`, action: action('shareSubscriptions/listSynchronizations/action'), handler: consumer.listShareSubscriptionSynchronizations });
    }
  });
}
