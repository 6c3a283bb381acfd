/**
 * World files, directory and resource-manager kinds (issue 28 item 1, `src/world/directory.ts`,
 * `src/world/rbac.ts`): a world written here holds a group with a user, an application with a
 * client secret (`passwordCredentials`), a certificate (`keyCredentials`) and a redirect URI, its
 * service principal with an app role assignment on the mail family's resource principal, a custom
 * role definition assigned to the group at a resource group, a role assignment at a resource
 * scope, a provider registration and a managed resource group. Through the official clients: the
 * member gets access through the group (a non-member does not), the app authenticates with
 * `ClientCertificateCredential` and with its secret and carries its app role; the export round
 * trip (both databases); bad files (unknown member, unknown role, duplicate group) refuse the
 * start with file, line and path and change nothing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientCertificateCredential, ClientSecretCredential, UsernamePasswordCredential } from '@azure/identity';
import { ResourceManagementClient } from '@azure/arm-resources';
import { AuthorizationManagementClient } from '@azure/arm-authorization';
import { Client } from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import { decodeJwt } from 'jose';
import { parse } from 'yaml';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { bothDatabases, startTestServerOn } from './helpers/databases.ts';
import { stableUuid } from '../src/core/ids.ts';
import { readWorld } from '../src/world/file.ts';
import { resolveWorld } from '../src/world/load.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-world-dir-'));
const mailAudience = 'https://graph.microsoft.com';

/** A self-signed RSA certificate made with openssl: PEM of key and certificate, and the certificate's DER in base64. */
function makeCertificate(name: string): { pem: string; derBase64: string } {
  const key = path.join(dir, `${name}.key`);
  const crt = path.join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', '30', '-subj', `/CN=${name}`], { stdio: 'ignore' });
  return { pem: fs.readFileSync(key, 'utf8') + fs.readFileSync(crt, 'utf8'), derBase64: execFileSync('openssl', ['x509', '-in', crt, '-outform', 'DER']).toString('base64') };
}

const cert = makeCertificate('billing-daemon');
const subscriptionId = '4a1b2c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';
const cliAppId = '7c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f';
const vm = `resourceGroups/ops-rg/providers/Vendor.Compute/virtualMachines/vm1`;
const worldFile = path.join(dir, 'fabrikam.yaml');
const worldText = `tenants:
  - domain: fabrikam.test
    displayName: Fabrikam
    users:
      - { userPrincipalName: admin@fabrikam.test, displayName: Admin, password: Admin-Pass-9, tenantAdmin: true }
      - { userPrincipalName: dana@fabrikam.test, displayName: Dana, password: Dana-Pass-1 }
      - { userPrincipalName: erin@fabrikam.test, displayName: Erin, password: Erin-Pass-1 }
    groups:
      - displayName: Operators
        description: Runs the billing app
        members: [dana@fabrikam.test]
    applications:
      - displayName: fabrikam-cli
        appId: ${cliAppId}
        publicClient: { redirectUris: [http://localhost] }
      - displayName: billing-daemon
        web: { redirectUris: [https://localhost/billing/callback] }
        passwordCredentials:
          - { displayName: ci, secretText: Billing-Secret-1 }
        keyCredentials:
          - { type: AsymmetricX509Cert, usage: Verify, displayName: CN=billing-daemon, key: ${cert.derBase64} }
    servicePrincipals:
      - appId: billing-daemon
        appRoleAssignments:
          - { resourceDisplayName: Stratus Mail and Directory API, appRole: Mail.Read }
    roleDefinitions:
      - properties:
          roleName: Group Reader
          description: Reads resource groups
          permissions: [{ actions: [Vendor.Resources/subscriptions/resourceGroups/read] }]
          assignableScopes: [/subscriptions/${subscriptionId}]
    subscriptions:
      - subscriptionId: ${subscriptionId}
        displayName: Fabrikam Dev
        providers: [{ namespace: Vendor.Compute, registrationState: NotRegistered }]
        resourceGroups:
          - { name: ops-rg, location: westus }
          - { name: other-rg, location: westus, managedBy: /subscriptions/${subscriptionId}/resourceGroups/ops-rg/providers/Vendor.Compute/virtualMachines/vm1 }
        roleAssignments:
          - { principal: admin@fabrikam.test, role: Owner }
          - { principal: Operators, role: Group Reader, scope: resourceGroups/ops-rg }
          - { principal: billing-daemon, role: Reader, scope: ${vm} }
`;
fs.writeFileSync(worldFile, worldText);
const tenantId = stableUuid('world-tenant', 'fabrikam.test');
const daemonAppId = stableUuid('world-app', tenantId, 'billing-daemon');
const groupId = stableUuid('world-group', tenantId, 'operators');
const env = { STRATUS_WORLD: worldFile, STRATUS_AUDIENCE_ALIASES: `arm=https://management.azure.com, mail=${mailAudience}`, STRATUS_PROVIDER_NAMESPACE_ALIASES: 'Microsoft.' };

