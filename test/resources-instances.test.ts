/**
 * Two instances on one PostgreSQL store (issue 27): what one instance writes to the hierarchy
 * decides the very next request on the other — a group created on A takes resources on B, a
 * group deleted on A is gone (and refuses resources) on B, a namespace unregistered on A
 * refuses a PUT on B and registered again accepts it. The `arm` caches of both instances are
 * invalidated by the writes (`cache.changed`). Skipped on SQLite (one process per store).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities, userToken } from './helpers/auth.ts';
import { demoSubscription } from '../src/seed/demo.ts';

const onPostgres = !!process.env.STRATUS_TEST_DATABASE_URL;
const skipReason = onPostgres ? false : 'two instances share a store on PostgreSQL only: set STRATUS_TEST_DATABASE_URL (CI runs it on PostgreSQL)';
const base = `/subscriptions/${demoSubscription.id}`;

let a: TestServer;
let b: TestServer;
let token: string;

async function call(s: TestServer, method: string, path: string, api: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.url}${path}?api-version=${api}`, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

describe('resource groups and registrations across two instances', { skip: skipReason }, () => {
  before(async () => {
    a = await startTestServer();
    // One deployment: B publishes A's origin (the issuer of the tokens both accept).
    b = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    token = await userToken(a.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('a group created, deleted, and a namespace unregistered on A decide the next request on B', async () => {
    const auto = '2024-10-23';
    const account = `${base}/resourceGroups/two-rg/providers/Vendor.Automation/automationAccounts/two-acct`;
    // B reads the group as missing first (its cache now holds that answer).
    assert.equal((await call(b, 'PUT', account, auto, { location: 'eastus' })).body.error.code, 'ResourceGroupNotFound');
    assert.equal((await call(a, 'PUT', `${base}/resourcegroups/two-rg`, '2025-04-01', { location: 'eastus' })).status, 201);
    assert.equal((await call(b, 'PUT', account, auto, { location: 'eastus' })).status, 201, 'B sees the new group at once');

    assert.equal((await call(a, 'POST', `${base}/providers/Vendor.Automation/unregister`, '2025-04-01')).status, 200);
    const refused = await call(b, 'PUT', `${account}/runbooks/rb`, auto, { properties: { runbookType: 'PowerShell' } });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error.code, 'MissingSubscriptionRegistration');
    assert.equal((await call(a, 'POST', `${base}/providers/Vendor.Automation/register`, '2025-04-01')).status, 200);
    assert.equal((await call(b, 'PUT', `${account}/runbooks/rb`, auto, { properties: { runbookType: 'PowerShell' } })).status, 201);

    assert.equal((await call(a, 'DELETE', `${base}/resourcegroups/two-rg`, '2025-04-01')).status, 202);
    assert.equal((await call(b, 'GET', account, auto)).status, 404, "the group's resources are gone on B");
    assert.equal((await call(b, 'PUT', `${account}-2`, auto, { location: 'eastus' })).body.error.code, 'ResourceGroupNotFound');
    assert.equal((await call(b, 'GET', `${base}/resourcegroups/two-rg`, '2025-04-01')).body.properties.provisioningState, 'Deleting');
  });
});
