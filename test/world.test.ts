/**
 * World files (issue 28 items 1, 5): a world written in the test starts a server (a tenant, two
 * users, a confidential app with a secret, a redirect URI and an app role, a public client, a
 * subscription with two resource groups and role assignments, the clock) and is used through the
 * official clients; ids omitted in the file are the same on every start; a reset puts the world
 * and its clock back; bad world files (unknown field, duplicate id, dangling reference) refuse the
 * start with file, line and path and change nothing. Both databases.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientSecretCredential, UsernamePasswordCredential } from '@azure/identity';
import { ResourceManagementClient } from '@azure/arm-resources';
import { SubscriptionClient } from '@azure/arm-resources-subscriptions';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { bothDatabases, startTestServerOn } from './helpers/databases.ts';
import { parse } from 'yaml';
import { stableUuid } from '../src/core/ids.ts';
import { readWorld } from '../src/world/file.ts';
import { demoWorldFile } from '../src/world/demo.ts';
import { resolveWorld } from '../src/world/load.ts';
import { worldSchemaText } from '../scripts/gen-world-schema.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-world-'));
const worldFile = path.join(dir, 'team.yaml');
const cliAppId = '6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
fs.writeFileSync(
  worldFile,
  `# a team's world
clock: 2026-01-01T09:00:00Z
tenants:
  - domain: contoso.test
    displayName: Contoso
    users:
      - userPrincipalName: alice@contoso.test
        displayName: Alice
        password: Alice-Pass-1
        tenantAdmin: true
      - userPrincipalName: bob@contoso.test
        displayName: Bob
        password: Bob-Pass-1
    applications:
      - displayName: orders-api
        secret: orders-secret
        web: { redirectUris: [https://localhost/orders/callback] }
        appRoles: [{ api: mail, role: Mail.Read }]
      - displayName: contoso-cli
        appId: ${cliAppId}
        publicClient: { redirectUris: [http://localhost] }
    subscriptions:
      - displayName: Contoso Dev
        resourceGroups:
          - { name: app-rg, location: westus, tags: { env: dev } }
          - { name: data-rg, location: eastus }
        roleAssignments:
          - { principal: alice@contoso.test, role: Owner }
          - { principal: orders-api, role: Contributor, scope: resourceGroups/app-rg }
`,
);
const tenantId = stableUuid('world-tenant', 'contoso.test');
const subscriptionId = stableUuid('world-subscription', tenantId, 'Contoso Dev');
const ordersAppId = stableUuid('world-app', tenantId, 'orders-api');
const env = { STRATUS_WORLD: worldFile, STRATUS_AUDIENCE_ALIASES: 'arm=https://management.azure.com', STRATUS_PROVIDER_NAMESPACE_ALIASES: 'Microsoft.' };

let s: TestServer;
before(async () => {
  s = await startTestServer({ env });
});
after(async () => {
  await s?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const alice = () => new UsernamePasswordCredential('contoso.test', cliAppId, 'alice@contoso.test', 'Alice-Pass-1', { authorityHost: s.url, disableInstanceDiscovery: true });
const orders = () => new ClientSecretCredential('contoso.test', ordersAppId, 'orders-secret', { authorityHost: s.url, disableInstanceDiscovery: true });

test('the published schema is current', () => {
  assert.equal(fs.readFileSync(path.resolve(import.meta.dirname, '../schemas/world.schema.json'), 'utf8'), worldSchemaText(), 'run npx tsx scripts/gen-world-schema.ts');
});

test('a world file starts the server: its users, apps, subscription, groups and role assignments through the official clients', async () => {
  const subs = await collect(new SubscriptionClient(alice(), { endpoint: s.url }).subscriptions.list());
  assert.deepEqual(subs.map((x) => [x.subscriptionId, x.displayName, x.tenantId]), [[subscriptionId, 'Contoso Dev', tenantId]], 'the id is made from the names');
  const rm = new ResourceManagementClient(alice(), subscriptionId, { endpoint: s.url });
  const groups = await collect(rm.resourceGroups.list());
  assert.deepEqual(groups.map((g) => [g.name, g.location, g.tags ?? {}]).sort(), [['app-rg', 'westus', { env: 'dev' }], ['data-rg', 'eastus', {}]]);
  // The app is Contributor on app-rg only.
  const asApp = new ResourceManagementClient(orders(), subscriptionId, { endpoint: s.url });
  assert.equal((await asApp.resourceGroups.get('app-rg')).name, 'app-rg');
  await assert.rejects(asApp.resourceGroups.get('data-rg'), (e: any) => e.statusCode === 403);
  // Bob holds no role.
  const bob = new UsernamePasswordCredential('contoso.test', cliAppId, 'bob@contoso.test', 'Bob-Pass-1', { authorityHost: s.url, disableInstanceDiscovery: true });
  await assert.rejects(new ResourceManagementClient(bob, subscriptionId, { endpoint: s.url }).resourceGroups.get('app-rg'), (e: any) => e.statusCode === 403);
  // The app role: an app token for mail carries Mail.Read.
  const mailToken = await orders().getToken('api://stratus/mail/.default');
  const claims = JSON.parse(Buffer.from(mailToken!.token.split('.')[1]!, 'base64url').toString());
  assert.deepEqual(claims.roles, ['Mail.Read']);
  assert.equal(claims.tid, tenantId);
  // The world's clock.
  const clock = (await (await s.control('/_stratus/clock')).json()) as any;
  assert.match(clock.now, /^2026-01-01T09:0/);
});

test('two starts from one file give the same ids; a reset puts the world and its clock back', async () => {
  const other = await startTestServer({ env });
  try {
    const subs = await collect(new SubscriptionClient(new UsernamePasswordCredential('contoso.test', cliAppId, 'alice@contoso.test', 'Alice-Pass-1', { authorityHost: other.url, disableInstanceDiscovery: true }), { endpoint: other.url }).subscriptions.list());
    assert.deepEqual(subs.map((x) => x.subscriptionId), [subscriptionId]);
  } finally {
    await other.close();
  }
  const rm = new ResourceManagementClient(alice(), subscriptionId, { endpoint: s.url });
  await rm.resourceGroups.createOrUpdate('scratch-rg', { location: 'westus' });
  await s.control('/_stratus/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 86400 * 30 }) });
  assert.equal((await s.control('/_stratus/reset', { method: 'POST' })).status, 200);
  assert.equal((await rm.resourceGroups.checkExistence('scratch-rg')).body, false, 'the group made after the start is gone');
  assert.match(((await (await s.control('/_stratus/clock')).json()) as any).now, /^2026-01-01T09:0/, 'the clock is the world’s again');
});

test('bad world files refuse the start with file, line and path, and change nothing', async () => {
  const bad = (name: string, text: string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, text);
    return f;
  };
  const cases: [string, string, RegExp][] = [
    ['unknown.yaml', 'tenants:\n  - domain: contoso.test\n    users:\n      - userPrincipalName: a@contoso.test\n        displayName: A\n        password: x\n        shoeSize: 42\n', /unknown\.yaml:7:\d+: \/tenants\/0\/users\/0\/shoeSize: unknown field 'shoeSize'/],
    ['duplicate.yaml', `tenants:\n  - domain: contoso.test\n    users:\n      - { id: ${tenantId}, userPrincipalName: a@contoso.test, displayName: A, password: x }\n      - { id: ${tenantId}, userPrincipalName: b@contoso.test, displayName: B, password: x }\n`, /duplicate\.yaml:5:\d+: \/tenants\/0\/users\/1: duplicate user id/],
    ['dangling.yaml', 'tenants:\n  - domain: contoso.test\n    subscriptions:\n      - displayName: S\n        roleAssignments:\n          - { principal: carol@contoso.test, role: Owner }\n', /dangling\.yaml:6:\d+: \/tenants\/0\/subscriptions\/0\/roleAssignments\/0\/principal: no user or application 'carol@contoso\.test'/],
  ];
  const rm = new ResourceManagementClient(alice(), subscriptionId, { endpoint: s.url });
  await rm.resourceGroups.createOrUpdate('kept-rg', { location: 'westus' });
  for (const [name, text, expected] of cases) {
    const f = bad(name, text);
    assert.throws(() => resolveWorld(readWorld([f])), (e: Error) => expected.test(e.message), name);
    s.config.world = [f];
    await assert.rejects(s.restart(), (e: Error) => expected.test(e.message), `${name} refuses the start`);
  }
  s.config.world = [worldFile];
  await s.restart();
  assert.equal((await rm.resourceGroups.checkExistence('kept-rg')).body, true, 'the store was not touched by the refused starts');
  assert.equal((await s.control('/_stratus/reset', { method: 'POST' })).status, 200);
});

/** An export without its volatile field (the clock: the Stratus time of the export). */
async function exported(server: TestServer, format: 'yaml' | 'json'): Promise<{ text: string; doc: any }> {
  const r = await server.control(`/_stratus/world?format=${format}`);
  assert.equal(r.status, 200);
  const text = await r.text();
  const doc = format === 'yaml' ? parse(text) : JSON.parse(text);
  delete doc.clock;
  return { text, doc };
}

