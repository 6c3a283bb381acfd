/**
 * Role management policies (spec resource-manager §2.1, §4.1, §4.2, §5, §7, §9; reference
 * §2): list at the four scope shapes, `$filter`/`filter` by role, get, PATCH merge and its
 * validation, permissions, unknown scopes, and a PATCH surviving a restart — through the
 * official `@azure/arm-authorization` client over HTTPS, plus plain `fetch` where the
 * client would not send the request.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AuthorizationManagementClient, type RoleManagementPolicy } from '@azure/arm-authorization';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, staticCredential, userToken } from './helpers/auth.ts';
import { examplesDir, readExample } from './helpers/reference.ts';
import { demoAdmin, demoSubscription, demoTenant, demoUser, otherSubscription } from '../src/seed/demo.ts';
import { ArmStore } from '../src/services/arm/store.ts';

const api = '2020-10-01';
const sub = demoSubscription.id;
const rg = demoSubscription.resourceGroup;
const roles = {
  owner: '8e3af657-a8ff-443c-a75c-2fe8c4bcb635',
  contributor: 'b24988ac-6180-42a0-ab88-20f7382dd24c',
  reader: 'acdd72a7-3385-48ef-bd42-f606fba81ae7',
  userAccessAdministrator: '18d7d88d-d35e-4fb5-a5c3-7773c20a72d9',
  rbacAdministrator: 'f58310d9-a9f6-439a-9e8d-f62e7b41a168',
};
const scopes = {
  managementGroup: `/providers/Vendor.Management/managementGroups/${demoTenant.id}`,
  subscription: `/subscriptions/${sub}`,
  resourceGroup: `/subscriptions/${sub}/resourceGroups/${rg}`,
  resource: `/subscriptions/${sub}/resourceGroups/${rg}/providers/Vendor.Storage/storageAccounts/stratusdata`,
};
const ruleIds = [
  'Enablement_Admin_Eligibility',
  'Expiration_Admin_Eligibility',
  'Notification_Admin_Admin_Eligibility',
  'Notification_Requestor_Admin_Eligibility',
  'Notification_Approver_Admin_Eligibility',
  'Enablement_Admin_Assignment',
  'Expiration_Admin_Assignment',
  'Notification_Admin_Admin_Assignment',
  'Notification_Requestor_Admin_Assignment',
  'Notification_Approver_Admin_Assignment',
  'Approval_EndUser_Assignment',
  'AuthenticationContext_EndUser_Assignment',
  'Enablement_EndUser_Assignment',
  'Expiration_EndUser_Assignment',
  'Notification_Admin_EndUser_Assignment',
  'Notification_Requestor_EndUser_Assignment',
  'Notification_Approver_EndUser_Assignment',
];

let s: TestServer;
let adminToken: string;
let userTok: string;
let readerToken: string;
let contributorToken: string;
let admin: AuthorizationManagementClient;
/** Paths the official clients sent (recorded by a pipeline policy). */
const sentPaths: string[] = [];

/** An official client for a token, pointed at the test server. */
function client(token: string): AuthorizationManagementClient {
  const c = new AuthorizationManagementClient(staticCredential(async () => token), sub, { endpoint: s.url });
  c.pipeline.addPolicy({
    name: 'recordPath',
    async sendRequest(req, next) {
      sentPaths.push(req.url.slice(s.url.length).split('?')[0]!);
      return next(req);
    },
  });
  return c;
}

async function collect(it: AsyncIterable<RoleManagementPolicy>): Promise<RoleManagementPolicy[]> {
  const out: RoleManagementPolicy[] = [];
  for await (const p of it) out.push(p);
  return out;
}

