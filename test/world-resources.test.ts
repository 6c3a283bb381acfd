/**
 * Generic resources of a world file (`resources` of a resource group, `src/world/resources.ts`):
 * a storage account with a child `blobServices/default` and a grandchild container, and a
 * virtual network, next to an area kind's automation account. They are listed through the
 * official `@azure/arm-resources` client (`GET …/resources`), the child is the scope of a world
 * role assignment and of role management policies (official `@azure/arm-authorization` client);
 * the export nests them as the file did and round-trips (also on the other database); duplicates
 * and an area kind's type refuse with file, line and path and change nothing. Both databases.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ResourceManagementClient } from '@azure/arm-resources';
import { AuthorizationManagementClient } from '@azure/arm-authorization';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { bothDatabases, startTestServerOn } from './helpers/databases.ts';
import { exportedWorld as exported } from './helpers/world.ts';
import { staticCredential, tokenRequest } from './helpers/auth.ts';
import { collect, vendorNamespacePolicy } from './helpers/arm.ts';
import { stableUuid } from '../src/core/ids.ts';
import { readWorld } from '../src/world/file.ts';
import { resolveWorld } from '../src/world/load.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-world-resources-'));
const worldFile = path.join(dir, 'northwind.yaml');
const cliAppId = '3d5f7a9b-2c4e-4b6d-8e0f-1a3c5e7b9d2f';
const identity = { type: 'SystemAssigned', principalId: '6f0e2d4c-8a1b-4c3d-9e5f-7a9b1c3d5e7f', tenantId: '00000000-0000-0000-0000-000000000000' };
const world = `clock: 2026-04-01T09:00:00Z
tenants:
  - domain: northwind.test
    users:
      - { userPrincipalName: dana@northwind.test, displayName: Dana, password: Dana-Pass-1, tenantAdmin: true }
      - { userPrincipalName: eli@northwind.test, displayName: Eli, password: Eli-Pass-1 }
    applications:
      - { displayName: northwind-cli, appId: ${cliAppId}, publicClient: { redirectUris: [http://localhost] } }
    subscriptions:
      - displayName: Northwind Dev
        roleAssignments:
          - { principal: dana@northwind.test, role: Owner }
          - { principal: eli@northwind.test, role: Reader, scope: resourceGroups/app-rg/providers/Vendor.Storage/storageAccounts/appdata/blobServices/default }
        resourceGroups:
          - name: app-rg
            location: westus
            resources:
              - type: Vendor.Storage/storageAccounts
                name: appdata
                kind: StorageV2
                sku: { name: Standard_GRS, tier: Standard }
                tags: { team: data }
                identity: { type: ${identity.type}, principalId: ${identity.principalId}, tenantId: ${identity.tenantId} }
                properties: { supportsHttpsTrafficOnly: true }
                resources:
                  - type: blobServices
                    name: default
                    properties: { deleteRetentionPolicy: { enabled: true, days: 7 } }
                    resources:
                      - { type: containers, name: logs, properties: { publicAccess: None } }
              - { type: Vendor.Network/virtualNetworks, name: app-vnet, location: westus2, properties: { addressSpace: { addressPrefixes: [10.0.0.0/16] } } }
            automationAccounts:
              - name: app-auto
`;
fs.writeFileSync(worldFile, world);
const tenantId = stableUuid('world-tenant', 'northwind.test');
const sub = stableUuid('world-subscription', tenantId, 'Northwind Dev');
const rg = `/subscriptions/${sub}/resourceGroups/app-rg`;
const account = `${rg}/providers/Vendor.Storage/storageAccounts/appdata`;
const blob = `${account}/blobServices/default`;

let s: TestServer;
before(async () => {
  s = await startTestServer({ env: { STRATUS_WORLD: worldFile } });
});
after(async () => {
  await s?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A resource-manager token of a user of the world's tenant, through its public client. */
async function armToken(username: string, password: string): Promise<string> {
  const r = await tokenRequest(s.url, { grant_type: 'password', client_id: cliAppId, username, password, scope: 'api://stratus/arm/user_impersonation' }, 'northwind.test');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token as string;
}

