/**
 * The analytics part of the demo data set: workspaces and a few hundred admin dataflows
 * (issue "Demo data names": at least 200 dataflows across at least 5 workspaces, one of
 * them `Stratus Demo`), a handful in the second tenant to prove tenant isolation, and a
 * second app registration that holds the analytics application role `Tenant.Read.All`
 * (the service principal the spec §5 refuses).
 *
 * Everything is deterministic: the same ids, names and owners on every seed, so tests and
 * users can rely on them ({@link demoDataflows} is the one source of both the seed and the
 * tests' expected answers).
 */
import type { Kysely } from 'kysely';
import type { SeedContext } from '../../context.ts';
import { stableUuid } from '../../core/ids.ts';
import { demoAdmin, demoTenant, demoUser, otherTenant, otherUser } from '../../seed/demo.ts';

/** The demo workspace shared with the data platform area (issue "Demo data names"). */
export const demoWorkspace = { id: '7d0c6f2e-3a1b-4c5d-8e9f-0a1b2c3d4e5f', name: 'Stratus Demo' } as const;

/**
 * A service principal that holds the analytics application role `Tenant.Read.All`: the
 * admin dataflow listing refuses its app token (spec §5: those permissions "must not be
 * present" with service principal authentication).
 */
export const tenantReaderApp = {
  appId: '2b6e0d4f-9a1c-4e7b-8d3f-5c0a9e1b7d62',
  objectId: '8f1d3b5a-7c9e-4a2b-b6d8-0e2f4a6c8b73',
  secret: 'stratus-tenant-reader-secret',
  displayName: 'Stratus Tenant Reader App',
} as const;

/** One demo workspace of the analytics service. */
export interface DemoWorkspace {
  tenantId: string;
  id: string;
  name: string;
}

/** One demo dataflow: the §2.1 fields plus its tenant and last modification time (stored, not returned). */
export interface DemoDataflow {
  tenantId: string;
  objectId: string;
  name: string;
  description: string;
  modelUrl: string;
  configuredBy: string;
  workspaceId: string;
  /** ISO 8601 UTC. */
  modifiedDateTime: string;
}

const workspaceNames = ['Finance Reporting', 'Sales Operations', 'Marketing Insights', 'Supply Chain Analytics', 'People and Culture'];

/** The demo workspaces: `Stratus Demo` and five more in the demo tenant, one in the second tenant. */
export function demoWorkspaces(): DemoWorkspace[] {
  return [
    { tenantId: demoTenant.id, id: demoWorkspace.id, name: demoWorkspace.name },
    ...workspaceNames.map((name) => ({ tenantId: demoTenant.id, id: stableUuid('stratus-demo-analytics-workspace', name), name })),
    { tenantId: otherTenant.id, id: stableUuid('stratus-other-analytics-workspace', 'Other Analytics'), name: 'Other Analytics' },
  ];
}

/** Subject, source system and home workspace (index into the demo tenant's workspaces) of the demo dataflows. */
const subjects: [string, string, number][] = [
  ['Sales Orders', 'the order management system', 0],
  ['Customer Accounts', 'the CRM', 0],
  ['Product Catalog', 'the product information service', 0],
  ['Inventory Levels', 'the warehouse management system', 4],
  ['General Ledger', 'the ERP finance module', 1],
  ['Accounts Payable', 'the ERP finance module', 1],
  ['Accounts Receivable', 'the billing platform', 1],
  ['Web Traffic', 'the web analytics export', 3],
  ['Campaign Performance', 'the marketing automation platform', 3],
  ['Employee Directory', 'the HR information system', 5],
  ['Payroll', 'the payroll provider', 5],
  ['Shipments', 'the carrier tracking feeds', 4],
  ['Supplier Scorecard', 'the procurement portal', 4],
  ['Budget vs Actual', 'the planning workbook', 1],
  ['Support Tickets', 'the service desk', 0],
  ['Lead Pipeline', 'the CRM', 2],
  ['Returns', 'the order management system', 2],
  ['Store Footfall', 'the in-store sensors', 2],
  ['Currency Rates', 'the treasury rates service', 1],
  ['Fiscal Calendar', 'the finance reference tables', 1],
  ['Churn Signals', 'the subscription database', 0],
  ['Warehouse Movements', 'the warehouse management system', 4],
  ['Headcount', 'the HR information system', 5],
  ['Expense Claims', 'the expense application', 1],
  ['Forecast Inputs', 'the planning workbook', 2],
];
const variants = ['Daily Refresh', 'Staging', 'Cleansed', 'Monthly Snapshot', 'EMEA', 'Americas', 'APAC', 'Archive', 'Incremental'];

