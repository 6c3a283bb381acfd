/**
 * Role assignments through the official `@azure/arm-authorization` 9 client over HTTPS
 * (reference resource-manager-base §7.1, §8; issue 27 item 5): create (201), get, the lists at
 * every scope shape with each `$filter`, paging, getById / deleteById, delete (200, then 204),
 * the refusals (a GUID name, `RoleAssignmentExists`, `PrincipalNotFound`,
 * `RoleDefinitionDoesNotExist`, `UnmatchedPrincipalType`, `AuthorizationFailed` for a caller
 * without `roleAssignments/write`), and a second client whose access changes on its very next
 * call after an assignment is created and after it is deleted.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { AuthorizationManagementClient, type RoleAssignment } from '@azure/arm-authorization';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { armFetch, collect } from './helpers/arm.ts';
import { appToken, identities, staticCredential, userToken } from './helpers/auth.ts';
import { demoAdmin, demoManagedIdentity, demoServicePrincipal, demoSubscription, demoTenant, demoUser } from '../src/seed/demo.ts';
import { roleStore } from '../src/services/arm/role-store.ts';
import { assignmentPageSize } from '../src/services/authorization/assignments.ts';

const sub = demoSubscription.id;
const rg = demoSubscription.resourceGroup;
const roles = { owner: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635', contributor: 'b24988ac-6180-42a0-ab88-20f7382dd24c', reader: 'acdd72a7-3385-48ef-bd42-f606fba81ae7' };
const subScope = `/subscriptions/${sub}`;
const rgScope = `${subScope}/resourceGroups/${rg}`;
const resourceScope = `${rgScope}/providers/Vendor.Storage/storageAccounts/stratusdata`;
const mgScope = `/providers/Vendor.Management/managementGroups/${demoTenant.id}`;
const api = '2022-04-01';
const roleDefId = (role: string) => `${subScope}/providers/Microsoft.Authorization/roleDefinitions/${role}`;

let s: TestServer;
let adminToken: string;
let userTok: string;
let admin: AuthorizationManagementClient;
let user: AuthorizationManagementClient;

function client(token: string): AuthorizationManagementClient {
  return new AuthorizationManagementClient(staticCredential(async () => token), sub, { endpoint: s.url });
}

const all = collect;

const call = (method: string, path: string, token: string, body?: unknown) => armFetch(s.url, method, path, token, body);

const assignmentPath = (scope: string, name: string) => `${scope === '/' ? '' : scope}/providers/Vendor.Authorization/roleAssignments/${name}?api-version=${api}`;

before(async () => {
  s = await startTestServer({ env: { STRATUS_PROVIDER_NAMESPACE_ALIASES: 'Microsoft.' } });
  adminToken = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  userTok = await userToken(s.url, identities.user, ['api://stratus/arm/user_impersonation']);
  admin = client(adminToken);
  user = client(userTok);
});
after(async () => {
  await s?.close();
});

test('an assignment created through the client decides the next call of a second client, and so does its deletion', async () => {
  await assert.rejects(all(user.roleAssignments.listForSubscription()), (e: any) => e.statusCode === 403 && e.code === 'AuthorizationFailed');
  const name = crypto.randomUUID();
  const created = await admin.roleAssignments.create(subScope, name, { roleDefinitionId: roleDefId(roles.reader), principalId: demoUser.id, principalType: 'User' });
  assert.equal(created.name, name);
  assert.equal(created.id, `${subScope}/providers/Vendor.Authorization/roleAssignments/${name}`);
  assert.equal(created.type, 'Vendor.Authorization/roleAssignments');
  assert.equal(created.scope, subScope);
  assert.equal(created.roleDefinitionId, `/providers/Vendor.Authorization/roleDefinitions/${roles.reader}`);
  assert.equal(created.principalId, demoUser.id);
  assert.equal(created.principalType, 'User');
  assert.equal(created.createdBy, demoAdmin.id);
  // The very next call of the user: Reader grants roleAssignments/read.
  const seen = await all(user.roleAssignments.listForSubscription());
  assert.ok(seen.some((a) => a.name === name));
  // Reader does not grant writes.
  await assert.rejects(user.roleAssignments.create(subScope, crypto.randomUUID(), { roleDefinitionId: roleDefId(roles.reader), principalId: demoServicePrincipal.objectId }), (e: any) => e.statusCode === 403 && e.code === 'AuthorizationFailed');
  const deleted = await admin.roleAssignments.delete(subScope, name);
  assert.equal(deleted.name, name);
  await assert.rejects(all(user.roleAssignments.listForSubscription()), (e: any) => e.statusCode === 403 && e.code === 'AuthorizationFailed');
  // A second delete: 204, nothing returned.
  const again = await call('DELETE', assignmentPath(subScope, name), adminToken);
  assert.equal(again.status, 204);
});

test('a caller without roleAssignments/write is refused: the demo user, and a Contributor', async () => {
  const name = crypto.randomUUID();
  const r = await call('PUT', assignmentPath(subScope, name), userTok, { properties: { roleDefinitionId: roleDefId(roles.owner), principalId: demoUser.id } });
  assert.equal(r.status, 403);
  assert.equal(r.body.error.code, 'AuthorizationFailed');
  assert.match(r.body.error.message, /does not have authorization to perform action 'Vendor\.Authorization\/roleAssignments\/write' over scope/);
  const contributor = client(await appToken(s.url, 'arm', identities.sp));
  await assert.rejects(contributor.roleAssignments.create(rgScope, name, { roleDefinitionId: roleDefId(roles.owner), principalId: demoServicePrincipal.objectId }), (e: any) => e.statusCode === 403 && e.code === 'AuthorizationFailed');
  // Nothing was stored.
  assert.equal((await call('GET', assignmentPath(subScope, name), adminToken)).status, 404);
});

test('get, getById and deleteById; the published create example field by field', async () => {
  const ex = JSON.parse(fs.readFileSync('test/fixtures/examples/arm/RoleAssignments_CreateForSubscription.json', 'utf8'));
  const name = crypto.randomUUID();
  const r = await call('PUT', assignmentPath(subScope, name), adminToken, { properties: { ...ex.parameters.parameters.properties, roleDefinitionId: roleDefId(roles.contributor).replace('Microsoft.', 'Vendor.'), principalId: demoManagedIdentity.objectId, principalType: 'ServicePrincipal' } });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const want = ex.responses['201'].body;
  assert.deepEqual(Object.keys(want).sort(), ['id', 'name', 'properties', 'type']);
  for (const k of Object.keys(want.properties)) assert.ok(k in r.body.properties, k);
  assert.equal(r.body.type, want.type);
  assert.match(r.body.properties.roleDefinitionId, /^\/providers\/Vendor\.Authorization\/roleDefinitions\/[0-9a-f-]{36}$/);
  assert.equal(r.body.properties.scope, subScope);
  const id = r.body.id as string;
  const byId = await admin.roleAssignments.getById(id);
  assert.equal(byId.name, name);
  assert.equal(byId.principalType, 'ServicePrincipal');
  const got = await admin.roleAssignments.get(subScope, name);
  assert.equal(got.id, id);
  // The same assignment again under its own name: 200, description updated.
  const same = await call('PUT', assignmentPath(subScope, name), adminToken, { properties: { roleDefinitionId: roleDefId(roles.contributor), principalId: demoManagedIdentity.objectId, description: 'again' } });
  assert.equal(same.status, 200);
  assert.equal(same.body.properties.description, 'again');
  const gone = await admin.roleAssignments.deleteById(id);
  assert.equal(gone.name, name);
  assert.equal((await call('GET', assignmentPath(subScope, name), adminToken)).body.error.code, 'RoleAssignmentNotFound');
  assert.equal((await call('DELETE', assignmentPath(subScope, name), adminToken)).status, 204);
});

test('refusals: a name that is no GUID, the same assignment under another name, unknown principal and role, a wrong principalType', async () => {
  const body = (over: Record<string, unknown> = {}) => ({ properties: { roleDefinitionId: roleDefId(roles.reader), principalId: demoManagedIdentity.objectId, ...over } });
  const bad = await call('PUT', assignmentPath(rgScope, 'not-a-guid'), adminToken, body());
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'InvalidRoleAssignmentId');
  const first = crypto.randomUUID();
  assert.equal((await call('PUT', assignmentPath(rgScope, first), adminToken, body())).status, 201);
  const dup = await call('PUT', assignmentPath(rgScope, crypto.randomUUID()), adminToken, body());
  assert.equal(dup.status, 409);
  assert.deepEqual(dup.body.error, { code: 'RoleAssignmentExists', message: 'The role assignment already exists.' });
  const other = crypto.randomUUID();
  const noPrincipal = await call('PUT', assignmentPath(rgScope, other), adminToken, body({ principalId: other }));
  assert.equal(noPrincipal.status, 400);
  assert.equal(noPrincipal.body.error.code, 'PrincipalNotFound');
  assert.match(noPrincipal.body.error.message, new RegExp(`^Principal ${other} does not exist in the directory ${demoTenant.id}\\.`));
  const noRole = await call('PUT', assignmentPath(rgScope, other), adminToken, body({ roleDefinitionId: roleDefId(other) }));
  assert.equal(noRole.status, 400);
  assert.equal(noRole.body.error.code, 'RoleDefinitionDoesNotExist');
  const wrongType = await call('PUT', assignmentPath(rgScope, other), adminToken, body({ principalType: 'User' }));
  assert.equal(wrongType.status, 400);
  assert.equal(wrongType.body.error.code, 'UnmatchedPrincipalType');
  const moved = await call('PUT', assignmentPath(subScope, first), adminToken, body());
  assert.equal(moved.status, 400);
  assert.equal(moved.body.error.code, 'RoleAssignmentUpdateNotPermitted');
  // A control character in a scope segment or a text: the same 400 on both databases, nothing stored.
  const control = await call('PUT', assignmentPath(`${rgScope}/providers/Vendor.Storage/storageAccounts/a%00b`, other), adminToken, body());
  assert.equal(control.status, 400);
  assert.equal(control.body.error.code, 'InvalidParameter');
  const controlText = await call('PUT', assignmentPath(rgScope, other), adminToken, body({ description: 'a\u0001b' }));
  assert.equal(controlText.status, 400);
  assert.equal(controlText.body.error.target, 'properties.description');
  const noBody = await call('PUT', assignmentPath(rgScope, other), adminToken, { properties: 'x' });
  assert.equal(noBody.status, 400);
  const filter = await call('GET', `${rgScope}/providers/Vendor.Authorization/roleAssignments?api-version=${api}&$filter=${encodeURIComponent("roleName eq 'x'")}`, adminToken);
  assert.equal(filter.status, 400);
  assert.equal(filter.body.error.code, 'InvalidFilter');
  // Nothing partial: only the first assignment exists.
  const list = await all(admin.roleAssignments.listForResourceGroup(rg, { filter: `principalId eq '${demoManagedIdentity.objectId}'` }));
  assert.deepEqual(list.filter((a) => a.scope === rgScope).map((a) => a.name), [first]);
  await admin.roleAssignments.delete(rgScope, first);
});

test('lists at every scope with atScope(), principalId eq and assignedTo(), inheritance as published', async () => {
  const atRg = crypto.randomUUID();
  const atResource = crypto.randomUUID();
  const atMg = crypto.randomUUID();
  const atRoot = crypto.randomUUID();
  await admin.roleAssignments.create(rgScope, atRg, { roleDefinitionId: roleDefId(roles.reader), principalId: demoUser.id, principalType: 'User' });
  await admin.roleAssignments.create(resourceScope, atResource, { roleDefinitionId: roleDefId(roles.contributor), principalId: demoUser.id, principalType: 'User' });
  await admin.roleAssignments.create(mgScope, atMg, { roleDefinitionId: roleDefId(roles.reader), principalId: demoManagedIdentity.objectId });
  const root = await call('PUT', assignmentPath('/', atRoot), adminToken, { properties: { roleDefinitionId: `/providers/Vendor.Authorization/roleDefinitions/${roles.reader}`, principalId: demoUser.id } });
  assert.equal(root.status, 201, JSON.stringify(root.body));
  assert.equal(root.body.id, `/providers/Vendor.Authorization/roleAssignments/${atRoot}`);
  assert.equal(root.body.properties.scope, '/');
  const names = (list: RoleAssignment[]) => new Set(list.map((a) => a.name));
  // The resource group: at, above (the subscription's, the management group's, the root's) and below.
  const rgAll = names(await all(admin.roleAssignments.listForResourceGroup(rg)));
  for (const n of [atRg, atResource, atMg, atRoot]) assert.ok(rgAll.has(n), n);
  assert.ok([...(await all(admin.roleAssignments.listForResourceGroup(rg)))].some((a) => a.scope === subScope && a.principalId === demoAdmin.id), 'the subscription Owner is inherited');
  const rgAt = names(await all(admin.roleAssignments.listForResourceGroup(rg, { filter: 'atScope()' })));
  assert.ok(rgAt.has(atRg) && rgAt.has(atMg) && rgAt.has(atRoot) && !rgAt.has(atResource));
  const byPrincipal = await all(admin.roleAssignments.listForSubscription({ filter: `principalId eq '${demoUser.id}'` }));
  assert.deepEqual(new Set(byPrincipal.map((a) => a.name)), new Set([atRg, atResource, atRoot]));
  const assigned = await all(admin.roleAssignments.listForScope(subScope, { filter: `assignedTo('${demoUser.id}')` }));
  assert.deepEqual(new Set(assigned.map((a) => a.name)), new Set([atRg, atResource, atRoot]));
  const both = await all(admin.roleAssignments.listForScope(rgScope, { filter: `atScope() and assignedTo('${demoUser.id}')` }));
  assert.deepEqual(new Set(both.map((a) => a.name)), new Set([atRg, atRoot]));
  const res = names(await all(admin.roleAssignments.listForResource(rg, 'Microsoft.Storage', 'storageAccounts', 'stratusdata', { filter: 'atScope()' })));
  assert.ok(res.has(atResource) && res.has(atRg) && res.has(atMg));
  const mg = names(await all(admin.roleAssignments.listForScope(mgScope, { filter: 'atScope()' })));
  assert.ok(mg.has(atMg) && mg.has(atRoot) && !mg.has(atRg));
  const rootList = await call('GET', `/providers/Vendor.Authorization/roleAssignments?api-version=${api}&$filter=${encodeURIComponent('atScope()')}`, adminToken);
  assert.equal(rootList.status, 200);
  assert.deepEqual(rootList.body.value.map((a: any) => a.name), [atRoot]);
  // A caller may list its own assignments without roleAssignments/read.
  const own = await call('GET', `${subScope}/providers/Vendor.Authorization/roleAssignments?api-version=${api}&$filter=${encodeURIComponent(`assignedTo('${demoUser.id}')`)}`, userTok);
  assert.equal(own.status, 200);
  for (const n of [atRg, atResource, atRoot]) await call('DELETE', assignmentPath(n === atRg ? rgScope : n === atResource ? resourceScope : '/', n), adminToken);
  await admin.roleAssignments.delete(mgScope, atMg);
});

test('the published resource-group listing shape: the subscription assignment listed with the group\'s own', async () => {
  const ex = JSON.parse(fs.readFileSync('test/fixtures/examples/arm/RoleAssignments_ListForResourceGroup.json', 'utf8'));
  const own = crypto.randomUUID();
  await admin.roleAssignments.create(rgScope, own, { roleDefinitionId: roleDefId(roles.reader), principalId: demoAdmin.id });
  const r = await call('GET', `${rgScope}/providers/Vendor.Authorization/roleAssignments?api-version=${api}&$filter=${encodeURIComponent(`principalId eq '${demoAdmin.id}'`)}`, adminToken);
  assert.equal(r.status, 200);
  const scopes = r.body.value.map((a: any) => a.properties.scope);
  assert.ok(scopes.includes(subScope) && scopes.includes(rgScope));
  const wantKeys = Object.keys(ex.responses['200'].body.value[0].properties);
  for (const a of r.body.value) for (const k of wantKeys) assert.ok(k in a.properties, k);
  await admin.roleAssignments.delete(rgScope, own);
});

test('lists page with $skipToken and an absolute nextLink the client follows', async () => {
  const db = s.server.ctx.store.db;
  const made: string[] = [];
  for (let i = 0; i < assignmentPageSize + 20; i++) {
    const id = crypto.randomUUID();
    made.push(id);
    const scope = `${rgScope}/providers/Vendor.Storage/storageAccounts/paging${i}`;
    await roleStore.insertAssignment(db, { id, tenantId: demoTenant.id, scope, roleDefinitionId: roles.reader, principalId: demoManagedIdentity.objectId, principalType: 'ServicePrincipal', description: null, condition: null, conditionVersion: null, createdOn: null, updatedOn: null, createdBy: null, updatedBy: null });
  }
  const first = await call('GET', `${rgScope}/providers/Vendor.Authorization/roleAssignments?api-version=${api}&$filter=${encodeURIComponent(`principalId eq '${demoManagedIdentity.objectId}'`)}`, adminToken);
  assert.equal(first.body.value.length, assignmentPageSize);
  assert.ok(first.body.nextLink.startsWith(`${s.url}/subscriptions/`), first.body.nextLink);
  const listed = await all(admin.roleAssignments.listForResourceGroup(rg, { filter: `principalId eq '${demoManagedIdentity.objectId}'` }));
  const ids = new Set(listed.map((a) => a.name));
  for (const id of made) assert.ok(ids.has(id), id);
  assert.equal(listed.length, ids.size, 'no assignment listed twice');
  for (const id of made) await roleStore.deleteAssignment(db, id);
});

test('the permissions listing at a resource group and a resource (the published shape)', async () => {
  const ex = JSON.parse(fs.readFileSync('test/fixtures/examples/arm/GetPermissions.json', 'utf8'));
  const perms = await all(admin.permissions.listForResourceGroup(rg));
  assert.ok(perms.length >= 1);
  assert.deepEqual(Object.keys(perms[0]!).sort(), Object.keys(ex.responses['200'].body.value[0]).sort());
  assert.ok(perms.some((p) => p.actions?.includes('*')), 'the admin is Owner');
  const onResource = await all(admin.permissions.listForResource(rg, 'Microsoft.Storage', '', 'storageAccounts', 'stratusdata'));
  assert.ok(onResource.some((p) => p.actions?.includes('*')));
  const none = await call('GET', `${rgScope}/providers/Vendor.Authorization/permissions?api-version=${api}`, userTok);
  assert.deepEqual(none.body, { value: [] });
});