test('the generic resources are listed through the official client with the file fields, the group location by default', async () => {
  const token = await armToken('dana@northwind.test', 'Dana-Pass-1');
  const client = new ResourceManagementClient(staticCredential(async () => token), sub, { endpoint: s.url });
  const listed = await collect(client.resources.listByResourceGroup('app-rg'));
  const byName = new Map(listed.map((r) => [r.name, r]));
  assert.deepEqual(
    listed.map((r) => [r.id, r.type]),
    [
      [`${rg}/providers/Vendor.Automation/automationAccounts/app-auto`, 'Vendor.Automation/AutomationAccounts'],
      [`${rg}/providers/Vendor.Network/virtualNetworks/app-vnet`, 'Vendor.Network/virtualNetworks'],
      [account, 'Vendor.Storage/storageAccounts'],
      [blob, 'Vendor.Storage/storageAccounts/blobServices'],
      [`${blob}/containers/logs`, 'Vendor.Storage/storageAccounts/blobServices/containers'],
    ],
    'the group lists the generic resources, their children (as it lists the areas’ children) and the automation account, in id order',
  );
  const storage = byName.get('appdata')!;
  assert.equal(storage.id, account);
  assert.equal(storage.type, 'Vendor.Storage/storageAccounts');
  assert.equal(storage.location, 'westus', 'the group location');
  assert.equal(storage.kind, 'StorageV2');
  assert.deepEqual(storage.sku, { name: 'Standard_GRS', tier: 'Standard' });
  assert.deepEqual(storage.tags, { team: 'data' });
  assert.equal(storage.identity?.principalId, identity.principalId);
  assert.equal(byName.get('app-vnet')!.location, 'westus2');
  const tagged = await collect(client.resources.listByResourceGroup('app-rg', { filter: "tagName eq 'team'" }));
  assert.deepEqual(tagged.map((r) => r.name), ['appdata']);
});

test('the child resource is a scope: the world assignment on it lets its reader list its policies, not the parent’s', async () => {
  const dana = new AuthorizationManagementClient(staticCredential(async () => armToken('dana@northwind.test', 'Dana-Pass-1')), sub, { endpoint: s.url });
  dana.pipeline.addPolicy(vendorNamespacePolicy);
  const eli = new AuthorizationManagementClient(staticCredential(async () => armToken('eli@northwind.test', 'Eli-Pass-1')), sub, { endpoint: s.url });
  eli.pipeline.addPolicy(vendorNamespacePolicy);
  const policies = await collect(eli.roleManagementPolicies.listForScope(blob));
  assert.ok(policies.length > 0);
  assert.equal(policies[0]!.scope, blob);
  await assert.rejects(collect(eli.roleManagementPolicies.listForScope(account)), (e: any) => e.statusCode === 403, 'Reader on the child only');
  await assert.rejects(collect(dana.roleManagementPolicies.listForScope(`${account}/blobServices/other`)), (e: any) => e.statusCode === 404, 'a child not in the world');
  const assignments = await collect(dana.roleAssignments.listForScope(blob, { filter: 'atScope()' }));
  assert.ok(assignments.some((a) => a.scope === blob && a.roleDefinitionId?.endsWith('acdd72a7-3385-48ef-bd42-f606fba81ae7')), JSON.stringify(assignments));
});

