/**
 * Role definitions through the official `@azure/arm-authorization` 9 client over HTTPS
 * (reference resource-manager-base §7.2, §7.3): the built-in roles with their well-known ids,
 * names and permissions, the list with `$filter` (`roleName eq`, `type eq`, `atScopeAndBelow()`),
 * get and getById in both id forms, custom roles created, assigned (counting in authorization
 * decisions at once) and deleted, and the refusals.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { AuthorizationManagementClient, type RoleDefinition } from '@azure/arm-authorization';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { armFetch, collect } from './helpers/arm.ts';
import { identities, staticCredential, userToken } from './helpers/auth.ts';
import { demoSubscription, demoTenant, demoUser } from '../src/seed/demo.ts';

const sub = demoSubscription.id;
const rg = demoSubscription.resourceGroup;
const subScope = `/subscriptions/${sub}`;
const rgScope = `${subScope}/resourceGroups/${rg}`;
const api = '2022-04-01';
/** The published built-ins (reference §7.3). */
const published = {
  Owner: { id: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635', actions: ['*'], notActions: [] as string[] },
  Contributor: {
    id: 'b24988ac-6180-42a0-ab88-20f7382dd24c',
    actions: ['*'],
    notActions: ['Vendor.Authorization/*/Delete', 'Vendor.Authorization/*/Write', 'Vendor.Authorization/elevateAccess/Action', 'Vendor.Blueprint/blueprintAssignments/write', 'Vendor.Blueprint/blueprintAssignments/delete', 'Vendor.Compute/galleries/share/action'],
  },
  Reader: { id: 'acdd72a7-3385-48ef-bd42-f606fba81ae7', actions: ['*/read'], notActions: [] as string[] },
  'User Access Administrator': { id: '18d7d88d-d35e-4fb5-a5c3-7773c20a72d9', actions: ['*/read', 'Vendor.Authorization/*', 'Vendor.Support/*'], notActions: [] as string[] },
  'Role Based Access Control Administrator': { id: 'f58310d9-a9f6-439a-9e8d-f62e7b41a168', actions: ['Vendor.Authorization/roleAssignments/write', 'Vendor.Authorization/roleAssignments/delete', '*/read', 'Vendor.Support/*'], notActions: [] as string[] },
};

let s: TestServer;
let adminToken: string;
let userTok: string;
let admin: AuthorizationManagementClient;

const all = collect;

const call = (method: string, path: string, token: string, body?: unknown) => armFetch(s.url, method, path, token, body);

before(async () => {
  s = await startTestServer({ env: { STRATUS_PROVIDER_NAMESPACE_ALIASES: 'Microsoft.' } });
  adminToken = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  userTok = await userToken(s.url, identities.user, ['api://stratus/arm/user_impersonation']);
  admin = new AuthorizationManagementClient(staticCredential(async () => adminToken), sub, { endpoint: s.url });
});
after(async () => {
  await s?.close();
});

test('the built-in roles: well-known ids, names, permissions, BuiltInRole, assignable at /', async () => {
  const list = await all(admin.roleDefinitions.list(subScope));
  for (const [roleName, p] of Object.entries(published)) {
    const d = list.find((r) => r.roleName === roleName);
    assert.ok(d, roleName);
    assert.equal(d.name, p.id);
    assert.equal(d.id, `${subScope}/providers/Vendor.Authorization/roleDefinitions/${p.id}`);
    assert.equal(d.type, 'Vendor.Authorization/roleDefinitions');
    assert.equal(d.roleType, 'BuiltInRole');
    assert.deepEqual(d.assignableScopes, ['/']);
    assert.deepEqual(d.permissions, [{ actions: p.actions, notActions: p.notActions, dataActions: [], notDataActions: [] }]);
    assert.ok(d.description && d.description.length > 10);
  }
  // Every principal of the tenant reads them (the demo user holds no role).
  const asUser = await call('GET', `${rgScope}/providers/Vendor.Authorization/roleDefinitions?api-version=${api}&$filter=${encodeURIComponent("roleName eq 'Reader'")}`, userTok);
  assert.equal(asUser.status, 200);
  assert.deepEqual(asUser.body.value.map((d: any) => d.name), [published.Reader.id]);
  const mg = await call('GET', `/providers/Vendor.Management/managementGroups/${demoTenant.id}/providers/Vendor.Authorization/roleDefinitions?api-version=${api}&$filter=${encodeURIComponent("roleName eq 'Owner'")}`, adminToken);
  assert.equal(mg.body.value[0].id, `/providers/Vendor.Authorization/roleDefinitions/${published.Owner.id}`);
});

test('get at a scope and getById in both id forms; the published shape; an unknown id is RoleDefinitionDoesNotExist', async () => {
  const ex = JSON.parse(fs.readFileSync('test/fixtures/examples/arm/GetRoleDefinitionById.json', 'utf8'));
  const got = await admin.roleDefinitions.get(subScope, published.Contributor.id);
  assert.equal(got.roleName, 'Contributor');
  const tenantForm = await admin.roleDefinitions.getById(`/providers/Microsoft.Authorization/roleDefinitions/${published.Reader.id}`);
  assert.equal(tenantForm.id, `/providers/Vendor.Authorization/roleDefinitions/${published.Reader.id}`);
  const subForm = await admin.roleDefinitions.getById(`${subScope}/providers/Microsoft.Authorization/roleDefinitions/${published.Owner.id}`);
  assert.equal(subForm.roleName, 'Owner');
  const raw = await call('GET', `/providers/Vendor.Authorization/roleDefinitions/${published.Reader.id}?api-version=${api}`, adminToken);
  const want = ex.responses['200'].body;
  assert.deepEqual(Object.keys(raw.body).sort(), Object.keys(want).sort());
  for (const k of Object.keys(want.properties)) assert.ok(k in raw.body.properties, k);
  assert.deepEqual(Object.keys(raw.body.properties.permissions[0]).sort(), Object.keys(want.properties.permissions[0]).sort());
  const missing = crypto.randomUUID();
  await assert.rejects(admin.roleDefinitions.get(subScope, missing), (e: any) => e.statusCode === 404 && e.code === 'RoleDefinitionDoesNotExist');
});

test('a custom role: created (201), listed with each filter, assigned — granting its actions on the next call — and deleted', async () => {
  const id = crypto.randomUUID();
  const roleName = `Share Reader ${id.slice(0, 8)}`;
  const def: RoleDefinition = {
    roleName,
    description: 'Reads data share accounts.',
    roleType: 'CustomRole',
    permissions: [{ actions: ['Vendor.DataShare/accounts/read'], notActions: [] }],
    assignableScopes: [rgScope],
  };
  const created = await admin.roleDefinitions.createOrUpdate(rgScope, id, def);
  assert.equal(created.name, id);
  assert.equal(created.roleType, 'CustomRole');
  assert.deepEqual(created.assignableScopes, [rgScope]);
  const custom = await all(admin.roleDefinitions.list(rgScope, { filter: "type eq 'CustomRole'" }));
  assert.deepEqual(custom.map((d) => d.name), [id]);
  const byName = await all(admin.roleDefinitions.list(rgScope, { filter: `roleName eq '${roleName}'` }));
  assert.deepEqual(byName.map((d) => d.name), [id]);
  // Assignable at the group, so not listed at the subscription unless atScopeAndBelow().
  assert.deepEqual((await all(admin.roleDefinitions.list(subScope, { filter: "type eq 'CustomRole'" }))).map((d) => d.name), []);
  assert.deepEqual((await all(admin.roleDefinitions.list(subScope, { filter: "atScopeAndBelow() and type eq 'CustomRole'" }))).map((d) => d.name), [id]);
  // The same name twice is refused; a built-in cannot be changed.
  const dup = await call('PUT', `${rgScope}/providers/Vendor.Authorization/roleDefinitions/${crypto.randomUUID()}?api-version=${api}`, adminToken, { properties: { roleName, permissions: [], assignableScopes: [rgScope] } });
  assert.equal(dup.status, 409);
  assert.equal(dup.body.error.code, 'RoleDefinitionWithSameNameExists');
  const builtIn = await call('PUT', `${subScope}/providers/Vendor.Authorization/roleDefinitions/${published.Reader.id}?api-version=${api}`, adminToken, { properties: { roleName: 'Mine', assignableScopes: [subScope] } });
  assert.equal(builtIn.status, 400);
  assert.equal(builtIn.body.error.code, 'CannotModifyBuiltInRole');
  // The user may not list data share accounts; once assigned the custom role it may.
  const accounts = `${rgScope}/providers/Vendor.DataShare/accounts?api-version=2020-09-01`;
  assert.equal((await call('GET', accounts, userTok)).status, 403);
  const assignment = crypto.randomUUID();
  await admin.roleAssignments.create(rgScope, assignment, { roleDefinitionId: `${subScope}/providers/Microsoft.Authorization/roleDefinitions/${id}`, principalId: demoUser.id });
  assert.equal((await call('GET', accounts, userTok)).status, 200);
  // Not deletable while assigned.
  const inUse = await call('DELETE', `${rgScope}/providers/Vendor.Authorization/roleDefinitions/${id}?api-version=${api}`, adminToken);
  assert.equal(inUse.status, 409);
  assert.equal(inUse.body.error.code, 'RoleDefinitionHasAssignments');
  // An update of the role changes what it grants at once.
  await admin.roleDefinitions.createOrUpdate(rgScope, id, { ...def, permissions: [{ actions: ['Vendor.Compute/skus/read'] }] });
  assert.equal((await call('GET', accounts, userTok)).status, 403);
  await admin.roleAssignments.delete(rgScope, assignment);
  const deleted = await admin.roleDefinitions.delete(rgScope, id);
  assert.equal(deleted.name, id);
  const again = await call('DELETE', `${rgScope}/providers/Vendor.Authorization/roleDefinitions/${id}?api-version=${api}`, adminToken);
  assert.equal(again.status, 204);
  await assert.rejects(admin.roleDefinitions.get(rgScope, id), (e: any) => e.statusCode === 404);
});

test('writes need roleDefinitions/write: the demo user is refused', async () => {
  const r = await call('PUT', `${subScope}/providers/Vendor.Authorization/roleDefinitions/${crypto.randomUUID()}?api-version=${api}`, userTok, { properties: { roleName: 'Nope', assignableScopes: [subScope] } });
  assert.equal(r.status, 403);
  assert.equal(r.body.error.code, 'AuthorizationFailed');
  const bad = await call('PUT', `${subScope}/providers/Vendor.Authorization/roleDefinitions/not-a-guid?api-version=${api}`, adminToken, { properties: { roleName: 'Nope' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'InvalidRoleDefinitionId');
  const noName = await call('PUT', `${subScope}/providers/Vendor.Authorization/roleDefinitions/${crypto.randomUUID()}?api-version=${api}`, adminToken, { properties: { permissions: [] } });
  assert.equal(noName.status, 400);
  assert.equal(noName.body.error.target, 'properties.roleName');
});