/** A raw call; `path` starts with `/`. */
async function call(method: string, path: string, token: string | undefined, body?: unknown) {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${s.url}${path}`, { method, headers, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const listPath = (scope: string, query = '') => `${scope}/providers/Vendor.Authorization/roleManagementPolicies?api-version=${api}${query}`;
const roleDefId = (scope: string, role: string) => `${scope}/providers/Vendor.Authorization/roleDefinitions/${role}`;

async function policyOf(scope: string, role: string): Promise<any> {
  const r = await call('GET', listPath(scope, `&$filter=${encodeURIComponent(`roleDefinitionId eq '${roleDefId(scope, role)}'`)}`), adminToken);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.value.length, 1);
  return r.body.value[0];
}

before(async () => {
  // The official client writes its cloud's provider namespace; the server maps it (no pipeline policy).
  s = await startTestServer({ env: { STRATUS_PROVIDER_NAMESPACE_ALIASES: 'Microsoft.' } });
  adminToken = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  userTok = await userToken(s.url, identities.user, ['api://stratus/arm/user_impersonation']);
  readerToken = await appToken(s.url, 'arm', identities.mi);
  contributorToken = await appToken(s.url, 'arm', identities.sp);
  admin = client(adminToken);
});
after(async () => {
  await s?.close();
});

test('the client lists one default policy per role at each of the four scope shapes (leading-slash scopes arrive as //)', async () => {
  const typeOf = { managementGroup: 'managementgroup', subscription: 'subscription', resourceGroup: 'resourcegroup', resource: 'resource' } as const;
  const namesByScope: string[][] = [];
  for (const [kind, scope] of Object.entries(scopes) as [keyof typeof scopes, string][]) {
    const list = await collect(admin.roleManagementPolicies.listForScope(scope));
    assert.equal(list.length, 5, kind);
    for (const p of list) {
      assert.match(p.name!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(p.id, `${scope}/providers/Vendor.Authorization/roleManagementPolicies/${p.name}`);
      assert.equal(p.type, 'Vendor.Authorization/RoleManagementPolicies');
      assert.equal(p.scope, scope);
      assert.equal(p.policyProperties?.scope?.id, scope);
      assert.equal(p.policyProperties?.scope?.type, typeOf[kind]);
      assert.equal(p.isOrganizationDefault, false);
      assert.deepEqual(p.rules!.map((r) => r.id), ruleIds);
      assert.deepEqual(p.effectiveRules, p.rules);
    }
    assert.equal(new Set(list.map((p) => p.name)).size, 5);
    namesByScope.push(list.map((p) => p.name!));
  }
  // Names are per scope, and stable: the same scope and role always give the same name.
  assert.equal(new Set(namesByScope.flat()).size, 20);
  // The client joins a leading-slash scope after a `/` (reference §7.1); the server takes `//subscriptions/…` as the path.
  assert.ok(sentPaths.includes(`//subscriptions/${sub}/providers/Microsoft.Authorization/roleManagementPolicies`), sentPaths.join(' '));
  const again = await collect(admin.roleManagementPolicies.listForScope(scopes.resourceGroup));
  assert.deepEqual(again.map((p) => p.name), namesByScope[2]);
  // Without the leading slash the same scope resolves the same way.
  const noSlash = await collect(admin.roleManagementPolicies.listForScope(scopes.subscription.slice(1)));
  assert.deepEqual(noSlash.map((p) => p.name), namesByScope[1]);
  // The form of the published examples (`providers/Vendor.Subscription/subscriptions/<id>`) is the subscription scope.
  const vendorSub = await collect(admin.roleManagementPolicies.listForScope(`providers/Vendor.Subscription/subscriptions/${sub}`));
  assert.deepEqual(vendorSub.map((p) => p.name), namesByScope[1]);
  assert.equal(vendorSub[0]!.scope, scopes.subscription);
  // A child resource is a resource scope too.
  const childScope = `${scopes.resource}/blobServices/default`;
  const child = await collect(admin.roleManagementPolicies.listForScope(childScope));
  assert.equal(child.length, 5);
  assert.equal(child[0]!.scope, childScope);
  assert.equal(child[0]!.policyProperties?.scope?.type, 'resource');
  // The scope display names come from the store.
  assert.equal((await collect(admin.roleManagementPolicies.listForScope(scopes.subscription)))[0]!.policyProperties?.scope?.displayName, demoSubscription.displayName);
  assert.equal((await collect(admin.roleManagementPolicies.listForScope(scopes.managementGroup)))[0]!.policyProperties?.scope?.displayName, 'Tenant Root Group');
});

/** Rules in a comparable form: by id, `enabledRules` sorted (order is not significant, reference §2.6). */
const comparable = (rules: any[]) =>
  Object.fromEntries(rules.map((r) => [r.id, r.enabledRules ? { ...r, enabledRules: [...r.enabledRules].sort() } : r]));

test('the published examples, field by field: list by scope (example request scope) and partial PATCH', async (t) => {
  const dir = examplesDir(t);
  const example = (name: string) => readExample(dir, name);
  const get = example('GetRoleManagementPolicyByScope.json');
  const exPolicy = get.responses['200'].body.value[0];
  const list = await call('GET', `/providers/Vendor.Subscription/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies?api-version=${get.parameters['api-version']}`, adminToken);
  assert.equal(list.status, 200);
  assert.deepEqual(Object.keys(list.body).sort(), Object.keys(get.responses['200'].body).sort());
  const ours = list.body.value.find((p: any) => p.properties.lastModifiedDateTime === null) ?? list.body.value[0];
  // Same keys at the top, in properties, in policyProperties.scope and lastModifiedBy.
  assert.deepEqual(Object.keys(ours).sort(), Object.keys(exPolicy).sort());
  assert.deepEqual(Object.keys(ours.properties).sort(), Object.keys(exPolicy.properties).sort());
  assert.deepEqual(Object.keys(ours.properties.policyProperties.scope).sort(), Object.keys(exPolicy.properties.policyProperties.scope).sort());
  assert.deepEqual(Object.keys(ours.properties.lastModifiedBy).sort(), Object.keys(exPolicy.properties.lastModifiedBy).sort());
  assert.equal(ours.type, exPolicy.type);
  assert.equal(ours.properties.scope, `/subscriptions/${sub}`);
  assert.equal(ours.id, `/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies/${ours.name}`);
  assert.equal(ours.properties.policyProperties.scope.type, exPolicy.properties.policyProperties.scope.type);
  // The default rule set is the published one, value for value.
  assert.deepEqual(comparable(ours.properties.rules), comparable(exPolicy.properties.rules));
  assert.deepEqual(comparable(ours.properties.effectiveRules), comparable(exPolicy.properties.effectiveRules));

  // The partial PATCH example: its request body gives its response's rules.
  const patch = example('PatchPartialRoleManagementPolicy.json');
  const target = list.body.value.find((p: any) => p.name !== ours.name && p.properties.lastModifiedDateTime === null) ?? ours;
  const r = await call('PATCH', `/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies/${target.name}?api-version=${api}`, adminToken, patch.parameters.parameters);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const exOut = patch.responses['200'].body;
  assert.deepEqual(Object.keys(r.body.properties).sort(), Object.keys(exOut.properties).sort());
  assert.deepEqual(comparable(r.body.properties.rules), comparable(exOut.properties.rules));
  assert.match(r.body.properties.lastModifiedDateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/);
  // Put it back for the other tests.
  assert.equal((await call('DELETE', `/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies/${target.name}?api-version=${api}`, adminToken)).status, 200);
});

