/**
 * The resource manager's base surface through the official clients, configured as a user
 * would (issue 27): `@azure/arm-resources` 7 and `@azure/arm-resources-subscriptions` 2 with
 * the endpoint, CA trust (NODE_EXTRA_CA_CERTS) and a `ClientSecretCredential` pointed at
 * Stratus, and the two alias settings on the server (the clients send `Microsoft.` namespaces
 * and ask for their cloud's default scope); Python `azure-mgmt-resource` the same way
 * (test/python/resources.py, run from here). The long-running group delete is driven by
 * moving the Stratus clock, never by waiting. Bodies are compared with the published examples.
 */
import { assertOperations, runPythonScript } from './helpers/python.ts';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ClientSecretCredential } from '@azure/identity';
import { ResourceManagementClient } from '@azure/arm-resources';
import { SubscriptionClient } from '@azure/arm-resources-subscriptions';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { examplesDir, readExample } from './helpers/reference.ts';
import { demoServicePrincipal, demoSubscription, demoTenant } from '../src/seed/demo.ts';
import { deleteSeconds } from '../src/services/resources/resource-groups.ts';

const managementAudience = 'https://management.azure.com';
const clientNamespace = 'Microsoft.';
const sub = demoSubscription.id;

let s: TestServer;
let sp: ClientSecretCredential;

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function advance(seconds: number): Promise<void> {
  const r = await s.control('/_stratus/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: seconds }) });
  assert.equal(r.status, 200);
}

/**
 * A pipeline policy that moves the Stratus clock past the delete's duration before each poll of
 * an operation-results location: `beginDeleteAndWait` then completes on its first poll
 * without waiting out `Retry-After`.
 */
const clockBeforePoll = {
  name: 'stratusClockBeforePoll',
  async sendRequest(request: { url: string; method: string }, next: (r: any) => Promise<any>) {
    if (request.method === 'GET' && /\/operationresults\//i.test(request.url)) await advance(deleteSeconds + 1);
    return next(request);
  },
};

/** The keys (and nested keys) of a published example body that a Stratus body lacks. */
function missingKeys(example: unknown, actual: unknown, at = ''): string[] {
  if (example === null || typeof example !== 'object' || Array.isArray(example)) return [];
  if (actual === null || typeof actual !== 'object') return [at || '(body)'];
  const out: string[] = [];
  for (const [k, v] of Object.entries(example)) {
    if (!(k in (actual as Record<string, unknown>))) out.push(`${at}${k}`);
    else out.push(...missingKeys(v, (actual as Record<string, unknown>)[k], `${at}${k}.`));
  }
  return out;
}

before(async () => {
  s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `arm=${managementAudience}`, STRATUS_PROVIDER_NAMESPACE_ALIASES: clientNamespace } });
  sp = new ClientSecretCredential(demoTenant.domain, demoServicePrincipal.appId, demoServicePrincipal.secret, { authorityHost: s.url, disableInstanceDiscovery: true });
});
after(async () => {
  await s?.close();
});

