/**
 * Demo data of the automation area (README "Demo data"): automation account
 * `stratus-automation` with runbook `nightly-report` and its webhook `nightly-hook` in
 * `stratus-rg` of the default subscription. The demo webhook's URI token is documented
 * ({@link demoWebhookToken}), like a storage emulator's development key, so the demo hook
 * can be invoked at `POST {origin}/automation/webhooks?token=<demoWebhookToken>`.
 */
import type { SeedContext } from '../../context.ts';
import { demoAdmin, demoSubscription, demoTenant } from '../../seed/demo.ts';
import { ArmStore } from '../arm/store.ts';
import { automationTypes } from './rules.ts';
import { AutomationStore, tokenHash } from './store.ts';

/** Names of the demo automation resources. */
export const demoAutomation = { account: 'stratus-automation', runbook: 'nightly-report', webhook: 'nightly-hook', location: 'eastus' } as const;
/** The demo webhook's URI token (development only). */
export const demoWebhookToken = 'stratus-demo-nightly-hook-token-0000000000000000';

/** Loads the demo account, runbook and webhook. */
export async function seedAutomation(ctx: SeedContext): Promise<void> {
  const arm = new ArmStore(ctx.store.db, ctx.cache);
  const store = new AutomationStore(ctx.store.db, ctx.cache);
  const at = '2025-12-15T09:00:00.000Z';
  const by = demoAdmin.userPrincipalName;
  const systemData = { createdBy: by, createdByType: 'User', createdAt: at, lastModifiedBy: by, lastModifiedByType: 'User', lastModifiedAt: at };
  const rgId = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}`;
  const accountId = `${rgId}/providers/Vendor.Automation/automationAccounts/${demoAutomation.account}`;
  const runbookId = `${accountId}/runbooks/${demoAutomation.runbook}`;
  const webhookId = `${accountId}/webhooks/${demoAutomation.webhook}`;
  const common = { tenantId: demoTenant.id, subscriptionId: demoSubscription.id, resourceGroup: demoSubscription.resourceGroup, createdAt: at, updatedAt: at };
  await arm.putResource({
    ...common,
    id: accountId,
    type: automationTypes.account,
    name: demoAutomation.account,
    parentId: rgId,
    body: {
      id: accountId,
      name: demoAutomation.account,
      type: automationTypes.account,
      location: demoAutomation.location,
      tags: {},
      systemData,
      properties: { sku: { name: 'Basic' }, state: 'Ok', creationTime: at, lastModifiedTime: at, lastModifiedBy: by, publicNetworkAccess: true, disableLocalAuth: false },
    },
  });
  await arm.putResource({
    ...common,
    id: runbookId,
    type: automationTypes.runbook,
    name: demoAutomation.runbook,
    parentId: accountId,
    body: {
      id: runbookId,
      name: demoAutomation.runbook,
      type: automationTypes.runbook,
      location: demoAutomation.location,
      tags: {},
      systemData,
      properties: { runbookType: 'PowerShell', state: 'Published', logVerbose: false, logProgress: false, logActivityTrace: 0, jobCount: 0, description: 'Builds the nightly sales report.', creationTime: at, lastModifiedTime: at, lastModifiedBy: by, provisioningState: 'Succeeded' },
    },
  });
  const expiryTime = '2027-12-31T00:00:00.000Z';
  await store.insertWebhook(
    {
      id: webhookId,
      tenantId: demoTenant.id,
      accountIdLower: accountId.toLowerCase(),
      name: demoAutomation.webhook,
      runbookName: demoAutomation.runbook,
      isEnabled: true,
      expiryTime,
      creationTime: at,
      lastInvokedTime: null,
      body: {
        id: webhookId,
        name: demoAutomation.webhook,
        type: automationTypes.webhook,
        systemData,
        properties: { isEnabled: true, expiryTime, runbook: { name: demoAutomation.runbook }, parameters: { ReportDate: 'yesterday' }, runOn: null, creationTime: at, lastModifiedBy: by, lastModifiedTime: at },
      },
    },
    tokenHash(demoWebhookToken),
  );
}
