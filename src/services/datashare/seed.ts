/**
 * Demo data of the data share area (README "Demo data"): account `stratus-share` with share
 * `sales` in `stratus-rg` of the default subscription, and {@link demoSynchronizationCount}
 * completed synchronization runs of it by several consumers — deterministic, so tests
 * compute the right answer of a filter or an ordering from {@link demoSynchronizations}.
 */
import type { SeedContext } from '../../context.ts';
import { stableUuid } from '../../core/ids.ts';
import { demoAdmin, demoSubscription, demoTenant } from '../../seed/demo.ts';
import { ArmStore } from '../arm/store.ts';
import { DataShareStore, type ShareSynchronization } from './store.ts';

/** Names of the demo account and share. */
export const demoDataShare = { account: 'stratus-share', share: 'sales', location: 'eastus' } as const;
/** Number of demo runs of `sales`. */
export const demoSynchronizationCount = 45;

const consumers = [
  { consumerName: 'Avery Lin', consumerEmail: 'avery@contoso-analytics.test', consumerTenantName: 'Contoso Analytics' },
  { consumerName: 'Blake Osei', consumerEmail: 'blake@northwind.test', consumerTenantName: 'Northwind Traders' },
  { consumerName: 'Carmen Ruiz', consumerEmail: 'carmen@fabrikam-data.test', consumerTenantName: 'Fabrikam Data' },
  { consumerName: 'Stratus Administrator', consumerEmail: 'admin@stratus.test', consumerTenantName: 'Stratus Demo' },
];

/** The demo runs of `sales`, in start order (all complete; start 2026-01-01T01:00Z plus 17 h per run). */
export function demoSynchronizations(): ShareSynchronization[] {
  const base = Date.UTC(2026, 0, 1, 1, 0, 0);
  const out: ShareSynchronization[] = [];
  for (let i = 0; i < demoSynchronizationCount; i++) {
    const start = base + i * 17 * 3600_000 + (i % 7) * 61_000;
    const mode = i % 5 === 0 ? 'FullSync' : 'Incremental';
    const durationMs = (mode === 'FullSync' ? 90_000 : 8_000) + ((i * 7919) % 50_000);
    const status = i % 11 === 4 ? 'Failed' : i % 13 === 9 ? 'Canceled' : 'Succeeded';
    const message = status === 'Failed' ? 'The source data set could not be read.' : status === 'Canceled' ? 'Synchronization canceled by the consumer.' : 'Synchronization completed.';
    out.push({
      synchronizationId: stableUuid('demo-sync', String(i)),
      synchronizationMode: mode,
      status,
      message,
      startTime: new Date(start).toISOString(),
      endTime: new Date(start + durationMs).toISOString(),
      durationMs,
      ...consumers[i % consumers.length]!,
    });
  }
  return out;
}

/** Loads the demo account, share and runs. */
export async function seedDataShare(ctx: SeedContext): Promise<void> {
  const arm = new ArmStore(ctx.store.db, ctx.cache);
  const store = new DataShareStore(ctx.store.db);
  const at = '2025-12-15T09:00:00.000Z';
  const rgId = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}`;
  const accountId = `${rgId}/providers/Vendor.DataShare/accounts/${demoDataShare.account}`;
  const shareId = `${accountId}/shares/${demoDataShare.share}`;
  const systemData = { createdBy: demoAdmin.userPrincipalName, createdByType: 'User', createdAt: at, lastModifiedBy: demoAdmin.userPrincipalName, lastModifiedByType: 'User', lastModifiedAt: at };
  const user = { userEmail: demoAdmin.userPrincipalName, userName: demoAdmin.displayName };
  await arm.putResource({
    id: accountId,
    tenantId: demoTenant.id,
    subscriptionId: demoSubscription.id,
    resourceGroup: demoSubscription.resourceGroup,
    type: 'Vendor.DataShare/accounts',
    name: demoDataShare.account,
    parentId: rgId,
    body: {
      id: accountId,
      name: demoDataShare.account,
      type: 'Vendor.DataShare/accounts',
      location: demoDataShare.location,
      tags: {},
      identity: { principalId: stableUuid('datashare-identity', accountId.toLowerCase()), tenantId: demoTenant.id, type: 'SystemAssigned' },
      systemData,
      properties: { createdAt: at, provisioningState: 'Succeeded', ...user },
    },
    createdAt: at,
    updatedAt: at,
  });
  await arm.putResource({
    id: shareId,
    tenantId: demoTenant.id,
    subscriptionId: demoSubscription.id,
    resourceGroup: demoSubscription.resourceGroup,
    type: 'Vendor.DataShare/accounts/shares',
    name: demoDataShare.share,
    parentId: accountId,
    body: {
      id: shareId,
      name: demoDataShare.share,
      type: 'Vendor.DataShare/accounts/shares',
      systemData,
      properties: { createdAt: at, description: 'Daily sales figures by region.', provisioningState: 'Succeeded', shareKind: 'CopyBased', terms: 'Internal use only.', ...user },
    },
    createdAt: at,
    updatedAt: at,
  });
  for (const s of demoSynchronizations()) await store.addSynchronization({ ...s, tenantId: demoTenant.id, shareIdLower: shareId.toLowerCase() });
}