test('a default policy carries the 17 default rules with the reference values', async () => {
  const p = await policyOf(scopes.subscription, roles.reader);
  const rules = Object.fromEntries(p.properties.rules.map((r: any) => [r.id, r]));
  assert.deepEqual(rules.Expiration_Admin_Eligibility, {
    isExpirationRequired: true,
    maximumDuration: 'P90D',
    exceptionMembers: null,
    id: 'Expiration_Admin_Eligibility',
    ruleType: 'RoleManagementPolicyExpirationRule',
    target: { caller: 'Admin', operations: ['All'], level: 'Eligibility', targetObjects: null, inheritableSettings: null, enforcedSettings: null },
  });
  assert.equal(rules.Expiration_EndUser_Assignment.maximumDuration, 'PT7H');
  assert.deepEqual(rules.Enablement_EndUser_Assignment.enabledRules, ['MultiFactorAuthentication', 'Justification', 'Ticketing']);
  assert.deepEqual(rules.Enablement_Admin_Eligibility.enabledRules, []);
  assert.equal(rules.Notification_Approver_EndUser_Assignment.isDefaultRecipientsEnabled, true);
  assert.equal(rules.Notification_Approver_EndUser_Assignment.notificationRecipients, null);
  assert.deepEqual(rules.Notification_Admin_Admin_Eligibility.notificationRecipients, ['admin_admin_eligible@test.com']);
  assert.equal(rules.Approval_EndUser_Assignment.setting.approvalMode, 'SingleStage');
  assert.equal(rules.Approval_EndUser_Assignment.setting.approvalStages[0].primaryApprovers.length, 2);
  assert.deepEqual(rules.AuthenticationContext_EndUser_Assignment, {
    isEnabled: false,
    claimValue: '',
    id: 'AuthenticationContext_EndUser_Assignment',
    ruleType: 'RoleManagementPolicyAuthenticationContextRule',
    target: { caller: 'EndUser', operations: ['All'], level: 'Assignment', targetObjects: null, inheritableSettings: null, enforcedSettings: null },
  });
  assert.deepEqual(p.properties.lastModifiedBy, { id: null, displayName: 'Admin', type: null, email: null });
  assert.equal(p.properties.displayName, null);
  assert.equal(p.properties.description, null);
});

test('$filter and filter by roleDefinitionId return that role\'s policy; the client with a filter policy too', async () => {
  const all = await collect(admin.roleManagementPolicies.listForScope(scopes.resourceGroup));
  const byFilter = new Map<string, string>();
  for (const role of Object.values(roles)) {
    const p = await policyOf(scopes.resourceGroup, role);
    byFilter.set(role, p.name);
    // filter without `$`, a role id defined at the subscription (a scope above), and %24filter.
    const expr = encodeURIComponent(`roleDefinitionId eq '${roleDefId(scopes.subscription, role)}'`);
    const r2 = await call('GET', listPath(scopes.resourceGroup, `&filter=${expr}`), adminToken);
    assert.equal(r2.status, 200);
    assert.deepEqual(r2.body.value.map((x: any) => x.name), [p.name]);
    const r3 = await call('GET', listPath(scopes.resourceGroup, `&%24filter=${encodeURIComponent(`roleDefinitionId eq '/providers/Vendor.Authorization/roleDefinitions/${role}'`)}`), adminToken);
    assert.deepEqual(r3.body.value.map((x: any) => x.name), [p.name]);
  }
  assert.equal(new Set(byFilter.values()).size, 5);
  assert.deepEqual(new Set(byFilter.values()), new Set(all.map((p) => p.name)));
  // The official client has no filter option; a pipeline policy adds it.
  const c = client(adminToken);
  c.pipeline.addPolicy({
    name: 'addFilter',
    async sendRequest(req, next) {
      const u = new URL(req.url);
      u.searchParams.set('$filter', `roleDefinitionId eq '${roleDefId(scopes.resourceGroup, roles.owner)}'`);
      req.url = u.toString();
      return next(req);
    },
  });
  const filtered = await collect(c.roleManagementPolicies.listForScope(scopes.resourceGroup));
  assert.deepEqual(filtered.map((p) => p.name), [byFilter.get(roles.owner)]);
});

test('a malformed filter, another shape, an unrelated scope or an unknown role → 400 in the ARM envelope', async () => {
  const cases: [string, string, RegExp][] = [
    [`roleDefinitionId eq '${roleDefId(scopes.subscription, roles.owner)}`, 'InvalidFilter', /malformed at position \d+/],
    [`roleDefinitionId eq`, 'InvalidFilter', /malformed/],
    [`roleName eq 'Owner'`, 'InvalidFilter', /not supported/],
    [`roleDefinitionId ne '${roleDefId(scopes.subscription, roles.owner)}'`, 'InvalidFilter', /not supported/],
    [`roleDefinitionId eq 'Owner'`, 'InvalidFilter', /not a role definition id/],
    [`roleDefinitionId eq '/subscriptions/${otherSubscription.id}/providers/Vendor.Authorization/roleDefinitions/${roles.owner}'`, 'InvalidFilter', /not defined at the scope/],
    [`roleDefinitionId eq '${roleDefId(scopes.subscription, '00000000-0000-4000-8000-000000000000')}'`, 'RoleDefinitionDoesNotExist', /00000000-0000-4000-8000-000000000000/],
    [`roleDefinitionId eq '${roleDefId(scopes.subscription, 'not-a-guid')}'`, 'RoleDefinitionDoesNotExist', /not-a-guid/],
  ];
  for (const [expr, code, message] of cases) {
    const r = await call('GET', listPath(scopes.resourceGroup, `&$filter=${encodeURIComponent(expr)}`), adminToken);
    assert.equal(r.status, 400, expr);
    assert.equal(r.body.error.code, code, expr);
    assert.match(r.body.error.message, message, expr);
    assert.ok(r.headers.get('x-vendor-request-id'));
  }
  // A repeated $filter is ambiguous: 400 in the CloudError shape (code and message only).
  const twice = await call('GET', listPath(scopes.resourceGroup, `&$filter=${encodeURIComponent(`roleDefinitionId eq '${roleDefId(scopes.subscription, roles.owner)}'`)}&$filter=x`), adminToken);
  assert.equal(twice.status, 400);
  assert.deepEqual(Object.keys(twice.body.error).sort(), ['code', 'message']);
  assert.equal(twice.body.error.code, 'InvalidParameter');
  // Nested deeper than the parser's stack (unencoded parentheses keep the URL short): a 400, not a 500.
  const deep = await call('GET', listPath(scopes.resourceGroup, `&$filter=${'('.repeat(6000)}roleDefinitionId`), adminToken);
  assert.equal(deep.status, 400, JSON.stringify(deep.body));
  assert.equal(deep.body.error.code, 'InvalidFilter');
  assert.match(deep.body.error.message, /nest/);
  assert.ok(deep.body.error.message.length < 600, "the message quotes the expression cut short");
});

