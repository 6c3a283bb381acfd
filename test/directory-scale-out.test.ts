/**
 * The directory on two instances sharing one PostgreSQL schema (issue 27 items 6–7): a group
 * membership written through instance A's directory API decides the very next resource-manager
 * request on instance B (B answered, and kept, the opposite just before); a user created on A
 * signs in on B at once; a secret removed on A is refused by B's token endpoint at once.
 *
 * PostgreSQL only (with SQLite one process owns the data file); skipped there with a message.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities, tokenRequest, userToken } from './helpers/auth.ts';
import { demoPublicClient, demoSubscription, demoTenant } from '../src/seed/demo.ts';

const onPostgres = !!process.env.STRATUS_TEST_DATABASE_URL;
const skipReason = onPostgres ? false : 'two instances share a PostgreSQL schema only: set STRATUS_TEST_DATABASE_URL (CI runs the suite on PostgreSQL too)';
const sub = `/subscriptions/${demoSubscription.id}`;
const reader = 'acdd72a7-3385-48ef-bd42-f606fba81ae7';
const skus = `${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'westus'")}`;

async function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(base + path, { method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('the directory on two instances of one PostgreSQL schema', { skip: skipReason }, () => {
  let a: TestServer;
  let b: TestServer;
  let adminMail: string;
  let adminArm: string;

  before(async () => {
    a = await startTestServer();
    b = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    adminMail = await userToken(a.url, identities.admin, ['api://stratus/mail/.default']);
    adminArm = await userToken(a.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('a user created on A signs in on B; group membership written on A decides the next request on B', async () => {
    const created = await call(a.url, 'POST', '/v1.0/users', adminMail, {
      accountEnabled: true,
      displayName: 'Scale Out',
      mailNickname: 'scaleout',
      userPrincipalName: `scaleout@${demoTenant.domain}`,
      passwordProfile: { password: 'Scale-Pass-1' },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const signIn = await tokenRequest(b.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: `scaleout@${demoTenant.domain}`, password: 'Scale-Pass-1', scope: 'api://stratus/arm/user_impersonation' });
    assert.equal(signIn.status, 200, 'B signs the new user in at once');
    const userArm = signIn.body.access_token as string;
    const group = await call(a.url, 'POST', '/v1.0/groups', adminMail, { displayName: 'Scale readers', mailEnabled: false, mailNickname: 'scalereaders', securityEnabled: true });
    const put = await call(a.url, 'PUT', `${sub}/providers/Vendor.Authorization/roleAssignments/${crypto.randomUUID()}?api-version=2022-04-01`, adminArm, {
      properties: { roleDefinitionId: `${sub}/providers/Vendor.Authorization/roleDefinitions/${reader}`, principalId: group.body.id, principalType: 'Group' },
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    for (let round = 0; round < 3; round++) {
      assert.equal((await call(b.url, 'GET', skus, userArm)).status, 403, `round ${round}: not a member yet`);
      const added = await call(a.url, 'POST', `/v1.0/groups/${group.body.id}/members/$ref`, adminMail, { '@odata.id': `${a.url}/v1.0/directoryObjects/${created.body.id}` });
      assert.equal(added.status, 204);
      assert.equal((await call(b.url, 'GET', skus, userArm)).status, 200, `round ${round}: the next request on B after the membership write on A`);
      const removed = await call(a.url, 'DELETE', `/v1.0/groups/${group.body.id}/members/${created.body.id}/$ref`, adminMail);
      assert.equal(removed.status, 204);
    }
    assert.equal((await call(b.url, 'GET', skus, userArm)).status, 403);
  });

  test('a secret removed on A is refused by B at once', async () => {
    const app = await call(a.url, 'POST', '/v1.0/applications', adminMail, { displayName: 'Scale daemon' });
    await call(a.url, 'POST', '/v1.0/servicePrincipals', adminMail, { appId: app.body.appId });
    const pw = await call(a.url, 'POST', `/v1.0/applications/${app.body.id}/addPassword`, adminMail, {});
    const form = { grant_type: 'client_credentials', client_id: app.body.appId, client_secret: pw.body.secretText, scope: 'api://stratus/mail/.default' };
    assert.equal((await tokenRequest(b.url, form)).status, 200);
    assert.equal((await call(a.url, 'POST', `/v1.0/applications/${app.body.id}/removePassword`, adminMail, { keyId: pw.body.keyId })).status, 204);
    assert.equal((await tokenRequest(b.url, form)).status, 401);
  });
});
