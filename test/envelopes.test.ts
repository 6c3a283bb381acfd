/**
 * One error per API family, checked for its envelope as a whole: the key set and order the
 * reference records, and the family's request-id header equal to the body's id.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, userToken, identities } from './helpers/auth.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

const demoWorkspace = '7d0c6f2e-3a1b-4c5d-8e9f-0a1b2c3d4e5f';
const sub = '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25';

test('platform ErrorResponse: keys in the recorded order, RequestId and x-vendor-public-api-error-code headers', async () => {
  const token = await appToken(s.url, 'platform');
  const res = await fetch(`${s.url}/v1/workspaces/${demoWorkspace}/eventstreams`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ displayName: 'envelope-check', folderId: '00000000-0000-4000-8000-000000000000' }),
  });
  assert.equal(res.status, 404);
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(body.errorCode, 'FolderNotFound');
  const keys = Object.keys(body);
  const order = ['requestId', 'errorCode', 'moreDetails', 'message', 'relatedResource', 'isRetriable'].filter((k) => keys.includes(k));
  assert.deepEqual(keys, order);
  assert.equal(res.headers.get('requestid'), body.requestId);
  assert.equal(res.headers.get('x-vendor-public-api-error-code'), 'FolderNotFound');
});

test('ARM ErrorResponse: {error:{code,message}} with x-vendor-request-id and nosniff', async () => {
  const res = await fetch(`${s.url}/subscriptions/${sub}/providers/Vendor.Compute/skus`, { headers: { authorization: `Bearer ${await appToken(s.url, 'arm')}` } });
  assert.equal(res.status, 400);
  const body = (await res.json()) as any;
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, 'MissingApiVersionParameter');
  assert.equal(typeof body.error.message, 'string');
  assert.ok(res.headers.get('x-vendor-request-id'));
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
});

test('analytics error body and the wopi bodiless 401', async () => {
  // A user who is no tenant administrator: the listing refuses in the analytics envelope.
  const token = await userToken(s.url, identities.user, ['api://stratus/analytics/Tenant.Read.All']);
  const res = await fetch(`${s.url}/v1.0/myorg/admin/dataflows`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 401);
  const body = (await res.json()) as any;
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, 'AnalyticsNotAuthorizedException');
  assert.ok(res.headers.get('requestid'));
  const wopi = await fetch(`${s.url}/wopibootstrapper`, { method: 'POST', headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
  assert.equal(wopi.status, 401);
  assert.equal(await wopi.text(), '');
  assert.match(wopi.headers.get('www-authenticate') ?? '', /^Bearer authorization_uri="[^"]+",tokenIssuance_uri="[^"]+"/);
});

test('router-level failures come back in the family envelope, not the framework body', async () => {
  const bad = await fetch(`${s.url}/subscriptions/${sub}/resourceGroups/%ED%A0%80?api-version=2021-04-01`);
  assert.equal(bad.status, 400);
  const body = (await bad.json()) as any;
  assert.equal(body.error.code, 'BadRequest');
  assert.equal(body.code, undefined);
  const long = await fetch(`${s.url}/subscriptions/${sub}/resourceGroups/${'a'.repeat(2100)}?api-version=2021-04-01`);
  assert.equal(long.status, 414);
  assert.equal(((await long.json()) as any).error.code, 'RequestUriTooLong');
  const mail = await fetch(`${s.url}/v1.0/users/%ED%A0%80/messages`);
  assert.equal(mail.status, 400);
  assert.equal(((await mail.json()) as any).error.code, 'ErrorInvalidRequest');
});