/** Owners of the demo dataflows: the demo users and made-up colleagues of the demo tenant. */
export const dataflowOwners = [
  demoAdmin.userPrincipalName,
  demoUser.userPrincipalName,
  'maria.garcia@stratus.test',
  'li.wei@stratus.test',
  'samuel.okafor@stratus.test',
  'anna.kowalska@stratus.test',
  'diego.fernandez@stratus.test',
  'priya.nair@stratus.test',
];

/** Number of demo dataflows in the demo tenant. */
export const demoDataflowCount = 220;

/** The demo dataflows of both tenants, in a fixed order. */
export function demoDataflows(): DemoDataflow[] {
  const ws = demoWorkspaces().filter((w) => w.tenantId === demoTenant.id);
  const base = Date.UTC(2026, 9, 30, 17, 0, 0);
  const out: DemoDataflow[] = [];
  for (let i = 0; i < demoDataflowCount; i++) {
    const [subject, source, home] = subjects[i % subjects.length]!;
    const variant = variants[Math.floor(i / subjects.length) % variants.length]!;
    const w = ws[home]!;
    const objectId = stableUuid('stratus-demo-dataflow', String(i));
    const name = `${subject} - ${variant}`;
    out.push({
      tenantId: demoTenant.id,
      objectId,
      name,
      description: i % 11 === 3 ? '' : `Loads ${subject.toLowerCase()} from ${source} into the ${w.name} workspace (${variant.toLowerCase()}).`,
      modelUrl: `https://stratusdataflows.blob.stratus.test/analytics/${w.id}/${objectId}/model.json`,
      // Three owners per workspace, rotating through its dataflows.
      configuredBy: dataflowOwners[(home * 2 + ((i * 3 + Math.floor(i / 8)) % 3)) % dataflowOwners.length]!,
      workspaceId: w.id,
      modifiedDateTime: new Date(base - ((i * 37) % 300) * 86_400_000 - (i % 24) * 3_600_000 - (i % 60) * 60_000).toISOString(),
    });
  }
  const other = demoWorkspaces().find((w) => w.tenantId === otherTenant.id)!;
  ['Sales Orders - Daily Refresh', 'Ledger Export', 'Sales Forecast'].forEach((name, i) => {
    const objectId = stableUuid('stratus-other-dataflow', String(i));
    out.push({
      tenantId: otherTenant.id,
      objectId,
      name,
      description: `A dataflow of the other tenant (${name.toLowerCase()}).`,
      modelUrl: `https://otherdataflows.blob.other.test/analytics/${other.id}/${objectId}/model.json`,
      configuredBy: otherUser.userPrincipalName,
      workspaceId: other.id,
      modifiedDateTime: new Date(base - i * 86_400_000).toISOString(),
    });
  });
  return out;
}

/** Loads the analytics demo data: workspaces, dataflows and the tenant-reader app registration. */
export async function seedAnalytics(ctx: SeedContext): Promise<void> {
  await ctx.store.transaction(async (trx) => {
    for (const w of demoWorkspaces()) await trx.insertInto('analytics_workspaces').values({ tenant_id: w.tenantId, id: w.id, name: w.name }).execute();
    const rows = demoDataflows().map((d) => ({
      tenant_id: d.tenantId,
      object_id: d.objectId,
      workspace_id: d.workspaceId,
      name: d.name,
      description: d.description,
      model_url: d.modelUrl,
      configured_by: d.configuredBy,
      modified_at: d.modifiedDateTime,
    }));
    for (let i = 0; i < rows.length; i += 50) await trx.insertInto('analytics_dataflows').values(rows.slice(i, i + 50)).execute();
  });
  if (!(await ctx.identity.directory.findApp(tenantReaderApp.appId))) {
    await ctx.identity.directory.addApp(
      { appId: tenantReaderApp.appId, objectId: tenantReaderApp.objectId, displayName: tenantReaderApp.displayName, tenantId: demoTenant.id, kind: 'ServicePrincipal', redirectUris: [] },
      tenantReaderApp.secret,
      [{ audience: 'analytics', role: 'Tenant.Read.All' }],
    );
  }
}