test('export nests the generic resources as the file did (not the automation account) and round-trips on both databases', async () => {
  const first = await exported(s);
  const group = first.doc.tenants[0].subscriptions[0].resourceGroups[0];
  assert.deepEqual(group.resources, [
    {
      type: 'Vendor.Network/virtualNetworks',
      name: 'app-vnet',
      location: 'westus2',
      properties: { addressSpace: { addressPrefixes: ['10.0.0.0/16'] } },
    },
    {
      type: 'Vendor.Storage/storageAccounts',
      name: 'appdata',
      location: 'westus',
      kind: 'StorageV2',
      sku: { name: 'Standard_GRS', tier: 'Standard' },
      tags: { team: 'data' },
      identity,
      properties: { supportsHttpsTrafficOnly: true },
      resources: [{ type: 'blobServices', name: 'default', properties: { deleteRetentionPolicy: { enabled: true, days: 7 } }, resources: [{ type: 'containers', name: 'logs', properties: { publicAccess: 'None' } }] }],
    },
  ]);
  assert.deepEqual(group.automationAccounts.map((a: any) => a.name), ['app-auto'], 'the area kind keeps its own resource');
  const file = path.join(dir, 'exported.yaml');
  fs.writeFileSync(file, first.text);
  for (const url of bothDatabases()) {
    const fresh = await startTestServerOn(url, { env: { STRATUS_WORLD: file } });
    try {
      assert.deepEqual((await exported(fresh)).doc, first.doc, `same document on ${url ? 'PostgreSQL' : 'SQLite'}`);
    } finally {
      await fresh.close();
    }
  }
});

test('duplicates and an area kind’s type refuse with file, line and path, and change nothing', async () => {
  const bad = (name: string, edit: (w: string) => string) => {
    const f = path.join(dir, name);
    const text = edit(world);
    assert.notEqual(text, world, `${name} changes the world`);
    fs.writeFileSync(f, text);
    return f;
  };
  const top = '/tenants/0/subscriptions/0/resourceGroups/0/resources';
  const cases: [string, string, RegExp][] = [
    [bad('dup-top.yaml', (w) => w.replace('              - { type: Vendor.Network/virtualNetworks, name: app-vnet', '              - { type: vendor.network/VIRTUALNETWORKS, name: APP-vnet }\n              - { type: Vendor.Network/virtualNetworks, name: app-vnet')), 'a duplicate top-level resource (case-insensitive)', new RegExp(`dup-top\\.yaml:\\d+:\\d+: ${top}/2: duplicate resource /subscriptions/${sub}/resourcegroups/app-rg/providers/vendor\\.network/virtualnetworks/app-vnet \\(first at [^)]*dup-top\\.yaml:\\d+:\\d+\\)`)],
    [bad('dup-child.yaml', (w) => w.replace('                      - { type: containers, name: logs', '                      - { type: containers, name: logs }\n                      - { type: containers, name: logs')), 'a duplicate child', new RegExp(`dup-child\\.yaml:\\d+:\\d+: ${top}/0/resources/0/resources/1: duplicate resource`)],
    [bad('owned.yaml', (w) => w.replace('type: Vendor.Network/virtualNetworks', 'type: Vendor.Automation/automationAccounts')), 'an area kind’s type', new RegExp(`owned\\.yaml:\\d+:\\d+: ${top}/1/type: Vendor\\.Automation/automationAccounts is an area kind's own resource`)],
    [bad('same-as-kind.yaml', (w) => w.replace("              - name: app-auto\n", "              - name: app-auto\n            dataShareAccounts: [{ name: share1 }]\n").replace('type: Vendor.Network/virtualNetworks, name: app-vnet', 'type: Vendor.DataShare/accounts, name: share1')), 'a data share account as a generic resource', new RegExp(`same-as-kind\\.yaml:\\d+:\\d+: ${top}/1/type: Vendor\\.DataShare/accounts is an area kind's own resource`)],
    [bad('child-type.yaml', (w) => w.replace('type: blobServices', 'type: Vendor.Storage/storageAccounts/blobServices')), 'a child type with a namespace', new RegExp(`child-type\\.yaml:\\d+:\\d+: ${top}/0/resources/0/type: `)],
  ];
  const before = (await exported(s)).doc;
  for (const [file, name, expected] of cases) {
    assert.throws(() => resolveWorld(readWorld([file])), (e: Error) => expected.test(e.message) || assert.fail(`${name}: ${e.message}`), name);
    const r = await s.control('/_stratus/world', { method: 'PUT', headers: { 'content-type': 'application/yaml' }, body: fs.readFileSync(file, 'utf8') });
    assert.equal(r.status, 400, name);
  }
  assert.deepEqual((await exported(s)).doc, before, 'nothing changed');
});
