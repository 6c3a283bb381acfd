/**
 * The resource manager's base surface over HTTPS (issue 27; reference resource-manager-base):
 * subscriptions, tenants, locations, providers and their registration (the kernel's
 * `MissingSubscriptionRegistration`), resource groups (PUT 201/200, GET, HEAD 204/404, PATCH,
 * list with tag filter and paging, names), the long-running delete that removes every area's
 * resources and the role assignments inside the group (driven by the Stratus clock), the
 * generic resource listing with its filters and paging, and tags at scope.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import crypto from 'node:crypto';
import { demoAdmin, demoSubscription, demoTenant, demoUser, otherSubscription } from '../src/seed/demo.ts';
import { roleIds } from '../src/services/arm/index.ts';
import { modules } from '../src/services/index.ts';
import { loadCatalog } from '../src/services/compute/index.ts';
import { databaseColumns } from '../src/store/database.ts';
import { deleteSeconds, retryAfterSeconds } from '../src/services/resources/resource-groups.ts';
import { registeringSeconds } from '../src/services/resources/providers.ts';

const rgApi = '2025-04-01';
const subApi = '2022-12-01';
const sub = demoSubscription.id;
const base = `/subscriptions/${sub}`;

let s: TestServer;
let admin: string;
let user: string;
let sp: string;
let eve: string;

interface Res {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

async function call(method: string, pathOrUrl: string, opts: { token?: string | null; body?: unknown; query?: Record<string, string>; api?: string } = {}): Promise<Res> {
  const token = opts.token === undefined ? admin : opts.token;
  let url = pathOrUrl.startsWith('https://') ? pathOrUrl : `${s.url}${pathOrUrl}`;
  if (!pathOrUrl.startsWith('https://')) url += `?${new URLSearchParams({ 'api-version': opts.api ?? rgApi, ...(opts.query ?? {}) }).toString()}`;
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, headers: res.headers, text };
}

async function advance(seconds: number) {
  const r = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: seconds }) });
  assert.equal(r.status, 200);
}

before(async () => {
  s = await startTestServer();
  const scope = ['api://stratus/arm/user_impersonation'];
  admin = await userToken(s.url, identities.admin, scope);
  user = await userToken(s.url, identities.user, scope);
  eve = await userToken(s.url, identities.eve, scope);
  sp = await appToken(s.url, 'arm', identities.sp);
});
after(async () => {
  await s?.close();
});

test('subscriptions: listed only where the caller may read; get, locations, tenants; the api-versions clients send', async () => {
  const mine = await call('GET', '/subscriptions', { api: subApi });
  assert.equal(mine.status, 200, mine.text);
  assert.deepEqual(mine.body.value.map((x: any) => x.subscriptionId), [sub]);
  assert.equal(mine.body.value[0].id, `/subscriptions/${sub}`);
  assert.equal(mine.body.value[0].tenantId, demoTenant.id);
  assert.equal(mine.body.value[0].state, 'Enabled');
  assert.equal((await call('GET', '/subscriptions', { api: subApi, token: user })).body.value.length, 0, 'a user without a role reads no subscription');
  assert.deepEqual((await call('GET', '/subscriptions', { api: subApi, token: eve })).body.value.map((x: any) => x.subscriptionId), [otherSubscription.id]);
  for (const api of ['2022-12-01', '2021-01-01', '2020-01-01', '2016-06-01']) assert.equal((await call('GET', base, { api })).status, 200, api);
  const bad = await call('GET', base, { api: '2099-01-01' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'InvalidApiVersionParameter');
  const got = await call('GET', base, { api: subApi });
  assert.equal(got.body.displayName, demoSubscription.displayName);
  assert.equal(got.body.subscriptionPolicies.spendingLimit, 'Off');
  assert.equal((await call('GET', `/subscriptions/${otherSubscription.id}`, { api: subApi })).status, 404, "another tenant's subscription");
  const locs = await call('GET', `${base}/locations`, { api: subApi });
  assert.equal(locs.status, 200);
  const east = locs.body.value.find((l: any) => l.name === 'eastus');
  assert.equal(east.id, `${base}/locations/eastus`);
  assert.equal(east.displayName, 'East US');
  assert.equal(east.metadata.regionType, 'Physical');
  const skuLocations = new Set(loadCatalog().flatMap((x) => (x.locations ?? []).map((l) => l.toLowerCase())));
  const listed = new Set(locs.body.value.map((l: any) => l.name));
  assert.deepEqual([...skuLocations].filter((l) => !listed.has(l)), [], 'every location of the SKU catalog is listed (and so accepted for a group)');
  const tenants = await call('GET', '/tenants', { api: subApi });
  assert.deepEqual(tenants.body.value, [
    { id: `/tenants/${demoTenant.id}`, tenantId: demoTenant.id, countryCode: 'US', displayName: demoTenant.displayName, domains: [demoTenant.domain], tenantCategory: 'Home', defaultDomain: demoTenant.domain, tenantType: 'AAD' },
  ]);
  assert.equal((await call('GET', '/tenants', { api: subApi, token: null })).status, 401);
});

test('providers: the served namespaces from the areas, registration states, MissingSubscriptionRegistration on PUT', async () => {
  const list = await call('GET', `${base}/providers`);
  assert.equal(list.status, 200, list.text);
  const names = list.body.value.map((p: any) => p.namespace);
  for (const ns of ['Vendor.Resources', 'Vendor.Automation', 'Vendor.DataShare', 'Vendor.Compute', 'Vendor.Authorization', 'Vendor.Billing']) assert.ok(names.includes(ns), `${ns} in ${names}`);
  assert.ok(list.body.value.every((p: any) => p.registrationState === 'Registered'), 'everything registered in the demo');
  const automation = list.body.value.find((p: any) => p.namespace === 'Vendor.Automation');
  assert.equal(automation.id, `${base}/providers/Vendor.Automation`);
  assert.equal(automation.registrationPolicy, 'RegistrationRequired');
  const webhooks = automation.resourceTypes.find((t: any) => t.resourceType === 'automationAccounts/webhooks');
  assert.ok(webhooks, JSON.stringify(automation.resourceTypes.map((t: any) => t.resourceType)));
  assert.ok(webhooks.apiVersions.includes('2024-10-23'));
  assert.ok(webhooks.locations.includes('East US'));
  assert.ok(!automation.resourceTypes.some((t: any) => /generateUri/i.test(t.resourceType)), 'actions are not resource types');
  const datashare = list.body.value.find((p: any) => p.namespace === 'Vendor.DataShare');
  assert.deepEqual(datashare.resourceTypes.map((t: any) => t.resourceType).filter((t: string) => /list/i.test(t)), [], 'nor are list actions read by GET');
  assert.equal(list.body.value.find((p: any) => p.namespace === 'Vendor.Resources').registrationPolicy, 'RegistrationFree');
  const expanded = await call('GET', `${base}/providers`, { query: { $expand: 'resourceTypes/aliases' } });
  assert.deepEqual(expanded.body.value[1].resourceTypes[0].aliases, []);

  const unknown = await call('GET', `${base}/providers/Vendor.Nope`);
  assert.equal(unknown.status, 404);
  assert.deepEqual(unknown.body.error, { code: 'InvalidResourceNamespace', message: "The resource namespace 'Vendor.Nope' is invalid." });
  assert.equal((await call('POST', `${base}/providers/Vendor.Automation/unregister`, { token: user })).status, 403);

  const un = await call('POST', `${base}/providers/vendor.automation/unregister`);
  assert.equal(un.status, 200, un.text);
  assert.equal(un.body.registrationState, 'NotRegistered');
  assert.equal((await call('GET', `${base}/providers/Vendor.Automation`)).body.registrationState, 'NotRegistered');
  const refused = await call('PUT', `${base}/resourceGroups/stratus-rg/providers/Vendor.Automation/automationAccounts/unregistered`, { api: '2024-10-23', body: { location: 'eastus' } });
  assert.equal(refused.status, 409, refused.text);
  const message = "The subscription is not registered to use namespace 'Vendor.Automation'. See https://aka.ms/rps-not-found for how to register subscriptions.";
  assert.deepEqual(refused.body.error, { code: 'MissingSubscriptionRegistration', message, details: [{ code: 'MissingSubscriptionRegistration', message, target: 'Vendor.Automation' }] });
  assert.equal((await call('GET', `${base}/resourceGroups/stratus-rg/providers/Vendor.Automation/automationAccounts/unregistered`, { api: '2024-10-23' })).status, 404, 'reads are not refused, nothing was written');
  // Another namespace is unaffected.
  assert.equal((await call('GET', `${base}/providers/Vendor.DataShare`)).body.registrationState, 'Registered');

  const reg = await call('POST', `${base}/providers/Vendor.Automation/register`);
  assert.equal(reg.body.registrationState, 'Registering');
  const put = await call('PUT', `${base}/resourceGroups/stratus-rg/providers/Vendor.Automation/automationAccounts/registered-now`, { api: '2024-10-23', body: { location: 'eastus' } });
  assert.equal(put.status, 201, put.text);
  await advance(registeringSeconds + 1);
  assert.equal((await call('GET', `${base}/providers/Vendor.Automation`)).body.registrationState, 'Registered');
  assert.equal((await call('POST', `${base}/providers/Vendor.Automation/register`)).body.registrationState, 'Registered', 'registering a registered namespace');
});

test('resource groups: PUT 201/200, GET, HEAD 204/404, PATCH keeps what is not given, location immutable, names', async () => {
  const g = `${base}/resourcegroups/rg-life`;
  const created = await call('PUT', g, { body: { location: 'westus2', tags: { env: 'test' }, managedBy: `${base}/resourceGroups/x/providers/Vendor.Compute/things/owner` } });
  assert.equal(created.status, 201, created.text);
  assert.deepEqual(created.body, {
    id: `${base}/resourceGroups/rg-life`,
    name: 'rg-life',
    type: 'Vendor.Resources/resourceGroups',
    properties: { provisioningState: 'Succeeded' },
    location: 'westus2',
    managedBy: `${base}/resourceGroups/x/providers/Vendor.Compute/things/owner`,
    tags: { env: 'test' },
  });
  assert.equal((await call('PUT', `${base}/resourceGroups/RG-LIFE`, { body: { location: 'West US 2', tags: { env: 'test' }, managedBy: created.body.managedBy } })).status, 200);
  const got = await call('GET', `${base}/resourceGroups/Rg-Life`);
  assert.equal(got.body.name, 'rg-life', 'the stored casing');
  const head = await fetch(`${s.url}${base}/resourcegroups/rg-life?api-version=${rgApi}`, { method: 'HEAD', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(head.status, 204);
  assert.equal(await head.text(), '');
  const missing = await fetch(`${s.url}${base}/resourcegroups/rg-none?api-version=${rgApi}`, { method: 'HEAD', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(missing.status, 404);
  assert.equal(await missing.text(), '');
  const demo = await fetch(`${s.url}${base}/resourcegroups/${demoSubscription.resourceGroup}?api-version=${rgApi}`, { method: 'HEAD', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(demo.status, 204, 'the demo group exists');

  const patched = await call('PATCH', g, { body: { tags: { env: 'prod', team: 'a' } } });
  assert.equal(patched.status, 200, patched.text);
  assert.deepEqual(patched.body.tags, { env: 'prod', team: 'a' });
  assert.equal(patched.body.managedBy, created.body.managedBy, 'managedBy retained');
  assert.equal((await call('PATCH', g, { body: {} })).body.tags.team, 'a', 'tags retained');
  const moved = await call('PUT', g, { body: { location: 'eastus' } });
  assert.equal(moved.status, 409);
  assert.equal(moved.body.error.code, 'InvalidResourceGroupLocation');
  assert.equal(moved.body.error.message, "Invalid resource group location 'eastus'. The Resource group already exists in location 'westus2'.");

  const noLoc = await call('PUT', `${base}/resourcegroups/rg-noloc`, { body: { tags: {} } });
  assert.deepEqual([noLoc.status, noLoc.body.error.code], [400, 'LocationRequired']);
  const badLoc = await call('PUT', `${base}/resourcegroups/rg-badloc`, { body: { location: 'mars' } });
  assert.deepEqual([badLoc.status, badLoc.body.error.code], [400, 'LocationNotAvailableForResourceGroup']);
  for (const name of ['bad.', 'bad name', 'x'.repeat(91), 'a%2Fb']) {
    const r = await call('PUT', `${base}/resourcegroups/${name}`, { body: { location: 'eastus' } });
    assert.equal(r.status, 400, `${name}: ${r.text}`);
    assert.equal(r.body.error.code, 'InvalidResourceGroup');
  }
  assert.equal((await call('PUT', `${base}/resourcegroups/ok.name_(1)-x`, { body: { location: 'eastus' } })).status, 201);
  const unicode = await call('PUT', `${base}/resourcegroups/${encodeURIComponent('grupo-ñandú-東京')}`, { body: { location: 'eastus' } });
  assert.equal(unicode.status, 201, `letters of any script are allowed: ${unicode.text}`);
  assert.equal(unicode.body.name, 'grupo-ñandú-東京');
  const symbol = await call('PUT', `${base}/resourcegroups/${encodeURIComponent('a€b')}`, { body: { location: 'eastus' } });
  assert.equal(symbol.body.error.message, "The provided resource group name 'a€b' has these invalid characters: '€'. The name can only be a letter, digit, '-', '.', '(', ')' or '_'.");
  const noGroup = await call('PUT', `${base}/resourceGroups/rg-none/providers/Vendor.Automation/automationAccounts/a1`, { api: '2024-10-23', body: { location: 'eastus' } });
  assert.equal(noGroup.status, 404);
  assert.deepEqual(noGroup.body.error, { code: 'ResourceGroupNotFound', message: "Resource group 'rg-none' could not be found." });
  const denied = await call('PUT', `${base}/resourcegroups/rg-denied`, { token: user, body: { location: 'eastus' } });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error.code, 'AuthorizationFailed');
  assert.equal((await call('PUT', `${base}/resourcegroups/rg-sp`, { token: sp, body: { location: 'eastus' } })).status, 201, 'a Contributor creates groups');
});

test('resource groups: list with a tag filter, $top and next links', async () => {
  for (let i = 0; i < 5; i++) assert.equal((await call('PUT', `${base}/resourcegroups/rg-page-${i}`, { body: { location: 'eastus', tags: { batch: i % 2 ? 'odd' : 'even' } } })).status, 201);
  const all = await call('GET', `${base}/resourcegroups`);
  const names = all.body.value.map((g: any) => g.name);
  assert.ok(names.includes('stratus-rg') && names.includes('rg-page-4'));
  assert.equal(all.body.nextLink, undefined);
  const pages: string[][] = [];
  let next: string | undefined = `${s.url}${base}/resourcegroups?api-version=${rgApi}&$top=2&$filter=${encodeURIComponent("tagName eq 'batch'")}`;
  while (next) {
    const page = await call('GET', next);
    assert.equal(page.status, 200, page.text);
    pages.push(page.body.value.map((g: any) => g.name));
    next = page.body.nextLink;
    assert.ok(pages.length < 10, 'paging ends');
  }
  assert.deepEqual(pages, [['rg-page-0', 'rg-page-1'], ['rg-page-2', 'rg-page-3'], ['rg-page-4']]);
  const even = await call('GET', `${base}/resourcegroups`, { query: { $filter: "tagName eq 'batch' and tagValue eq 'even'" } });
  assert.deepEqual(even.body.value.map((g: any) => g.name), ['rg-page-0', 'rg-page-2', 'rg-page-4']);
  const none = await call('GET', `${base}/resourcegroups`, { token: user });
  assert.deepEqual([none.status, none.body.error.code], [403, 'AuthorizationFailed'], 'a caller with no role in the subscription');
  const bad = await call('GET', `${base}/resourcegroups`, { query: { $filter: "name eq 'x'" } });
  assert.deepEqual([bad.status, bad.body.error.code], [400, 'InvalidFilter']);
  assert.equal((await call('GET', `${base}/resourcegroups`, { query: { $top: '0' } })).status, 400);
  assert.equal((await call('GET', `${base}/resourcegroups`, { query: { $skiptoken: 'garbage' } })).status, 400);
});

test('delete a group holding resources of several areas: 202 + Location, Deleting on the Stratus clock, everything inside gone with its role assignments', async () => {
  const rg = `${base}/resourceGroups/rg-doomed`;
  assert.equal((await call('PUT', `${base}/resourcegroups/rg-doomed`, { body: { location: 'eastus' } })).status, 201);
  const acct = `${rg}/providers/Vendor.Automation/automationAccounts/doomed-auto`;
  const auto = { api: '2024-10-23' };
  assert.equal((await call('PUT', acct, { ...auto, body: { location: 'eastus' } })).status, 201);
  assert.equal((await call('PUT', `${acct}/runbooks/rb`, { ...auto, body: { properties: { runbookType: 'PowerShell' } } })).status, 201);
  const uri = (await call('POST', `${acct}/webhooks/generateUri`, auto)).body as string;
  assert.equal((await call('PUT', `${acct}/webhooks/hook`, { ...auto, body: { name: 'hook', properties: { isEnabled: true, uri, expiryTime: '2030-01-01T00:00:00Z', runbook: { name: 'rb' } } } })).status, 201);
  const ds = { api: '2021-08-01' };
  const share = `${rg}/providers/Vendor.DataShare/accounts/doomed-share`;
  assert.equal((await call('PUT', share, { ...ds, body: { location: 'eastus', identity: { type: 'SystemAssigned' } } })).status, 201);
  assert.equal((await call('PUT', `${share}/shares/sales`, { ...ds, body: { properties: { shareKind: 'CopyBased' } } })).status, 201);
  // A consumer in another tenant accepts an invitation to the share and synchronizes: an invitation row and a run below the share.
  const inv = await call('PUT', `${share}/shares/sales/invitations/to-eve`, { ...ds, body: { properties: { targetEmail: 'eve@other.test' } } });
  assert.equal(inv.status, 201, inv.text);
  const eveAccounts = `/subscriptions/${otherSubscription.id}/resourceGroups/${otherSubscription.resourceGroup}/providers/Vendor.DataShare/accounts`;
  assert.equal((await call('PUT', `${eveAccounts}/eve-doomed`, { ...ds, token: eve, body: { location: 'westeurope', identity: { type: 'SystemAssigned' } } })).status, 201);
  const ss = await call('PUT', `${eveAccounts}/eve-doomed/shareSubscriptions/from-doomed`, { ...ds, token: eve, body: { properties: { invitationId: inv.body.properties.invitationId, sourceShareLocation: 'eastus' } } });
  assert.equal(ss.status, 201, ss.text);
  assert.equal((await call('POST', `${eveAccounts}/eve-doomed/shareSubscriptions/from-doomed/synchronize`, { ...ds, token: eve, body: { synchronizationMode: 'FullSync' } })).status, 202);
  const shareRows = async (table: 'datashare_synchronizations' | 'datashare_invitations') =>
    (await s.server.ctx.store.db.selectFrom(table).select('share_id_lower').where('share_id_lower', '=', `${share}/shares/sales`.toLowerCase()).execute()).length;
  assert.equal(await shareRows('datashare_synchronizations'), 1);
  assert.equal(await shareRows('datashare_invitations'), 1);
  // Role assignments through the API: at the group, at a resource in it, and at a look-alike group's scope.
  assert.equal((await call('PUT', `${base}/resourcegroups/rg-doomed-not`, { body: { location: 'eastus' } })).status, 201);
  const scopes = [rg, acct, `${base}/resourceGroups/rg-doomed-not`];
  const assignmentIds: string[] = [];
  for (const scope of scopes) {
    const id = `${scope}/providers/Vendor.Authorization/roleAssignments/${crypto.randomUUID()}`;
    const r = await call('PUT', id, { api: '2022-04-01', body: { properties: { roleDefinitionId: `${base}/providers/Vendor.Authorization/roleDefinitions/${roleIds.reader}`, principalId: demoUser.id, principalType: 'User' } } });
    assert.equal(r.status, 201, r.text);
    assignmentIds.push(id);
  }
  const listed = await call('GET', `${rg}/resources`);
  assert.deepEqual(listed.body.value.map((r: any) => r.name).sort(), ['doomed-auto', 'doomed-share', 'hook', 'rb', 'sales', 'to-eve']);

  const del = await call('DELETE', `${base}/resourcegroups/rg-doomed`);
  assert.equal(del.status, 202, del.text);
  assert.equal(del.text, '');
  const location = del.headers.get('location')!;
  assert.match(location, new RegExp(`^${s.url}/subscriptions/${sub}/operationresults/[A-Za-z0-9_-]+\\?api-version=${rgApi}$`));
  assert.equal(del.headers.get('retry-after'), String(retryAfterSeconds));
  // Everything inside is gone at once, in one transaction.
  for (const id of [acct, `${acct}/runbooks/rb`, `${acct}/webhooks/hook`]) assert.equal((await call('GET', id, auto)).status, 404, id);
  for (const id of [share, `${share}/shares/sales`]) assert.equal((await call('GET', id, ds)).status, 404, id);
  assert.equal(await shareRows('datashare_synchronizations'), 0, 'the share\'s runs went with it');
  assert.equal(await shareRows('datashare_invitations'), 0, 'and its invitations');
  assert.equal((await call('GET', `${eveAccounts}/eve-doomed/shareSubscriptions/from-doomed`, { ...ds, token: eve })).status, 200, "the consumer's own resources (another tenant's group) stay");
  const left = await call('GET', `${base}/providers/Vendor.Authorization/roleAssignments`, { api: '2022-04-01', query: { $filter: `principalId eq '${demoUser.id}'` } });
  assert.equal(left.status, 200, left.text);
  assert.deepEqual(
    left.body.value.map((a: any) => a.id).filter((id: string) => assignmentIds.includes(id)),
    [assignmentIds[2]],
    'the assignments at and below the group are gone, the look-alike scope keeps its own',
  );
  assert.equal((await call('GET', assignmentIds[0]!, { api: '2022-04-01' })).status, 404);
  assert.equal((await s.server.ctx.store.db.selectFrom('automation_webhooks').select('id').where('id_lower', '=', `${acct}/webhooks/hook`.toLowerCase()).execute()).length, 0);
  assert.equal((await call('GET', `${base}/resources`, { query: { $filter: "substringof('doomed', name)" } })).body.value.length, 0);

  // While the delete runs: the group reads Deleting, writes are refused, a second DELETE gets the same operation.
  const deleting = await call('GET', rg);
  assert.equal(deleting.status, 200);
  assert.equal(deleting.body.properties.provisioningState, 'Deleting');
  const put = await call('PUT', `${base}/resourcegroups/rg-doomed`, { body: { location: 'eastus' } });
  assert.equal(put.status, 409);
  assert.deepEqual(put.body.error, { code: 'ResourceGroupBeingDeleted', message: "The resource group 'rg-doomed' is in deprovisioning state and cannot perform this operation." });
  const again = await call('DELETE', rg);
  assert.equal(again.status, 202);
  assert.equal(again.headers.get('location'), location);
  const running = await call('GET', location);
  assert.equal(running.status, 202);
  assert.equal(running.headers.get('location'), location);
  assert.equal((await call('GET', location, { token: eve })).status, 404, 'not visible from another tenant');
  await advance(deleteSeconds + 1);
  const done = await call('GET', location);
  assert.equal(done.status, 200);
  assert.equal((await call('GET', rg)).status, 404);
  const gone = await call('DELETE', rg);
  assert.deepEqual([gone.status, gone.body.error.code], [404, 'ResourceGroupNotFound']);
  assert.equal((await call('GET', `${base}/operationresults/bm9wZQ`)).status, 404);
  // The name can be used again.
  assert.equal((await call('PUT', `${base}/resourcegroups/rg-doomed`, { body: { location: 'eastus' } })).status, 201);
  assert.equal((await call('GET', `${rg}/resources`)).body.value.length, 0);
});

test('resources: every area listed, filters, $expand, $top with keyset next links', async () => {
  const all = await call('GET', `${base}/resources`);
  assert.equal(all.status, 200, all.text);
  const types = new Set(all.body.value.map((r: any) => r.type));
  for (const t of ['Vendor.Storage/storageAccounts', 'Vendor.Automation/AutomationAccounts', 'Vendor.DataShare/accounts']) assert.ok(types.has(t), `${t} in ${[...types]}`);
  assert.ok(all.body.value.some((r: any) => /\/webhooks\//i.test(r.id)), 'webhooks (their own table) listed too');
  const storage = all.body.value.find((r: any) => r.type === 'Vendor.Storage/storageAccounts');
  assert.deepEqual(storage.sku, { name: 'Standard_LRS', tier: 'Standard' });
  assert.equal(storage.kind, 'StorageV2');
  assert.equal(storage.location, demoSubscription.location);
  const ids = all.body.value.map((r: any) => r.id.toLowerCase());
  assert.deepEqual(ids, [...ids].sort(), 'id order');

  const byType = await call('GET', `${base}/resources`, { query: { $filter: "resourceType eq 'vendor.storage/storageaccounts'" } });
  assert.deepEqual(byType.body.value.map((r: any) => r.name), ['stratusdata']);
  const byName = await call('GET', `${base}/resources`, { query: { $filter: "name eq 'stratusdata' or substringof('AUTO', name)" } });
  assert.ok(byName.body.value.length >= 2 && byName.body.value.every((r: any) => r.name === 'stratusdata' || /auto/i.test(r.name)), JSON.stringify(byName.body.value.map((r: any) => r.name)));
  const byLoc = await call('GET', `${base}/resources`, { query: { $filter: `location eq '${demoSubscription.location}' and resourceGroup eq '${demoSubscription.resourceGroup}'` } });
  assert.ok(byLoc.body.value.length > 0 && byLoc.body.value.every((r: any) => r.location === demoSubscription.location));
  const ne = await call('GET', `${base}/resources`, { query: { $filter: "resourceType ne 'Vendor.Storage/storageAccounts'" } });
  assert.equal(ne.body.value.length, all.body.value.length - byType.body.value.length);
  const expanded = await call('GET', `${base}/resources`, { query: { $expand: 'createdTime,changedTime,provisioningState', $filter: "name eq 'stratusdata'" } });
  assert.match(expanded.body.value[0].createdTime, /^\d{4}-\d{2}-\d{2}T/);
  assert.match(expanded.body.value[0].changedTime, /^\d{4}-\d{2}-\d{2}T/);
  assert.equal(expanded.body.value[0].provisioningState, 'Succeeded');
  assert.equal(byType.body.value[0].createdTime, undefined, 'only when expanded');

  const seen: string[] = [];
  let next: string | undefined = `${s.url}${base}/resources?api-version=${rgApi}&$top=3`;
  let pages = 0;
  while (next) {
    const page = await call('GET', next);
    assert.equal(page.status, 200, page.text);
    assert.ok(page.body.value.length <= 3);
    seen.push(...page.body.value.map((r: any) => r.id));
    next = page.body.nextLink;
    assert.ok(++pages < 100, 'paging ends');
  }
  assert.ok(pages > 1);
  assert.deepEqual(seen, all.body.value.map((r: any) => r.id));

  const inGroup = await call('GET', `${base}/resourceGroups/${demoSubscription.resourceGroup}/resources`);
  assert.ok(inGroup.body.value.length > 0 && inGroup.body.value.every((r: any) => r.id.toLowerCase().startsWith(`${base}/resourcegroups/${demoSubscription.resourceGroup}/`.toLowerCase())));
  assert.equal((await call('GET', `${base}/resourceGroups/rg-none/resources`)).body.error.code, 'ResourceGroupNotFound');
  for (const f of ["name gt 'x'", "startswith(name, 'x')", "name eq 'x' and", "tagValue eq 'x'", "startswith(tagName)"]) {
    const r = await call('GET', `${base}/resources`, { query: { $filter: f } });
    assert.deepEqual([r.status, r.body.error.code], [400, 'InvalidFilter'], f);
  }
  assert.equal((await call('GET', `${base}/resources`, { query: { $expand: 'everything' } })).status, 400);
});

test('tags at scope: subscription, group and resource (GET, PUT, PATCH Merge/Replace/Delete, DELETE); the tag filter of the listing', async () => {
  const scopes = [base, `${base}/resourceGroups/stratus-network`, `${base}/resourceGroups/stratus-rg/providers/Vendor.Storage/storageAccounts/stratusdata`];
  for (const scope of scopes) {
    const url = `${scope}/providers/Vendor.Resources/tags/default`;
    const put = await call('PUT', url, { body: { properties: { tags: { a: '1', b: '2' } } } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body, { id: url, name: 'default', type: 'Vendor.Resources/tags', properties: { tags: { a: '1', b: '2' } } });
    assert.deepEqual((await call('PATCH', url, { body: { operation: 'Merge', properties: { tags: { c: '3' } } } })).body.properties.tags, { a: '1', b: '2', c: '3' });
    assert.deepEqual((await call('PATCH', url, { body: { operation: 'Delete', properties: { tags: { a: '1', b: 'other' } } } })).body.properties.tags, { b: '2', c: '3' });
    assert.deepEqual((await call('GET', url)).body.properties.tags, { b: '2', c: '3' });
    const bad = await call('PATCH', url, { body: { operation: 'Add', properties: { tags: {} } } });
    assert.deepEqual([bad.status, bad.body.error.code], [400, 'InvalidTagOperation']);
    assert.equal((await call('PUT', url, { body: { tags: {} } })).status, 400, 'properties is required');
  }
  assert.deepEqual((await call('GET', base, { api: subApi })).body.tags, { b: '2', c: '3' });
  assert.deepEqual((await call('GET', `${base}/resourceGroups/stratus-network`)).body.tags, { b: '2', c: '3' });
  const tagged = await call('GET', `${base}/resources`, { query: { $filter: "tagName eq 'c' and tagValue eq '3'" } });
  assert.deepEqual(tagged.body.value.map((r: any) => r.name), ['stratusdata']);
  assert.equal(tagged.body.value[0].tags, undefined, 'listed without its tags under a tag filter');
  assert.deepEqual((await call('GET', `${base}/resources`, { query: { $filter: "tagName eq 'c'" } })).body.value.map((r: any) => r.name), ['stratusdata']);
  assert.deepEqual((await call('GET', `${base}/resources`, { query: { $filter: "startswith(tagName, 'C')" } })).body.value.map((r: any) => r.name), ['stratusdata']);
  assert.deepEqual((await call('GET', `${base}/resources`, { query: { $filter: "startswith(tagName, 'q')" } })).body.value, []);
  const url = `${scopes[2]}/providers/Vendor.Resources/tags/default`;
  assert.deepEqual((await call('PATCH', url, { body: { operation: 'Replace', properties: { tags: { z: '9' } } } })).body.properties.tags, { z: '9' });
  assert.equal((await call('DELETE', url)).status, 200);
  assert.deepEqual((await call('GET', url)).body.properties.tags, {});
  const missing = await call('GET', `${base}/resourceGroups/stratus-rg/providers/Vendor.Storage/storageAccounts/nope/providers/Vendor.Resources/tags/default`);
  assert.deepEqual([missing.status, missing.body.error.code], [404, 'ResourceNotFound']);
  const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`t${i}`, 'v']));
  assert.equal((await call('PUT', `${base}/providers/Vendor.Resources/tags/default`, { body: { properties: { tags: tooMany } } })).status, 400);
  assert.equal((await call('PUT', `${base}/providers/Vendor.Resources/tags/default`, { token: user, body: { properties: { tags: {} } } })).status, 403);
  void demoAdmin;
});

test('console: the resource-groups page lists every group with its resource count, escaped; a group page lists its resources of every area', async () => {
  assert.equal((await call('PUT', `${base}/resourcegroups/rg-console`, { body: { location: 'eastus', tags: { note: '<script>alert(1)</script>' } } })).status, 201);
  const list = await s.control('/_stratus/console/resource-groups');
  assert.equal(list.status, 200);
  assert.match(list.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  const text = await list.text();
  assert.ok(text.includes('rg-console') && text.includes(demoSubscription.resourceGroup));
  assert.ok(!text.includes('<script>alert(1)</script>') && text.includes('&lt;script&gt;'), 'tags are escaped');
  const group = await s.control(`/_stratus/console/resource-groups/${sub}/${demoSubscription.resourceGroup}`);
  assert.equal(group.status, 200);
  const g = await group.text();
  for (const name of ['stratusdata', 'stratus-automation']) assert.ok(g.includes(name), name);
  assert.ok(/webhooks/i.test(g), 'webhooks (their own table) listed');
  assert.equal((await s.control(`/_stratus/console/resource-groups/${sub}/nope`)).status, 404);
  assert.equal((await fetch(`${s.url}/_stratus/console/resource-groups`)).status, 401, 'behind the control key');
});

test('concurrent creates of one group: one 201, the rest 200, never a 500; bad bodies are 400/415 and leave nothing', async () => {
  const results = await Promise.all(Array.from({ length: 8 }, () => call('PUT', `${base}/resourcegroups/rg-race`, { body: { location: 'eastus' } })));
  const statuses = results.map((r) => r.status).sort();
  assert.equal(statuses.filter((x) => x === 201).length, 1, JSON.stringify(statuses));
  assert.ok(statuses.every((x) => x === 201 || x === 200), JSON.stringify(statuses));
  for (const body of [{ location: 5 }, { location: 'eastus', tags: 'x' }, { location: 'eastus', tags: { k: 7 } }, [], 'text']) {
    const r = await call('PUT', `${base}/resourcegroups/rg-bad-body`, { body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
  }
  const form = await fetch(`${s.url}${base}/resourcegroups/rg-bad-body?api-version=${rgApi}`, { method: 'PUT', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'location=eastus' });
  assert.equal(form.status, 415);
  assert.equal((await call('GET', `${base}/resourcegroups/rg-bad-body`)).status, 404, 'nothing was created');
});

test('every area whose tables hold resource ids or scopes implements deleteResourceGroup (a new one cannot forget the group delete)', () => {
  const holders: string[] = [];
  for (const m of modules) {
    for (const t of m.tables) {
      const columns = Object.keys((databaseColumns as Record<string, Record<string, unknown>>)[t] ?? {});
      if (!columns.some((c) => /(^|_)id_lower$|scope_lower$|resource_group/.test(c))) continue;
      holders.push(`${m.name}.${t}`);
      assert.equal(typeof m.deleteResourceGroup, 'function', `${m.name} keeps resource ids or scopes in ${t} but has no deleteResourceGroup hook`);
    }
  }
  assert.ok(holders.includes('automation.automation_webhooks') && holders.includes('datashare.datashare_synchronizations') && holders.includes('arm.arm_resources'), holders.join(', '));
});

test('a caller with roles on some groups only lists those groups (not one where it holds a role on a resource alone)', async () => {
  const assign = async (scope: string) => {
    const r = await call('PUT', `${scope}/providers/Vendor.Authorization/roleAssignments/${crypto.randomUUID()}`, {
      api: '2022-04-01',
      body: { properties: { roleDefinitionId: `/providers/Vendor.Authorization/roleDefinitions/${roleIds.reader}`, principalId: demoUser.id, principalType: 'User' } },
    });
    assert.equal(r.status, 201, r.text);
  };
  for (const g of ['rg-visible-a', 'rg-visible-b', 'rg-hidden']) assert.equal((await call('PUT', `${base}/resourcegroups/${g}`, { body: { location: 'eastus' } })).status, 201);
  await assign(`${base}/resourceGroups/rg-visible-a`);
  await assign(`${base}/resourceGroups/rg-visible-b`);
  const acct = `${base}/resourceGroups/rg-hidden/providers/Vendor.Automation/automationAccounts/hidden-acct`;
  assert.equal((await call('PUT', acct, { api: '2024-10-23', body: { location: 'eastus' } })).status, 201);
  await assign(acct);
  const all = await call('GET', `${base}/resourcegroups`, { token: user });
  assert.equal(all.status, 200, all.text);
  const names = all.body.value.map((g: any) => g.name);
  assert.ok(names.includes('rg-visible-a') && names.includes('rg-visible-b'), names.join());
  assert.ok(!names.includes('rg-hidden') && !names.includes(demoSubscription.resourceGroup), names.join());
  const first = await call('GET', `${base}/resourcegroups`, { token: user, query: { $top: '1' } });
  assert.equal(first.body.value.length, 1);
  assert.ok(first.body.nextLink, 'paged within the readable groups');
  assert.equal((await call('GET', `${base}/resourcegroups`)).body.value.some((g: any) => g.name === 'rg-hidden'), true, 'the Owner lists them all');
  // The subscription's resource listing likewise.
  assert.equal((await call('PUT', `${base}/resourceGroups/rg-visible-a/providers/Vendor.Automation/automationAccounts/visible-acct`, { api: '2024-10-23', body: { location: 'eastus' } })).status, 201);
  const resources = await call('GET', `${base}/resources`, { token: user });
  assert.equal(resources.status, 200, resources.text);
  assert.deepEqual(resources.body.value.map((r: any) => r.name), ['visible-acct']);
  assert.equal((await call('GET', `${base}/resources`, { token: eve })).status, 404, "another tenant's caller");
});