test('arm-resources-subscriptions: subscriptions list/get, locations, tenants; shaped as the published examples', async (t) => {
  const client = new SubscriptionClient(sp, { endpoint: s.url });
  const subs = await collect(client.subscriptions.list());
  assert.deepEqual(subs.map((x) => x.subscriptionId), [sub]);
  const one = await client.subscriptions.get(sub);
  assert.equal(one.displayName, demoSubscription.displayName);
  assert.equal(one.state, 'Enabled');
  assert.equal(one.tenantId, demoTenant.id);
  const locations = await collect(client.subscriptions.listLocations(sub));
  assert.ok(locations.length >= 10);
  assert.equal(locations.find((l) => l.name === 'westus2')?.displayName, 'West US 2');
  const tenants = await collect(client.tenants.list());
  assert.deepEqual(tenants.map((x) => [x.tenantId, x.tenantCategory, x.defaultDomain]), [[demoTenant.id, 'Home', demoTenant.domain]]);

  const dir = examplesDir(t);
  if (!dir) return;
  const raw = async (p: string) => (await fetch(`${s.url}${p}?api-version=2022-12-01`, { headers: { authorization: `Bearer ${(await sp.getToken(`${managementAudience}/.default`))!.token}` } })).json();
  const subscription = await raw(`/subscriptions/${sub}`);
  const { managedByTenants: _m, tags: _t, ...published } = readExample(dir, 'GetSubscription.json').responses['200'].body;
  assert.deepEqual(missingKeys(published, subscription), []);
  const loc = (await raw(`/subscriptions/${sub}/locations`)).value[0];
  const { availabilityZoneMappings: _z, ...publishedLoc } = readExample(dir, 'GetLocations.json').responses['200'].body.value[0];
  assert.deepEqual(missingKeys(publishedLoc, loc), []);
  const tenant = (await raw('/tenants')).value[0];
  const homeExample = readExample(dir, 'GetTenants.json').responses['200'].body.value.find((x: any) => x.tenantCategory === 'Home');
  assert.deepEqual(missingKeys(homeExample, tenant), []);
});

test('arm-resources: resource group createOrUpdate, checkExistence, get, list with filter and paging, update, beginDelete driven by the clock', async (t) => {
  const client = new ResourceManagementClient(sp, sub, { endpoint: s.url });
  assert.equal((await client.resourceGroups.checkExistence(demoSubscription.resourceGroup)).body, true, 'the demo group exists');
  assert.equal((await client.resourceGroups.checkExistence('sdk-rg')).body, false);
  const created = await client.resourceGroups.createOrUpdate('sdk-rg', { location: 'eastus', tags: { owner: 'sdk' } });
  assert.equal(created.name, 'sdk-rg');
  assert.equal(created.properties?.provisioningState, 'Succeeded');
  assert.equal((await client.resourceGroups.checkExistence('sdk-rg')).body, true);
  assert.deepEqual((await client.resourceGroups.get('sdk-rg')).tags, { owner: 'sdk' });
  const updated = await client.resourceGroups.update('sdk-rg', { tags: { owner: 'sdk', stage: 'two' } });
  assert.deepEqual(updated.tags, { owner: 'sdk', stage: 'two' });
  assert.equal(updated.location, 'eastus');
  for (let i = 0; i < 3; i++) await client.resourceGroups.createOrUpdate(`sdk-page-${i}`, { location: 'westus2', tags: { paged: 'yes' } });
  const pages: string[][] = [];
  for await (const page of client.resourceGroups.list({ filter: "tagName eq 'paged' and tagValue eq 'yes'", top: 2 }).byPage()) pages.push(page.map((g) => g.name!));
  assert.deepEqual(pages, [['sdk-page-0', 'sdk-page-1'], ['sdk-page-2']], 'the next link was followed');
  assert.ok((await collect(client.resourceGroups.list())).some((g) => g.name === demoSubscription.resourceGroup));

  // Driven by hand: the first poll finds it running, the clock moves, the next poll completes it.
  const poller = await client.resourceGroups.beginDelete('sdk-page-0');
  await poller.poll();
  assert.equal(poller.isDone(), false);
  assert.equal((await client.resourceGroups.get('sdk-page-0')).properties?.provisioningState, 'Deleting');
  await advance(deleteSeconds + 1);
  await poller.poll();
  assert.equal(poller.isDone(), true);
  assert.equal((await client.resourceGroups.checkExistence('sdk-page-0')).body, false);

  // beginDeleteAndWait with a client whose pipeline moves the clock before each poll.
  const clocked = new ResourceManagementClient(sp, sub, { endpoint: s.url, additionalPolicies: [{ policy: clockBeforePoll, position: 'perCall' }] });
  await clocked.resourceGroups.beginDeleteAndWait('sdk-rg');
  assert.equal((await client.resourceGroups.checkExistence('sdk-rg')).body, false);

  const dir = examplesDir(t);
  if (!dir) return;
  const ex = readExample(dir, 'CreateResourceGroup.json');
  const put = await fetch(`${s.url}/subscriptions/${sub}/resourcegroups/my-resource-group?api-version=2025-04-01`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${(await sp.getToken(`${managementAudience}/.default`))!.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(ex.parameters.parameters),
  });
  assert.equal(put.status, 201);
  const body = await put.json();
  const expected = { ...ex.responses['201'].body, id: ex.responses['201'].body.id.replace('00000000-0000-0000-0000-000000000000', sub) };
  for (const [k, v] of Object.entries(expected)) assert.deepEqual(body[k], v, k);
  const got = readExample(dir, 'ResourceGroups_Get.json').responses['200'].body;
  assert.deepEqual(missingKeys(got, await client.resourceGroups.get('my-resource-group')), []);
});