test('get reads one policy; an unknown name → 404', async () => {
  const list = await collect(admin.roleManagementPolicies.listForScope(scopes.resource));
  const one = await admin.roleManagementPolicies.get(scopes.resource, list[2]!.name!);
  assert.equal(one.name, list[2]!.name);
  assert.equal(one.id, list[2]!.id);
  assert.equal(one.rules!.length, 17);
  // A policy name of another scope is not a policy of this one.
  const other = await collect(admin.roleManagementPolicies.listForScope(scopes.subscription));
  for (const name of [other[0]!.name!, 'not-a-guid']) {
    const r = await call('GET', `${scopes.resource}/providers/Vendor.Authorization/roleManagementPolicies/${name}?api-version=${api}`, adminToken);
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'RoleManagementPolicyNotFound');
  }
  await assert.rejects(admin.roleManagementPolicies.get(scopes.resource, other[0]!.name!), (e: any) => e.statusCode === 404 && e.code === 'RoleManagementPolicyNotFound');
});

test('PATCH merges a subset of rules by id, stamps lastModified*, returns 200 with the full policy, and a later GET shows it', async () => {
  const name = (await policyOf(scopes.subscription, roles.contributor)).name;
  const other = await policyOf(scopes.subscription, roles.owner);
  const before = await admin.roleManagementPolicies.get(scopes.subscription, name);
  const clockBefore = (await (await s.control(`/_stratus/clock`)).json()).now as string;
  const updated = await admin.roleManagementPolicies.update(scopes.subscription, name, {
    rules: [
      {
        ruleType: 'RoleManagementPolicyExpirationRule',
        id: 'Expiration_Admin_Eligibility',
        isExpirationRequired: false,
        maximumDuration: 'P180D',
        target: { caller: 'Admin', operations: ['All'], level: 'Eligibility' },
      } as any,
      {
        ruleType: 'RoleManagementPolicyNotificationRule',
        id: 'Notification_Admin_Admin_Eligibility',
        notificationType: 'Email',
        recipientType: 'Admin',
        isDefaultRecipientsEnabled: true,
        notificationLevel: 'All',
        notificationRecipients: ['secops@stratus.test', 'audit@stratus.test'],
        target: { caller: 'Admin', operations: ['All'], level: 'Eligibility' },
      } as any,
      { ruleType: 'RoleManagementPolicyEnablementRule', id: 'Enablement_EndUser_Assignment', enabledRules: ['Justification'] } as any,
    ],
  });
  assert.equal(updated.name, name);
  assert.equal(updated.rules!.length, 17);
  assert.deepEqual(updated.effectiveRules, updated.rules);
  const byId = Object.fromEntries(updated.rules!.map((r: any) => [r.id, r]));
  assert.equal(byId.Expiration_Admin_Eligibility.isExpirationRequired, false);
  assert.equal(byId.Expiration_Admin_Eligibility.maximumDuration, 'P180D');
  assert.equal(byId.Notification_Admin_Admin_Eligibility.notificationLevel, 'All');
  assert.deepEqual(byId.Notification_Admin_Admin_Eligibility.notificationRecipients, ['secops@stratus.test', 'audit@stratus.test']);
  assert.deepEqual(byId.Enablement_EndUser_Assignment.enabledRules, ['Justification']);
  // Untouched rules keep their values.
  const beforeById = Object.fromEntries(before.rules!.map((r: any) => [r.id, r]));
  for (const id of ruleIds.filter((x) => !['Expiration_Admin_Eligibility', 'Notification_Admin_Admin_Eligibility', 'Enablement_EndUser_Assignment'].includes(x))) {
    assert.deepEqual(byId[id], beforeById[id], id);
  }
  assert.equal(updated.lastModifiedBy?.id, demoAdmin.id);
  assert.equal(updated.lastModifiedBy?.displayName, demoAdmin.displayName);
  assert.equal(updated.lastModifiedBy?.type, 'User');
  assert.equal(updated.lastModifiedBy?.email, demoAdmin.userPrincipalName);
  assert.ok(updated.lastModifiedDateTime instanceof Date);
  assert.ok(updated.lastModifiedDateTime!.getTime() >= Date.parse(clockBefore));
  // The wire form is the offset form of the reference.
  const raw = await call('GET', `${scopes.subscription}/providers/Vendor.Authorization/roleManagementPolicies/${name}?api-version=${api}`, adminToken);
  assert.equal(raw.status, 200);
  assert.match(raw.body.properties.lastModifiedDateTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00$/);
  assert.deepEqual(raw.body.properties.rules, JSON.parse(JSON.stringify(updated.rules)));
  // A second PATCH merges into the changed policy.
  const second = await admin.roleManagementPolicies.update(scopes.subscription, name, { rules: [{ ruleType: 'RoleManagementPolicyExpirationRule', id: 'Expiration_EndUser_Assignment', maximumDuration: 'PT4H' } as any] });
  const byId2 = Object.fromEntries(second.rules!.map((r: any) => [r.id, r]));
  assert.equal(byId2.Expiration_EndUser_Assignment.maximumDuration, 'PT4H');
  assert.equal(byId2.Expiration_EndUser_Assignment.isExpirationRequired, true);
  assert.equal(byId2.Expiration_Admin_Eligibility.maximumDuration, 'P180D');
  // Other roles and other scopes stay computed.
  assert.deepEqual(await policyOf(scopes.subscription, roles.owner), other);
  const rgPolicy = await policyOf(scopes.resourceGroup, roles.contributor);
  assert.equal(rgPolicy.properties.rules.find((r: any) => r.id === 'Expiration_Admin_Eligibility').maximumDuration, 'P90D');
  // The list shows the changed policy too.
  const listed = (await collect(admin.roleManagementPolicies.listForScope(scopes.subscription))).find((p) => p.name === name)!;
  assert.deepEqual(listed.rules, second.rules);
});

