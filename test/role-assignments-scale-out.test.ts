/**
 * Role assignments on two instances sharing one PostgreSQL schema (issue 27 item 5): an
 * assignment created through instance A's API decides the very next request on instance B,
 * and so does its deletion, with B having answered (and cached) the opposite just before.
 * Also for a custom role whose permissions change on A. No waiting between the calls: A's
 * answer is sent only once every live instance dropped its cached decisions.
 *
 * PostgreSQL only (with SQLite one process owns the data file); skipped there with a message.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { armFetch } from './helpers/arm.ts';
import { identities, userToken } from './helpers/auth.ts';
import { demoSubscription, demoUser } from '../src/seed/demo.ts';

const onPostgres = !!process.env.STRATUS_TEST_DATABASE_URL;
const skipReason = onPostgres ? false : 'two instances share a PostgreSQL schema only: set STRATUS_TEST_DATABASE_URL (CI runs the suite on PostgreSQL too)';
const sub = `/subscriptions/${demoSubscription.id}`;
const rg = `${sub}/resourceGroups/${demoSubscription.resourceGroup}`;
const reader = 'acdd72a7-3385-48ef-bd42-f606fba81ae7';
const skus = `${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'westus'")}`;
const accounts = `${rg}/providers/Vendor.DataShare/accounts?api-version=2020-09-01`;

const call = armFetch;

describe('role assignments on two instances of one PostgreSQL schema', { skip: skipReason }, () => {
  let a: TestServer;
  let b: TestServer;
  let admin: string;
  let user: string;

  before(async () => {
    a = await startTestServer();
    b = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    admin = await userToken(a.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    user = await userToken(a.url, identities.user, ['api://stratus/arm/user_impersonation']);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('created on A: the next request on B is allowed; deleted on A: the next request on B is refused', async () => {
    for (let round = 0; round < 3; round++) {
      const refused = await call(b.url, 'GET', skus, user);
      assert.equal(refused.status, 403, `round ${round}`);
      assert.equal(refused.body.error.code, 'AuthorizationFailed');
      const name = crypto.randomUUID();
      const path = `${sub}/providers/Vendor.Authorization/roleAssignments/${name}?api-version=2022-04-01`;
      const created = await call(a.url, 'PUT', path, admin, { properties: { roleDefinitionId: `${sub}/providers/Vendor.Authorization/roleDefinitions/${reader}`, principalId: demoUser.id } });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const allowed = await call(b.url, 'GET', skus, user);
      assert.equal(allowed.status, 200, `round ${round}: ${JSON.stringify(allowed.body)}`);
      // B lists the new assignment too.
      const listed = await call(b.url, 'GET', `${sub}/providers/Vendor.Authorization/roleAssignments?api-version=2022-04-01&$filter=${encodeURIComponent(`principalId eq '${demoUser.id}'`)}`, admin);
      assert.ok(listed.body.value.some((x: any) => x.name === name));
      const deleted = await call(a.url, 'DELETE', path, admin);
      assert.equal(deleted.status, 200);
      assert.equal((await call(b.url, 'GET', skus, user)).status, 403, `round ${round}: refused again on B`);
    }
  });

  test('a custom role changed on A changes what it grants on B at once', async () => {
    const id = crypto.randomUUID();
    const defPath = `${rg}/providers/Vendor.Authorization/roleDefinitions/${id}?api-version=2022-04-01`;
    const def = (actions: string[]) => ({ properties: { roleName: `Scale ${id.slice(0, 8)}`, permissions: [{ actions }], assignableScopes: [rg] } });
    assert.equal((await call(a.url, 'PUT', defPath, admin, def(['Vendor.DataShare/accounts/read']))).status, 201);
    const name = crypto.randomUUID();
    const assign = await call(a.url, 'PUT', `${rg}/providers/Vendor.Authorization/roleAssignments/${name}?api-version=2022-04-01`, admin, { properties: { roleDefinitionId: `/providers/Vendor.Authorization/roleDefinitions/${id}`, principalId: demoUser.id } });
    assert.equal(assign.status, 201);
    assert.equal((await call(b.url, 'GET', accounts, user)).status, 200);
    assert.equal((await call(a.url, 'PUT', defPath, admin, def(['Vendor.Compute/skus/read']))).status, 201);
    assert.equal((await call(b.url, 'GET', accounts, user)).status, 403);
    assert.equal((await call(a.url, 'DELETE', `${rg}/providers/Vendor.Authorization/roleAssignments/${name}?api-version=2022-04-01`, admin)).status, 200);
    assert.equal((await call(a.url, 'DELETE', defPath, admin)).status, 200);
  });
});