test('arm-resources: providers list/get/register/unregister (client namespace), resources list, tags at scope', async (t) => {
  const client = new ResourceManagementClient(sp, sub, { endpoint: s.url });
  const providers = await collect(client.providers.list());
  assert.ok(providers.some((p) => p.namespace === 'Vendor.Automation' && p.registrationState === 'Registered'));
  const one = await client.providers.get('Microsoft.DataShare');
  assert.equal(one.namespace, 'Vendor.DataShare');
  assert.ok(one.resourceTypes?.some((x) => x.resourceType === 'accounts/shares' && x.apiVersions?.includes('2021-08-01')));
  assert.equal((await client.providers.unregister('Microsoft.DataShare')).registrationState, 'NotRegistered');
  assert.equal((await client.providers.register('Microsoft.DataShare')).registrationState, 'Registering');

  const all = await collect(client.resources.list({ expand: 'createdTime' }));
  assert.ok(all.some((r) => r.type === 'Vendor.Storage/storageAccounts' && r.createdTime instanceof Date));
  const filtered = await collect(client.resources.listByResourceGroup(demoSubscription.resourceGroup, { filter: "resourceType eq 'Microsoft.Automation/automationAccounts'" }));
  assert.ok(filtered.length >= 1 && filtered.every((r) => /automationaccounts$/i.test(r.type!)), JSON.stringify(filtered.map((r) => r.type)));

  const scope = `/subscriptions/${sub}/resourceGroups/${demoSubscription.resourceGroup}`;
  const tags = await client.tagsOperations.beginCreateOrUpdateAtScopeAndWait(scope, { properties: { tags: { cost: 'demo' } } });
  assert.deepEqual(tags.properties.tags, { cost: 'demo' });
  assert.deepEqual((await client.tagsOperations.getAtScope(scope)).properties.tags, { cost: 'demo' });
  const merged = await client.tagsOperations.beginUpdateAtScopeAndWait(scope, { operation: 'Merge', properties: { tags: { team: 'a' } } });
  assert.deepEqual(merged.properties.tags, { cost: 'demo', team: 'a' });
  void t;
});

test('Python: azure-mgmt-resource ResourceManagementClient and SubscriptionClient with azure-identity', async () => {
  const results = await runPythonScript('resources.py', ['azure.mgmt.resource', 'azure.identity'], {
    STRATUS_URL: s.url,
    STRATUS_CONTROL_KEY: s.controlKey,
    STRATUS_TENANT: demoTenant.domain,
    STRATUS_TENANT_ID: demoTenant.id,
    STRATUS_SUBSCRIPTION: sub,
    STRATUS_RESOURCE_GROUP: demoSubscription.resourceGroup,
    STRATUS_SP_ID: demoServicePrincipal.appId,
    STRATUS_SP_SECRET: demoServicePrincipal.secret,
    STRATUS_DELETE_SECONDS: String(deleteSeconds),
  });
  assertOperations(results, ['subscriptions.list', 'subscriptions.get', 'subscriptions.list_locations', 'tenants.list', 'resource_groups.create_or_update', 'resource_groups.check_existence', 'resource_groups.get', 'resource_groups.list(filter)', 'resource_groups.update', 'resource_groups.begin_delete', 'providers.list', 'providers.get', 'providers.register', 'resources.list']);
});
