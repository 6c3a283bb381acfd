/**
 * Compatibility suite, resource manager (issue 10 item 5): the official JavaScript clients
 * `@azure/arm-compute`, `@azure/arm-authorization`, `@azure/arm-billing` and
 * `@azure/arm-automation`, and (test/python/compat_arm.py, run from here) Debian's Python
 * `azure-mgmt-*` packages, configured as a user would: the endpoint, CA trust
 * (NODE_EXTRA_CA_CERTS / REQUESTS_CA_BUNDLE), a credential from `@azure/identity` /
 * `azure-identity` pointed at Stratus — and the two alias settings on the server. No
 * pipeline policy, no scope override, no api-version override: each client sends its own
 * provider namespace, api-version and default scope.
 */
import { assertOperations, runPythonScript } from './helpers/python.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ClientSecretCredential, UsernamePasswordCredential } from '@azure/identity';
import { ComputeManagementClient } from '@azure/arm-compute';
import { AuthorizationManagementClient } from '@azure/arm-authorization';
import { BillingManagementClient } from '@azure/arm-billing';
import { AutomationClient } from '@azure/arm-automation';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { demoAdmin, demoManagedIdentity, demoPublicClient, demoServicePrincipal, demoSubscription, demoTenant } from '../src/seed/demo.ts';
import { demoAutomation } from '../src/seed/demo.ts';
import { demoDataShare, demoSynchronizationCount } from '../src/seed/demo.ts';
import { loadCatalog, shapeSku } from '../src/services/compute/index.ts';
import { roleIds } from '../src/services/arm/index.ts';
import { aliasUrlRewriter } from '../src/services/arm/aliases.ts';
import { ConfigError, loadConfig, parseNamespaceAliases } from '../src/config.ts';

/** The resource-manager audience the public-cloud clients ask for when not given their endpoint's (Python, ms-rest-js). */
const managementAudience = 'https://management.azure.com';
/** The provider namespace prefix the official clients write into paths. */
const clientNamespace = 'Microsoft.';
const sub = demoSubscription.id;
const rg = demoSubscription.resourceGroup;

let s: TestServer;
let sp: ClientSecretCredential;

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Pages of a paged iterator (`byPage()`), to prove next links were followed. */
async function pages<T>(it: { byPage(): AsyncIterable<T[]> }): Promise<T[][]> {
  const out: T[][] = [];
  for await (const p of it.byPage()) out.push(p);
  return out;
}

before(async () => {
  s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `arm=${managementAudience}`, STRATUS_PROVIDER_NAMESPACE_ALIASES: clientNamespace } });
  // The one credential line of the README.
  sp = new ClientSecretCredential(demoTenant.domain, demoServicePrincipal.appId, demoServicePrincipal.secret, { authorityHost: s.url, disableInstanceDiscovery: true });
});
after(async () => {
  await s?.close();
});

test('arm-compute: SKU list over every page, and with a location filter', async () => {
  const client = new ComputeManagementClient(sp, sub, { endpoint: s.url });
  const expected = loadCatalog().filter((x) => shapeSku(x, false) !== undefined).length;
  const all = await pages(client.resourceSkus.list());
  assert.ok(all.length > 1, `${all.length} pages`);
  assert.equal(all.flat().length, expected);
  const west = await collect(client.resourceSkus.list({ filter: "location eq 'westus2'" }));
  assert.ok(west.length > 100);
  assert.ok(west.every((x) => x.locations?.map((l) => l.toLowerCase()).includes('westus2')));
  assert.ok(west.length < expected);
});

test('arm-authorization: policies listed for a scope and one updated (user credential), role ids in the client namespace', async () => {
  const admin = new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, demoAdmin.userPrincipalName, demoAdmin.password, { authorityHost: s.url, disableInstanceDiscovery: true });
  const client = new AuthorizationManagementClient(admin, sub, { endpoint: s.url });
  const scope = `/subscriptions/${sub}/resourceGroups/${rg}`;
  const list = await collect(client.roleManagementPolicies.listForScope(scope));
  assert.equal(list.length, 5);
  // What Stratus returns keeps its own spelling.
  assert.ok(list.every((p) => p.id!.includes('/providers/Vendor.Authorization/roleManagementPolicies/')), list[0]!.id);
  const policy = list[0]!;
  const updated = await client.roleManagementPolicies.update(scope, policy.name!, {
    rules: [{ ruleType: 'RoleManagementPolicyExpirationRule', id: 'Expiration_Admin_Eligibility', isExpirationRequired: false, maximumDuration: 'P90D', target: { caller: 'Admin', operations: ['All'], level: 'Eligibility' } } as any],
  });
  const rule = updated.rules!.find((r) => r.id === 'Expiration_Admin_Eligibility') as any;
  assert.equal(rule.maximumDuration, 'P90D');
  assert.equal((await client.roleManagementPolicies.get(scope, policy.name!)).rules!.find((r) => r.id === 'Expiration_Admin_Eligibility')!.id, 'Expiration_Admin_Eligibility');
  // A role definition id in the client's namespace, in a filter (sent raw: the client has no filter option).
  const token = (await admin.getToken(`${s.url}/.default`))!.token;
  const filter = encodeURIComponent(`roleDefinitionId eq '/subscriptions/${sub}/providers/${clientNamespace}Authorization/roleDefinitions/${roleIds.owner}'`);
  const res = await fetch(`${s.url}${scope}/providers/${clientNamespace.toLowerCase()}authorization/roleManagementPolicies?api-version=2020-10-01&$filter=${filter}`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as any;
  assert.equal(res.status, 200, JSON.stringify(body));
  assert.equal(body.value.length, 1);
  assert.ok(list.some((p) => p.name === body.value[0].name));
  assert.equal(body.value[0].properties.scope, scope);
});