test('get → change → update with the whole policy (all 17 rules, as the full PATCH example) round-trips through the client', async () => {
  const name = (await policyOf(scopes.resourceGroup, roles.owner)).name;
  const policy = await admin.roleManagementPolicies.get(scopes.resourceGroup, name);
  const rules = policy.rules!.map((r: any) => {
    if (r.id === 'Expiration_Admin_Eligibility') return { ...r, isExpirationRequired: false, maximumDuration: 'P180D' };
    if (r.id === 'Enablement_Admin_Assignment') return { ...r, enabledRules: ['Justification', 'MultiFactorAuthentication'] };
    if (r.id === 'Enablement_EndUser_Assignment') return { ...r, enabledRules: ['Justification', 'MultiFactorAuthentication', 'Ticketing'] };
    return r;
  });
  const updated = await admin.roleManagementPolicies.update(scopes.resourceGroup, name, { ...policy, rules });
  assert.deepEqual(updated.rules, rules);
  assert.deepEqual(updated.effectiveRules, rules);
  assert.equal(updated.scope, scopes.resourceGroup);
  assert.deepEqual((await admin.roleManagementPolicies.get(scopes.resourceGroup, name)).rules, rules);
});

test('concurrent PATCHes of different rules of one policy all land (no lost update)', async () => {
  const name = (await policyOf(scopes.managementGroup, roles.contributor)).name;
  const ids = ruleIds.filter((id) => id.startsWith('Notification_') && id !== 'Notification_Approver_EndUser_Assignment');
  const results = await Promise.all(
    ids.map((id, i) =>
      call('PATCH', `${scopes.managementGroup}/providers/Vendor.Authorization/roleManagementPolicies/${name}?api-version=${api}`, adminToken, {
        properties: { rules: [{ id, ruleType: 'RoleManagementPolicyNotificationRule', notificationRecipients: [`parallel${i}@stratus.test`] }] },
      }),
    ),
  );
  for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
  const p = await admin.roleManagementPolicies.get(scopes.managementGroup, name);
  ids.forEach((id, i) => assert.deepEqual((p.rules!.find((r) => r.id === id) as any).notificationRecipients, [`parallel${i}@stratus.test`], id));
});