let s: TestServer;
before(async () => {
  s = await startTestServer({ env });
});
after(async () => {
  await s?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const options = (server = s) => ({ authorityHost: server.url, disableInstanceDiscovery: true });
const user = (upn: string, password: string, server = s) => new UsernamePasswordCredential('fabrikam.test', cliAppId, upn, password, options(server));

test('a member reaches the resource group through the group and the custom role; a non-member does not', async () => {
  const dana = new ResourceManagementClient(user('dana@fabrikam.test', 'Dana-Pass-1'), subscriptionId, { endpoint: s.url });
  assert.equal((await dana.resourceGroups.get('ops-rg')).name, 'ops-rg', 'Group Reader through Operators');
  await assert.rejects(dana.resourceGroups.get('other-rg'), (e: any) => e.statusCode === 403, 'the role is at ops-rg only');
  await assert.rejects(dana.resourceGroups.createOrUpdate('ops-rg', { location: 'westus' }), (e: any) => e.statusCode === 403, 'the custom role only reads');
  const erin = new ResourceManagementClient(user('erin@fabrikam.test', 'Erin-Pass-1'), subscriptionId, { endpoint: s.url });
  await assert.rejects(erin.resourceGroups.get('ops-rg'), (e: any) => e.statusCode === 403, 'erin is not a member');

  const admin = user('admin@fabrikam.test', 'Admin-Pass-9');
  const rm = new ResourceManagementClient(admin, subscriptionId, { endpoint: s.url });
  assert.equal((await rm.resourceGroups.get('other-rg')).managedBy, `/subscriptions/${subscriptionId}/resourceGroups/ops-rg/providers/Vendor.Compute/virtualMachines/vm1`);
  assert.equal((await rm.providers.get('Microsoft.Compute')).registrationState, 'NotRegistered');
  const authz = new AuthorizationManagementClient(admin, subscriptionId, { endpoint: s.url });
  const defs: any[] = [];
  for await (const d of authz.roleDefinitions.list(`/subscriptions/${subscriptionId}`, { filter: "roleName eq 'Group Reader'" })) defs.push(d);
  assert.deepEqual(defs.map((d) => [d.roleName, d.roleType, d.permissions[0].actions.map((x: string) => x.replace(/^\w+\./, ''))]), [['Group Reader', 'CustomRole', ['Resources/subscriptions/resourceGroups/read']]]);
  const at: any[] = [];
  for await (const a of authz.roleAssignments.listForScope(`/subscriptions/${subscriptionId}/resourceGroups/ops-rg`, { filter: 'atScope()' })) at.push(a);
  assert.deepEqual(at.filter((a) => a.scope.toLowerCase().endsWith('/ops-rg')).map((a) => [a.principalId, a.principalType, a.roleDefinitionId.split('/').pop()]), [[groupId, 'Group', defs[0].name]], 'the group holds the custom role at ops-rg (atScope() also lists the Owner above)');

  // The console names the roles (custom and built-in) and the principals (group, user, service principal).
  const page = await (await s.control('/_stratus/console/resources')).text();
  for (const row of ['<td>Group Reader</td><td>Operators</td><td>Group</td>', '<td>Owner</td><td>admin@fabrikam.test</td><td>User</td>', '<td>Reader</td><td>billing-daemon</td><td>ServicePrincipal</td>']) assert.ok(page.includes(row), row);

  // The directory: the group and its member, the application's credentials.
  const authProvider = new TokenCredentialAuthenticationProvider(admin, { scopes: [`${mailAudience}/.default`] });
  const graph = Client.initWithMiddleware({ authProvider, baseUrl: s.url, customHosts: new Set([new URL(s.url).hostname]) });
  const members = await graph.api(`/groups/${groupId}/members`).get();
  assert.deepEqual(members.value.map((m: any) => m.userPrincipalName), ['dana@fabrikam.test']);
  const app = (await graph.api('/applications').filter(`appId eq '${daemonAppId}'`).get()).value[0];
  assert.deepEqual(app.passwordCredentials.map((p: any) => [p.displayName, p.hint]), [['ci', 'Bil']]);
  assert.deepEqual(app.keyCredentials.map((k: any) => [k.displayName, k.type, k.usage]), [['CN=billing-daemon', 'AsymmetricX509Cert', 'Verify']]);
  assert.deepEqual(app.web.redirectUris, ['https://localhost/billing/callback']);
});

test('the application authenticates with its certificate (ClientCertificateCredential) and with its secret, and carries its app role', async () => {
  const byCert = await new ClientCertificateCredential('fabrikam.test', daemonAppId, { certificate: cert.pem }, options()).getToken(`${mailAudience}/.default`);
  const claims = decodeJwt(byCert!.token);
  assert.equal(claims.appid, daemonAppId);
  assert.deepEqual(claims.roles, ['Mail.Read'], 'the app role assignment of its service principal');
  const bySecret = await new ClientSecretCredential('fabrikam.test', daemonAppId, 'Billing-Secret-1', options()).getToken(`${mailAudience}/.default`);
  assert.equal(decodeJwt(bySecret!.token).appid, daemonAppId);
  await assert.rejects(new ClientSecretCredential('fabrikam.test', daemonAppId, 'Billing-Secret-2', options()).getToken(`${mailAudience}/.default`), 'a wrong secret is refused');
  // Reader at a resource scope: the app cannot read the resource group itself.
  await assert.rejects(new ResourceManagementClient(new ClientSecretCredential('fabrikam.test', daemonAppId, 'Billing-Secret-1', options()), subscriptionId, { endpoint: s.url }).resourceGroups.get('ops-rg'), (e: any) => e.statusCode === 403);
});

/** An export without its volatile field (the clock). */
async function exported(server: TestServer): Promise<{ text: string; doc: any }> {
  const r = await server.control('/_stratus/world?format=yaml');
  assert.equal(r.status, 200);
  const text = await r.text();
  const doc = parse(text);
  delete doc.clock;
  return { text, doc };
}

test('export round trip: export → a fresh start from it (SQLite and PostgreSQL) → export again gives the same document; the credentials still work', async () => {
  // Writes through the APIs first: a group with a member, a secret, a custom role assigned to the group, an unregistered namespace.
  const admin = user('admin@fabrikam.test', 'Admin-Pass-9');
  const authProvider = new TokenCredentialAuthenticationProvider(admin, { scopes: [`${mailAudience}/.default`] });
  const graph = Client.initWithMiddleware({ authProvider, baseUrl: s.url, customHosts: new Set([new URL(s.url).hostname]) });
  const erinId = (await graph.api('/users/erin@fabrikam.test').get()).id;
  const auditors = await graph.api('/groups').post({ displayName: 'Auditors', mailNickname: 'auditors', mailEnabled: false, securityEnabled: true, visibility: 'Private', 'members@odata.bind': [`${s.url}/v1.0/directoryObjects/${erinId}`] });
  const daemonObject = (await graph.api('/applications').filter(`appId eq '${daemonAppId}'`).get()).value[0].id;
  const added = await graph.api(`/applications/${daemonObject}/addPassword`).post({ passwordCredential: { displayName: 'added' } });
  const authz = new AuthorizationManagementClient(admin, subscriptionId, { endpoint: s.url });
  const otherRg = `/subscriptions/${subscriptionId}/resourceGroups/other-rg`;
  const roleId = '0b7c1d2e-3f4a-4b5c-8d6e-7f8a9b0c1d2e';
  await authz.roleDefinitions.createOrUpdate(otherRg, roleId, { roleName: 'Other Reader', description: 'made through the API', permissions: [{ actions: ['*/read'] }], assignableScopes: [otherRg] });
  await authz.roleAssignments.create(otherRg, '1c8d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f', { roleDefinitionId: `${otherRg}/providers/Microsoft.Authorization/roleDefinitions/${roleId}`, principalId: auditors.id, principalType: 'Group' });
  await new ResourceManagementClient(admin, subscriptionId, { endpoint: s.url }).providers.unregister('Microsoft.Automation');
  const erin = new ResourceManagementClient(user('erin@fabrikam.test', 'Erin-Pass-1'), subscriptionId, { endpoint: s.url });
  assert.equal((await erin.resourceGroups.get('other-rg')).name, 'other-rg', 'erin reads other-rg through Auditors');

  const first = await exported(s);
  const t = first.doc.tenants.find((x: any) => x.domain === 'fabrikam.test');
  assert.deepEqual(
    t.groups,
    [
      { id: groupId, displayName: 'Operators', description: 'Runs the billing app', mailNickname: 'Operators', members: ['dana@fabrikam.test'] },
      { id: auditors.id, displayName: 'Auditors', mailNickname: 'auditors', visibility: 'Private', members: ['erin@fabrikam.test'] },
    ].sort((a, b) => (a.id < b.id ? -1 : 1)),
  );
  const daemon = t.applications.find((a: any) => a.displayName === 'billing-daemon');
  assert.deepEqual(daemon.passwordCredentials.map((p: any) => p.hint).sort(), ['Bil', added.secretText.slice(0, 3)].sort());
  assert.match(daemon.passwordCredentials[0].secretHash, /^scrypt\$/);
  assert.equal(daemon.keyCredentials[0].key, cert.derBase64);
  assert.deepEqual(daemon.appRoles, [{ api: 'mail', role: 'Mail.Read' }]);
  assert.deepEqual(t.roleDefinitions.map((d: any) => [d.properties.roleName, d.properties.assignableScopes]), [['Group Reader', [`/subscriptions/${subscriptionId}`]], ['Other Reader', [otherRg]]]);
  const sub = t.subscriptions[0];
  assert.deepEqual(sub.providers, [{ namespace: 'vendor.automation', registrationState: 'NotRegistered' }, { namespace: 'vendor.compute', registrationState: 'NotRegistered' }]);
  assert.ok(sub.resourceGroups.find((g: any) => g.name === 'other-rg').managedBy);
  assert.deepEqual(
    sub.roleAssignments.map((a: any) => [a.principal, a.role, a.scope ?? '']).sort(),
    [['Operators', 'Group Reader', 'resourceGroups/ops-rg'], ['Auditors', 'Other Reader', 'resourceGroups/other-rg'], ['admin@fabrikam.test', 'Owner', ''], ['billing-daemon', 'Reader', vm]].sort(),
  );
  const file = path.join(dir, 'exported.yaml');
  fs.writeFileSync(file, first.text);
  // This run's database, then the other one (SQLite from a PostgreSQL run; PostgreSQL from a SQLite run when STRATUS_TEST_OTHER_DATABASE_URL names one).
  for (const url of bothDatabases()) {
    const fresh = await startTestServerOn(url, { env: { ...env, STRATUS_WORLD: file } });
    try {
      assert.deepEqual((await exported(fresh)).doc, first.doc, `same document on ${url ? 'PostgreSQL' : 'SQLite'}`);
      const token = await new ClientSecretCredential('fabrikam.test', daemonAppId, 'Billing-Secret-1', options(fresh)).getToken(`${mailAudience}/.default`);
      assert.equal(decodeJwt(token!.token).appid, daemonAppId, 'the kept secret hash signs in');
      await new ClientSecretCredential('fabrikam.test', daemonAppId, added.secretText, options(fresh)).getToken(`${mailAudience}/.default`);
      const erinThere = new ResourceManagementClient(user('erin@fabrikam.test', 'Erin-Pass-1', fresh), subscriptionId, { endpoint: fresh.url });
      assert.equal((await erinThere.resourceGroups.get('other-rg')).name, 'other-rg', 'the group and custom role made through the APIs came along');
      await new ClientCertificateCredential('fabrikam.test', daemonAppId, { certificate: cert.pem }, options(fresh)).getToken(`${mailAudience}/.default`);
      const dana = new ResourceManagementClient(user('dana@fabrikam.test', 'Dana-Pass-1', fresh), subscriptionId, { endpoint: fresh.url });
      assert.equal((await dana.resourceGroups.get('ops-rg')).name, 'ops-rg', 'access through the group again');
    } finally {
      await fresh.close();
    }
  }
});

test('bad files (unknown member, unknown role, duplicate group) refuse the start with file, line and path, and change nothing', async () => {
  const admin = new ResourceManagementClient(user('admin@fabrikam.test', 'Admin-Pass-9'), subscriptionId, { endpoint: s.url });
  await admin.resourceGroups.createOrUpdate('kept-rg', { location: 'westus' });
  const head = 'tenants:\n  - domain: fabrikam.test\n    users:\n      - { userPrincipalName: dana@fabrikam.test, displayName: Dana, password: x }\n';
  const cases: [string, string, RegExp][] = [
    ['member.yaml', `${head}    groups:\n      - displayName: Ops\n        members: [dana@fabrikam.test, carol@fabrikam.test]\n`, /member\.yaml:7:\d+: \/tenants\/0\/groups\/0\/members\/1: no user or application 'carol@fabrikam\.test' \(nor a group so named\)/],
    ['role.yaml', `${head}    subscriptions:\n      - displayName: S\n        roleAssignments:\n          - { principal: dana@fabrikam.test, role: Group Writer }\n`, /role\.yaml:8:\d+: \/tenants\/0\/subscriptions\/0\/roleAssignments\/0\/role: no role 'Group Writer'/],
    ['group.yaml', `${head}    groups:\n      - { displayName: Ops }\n      - { displayName: ops }\n`, /group\.yaml:7:\d+: \/tenants\/0\/groups\/1: duplicate group id [0-9a-f-]{36} \(first at \S*group\.yaml:6:\d+: \/tenants\/0\/groups\/0\)/],
  ];
  for (const [name, text, expected] of cases) {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    assert.throws(() => resolveWorld(readWorld([f])), (e: Error) => expected.test(e.message), `${name}: ${expected}`);
    s.config.world = [f];
    await assert.rejects(s.restart(), (e: Error) => expected.test(e.message), `${name} refuses the start`);
  }
  // More checks of the resolution (nothing is written when they fail, as above).
  const more: [string, RegExp][] = [
    [`${head}    subscriptions:\n      - displayName: S\n        roleAssignments:\n          - { principal: dana@fabrikam.test, role: Reader }\n          - { principal: dana@fabrikam.test, role: reader }\n`, /:9:\d+: \/tenants\/0\/subscriptions\/0\/roleAssignments\/1: duplicate role assignment/],
    [`${head}    roleDefinitions:\n      - properties: { roleName: Narrow, permissions: [{ actions: ['*/read'] }], assignableScopes: [/subscriptions/${subscriptionId}/resourceGroups/a-rg] }\n    subscriptions:\n      - subscriptionId: ${subscriptionId}\n        displayName: S\n        resourceGroups: [{ name: a-rg, location: westus }, { name: b-rg, location: westus }]\n        roleAssignments:\n          - { principal: dana@fabrikam.test, role: Narrow, scope: resourceGroups/b-rg }\n`, /roleAssignments\/0\/scope: \S+ is outside the assignable scopes of role 'Narrow'/],
    [`${head}    applications:\n      - displayName: d\n        keyCredentials: [{ type: AsymmetricX509Cert, usage: Verify, key: bm90IGEgY2VydA== }]\n    servicePrincipals:\n      - appId: d\n        appRoleAssignments: [{ resourceDisplayName: Stratus Mail and Directory API, appRole: Mail.Fly }]\n`, /applications\/0\/keyCredentials\/0\/key: not a base64 X\.509 certificate[\s\S]*servicePrincipals\/0\/appRoleAssignments\/0: Stratus Mail and Directory API has no app role 'Mail\.Fly'/],
  ];
  for (const [text, expected] of more) {
    const f = path.join(dir, 'more.yaml');
    fs.writeFileSync(f, text);
    assert.throws(() => resolveWorld(readWorld([f])), (e: Error) => expected.test(e.message), `${expected}`);
  }
  s.config.world = [worldFile];
  await s.restart();
  assert.equal((await admin.resourceGroups.checkExistence('kept-rg')).body, true, 'the store was not touched by the refused starts');
});