test('export round trip: export → a fresh start from it (also on the other database) → export again gives the same document', async () => {
  const first = await exported(s, 'yaml');
  assert.equal(first.doc.tenants[0].domain, 'contoso.test');
  assert.ok(first.doc.tenants[0].users[0].passwordHash.startsWith('scrypt$'), 'credentials as their stored hashes');
  const file = path.join(dir, 'exported.yaml');
  fs.writeFileSync(file, first.text);
  // This run's database, then the other one (SQLite from a PostgreSQL run; PostgreSQL from a SQLite run when STRATUS_TEST_OTHER_DATABASE_URL names one).
  for (const url of bothDatabases()) {
    const fresh = await startTestServerOn(url, { env: { ...env, STRATUS_WORLD: file } });
    try {
      assert.deepEqual((await exported(fresh, 'json')).doc, first.doc, `same document on ${url ? 'PostgreSQL' : 'SQLite'}`);
      // The hashes sign in: alice's password works on the fresh server.
      const subs = await collect(new SubscriptionClient(new UsernamePasswordCredential('contoso.test', cliAppId, 'alice@contoso.test', 'Alice-Pass-1', { authorityHost: fresh.url, disableInstanceDiscovery: true }), { endpoint: fresh.url }).subscriptions.list());
      assert.deepEqual(subs.map((x) => x.subscriptionId), [subscriptionId]);
    } finally {
      await fresh.close();
    }
  }
});