test('arm-billing (api-version 2020-05-01): transactions of an invoice over every page, in that version\'s shape', async () => {
  const mi = new ClientSecretCredential(demoTenant.id, demoManagedIdentity.appId, demoManagedIdentity.secret, { authorityHost: s.url, disableInstanceDiscovery: true });
  const client = new BillingManagementClient(mi, sub, { endpoint: s.url });
  const all = await pages(client.transactions.listByInvoice('70000001', 'G000000001'));
  assert.ok(all.length > 1, `${all.length} pages`);
  const txs = all.flat();
  assert.ok(txs.length >= 256, String(txs.length));
  assert.equal(new Set(txs.map((t) => t.name)).size, txs.length);
  assert.ok(txs.every((t) => t.kind === 'all' || t.kind === 'reservation'), String(txs.find((t) => t.kind !== 'all' && t.kind !== 'reservation')?.kind));
  assert.ok(txs.every((t) => typeof t.transactionAmount?.value === 'number' && t.transactionAmount.currency === 'USD'));
});

test('arm-automation (api-version 2015-10-31): the demo webhook', async () => {
  // 10.x's constructor takes a third, required argument (`countType1`, used by its statistics operations).
  const client = new AutomationClient(sp, sub, 'status', { baseUri: s.url });
  const hook = await client.webhook.get(rg, demoAutomation.account, demoAutomation.webhook);
  assert.equal(hook.name, demoAutomation.webhook);
  assert.equal(hook.runbook?.name, demoAutomation.runbook);
  assert.equal(hook.isEnabled, true);
  assert.ok(hook.creationTime instanceof Date);
  // Ids in a body are taken in the client's namespace and kept as Stratus spells them; free text is not touched.
  const roleId = `/subscriptions/${sub}/providers/${clientNamespace}Authorization/roleDefinitions/${roleIds.reader}`;
  const note = `Reads /providers/${clientNamespace}Compute/skus nightly`;
  const updated = await client.webhook.update(rg, demoAutomation.account, demoAutomation.webhook, { parameters: { RoleId: roleId }, description: note });
  assert.equal(updated.parameters?.RoleId, `/subscriptions/${sub}/providers/Vendor.Authorization/roleDefinitions/${roleIds.reader}`);
  assert.equal(updated.description, note);
});

