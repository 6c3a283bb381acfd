/**
 * The base surface's answers validated with Ajv against the published definitions (issue 27;
 * `test/fixtures/openapi/resource-manager/`, see its README): subscriptions, locations,
 * tenants, providers, resource groups, the resource listing, tags and the error envelope.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities, userToken } from './helpers/auth.ts';
import { demoSubscription } from '../src/seed/demo.ts';

const dir = path.resolve(import.meta.dirname, 'fixtures', 'openapi', 'resource-manager');
const base = `/subscriptions/${demoSubscription.id}`;

let s: TestServer;
let admin: string;

/** A validator of one definition of a published file. */
function validator(file: string) {
  const doc = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { definitions: Record<string, unknown> };
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv) => void)(ajv);
  ajv.addFormat('int32', true);
  ajv.addSchema({ $id: 'defs', definitions: doc.definitions });
  return (definition: string, body: unknown) => {
    const validate = ajv.getSchema(`defs#/definitions/${definition}`);
    assert.ok(validate, `${definition} is in ${file}`);
    const ok = validate(body);
    assert.ok(ok, `${definition}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`);
  };
}

async function get(p: string, api: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}${p}${p.includes('?') ? '&' : '?'}api-version=${api}`, { ...init, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

before(async () => {
  s = await startTestServer();
  admin = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
});
after(async () => {
  await s?.close();
});

test('subscriptions, locations and tenants match subscriptions-2022-12-01', async () => {
  const check = validator('subscriptions-2022-12-01.json');
  const api = '2022-12-01';
  check('SubscriptionListResult', (await get('/subscriptions', api)).body);
  check('Subscription', (await get(base, api)).body);
  check('LocationListResult', (await get(`${base}/locations`, api)).body);
  check('TenantListResult', (await get('/tenants', api)).body);
  const missing = await get('/subscriptions/00000000-0000-4000-8000-000000000000', api);
  assert.equal(missing.status, 404);
  check('CloudError', missing.body);
});

test('providers, resource groups, resources and tags match resources-2025-04-01', async () => {
  const check = validator('resources-2025-04-01.json');
  const api = '2025-04-01';
  check('ProviderListResult', (await get(`${base}/providers?$expand=resourceTypes/aliases`, api)).body);
  check('Provider', (await get(`${base}/providers/Vendor.Automation`, api)).body);
  check('Provider', (await get(`${base}/providers/Vendor.Automation/register`, api, { method: 'POST' })).body);
  const created = await get(`${base}/resourcegroups/schema-rg`, api, { method: 'PUT', body: JSON.stringify({ location: 'eastus', tags: { a: 'b' }, managedBy: 'x' }) });
  assert.equal(created.status, 201);
  check('ResourceGroup', created.body);
  check('ResourceGroup', (await get(`${base}/resourcegroups/schema-rg`, api, { method: 'PATCH', body: JSON.stringify({ tags: { c: 'd' } }) })).body);
  check('ResourceGroupListResult', (await get(`${base}/resourcegroups?$top=1`, api)).body);
  check('ResourceListResult', (await get(`${base}/resources?$expand=createdTime,changedTime,provisioningState&$top=2`, api)).body);
  check('ResourceListResult', (await get(`${base}/resourceGroups/${demoSubscription.resourceGroup}/resources`, api)).body);
  check('TagsResource', (await get(`${base}/resourceGroups/schema-rg/providers/Vendor.Resources/tags/default`, api, { method: 'PUT', body: JSON.stringify({ properties: { tags: { e: 'f' } } }) })).body);
  check('TagsResource', (await get(`${base}/providers/Vendor.Resources/tags/default`, api)).body);
  const gone = await get(`${base}/resourcegroups/no-such-rg`, api);
  assert.equal(gone.status, 404);
  check('CloudError', gone.body);
});