test('PUT /_stratus/world replaces the state; a bad world is a 400 naming line and path and changes nothing', async () => {
  const demo = await startTestServer();
  try {
    const bad = await demo.control('/_stratus/world', { method: 'PUT', headers: { 'content-type': 'application/yaml' }, body: 'tenants:\n  - domain: x.test\n    shoeSize: 42\n' });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as any).detail, /request body:3:\d+: \/tenants\/0\/shoeSize: unknown field 'shoeSize'/);
    assert.equal(((await (await demo.control('/_stratus/world')).json()) as any).tenants[0].domain, 'other.test', 'the demo world is untouched');
    const put = await demo.control('/_stratus/world', { method: 'PUT', headers: { 'content-type': 'application/yaml' }, body: fs.readFileSync(worldFile, 'utf8') });
    assert.equal(put.status, 200, await put.text());
    const after = (await (await demo.control('/_stratus/world')).json()) as any;
    assert.deepEqual(after.tenants.map((t: any) => t.domain), ['contoso.test']);
    assert.match(after.clock, /^2026-01-01T09:0/, "the imported world's clock");
    // A reset now restores the imported world.
    assert.equal((await demo.control('/_stratus/reset', { method: 'POST' })).status, 200);
    assert.deepEqual(((await (await demo.control('/_stratus/world')).json()) as any).tenants.map((t: any) => t.domain), ['contoso.test']);
  } finally {
    await demo.close();
  }
});