test('data share: the listSynchronizations next link answers GET (as the clients fetch it) with the read-budget header', async () => {
  const token = (await sp.getToken(`${managementAudience}/.default`))!.token;
  const base = `${s.url}/subscriptions/${sub}/resourceGroups/${rg}/providers/${clientNamespace}DataShare/accounts/${demoDataShare.account}/shares/${demoDataShare.share}/listSynchronizations?api-version=2020-09-01`;
  const first = await fetch(base, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const page1 = (await first.json()) as any;
  assert.equal(first.status, 200, JSON.stringify(page1));
  assert.ok(page1.nextLink.includes('/providers/Vendor.DataShare/'));
  let next: string | undefined = page1.nextLink;
  let count = page1.value.length;
  let remaining = Number(first.headers.get('x-vendor-ratelimit-remaining-subscription-reads'));
  while (next) {
    const r = await fetch(next, { headers: { authorization: `Bearer ${token}` } });
    const body = (await r.json()) as any;
    assert.equal(r.status, 200, JSON.stringify(body));
    const left = Number(r.headers.get('x-vendor-ratelimit-remaining-subscription-reads'));
    assert.ok(left < remaining, `${left} < ${remaining}`);
    remaining = left;
    count += body.value.length;
    next = body.nextLink ?? undefined;
  }
  assert.equal(count, demoSynchronizationCount);
});

test('older api-versions answer their own shapes on the wire; an unknown one is 400 listing the supported ones', async () => {
  const mi = new ClientSecretCredential(demoTenant.id, demoManagedIdentity.appId, demoManagedIdentity.secret, { authorityHost: s.url, disableInstanceDiscovery: true });
  const get = async (cred: ClientSecretCredential, p: string) => {
    const token = (await cred.getToken(`${managementAudience}/.default`))!.token;
    const r = await fetch(`${s.url}${p}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: r.status, body: (await r.json()) as any };
  };
  const tx = `/providers/${clientNamespace}Billing/billingAccounts/70000001/invoices/G000000001/transactions`;
  const v2020 = await get(mi, `${tx}?api-version=2020-05-01&count=true`);
  assert.equal(v2020.status, 200);
  assert.equal(v2020.body.totalCount, undefined);
  const t0 = v2020.body.value[0];
  assert.equal(t0.systemData, undefined);
  assert.ok(['all', 'reservation'].includes(t0.properties.kind));
  assert.equal(t0.properties.creditType, undefined);
  const v2024 = await get(mi, `${tx}?api-version=2024-04-01&count=true`);
  assert.equal(typeof v2024.body.totalCount, 'number');
  assert.equal(v2024.body.value[0].name, t0.name);
  assert.ok(v2024.body.value[0].systemData);
  const hook = `/subscriptions/${sub}/resourceGroups/${rg}/providers/${clientNamespace}Automation/automationAccounts/${demoAutomation.account}/webhooks/${demoAutomation.webhook}`;
  const old = await get(sp, `${hook}?api-version=2015-10-31`);
  assert.equal(old.status, 200);
  assert.equal(old.body.systemData, undefined);
  assert.ok((await get(sp, `${hook}?api-version=2024-10-23`)).body.systemData);
  const account = `/subscriptions/${sub}/resourceGroups/${rg}/providers/${clientNamespace}DataShare/accounts/${demoDataShare.account}`;
  const ds2019 = await get(sp, `${account}?api-version=2019-11-01`);
  assert.equal(ds2019.status, 200);
  assert.equal(ds2019.body.systemData, undefined);
  assert.ok((await get(sp, `${account}?api-version=2020-09-01`)).body.systemData);
  const unknown = await get(sp, `${hook}?api-version=2017-05-15-preview`);
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.error.code, 'InvalidApiVersionParameter');
  assert.match(unknown.body.error.message, /'2024-10-23,2015-10-31'/);
});

test('STRATUS_PROVIDER_NAMESPACE_ALIASES: parsing, and only resource-manager URLs are rewritten', () => {
  assert.deepEqual(parseNamespaceAliases(' Acme, Other.,,vendor.'), ['Acme.', 'Other.']);
  assert.throws(() => parseNamespaceAliases('Acme/x'), ConfigError);
  assert.throws(() => loadConfig({}, { STRATUS_PROVIDER_NAMESPACE_ALIASES: 'a b' }), /STRATUS_PROVIDER_NAMESPACE_ALIASES/);
  const rewrite = aliasUrlRewriter(['Acme.']);
  assert.equal(rewrite({ url: '/subscriptions/x/PROVIDERS/acme.Compute/skus?$filter=id%20eq%20%27%2Fproviders%2FAcme.Authorization%2Fx%27' }), '/subscriptions/x/providers/Vendor.Compute/skus?$filter=id%20eq%20%27%2Fproviders%2FVendor.Authorization%2Fx%27');
  assert.equal(rewrite({ url: '/v1.0/users/x/messages?$filter=subject eq \'/providers/Acme.Compute\'' }), "/v1.0/users/x/messages?$filter=subject eq '/providers/Acme.Compute'");
  assert.equal(rewrite({ url: '/subscriptions/x/resourceGroups/Acme.rg/providers/Vendor.Automation/a' }), '/subscriptions/x/resourceGroups/Acme.rg/providers/Vendor.Automation/a');
  assert.equal(aliasUrlRewriter([])({ url: '/providers/Acme.Billing/x' }), '/providers/Acme.Billing/x');
});

test('Python: azure-mgmt-compute, -authorization, -billing, -datashare, -automation with azure-identity', async () => {
  const results = await runPythonScript('compat_arm.py', ['azure.mgmt.compute', 'azure.mgmt.authorization', 'azure.mgmt.billing', 'azure.mgmt.datashare', 'azure.mgmt.automation', 'azure.identity'], {
    STRATUS_URL: s.url,
    STRATUS_TENANT: demoTenant.domain,
    STRATUS_SUBSCRIPTION: sub,
    STRATUS_RESOURCE_GROUP: rg,
    STRATUS_SP_ID: demoServicePrincipal.appId,
    STRATUS_SP_SECRET: demoServicePrincipal.secret,
    STRATUS_PUBLIC_CLIENT_ID: demoPublicClient.appId,
    STRATUS_ADMIN_USER: demoAdmin.userPrincipalName,
    STRATUS_ADMIN_PASSWORD: demoAdmin.password,
    STRATUS_MI_ID: demoManagedIdentity.appId,
    STRATUS_MI_SECRET: demoManagedIdentity.secret,
    STRATUS_SKU_COUNT: String(loadCatalog().filter((x) => shapeSku(x, false) !== undefined).length),
    STRATUS_SYNC_COUNT: String(demoSynchronizationCount),
  });
  assertOperations(results, ['compute.resource_skus.list', 'compute.resource_skus.list(filter)', 'authorization.role_management_policies.list_for_scope', 'authorization.role_management_policies.update', 'billing.transactions.list_by_invoice', 'datashare.shares.list_synchronizations', 'datashare.accounts.begin_delete', 'automation.webhook.get']);
});