test('PATCH validation: every rule of §2.1 → 400 InvalidRoleManagementPolicy naming the field; nothing is stored', async () => {
  const scope = scopes.resourceGroup;
  const name = (await policyOf(scope, roles.userAccessAdministrator)).name;
  const path = `${scope}/providers/Vendor.Authorization/roleManagementPolicies/${name}?api-version=${api}`;
  const t = { caller: 'Admin', operations: ['All'], level: 'Eligibility' };
  const exp = (extra: object) => ({ properties: { rules: [{ id: 'Expiration_Admin_Eligibility', ruleType: 'RoleManagementPolicyExpirationRule', target: t, isExpirationRequired: true, maximumDuration: 'P30D', ...extra }] } });
  const notif = (extra: object) => ({
    properties: {
      rules: [{ id: 'Notification_Requestor_Admin_Assignment', ruleType: 'RoleManagementPolicyNotificationRule', target: { ...t, level: 'Assignment' }, notificationType: 'Email', recipientType: 'Requestor', isDefaultRecipientsEnabled: false, notificationLevel: 'Critical', notificationRecipients: ['a@b.test'], ...extra }],
    },
  });
  const approver = { id: '6a1f0c3e-1111-4222-8333-944455556666', description: 'approvers', isBackup: false, userType: 'Group' };
  const stage = { approvalStageTimeOutInDays: 1, isApproverJustificationRequired: true, escalationTimeInMinutes: 0, primaryApprovers: [approver], isEscalationEnabled: false, escalationApprovers: null };
  const approval = (setting: object) => ({
    properties: { rules: [{ id: 'Approval_EndUser_Assignment', ruleType: 'RoleManagementPolicyApprovalRule', target: { caller: 'EndUser', operations: ['All'], level: 'Assignment' }, setting: { isApprovalRequired: true, isApprovalRequiredForExtension: false, isRequestorJustificationRequired: true, approvalMode: 'SingleStage', approvalStages: [stage], ...setting } }] },
  });
  const cases: [unknown, RegExp][] = [
    ['[]', /JSON object/],
    [{}, /no 'properties' object/],
    [{ properties: {} }, /properties\.rules' is required/],
    [{ properties: { rules: [{ id: 'Expiration_Admin_Eligibility', ruleType: 'RoleManagementPolicyNoSuchRule' }] } }, /ruleType' is invalid/],
    [{ properties: { rules: [{ ruleType: 'RoleManagementPolicyExpirationRule' }] } }, /\.id' is required/],
    [{ properties: { rules: [{ id: 'Expiration_Nobody_Ever', ruleType: 'RoleManagementPolicyExpirationRule' }] } }, /does not exist in the policy/],
    [{ properties: { rules: [{ id: 'Expiration_Admin_Eligibility', ruleType: 'RoleManagementPolicyEnablementRule', enabledRules: [] }] } }, /does not match rule/],
    [{ properties: { rules: [exp({}).properties.rules[0], exp({}).properties.rules[0]] } }, /more than once/],
    [exp({ target: { ...t, caller: 'Robot' } }), /target\.caller' is invalid/],
    [exp({ target: { ...t, level: 'Forever' } }), /target\.level' is invalid/],
    [exp({ target: { ...t, operations: ['Some'] } }), /target\.operations\[0\]' is invalid/],
    [exp({ target: { ...t, level: 'Assignment' } }), /must have caller 'Admin' and level 'Eligibility'/],
    [exp({ maximumDuration: '90 days' }), /not a valid ISO 8601 duration/],
    [exp({ maximumDuration: 'P' }), /not a valid ISO 8601 duration/],
    [exp({ maximumDuration: 'PT' }), /not a valid ISO 8601 duration/],
    [exp({ isExpirationRequired: 'yes' }), /isExpirationRequired' is invalid/],
    [{ properties: { rules: [{ id: 'Enablement_Admin_Assignment', ruleType: 'RoleManagementPolicyEnablementRule', enabledRules: ['Justification', 'Telepathy'] }] } }, /enabledRules\[1\]' is invalid/],
    [{ properties: { rules: [{ id: 'Enablement_Admin_Assignment', ruleType: 'RoleManagementPolicyEnablementRule', enabledRules: ['Justification', 'Justification'] }] } }, /more than once/],
    [notif({ notificationType: 'Pigeon' }), /notificationType' is invalid/],
    [notif({ notificationLevel: 'Loud' }), /notificationLevel' is invalid/],
    [notif({ recipientType: 'Everyone' }), /recipientType' is invalid/],
    [notif({ recipientType: 'Admin' }), /does not match the rule id/],
    [notif({ notificationRecipients: ['not-an-address'] }), /notificationRecipients\[0\]' is not a valid e-mail address/],
    [notif({ notificationRecipients: 'a@b.test' }), /array of e-mail addresses/],
    [approval({ approvalMode: 'Committee' }), /approvalMode' is invalid/],
    [approval({ approvalStages: [] }), /exactly one stage/],
    [approval({ approvalStages: [{ ...stage, primaryApprovers: [] }] }), /at least one approver/],
    [approval({ approvalStages: [{ ...stage, primaryApprovers: [{ ...approver, id: 'bob' }] }] }), /primaryApprovers\[0\]\.id' is invalid/],
    [approval({ approvalStages: [{ ...stage, primaryApprovers: [{ ...approver, userType: 'Robot' }] }] }), /userType' is invalid/],
    [approval({ approvalStages: [{ ...stage, approvalStageTimeOutInDays: 0 }] }), /approvalStageTimeOutInDays' is invalid/],
    [approval({ approvalStages: [{ ...stage, isEscalationEnabled: true, escalationApprovers: [] }] }), /escalationApprovers' must name at least one/],
    [approval({ approvalMode: 'NoApproval' }), /cannot be true when approvalMode is 'NoApproval'/],
    [{ properties: { rules: [{ id: 'AuthenticationContext_EndUser_Assignment', ruleType: 'RoleManagementPolicyAuthenticationContextRule', isEnabled: true, claimValue: '' }] } }, /claimValue' must name/],
    // Messages show the offending value as written: a missing field, a number, a long string cut short.
    [{ properties: { rules: [{ id: 'Expiration_Admin_Eligibility' }] } }, /^The value \(missing\) of 'properties\.rules\[0\]\.ruleType' is invalid/],
    [notif({ notificationRecipients: [42] }), /^The value 42 of 'properties\.rules\[0\]\.notificationRecipients\[0\]' is not a valid e-mail address/],
    [exp({ isExpirationRequired: 1 }), /^The value 1 of /],
    [notif({ notificationRecipients: [`${'a'.repeat(5000)}@b.test`] }), /^The value '(a{100})…' of /],
    // Sizes are bounded (Stratus limits): a duration, an approver's description, the target's lists.
    [exp({ maximumDuration: `P${'9'.repeat(100)}D` }), /maximumDuration' is not a valid ISO 8601 duration/],
    [approval({ approvalStages: [{ ...stage, primaryApprovers: [{ ...approver, description: 'd'.repeat(1025) }] }] }), /description' is invalid: a string of at most 1024/],
    [exp({ target: { ...t, targetObjects: Array.from({ length: 51 }, (_, i) => `o${i}`) } }), /targetObjects' may hold at most 50 strings/],
    [exp({ target: { ...t, enforcedSettings: ['x'.repeat(257)] } }), /enforcedSettings' may hold at most 50 strings of at most 256/],
  ];
  for (const [body, message] of cases) {
    const r = await call('PATCH', path, adminToken, body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.equal(r.body.error.code, 'InvalidRoleManagementPolicy', JSON.stringify(body));
    assert.match(r.body.error.message, message, JSON.stringify(body));
  }
  const malformed = await call('PATCH', path, adminToken, '{"properties": ');
  assert.equal(malformed.status, 400);
  assert.equal(malformed.body.error.code, 'InvalidRequestContent');
  // A body in another media type (or with none named) is 415, whatever it holds.
  const good = JSON.stringify(exp({}));
  for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', undefined]) {
    const res = await fetch(`${s.url}${path}`, { method: 'PATCH', headers: { authorization: `Bearer ${adminToken}`, ...(type ? { 'content-type': type } : {}) }, body: type === 'application/x-www-form-urlencoded' ? 'properties=1' : good });
    const b = (await res.json()) as any;
    assert.equal(res.status, 415, `${type}: ${JSON.stringify(b)}`);
    assert.equal(b.error.code, 'UnsupportedMediaType');
    assert.match(b.error.message, /Only 'application\/json' is supported/);
  }
  // None of it was stored: the policy is still the default.
  const p = await policyOf(scope, roles.userAccessAdministrator);
  assert.equal(p.properties.lastModifiedDateTime, null);
  assert.equal(p.properties.rules.find((r: any) => r.id === 'Expiration_Admin_Eligibility').maximumDuration, 'P90D');
  // A valid approval change with two approvers is accepted.
  const ok = await call('PATCH', path, adminToken, approval({ approvalStages: [{ ...stage, primaryApprovers: [approver, { ...approver, id: '7b2e1d4f-2222-4333-8444-a55566667777', userType: 'User' }] }] }));
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(ok.body.properties.rules.find((r: any) => r.id === 'Approval_EndUser_Assignment').setting.approvalStages[0].primaryApprovers.length, 2);
});

test('permissions: the user without roles gets 403 on list and get; Reader and Contributor get 403 on PATCH; Reader may read', async () => {
  const name = (await policyOf(scopes.subscription, roles.reader)).name;
  for (const scope of Object.values(scopes)) {
    const r = await call('GET', listPath(scope), userTok);
    assert.equal(r.status, 403, scope);
    assert.equal(r.body.error.code, 'AuthorizationFailed');
    assert.match(r.body.error.message, new RegExp(`'${demoUser.userPrincipalName}'.*'Vendor\\.Authorization/roleAssignments/read' over scope '${scope.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`));
  }
  await assert.rejects(collect(client(userTok).roleManagementPolicies.listForScope(scopes.subscription)), (e: any) => e.statusCode === 403 && e.code === 'AuthorizationFailed');
  await assert.rejects(client(userTok).roleManagementPolicies.get(scopes.subscription, name), (e: any) => e.statusCode === 403);
  // Roles are inherited down the hierarchy: the admin's Owner at the tenant root covers a child management group;
  // the Contributor (service principal, on the subscription) reads at the resource group.
  const childMg = await call('GET', listPath('/providers/Vendor.Management/managementGroups/stratus-platform'), adminToken);
  assert.equal(childMg.status, 200);
  assert.equal(childMg.body.value[0].properties.policyProperties.scope.displayName, 'Stratus Platform');
  assert.equal((await collect(client(contributorToken).roleManagementPolicies.listForScope(scopes.resourceGroup))).length, 5);
  // The Contributor is not Owner of the tenant root management group.
  assert.equal((await call('GET', listPath(scopes.managementGroup), contributorToken)).status, 403);
  // The Reader (the managed identity) reads, but may not change.
  const read = await collect(client(readerToken).roleManagementPolicies.listForScope(scopes.resource));
  assert.equal(read.length, 5);
  const body = { properties: { rules: [{ id: 'Expiration_Admin_Eligibility', ruleType: 'RoleManagementPolicyExpirationRule', maximumDuration: 'P1D' }] } };
  for (const token of [readerToken, contributorToken, userTok]) {
    const r = await call('PATCH', `${scopes.subscription}/providers/Vendor.Authorization/roleManagementPolicies/${name}?api-version=${api}`, token, body);
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'AuthorizationFailed');
    assert.match(r.body.error.message, /Vendor\.Authorization\/roleManagementPolicies\/write/);
  }
  // A forbidden caller gets 403 even with a malformed body (permission before content).
  const bad = await call('PATCH', `${scopes.subscription}/providers/Vendor.Authorization/roleManagementPolicies/${name}?api-version=${api}`, readerToken, { nope: true });
  assert.equal(bad.status, 403);
  assert.equal((await policyOf(scopes.subscription, roles.reader)).properties.lastModifiedDateTime, null);
});

test('unknown scopes → 404; other tenants\' scopes are not found; gateway errors in the ARM envelope', async () => {
  const cases: [string, number, string][] = [
    ['/providers/Vendor.Management/managementGroups/no-such-group', 404, 'ManagementGroupNotFound'],
    [`/subscriptions/${otherSubscription.id}`, 404, 'SubscriptionNotFound'],
    ['/subscriptions/00000000-0000-4000-8000-000000000001', 404, 'SubscriptionNotFound'],
    [`/subscriptions/${sub}/resourceGroups/no-such-rg`, 404, 'ResourceGroupNotFound'],
    [`/subscriptions/${sub}/resourceGroups/${rg}/providers/Vendor.Storage/storageAccounts/nosuchaccount`, 404, 'ResourceNotFound'],
    ['/subscriptions/not-a-guid', 400, 'InvalidSubscriptionId'],
    // A control character in a name is just an unknown scope (PostgreSQL would refuse U+0000 in the query).
    ['/providers/Vendor.Management/managementGroups/a%00b', 404, 'ManagementGroupNotFound'],
    [`/subscriptions/${sub}/resourceGroups/${rg}/providers/Vendor.Storage/storageAccounts/a%00b`, 404, 'ResourceNotFound'],
  ];
  for (const [scope, status, code] of cases) {
    const r = await call('GET', listPath(scope), adminToken);
    assert.equal(r.status, status, scope);
    assert.equal(r.body.error.code, code, scope);
  }
  // One tenant never sees another's scopes: Eve (Owner in her tenant) lists her own subscription, not the demo one.
  const eveToken = await userToken(s.url, identities.eve, ['api://stratus/arm/user_impersonation']);
  const eveOwn = await call('GET', listPath(`/subscriptions/${otherSubscription.id}`), eveToken);
  assert.equal(eveOwn.status, 200);
  assert.equal(eveOwn.body.value.length, 5);
  const eveOther = await call('GET', listPath(scopes.subscription), eveToken);
  assert.equal(eveOther.status, 404);
  assert.equal(eveOther.body.error.code, 'SubscriptionNotFound');
  const eveMg = await call('GET', listPath(scopes.managementGroup), eveToken);
  assert.equal(eveMg.status, 404);
  assert.equal(eveMg.body.error.code, 'ManagementGroupNotFound');
  // The other tenant's management group is not found for the demo admin.
  const eve = await call('GET', listPath('/providers/Vendor.Management/managementGroups/0c4d8e2f-6a1b-4c3d-9e5f-7a8b9c0d1e02'), adminToken);
  assert.equal(eve.status, 404);
  await assert.rejects(collect(admin.roleManagementPolicies.listForScope(`/subscriptions/${sub}/resourceGroups/${rg}/providers/Vendor.Storage/storageAccounts/nosuchaccount`)), (e: any) => e.statusCode === 404 && e.code === 'ResourceNotFound');
  const noVersion = await call('GET', `${scopes.subscription}/providers/Vendor.Authorization/roleManagementPolicies`, adminToken);
  assert.equal(noVersion.status, 400);
  assert.equal(noVersion.body.error.code, 'MissingApiVersionParameter');
  const badVersion = await call('GET', `${scopes.subscription}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2021-01-01`, adminToken);
  assert.equal(badVersion.status, 400);
  assert.equal(badVersion.body.error.code, 'InvalidApiVersionParameter');
  assert.match(badVersion.body.error.message, /'2020-10-01'/);
  const noToken = await call('GET', listPath(scopes.subscription), undefined);
  assert.equal(noToken.status, 401);
  assert.equal(noToken.body.error.code, 'AuthenticationFailed');
});

test('DELETE resets a changed policy to the default (200); an unknown name → 204', async () => {
  const p = await policyOf(scopes.managementGroup, roles.owner);
  await admin.roleManagementPolicies.update(scopes.managementGroup, p.name, { rules: [{ id: 'Expiration_Admin_Assignment', ruleType: 'RoleManagementPolicyExpirationRule', maximumDuration: 'P365D' } as any] });
  assert.equal((await policyOf(scopes.managementGroup, roles.owner)).properties.rules.find((r: any) => r.id === 'Expiration_Admin_Assignment').maximumDuration, 'P365D');
  await admin.roleManagementPolicies.delete(scopes.managementGroup, p.name);
  assert.deepEqual(await policyOf(scopes.managementGroup, roles.owner), p);
  const r = await call('DELETE', `${scopes.managementGroup}/providers/Vendor.Authorization/roleManagementPolicies/00000000-0000-4000-8000-000000000000?api-version=${api}`, adminToken);
  assert.equal(r.status, 204);
});

test('a PATCH at the resource scope survives a restart', async () => {
  const p = await policyOf(scopes.resource, roles.reader);
  const updated = await admin.roleManagementPolicies.update(scopes.resource, p.name, {
    rules: [{ id: 'Notification_Approver_EndUser_Assignment', ruleType: 'RoleManagementPolicyNotificationRule', isDefaultRecipientsEnabled: false, notificationRecipients: ['approvers@stratus.test'] } as any],
  });
  await s.restart();
  const after = await client(adminToken).roleManagementPolicies.get(scopes.resource, p.name);
  assert.deepEqual(after.rules, updated.rules);
  assert.equal(after.lastModifiedDateTime?.getTime(), updated.lastModifiedDateTime?.getTime());
  const rule = after.rules!.find((r) => r.id === 'Notification_Approver_EndUser_Assignment') as any;
  assert.deepEqual(rule.notificationRecipients, ['approvers@stratus.test']);
  assert.equal(rule.isDefaultRecipientsEnabled, false);
});

test('a subscription made again under another management group is judged by its new chain at once (the kept scope chains follow every hierarchy write)', async () => {
  const arm = new ArmStore(s.server.ctx.store.db, s.server.ctx.cache);
  await arm.addManagementGroup({ name: 'chain-a', tenantId: demoTenant.id, displayName: 'Chain A', parentName: 'stratus-platform' });
  await arm.addManagementGroup({ name: 'chain-b', tenantId: demoTenant.id, displayName: 'Chain B', parentName: 'stratus-platform' });
  const assignment = crypto.randomUUID();
  await arm.addAssignment({ id: assignment, tenantId: demoTenant.id, scope: '/providers/Vendor.Management/managementGroups/chain-a', roleDefinitionId: roles.reader, principalId: demoUser.id, principalType: 'User' });
  const id = crypto.randomUUID();
  const subscription = { subscriptionId: id, tenantId: demoTenant.id, displayName: 'chain', state: 'Enabled' as const };
  await arm.addSubscription({ ...subscription, managementGroup: 'chain-b' });
  // Under chain-b the user holds no role (asked twice: the second answer comes from the kept chain).
  for (let i = 0; i < 2; i++) assert.equal((await call('GET', listPath(`/subscriptions/${id}`), userTok)).status, 403);
  // The same subscription made again under chain-a, where the user is Reader.
  assert.equal(await arm.deleteSubscription(id), true);
  await arm.addSubscription({ ...subscription, managementGroup: 'chain-a' });
  const allowed = await call('GET', listPath(`/subscriptions/${id}`), userTok);
  assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
  assert.equal(await arm.deleteAssignment(assignment), true);
  assert.equal((await call('GET', listPath(`/subscriptions/${id}`), userTok)).status, 403);
  await arm.deleteSubscription(id);
});