test('console world page: clock set and advance, snapshot save/restore/delete, reset, export download; forms need the console Origin', async () => {
  const session = (await fetch(`${s.httpUrl}/_stratus/console?key=${encodeURIComponent(s.controlKey)}`, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
  const form = (p: string, body: Record<string, string>, origin: string | undefined = s.httpUrl) =>
    fetch(`${s.httpUrl}/_stratus/console/world${p}`, { method: 'POST', headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded', ...(origin ? { origin } : {}) }, body: new URLSearchParams(body).toString(), redirect: 'manual' });
  const pageText = async () => (await fetch(`${s.httpUrl}/_stratus/console/world`, { headers: { cookie: session } })).text();
  assert.match(await pageText(), /Stratus time <strong>2026-01-01T09:0/);
  assert.equal((await form('/clock', { now: '2027-05-05T05:05:05Z' }, 'http://evil.test')).status, 403, 'another origin is refused');
  assert.match(((await (await s.control('/_stratus/clock')).json()) as any).now, /^2026-01-01/, 'the refused form changed nothing');
  const set = await form('/clock', { now: '2027-05-05T05:05:05Z' });
  assert.equal(set.status, 303);
  assert.match(new URL(set.headers.get('location') ?? '', s.httpUrl).searchParams.get('message') ?? '', /Clock moved: 2027-05-05T05:05/);
  assert.equal((await form('/clock', { advanceSeconds: '-3600' })).status, 303);
  assert.match(((await (await s.control('/_stratus/clock')).json()) as any).now, /^2027-05-05T04:05/, 'moved back an hour');
  assert.equal((await form('/snapshots', { name: 'from-console' })).status, 303);
  assert.match(await pageText(), /<td>from-console<\/td>/);
  await form('/clock', { advanceSeconds: '86400' });
  assert.equal((await form('/snapshots/from-console/restore', {})).status, 303);
  assert.match(((await (await s.control('/_stratus/clock')).json()) as any).now, /^2027-05-05T04:05/, 'restored to the snapshot time');
  assert.equal((await form('/snapshots/from-console/delete', {})).status, 303);
  assert.doesNotMatch(await pageText(), /<td>from-console<\/td>/);
  assert.equal((await form('/reset', {})).status, 303);
  assert.match(((await (await s.control('/_stratus/clock')).json()) as any).now, /^2026-01-01T09:0/);
  const download = await fetch(`${s.httpUrl}/_stratus/console/world/export.yaml`, { headers: { cookie: session } });
  assert.equal(download.status, 200);
  assert.match(download.headers.get('content-disposition') ?? '', /attachment; filename="world.yaml"/);
  assert.equal(parse(await download.text()).tenants[0].domain, 'contoso.test');
});

test('the demo world round trip: its export starts a server whose export is the same (management groups and their assignments included)', async () => {
  const demo = await startTestServer();
  let first: { text: string; doc: any };
  try {
    first = await exported(demo, 'yaml');
  } finally {
    await demo.close();
  }
  const stratus = first.doc.tenants.find((t: any) => t.domain === 'stratus.test');
  assert.deepEqual(stratus.managementGroups, [{ name: 'stratus-platform', displayName: 'Stratus Platform' }]);
  assert.deepEqual(stratus.roleAssignments, [{ principal: 'admin@stratus.test', role: 'Owner', scope: `managementGroups/${stratus.id}` }]);
  assert.equal(stratus.subscriptions[0].managementGroup, 'stratus-platform');
  const file = path.join(dir, 'demo-export.yaml');
  fs.writeFileSync(file, first.text);
  const again = await startTestServer({ env: { STRATUS_WORLD: file } });
  try {
    assert.deepEqual((await exported(again, 'json')).doc, first.doc);
  } finally {
    await again.close();
  }
});

test('the shipped demo world validates against the world schema (a fresh start loads it without validating it again)', () => {
  const checked = readWorld([demoWorldFile]);
  const trusted = readWorld([demoWorldFile], undefined, true);
  assert.ok(checked.tenants.length > 0);
  assert.equal(trusted.hash, checked.hash, 'the same data either way');
  const dist = path.join(path.dirname(demoWorldFile), '../../../dist/worlds/demo.yaml');
  if (fs.existsSync(dist)) {
    assert.equal(fs.readFileSync(dist, 'utf8'), fs.readFileSync(demoWorldFile, 'utf8'), 'the bundle ships the same file');
    // The JSON copy a bundled fresh start loads holds the same world.
    assert.equal(readWorld([dist.replace(/\.yaml$/, '.json')]).hash, checked.hash);
  }
});
