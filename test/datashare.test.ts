/**
 * Share synchronizations (spec resource-manager §2.4, §4.5, §7 rule 2, §8, §9; reference §5):
 * accounts and shares, the consumer flow (invitation → share subscription → synchronize)
 * producing a run in the provider's list that completes as the clock moves, `$filter` /
 * `$orderby` against the deterministic demo runs, `$skipToken` paging to the last page
 * through next links that address the same POST endpoint, `DataShareError` bodies, 403 for
 * the user without roles, and a write surviving a restart — with a plain `fetch` client
 * over HTTPS (the official `@azure/arm-datashare` speaks an older api-version).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { examplesDir, readExample } from './helpers/reference.ts';
import { demoSubscription, otherSubscription } from '../src/seed/demo.ts';
import { demoSynchronizations } from './helpers/demo-world.ts';
import { synchronizationPageSize } from '../src/services/datashare/consumer.ts';

const api = '2021-08-01';
const rgPath = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}`;
const acctPath = `${rgPath}/providers/Vendor.DataShare/accounts`;
const salesPath = `${acctPath}/stratus-share/shares/sales`;
const demo = demoSynchronizations();

let s: TestServer;
let admin: string;
let user: string;
let eve: string;

interface Res {
  status: number;
  body: any;
  headers: Headers;
}

async function call(method: string, pathOrUrl: string, opts: { token?: string | null; body?: unknown; query?: Record<string, string> } = {}): Promise<Res> {
  const token = opts.token === undefined ? admin : opts.token;
  let url = pathOrUrl.startsWith('https://') ? pathOrUrl : `${s.url}${pathOrUrl}`;
  if (!pathOrUrl.startsWith('https://')) url += `?${new URLSearchParams({ 'api-version': api, ...(opts.query ?? {}) }).toString()}`;
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** Lists every run through next links; returns the runs and the page sizes. */
async function listAll(path: string, query: Record<string, string> = {}, token?: string) {
  const runs: any[] = [];
  const pages: number[] = [];
  let r = await call('POST', `${path}/listSynchronizations`, { query, token });
  for (;;) {
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(Array.isArray(r.body.value));
    runs.push(...r.body.value);
    pages.push(r.body.value.length);
    if (!r.body.nextLink) break;
    assert.ok(r.body.nextLink.startsWith(`${s.url}${path}/listSynchronizations?`), r.body.nextLink);
    assert.ok(new URL(r.body.nextLink).searchParams.get('api-version') === api);
    r = await call('POST', r.body.nextLink, { token });
  }
  return { runs, pages };
}

before(async () => {
  s = await startTestServer();
  const scope = ['api://stratus/arm/user_impersonation'];
  admin = await userToken(s.url, identities.admin, scope);
  user = await userToken(s.url, identities.user, scope);
  eve = await userToken(s.url, identities.eve, scope);
});
after(async () => {
  await s?.close();
});

test('the demo account and share exist with the reference shapes', async () => {
  const a = await call('GET', `${acctPath}/stratus-share`);
  assert.equal(a.status, 200);
  assert.equal(a.body.type, 'Vendor.DataShare/accounts');
  assert.equal(a.body.identity.type, 'SystemAssigned');
  assert.equal(a.body.properties.provisioningState, 'Succeeded');
  const sh = await call('GET', salesPath);
  assert.equal(sh.status, 200);
  assert.equal(sh.body.id, salesPath);
  assert.equal(sh.body.properties.shareKind, 'CopyBased');
  const list = await call('GET', `${acctPath}/stratus-share/shares`);
  assert.deepEqual(
    list.body.value.map((x: any) => x.name),
    ['sales'],
  );
});

test('listSynchronizations pages to the last page, newest first, with every §2.4 field', async () => {
  const { runs, pages } = await listAll(salesPath);
  assert.equal(runs.length, demo.length);
  assert.ok(demo.length >= 30);
  assert.deepEqual(pages, [20, 20, 5]);
  assert.equal(synchronizationPageSize, 20);
  const expected = [...demo].sort((a, b) => (a.startTime < b.startTime ? 1 : -1));
  assert.deepEqual(runs, expected);
  for (const k of ['synchronizationId', 'synchronizationMode', 'status', 'message', 'startTime', 'endTime', 'durationMs', 'consumerName', 'consumerEmail', 'consumerTenantName']) assert.ok(k in runs[0], k);
});

test('default listings kept between requests still answer each request: api-version and query texts in the next link, JSON', async () => {
  const path = `${salesPath}/listSynchronizations`;
  const a = await call('POST', path);
  const again = await call('POST', path);
  const older = await call('POST', path, { query: { 'api-version': '2020-09-01' } });
  const oldest = await call('POST', path, { query: { 'api-version': '2019-11-01' } });
  const blank = await call('POST', path, { query: { $filter: ' ' } });
  const blankOrder = await call('GET', path, { query: { orderby: '' } });
  for (const r of [a, again, older, oldest, blank, blankOrder]) {
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(r.body.value, a.body.value);
  }
  const next = (r: Res) => new URL(r.body.nextLink).searchParams;
  assert.deepEqual([a, again, older, oldest].map((r) => next(r).get('api-version')), [api, api, '2020-09-01', '2019-11-01']);
  assert.equal(next(a).get('$filter'), null);
  assert.equal(next(blank).get('$filter'), ' ');
  assert.equal(next(blankOrder).get('$orderby'), '');
  assert.equal(next(a).get('$skipToken'), next(blank).get('$skipToken'));
  // The second page (under each skip token spelling) is another kept page.
  const second = await call('POST', path, { query: { $skipToken: next(a).get('$skipToken')! } });
  const secondLower = await call('POST', path, { query: { $skiptoken: next(a).get('$skipToken')! } });
  assert.deepEqual(second.body, secondLower.body);
  assert.notDeepEqual(second.body.value, a.body.value);
  assert.notEqual(next(second).get('$skipToken'), next(a).get('$skipToken'));
});

test('$filter and $orderby against known answers (also under filter / orderby)', async () => {
  const want = demo.filter((d) => d.status === 'Failed').map((d) => d.synchronizationId).sort();
  const r = await listAll(salesPath, { $filter: "status eq 'Failed'" });
  assert.ok(want.length > 0);
  assert.deepEqual(r.runs.map((x) => x.synchronizationId).sort(), want);

  const both = demo.filter((d) => d.synchronizationMode === 'FullSync' && d.durationMs! > 100000);
  const r2 = await listAll(salesPath, { $filter: "synchronizationMode eq 'FullSync' and durationMs gt 100000", $orderby: 'durationMs desc' });
  assert.deepEqual(
    r2.runs.map((x) => x.synchronizationId),
    [...both].sort((a, b) => b.durationMs! - a.durationMs!).map((d) => d.synchronizationId),
  );

  const r3 = await listAll(salesPath, { filter: "consumerTenantName eq 'Northwind Traders' and startTime ge 2026-01-10T00:00:00Z", orderby: 'startTime asc' });
  const w3 = demo.filter((d) => d.consumerTenantName === 'Northwind Traders' && d.startTime >= '2026-01-10T00:00:00.000Z');
  assert.deepEqual(
    r3.runs.map((x) => x.synchronizationId),
    w3.map((d) => d.synchronizationId),
  );

  const r4 = await listAll(salesPath, { $orderby: 'consumerName asc, startTime desc' });
  const w4 = [...demo].sort((a, b) => (a.consumerName! < b.consumerName! ? -1 : a.consumerName! > b.consumerName! ? 1 : a.startTime < b.startTime ? 1 : -1));
  assert.deepEqual(
    r4.runs.map((x) => x.synchronizationId),
    w4.map((d) => d.synchronizationId),
  );
  assert.equal(r4.pages.length, 3);

  const r5 = await listAll(salesPath, { $filter: "startswith(consumerEmail, 'carmen')" });
  assert.equal(r5.runs.length, demo.filter((d) => d.consumerEmail!.startsWith('carmen')).length);
});

test('bad $filter, $orderby and $skipToken → 400 DataShareError naming the parameter and position', async () => {
  const a = await call('POST', `${salesPath}/listSynchronizations`, { query: { $filter: "status eq 'Failed' and" } });
  assert.equal(a.status, 400);
  assert.equal(a.body.error.code, 'InvalidFilter');
  assert.equal(a.body.error.target, '$filter');
  assert.match(a.body.error.message, /position \d+/);
  assert.equal(a.body.error.additionalInfo, undefined);
  const b = await call('POST', `${salesPath}/listSynchronizations`, { query: { $filter: "colour eq 'red'" } });
  assert.equal(b.status, 400);
  assert.match(b.body.error.message, /colour/);
  const c = await call('POST', `${salesPath}/listSynchronizations`, { query: { $orderby: 'nope desc' } });
  assert.equal(c.status, 400);
  assert.equal(c.body.error.code, 'InvalidOrderBy');
  const d = await call('POST', `${salesPath}/listSynchronizations`, { query: { $skipToken: '!!!' } });
  assert.equal(d.status, 400);
  assert.equal(d.body.error.code, 'InvalidSkipToken');
});

test('gateway errors come as DataShareError: api-version, bearer, subscription, resource group, unknown share', async () => {
  const miss = await fetch(`${s.url}${salesPath}/listSynchronizations`, { method: 'POST', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(miss.status, 400);
  assert.equal(((await miss.json()) as any).error.code, 'MissingApiVersionParameter');
  const bad = await call('POST', `${salesPath}/listSynchronizations`, { query: { 'api-version': '2018-11-01-preview' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'InvalidApiVersionParameter');
  assert.match(bad.body.error.message, /'2021-08-01,2020-09-01,2019-11-01'/);
  const noAuth = await call('POST', `${salesPath}/listSynchronizations`, { token: null });
  assert.equal(noAuth.status, 401);
  assert.equal(noAuth.body.error.code, 'AuthenticationFailed');
  const badSub = await call('POST', `/subscriptions/not-a-guid/resourceGroups/stratus-rg/providers/Vendor.DataShare/accounts/stratus-share/shares/sales/listSynchronizations`);
  assert.equal(badSub.status, 400);
  assert.equal(badSub.body.error.code, 'InvalidSubscriptionId');
  const noRg = await call('POST', `/subscriptions/${demoSubscription.id}/resourceGroups/nope-rg/providers/Vendor.DataShare/accounts/stratus-share/shares/sales/listSynchronizations`);
  assert.equal(noRg.status, 404);
  assert.equal(noRg.body.error.code, 'ResourceGroupNotFound');
  const noShare = await call('POST', `${acctPath}/stratus-share/shares/nope/listSynchronizations`);
  assert.equal(noShare.status, 404);
  assert.equal(noShare.body.error.code, 'ResourceNotFound');
  assert.equal(noShare.body.error.message, "The Resource 'Vendor.DataShare/accounts/stratus-share/shares/nope' under resource group 'stratus-rg' was not found.");
  const noAcct = await call('GET', `${acctPath}/nope`);
  assert.equal(noAcct.status, 404);
  assert.equal(noAcct.body.error.message, "The Resource 'Vendor.DataShare/accounts/nope' under resource group 'stratus-rg' was not found.");
  // Another tenant's caller does not see the subscription.
  const other = await call('POST', `${salesPath}/listSynchronizations`, { token: eve });
  assert.equal(other.status, 404);
  assert.equal(other.body.error.code, 'SubscriptionNotFound');
});

test('the user without roles gets 403 AuthorizationFailed on reads and writes', async () => {
  for (const [m, p, body] of [
    ['POST', `${salesPath}/listSynchronizations`, undefined],
    ['GET', `${acctPath}/stratus-share`, undefined],
    ['PUT', `${acctPath}/user-acct`, { location: 'eastus', identity: { type: 'SystemAssigned' } }],
  ] as const) {
    const r = await call(m, p, { token: user, body });
    assert.equal(r.status, 403, `${m} ${p}`);
    assert.equal(r.body.error.code, 'AuthorizationFailed');
  }
});

test('a Reader (the managed identity) reads accounts and shares but may not run listSynchronizations (an action)', async () => {
  const mi = await appToken(s.url, 'arm', identities.mi);
  // Reads: the account list, the account, the share list and the share.
  const accounts = await call('GET', acctPath, { token: mi });
  assert.equal(accounts.status, 200);
  assert.ok(accounts.body.value.some((a: any) => a.name === 'stratus-share'), 'the Reader lists the account');
  const account = await call('GET', `${acctPath}/stratus-share`, { token: mi });
  assert.equal(account.status, 200);
  assert.equal(account.body.name, 'stratus-share');
  const shares = await call('GET', `${acctPath}/stratus-share/shares`, { token: mi });
  assert.equal(shares.status, 200);
  assert.ok(shares.body.value.some((x: any) => x.name === 'sales'), 'the Reader lists the share');
  const share = await call('GET', salesPath, { token: mi });
  assert.equal(share.status, 200);
  assert.equal(share.body.name, 'sales');
  const r = await call('POST', `${salesPath}/listSynchronizations`, { token: mi });
  assert.equal(r.status, 403);
  assert.equal(r.body.error.code, 'AuthorizationFailed');
  assert.match(r.body.error.message, /Vendor\.DataShare\/accounts\/shares\/listSynchronizations\/action/);
  // The service principal (Contributor) may.
  const sp = await appToken(s.url, 'arm', identities.sp);
  assert.equal((await call('POST', `${salesPath}/listSynchronizations`, { token: sp })).status, 200);
});

test('account and share validation', async () => {
  const noLoc = await call('PUT', `${acctPath}/val-acct`, { body: { identity: { type: 'SystemAssigned' } } });
  assert.equal(noLoc.status, 400);
  assert.equal(noLoc.body.error.target, 'location');
  const noId = await call('PUT', `${acctPath}/val-acct`, { body: { location: 'eastus' } });
  assert.equal(noId.status, 400);
  assert.equal(noId.body.error.target, 'identity');
  const badName = await call('PUT', `${acctPath}/bad name!`, { body: { location: 'eastus', identity: { type: 'SystemAssigned' } } });
  assert.equal(badName.status, 400);
  assert.equal(badName.body.error.code, 'InvalidResourceName');
  const badJson = await fetch(`${s.url}${acctPath}/val-acct?api-version=${api}`, { method: 'PUT', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: '{"location":' });
  assert.equal(badJson.status, 400);
  assert.ok(((await badJson.json()) as any).error.code);
  const kind = await call('PUT', `${acctPath}/stratus-share/shares/bad-kind`, { body: { properties: { shareKind: 'Streaming' } } });
  assert.equal(kind.status, 400);
  assert.equal(kind.body.error.target, 'properties.shareKind');
  const noParent = await call('PUT', `${acctPath}/nope/shares/x`, { body: { properties: {} } });
  assert.equal(noParent.status, 404);
});

test('consumer flow: invitation → share subscription → synchronize → run in the provider list, completing with the clock', async () => {
  // Provider: account, share, invitation to eve (another tenant).
  const acct = await call('PUT', `${acctPath}/provider-acct`, { body: { location: 'eastus', identity: { type: 'SystemAssigned' }, tags: { team: 'data' } } });
  assert.equal(acct.status, 201);
  assert.equal(acct.body.systemData.createdBy, 'admin@stratus.test');
  assert.equal((await call('PUT', `${acctPath}/provider-acct`, { body: { location: 'eastus', identity: { type: 'SystemAssigned' }, tags: { team: 'data' } } })).status, 200);
  const patched = await call('PATCH', `${acctPath}/provider-acct`, { body: { tags: { team: 'sales' } } });
  assert.equal(patched.status, 200);
  assert.deepEqual(patched.body.tags, { team: 'sales' });
  assert.equal(patched.body.systemData.createdAt, acct.body.systemData.createdAt);
  assert.equal((await call('PATCH', `${acctPath}/provider-acct`, { body: { tags: { team: 5 } } })).status, 400);
  const share = await call('PUT', `${acctPath}/provider-acct/shares/orders`, { body: { properties: { description: 'Orders', shareKind: 'CopyBased', terms: 'none' } } });
  assert.equal(share.status, 201);
  const noTarget = await call('PUT', `${acctPath}/provider-acct/shares/orders/invitations/inv0`, { body: { properties: {} } });
  assert.equal(noTarget.status, 400);
  const inv = await call('PUT', `${acctPath}/provider-acct/shares/orders/invitations/to-eve`, { body: { properties: { targetEmail: 'eve@other.test' } } });
  assert.equal(inv.status, 201);
  assert.equal(inv.body.properties.invitationStatus, 'Pending');
  const invitationId = inv.body.properties.invitationId as string;

  // Consumer (eve, other tenant): account and share subscription.
  const eveRg = `/subscriptions/${otherSubscription.id}/resourceGroups/${otherSubscription.resourceGroup}/providers/Vendor.DataShare/accounts`;
  assert.equal((await call('PUT', `${eveRg}/eve-acct`, { token: eve, body: { location: 'westeurope', identity: { type: 'SystemAssigned' } } })).status, 201);
  // The admin is not the invitation's target.
  const wrong = await call('PUT', `${acctPath}/provider-acct/shareSubscriptions/self`, { body: { properties: { invitationId, sourceShareLocation: 'eastus' } } });
  assert.equal(wrong.status, 404);
  assert.equal(wrong.body.error.code, 'InvitationNotFound');
  const noLoc = await call('PUT', `${eveRg}/eve-acct/shareSubscriptions/orders-sub`, { token: eve, body: { properties: { invitationId } } });
  assert.equal(noLoc.status, 400);
  const ss = await call('PUT', `${eveRg}/eve-acct/shareSubscriptions/orders-sub`, { token: eve, body: { properties: { invitationId, sourceShareLocation: 'eastus' } } });
  assert.equal(ss.status, 201, JSON.stringify(ss.body));
  assert.equal(ss.body.properties.shareName, 'orders');
  assert.equal(ss.body.properties.providerEmail, 'admin@stratus.test');
  assert.equal(ss.body.properties.shareSubscriptionStatus, 'Active');
  const again = await call('PUT', `${eveRg}/eve-acct/shareSubscriptions/second`, { token: eve, body: { properties: { invitationId, sourceShareLocation: 'eastus' } } });
  assert.equal(again.status, 409);
  const invAfter = await call('GET', `${acctPath}/provider-acct/shares/orders/invitations/to-eve`);
  assert.equal(invAfter.body.properties.invitationStatus, 'Accepted');

  // Synchronize.
  const badMode = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/synchronize`, { token: eve, body: { synchronizationMode: 'Partial' } });
  assert.equal(badMode.status, 400);
  const sync = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/synchronize`, { token: eve, body: { synchronizationMode: 'FullSync' } });
  assert.equal(sync.status, 202);
  assert.equal(sync.body.status, 'Accepted');
  const sync2 = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/synchronize`, { token: eve });
  assert.equal(sync2.status, 202);

  const listed = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`, { query: { $orderby: 'synchronizationMode asc' } });
  assert.equal(listed.status, 200);
  assert.equal(listed.body.value.length, 2);
  const full = listed.body.value.find((x: any) => x.synchronizationId === sync.body.synchronizationId);
  assert.equal(full.status, 'InProgress');
  assert.equal(full.synchronizationMode, 'FullSync');
  assert.equal(full.consumerEmail, 'eve@other.test');
  assert.equal(full.consumerName, 'Eve Other');
  assert.equal(full.consumerTenantName, 'Other Tenant');
  assert.equal(full.endTime, undefined);
  assert.equal(listed.body.value[0].synchronizationMode, 'FullSync');

  // The consumer sees its own runs, without the consumer fields.
  const mine = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/listSynchronizations`, { token: eve, query: { $orderby: 'synchronizationMode desc' } });
  assert.equal(mine.status, 200);
  assert.deepEqual(
    mine.body.value.map((x: any) => x.synchronizationId),
    [sync2.body.synchronizationId, sync.body.synchronizationId],
  );
  assert.equal(mine.body.value[0].consumerEmail, undefined);
  assert.equal((await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/listSynchronizations`, { token: eve, query: { $filter: "consumerName eq 'x'" } })).status, 400);
  // The default listings of both sides before the clock moves: both runs running. (Their answers are kept as text per
  // page and per phase of the page's running runs: the reads after the clock moves below must not get these again.)
  const plainEarly = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`);
  assert.deepEqual(
    plainEarly.body.value.map((x: any) => x.status),
    ['InProgress', 'InProgress'],
  );
  const mineEarly = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/listSynchronizations`, { token: eve });
  assert.deepEqual(
    mineEarly.body.value.map((x: any) => [x.synchronizationId, x.status, x.consumerEmail]),
    [
      [sync2.body.synchronizationId, 'InProgress', undefined],
      [sync.body.synchronizationId, 'InProgress', undefined],
    ],
  );

  // 60 s later the incremental run (30 s) is done, the full one (120 s) still running.
  await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 60 }) });
  const mid = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`, { query: { $filter: "status eq 'Succeeded'" } });
  assert.deepEqual(
    mid.body.value.map((x: any) => x.synchronizationId),
    [sync2.body.synchronizationId],
  );
  assert.equal(mid.body.value[0].durationMs, 30000);
  // The default listing (no $filter, no $orderby: read without the SQL that completes due runs) says the same as an ordered one.
  const plain = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`);
  const byStart = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`, { query: { $orderby: 'startTime desc' } });
  const byId = (r: any) => new Map(r.body.value.map((x: any) => [x.synchronizationId, x]));
  assert.deepEqual(byId(plain), byId(byStart));
  const plainRuns = byId(plain) as Map<string, any>;
  assert.equal(plainRuns.get(sync2.body.synchronizationId).status, 'Succeeded');
  assert.equal(plainRuns.get(sync2.body.synchronizationId).message, 'Synchronization completed.');
  assert.equal(plainRuns.get(sync2.body.synchronizationId).durationMs, 30000);
  assert.equal(plainRuns.get(sync.body.synchronizationId).status, 'InProgress');
  assert.equal(plainRuns.get(sync.body.synchronizationId).endTime, undefined);
  const mineMid = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/listSynchronizations`, { token: eve });
  assert.deepEqual(
    mineMid.body.value.map((x: any) => [x.synchronizationId, x.status, x.endTime === undefined, x.durationMs, x.consumerEmail]),
    [
      [sync2.body.synchronizationId, 'Succeeded', false, 30000, undefined],
      [sync.body.synchronizationId, 'InProgress', true, undefined, undefined],
    ],
  );
  // A run without an end time sorts last ascending and first descending (both databases).
  const asc = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`, { query: { $orderby: 'endTime asc' } });
  assert.deepEqual(
    asc.body.value.map((x: any) => x.synchronizationId),
    [sync2.body.synchronizationId, sync.body.synchronizationId],
  );
  const desc = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`, { query: { $orderby: 'endTime desc' } });
  // The provider's budget header counts down by one per list (the consumer's calls count on the consumer's subscription).
  const left = [asc, desc].map((r) => Number(r.headers.get('x-vendor-ratelimit-remaining-subscription-reads')));
  assert.ok(Number.isInteger(left[0]) && left[0]! > 0, String(left[0]));
  assert.equal(left[1], left[0]! - 1);
  assert.deepEqual(
    desc.body.value.map((x: any) => x.synchronizationId),
    [sync.body.synchronizationId, sync2.body.synchronizationId],
  );
  const running = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`, { query: { $filter: 'endTime eq null' } });
  assert.deepEqual(
    running.body.value.map((x: any) => x.status),
    ['InProgress'],
  );
  await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 120 }) });
  const done = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`);
  assert.deepEqual(
    done.body.value.map((x: any) => x.status),
    ['Succeeded', 'Succeeded'],
  );
  const f = done.body.value.find((x: any) => x.synchronizationId === sync.body.synchronizationId);
  assert.equal(f.durationMs, 120000);
  assert.equal(Date.parse(f.endTime) - Date.parse(f.startTime), 120000);

  // Survives a restart.
  await s.restart();
  const after = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`);
  assert.equal(after.body.value.length, 2);
  assert.equal((await call('GET', `${eveRg}/eve-acct/shareSubscriptions/orders-sub`, { token: eve })).status, 200);
  // A new run shows in the next default listing of both sides (the pages just read are not answered again).
  const consumerBefore = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/listSynchronizations`, { token: eve });
  assert.equal(consumerBefore.body.value.length, 2);
  const sync3 = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/synchronize`, { token: eve, body: { synchronizationMode: 'Incremental' } });
  assert.equal(sync3.status, 202);
  const withThird = await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`);
  assert.deepEqual(withThird.body.value.map((x: any) => x.status).sort(), ['InProgress', 'Succeeded', 'Succeeded']);
  const consumerAfter = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/listSynchronizations`, { token: eve });
  assert.ok(consumerAfter.body.value.some((x: any) => x.synchronizationId === sync3.body.synchronizationId));

  // Deleting the share removes its runs; the consumer's synchronize then fails.
  const del = await call('DELETE', `${acctPath}/provider-acct/shares/orders`);
  assert.equal(del.status, 200);
  // The definition's 200 is an OperationResponse.
  assert.equal(del.body.status, 'Succeeded');
  assert.ok(!Number.isNaN(Date.parse(del.body.endTime)));
  assert.equal((await call('GET', `${acctPath}/provider-acct/shares/orders`)).status, 404);
  const orphan = await call('POST', `${eveRg}/eve-acct/shareSubscriptions/orders-sub/synchronize`, { token: eve });
  assert.equal(orphan.status, 409);
  // A share made again under the same name has no runs (the kept pages of the deleted one are gone).
  assert.equal((await call('PUT', `${acctPath}/provider-acct/shares/orders`, { body: { properties: { shareKind: 'CopyBased' } } })).status, 201);
  assert.deepEqual((await call('POST', `${acctPath}/provider-acct/shares/orders/listSynchronizations`)).body, { value: [] });
  const delAcct = await call('DELETE', `${acctPath}/provider-acct`);
  assert.equal(delAcct.status, 200);
  assert.equal(delAcct.body.status, 'Succeeded');
  assert.equal((await call('DELETE', `${acctPath}/provider-acct`)).status, 204);
  const accts = await call('GET', acctPath);
  assert.deepEqual(
    accts.body.value.map((x: any) => x.name),
    ['stratus-share'],
  );
});

test('a reset restores the demo set', async () => {
  await call('PUT', `${acctPath}/temp-acct`, { body: { location: 'eastus', identity: { type: 'SystemAssigned' } } });
  const reset = await s.control(`/_stratus/reset`, { method: 'POST' });
  assert.equal(reset.status, 200);
  assert.equal((await call('GET', `${acctPath}/temp-acct`)).status, 404);
  const { runs } = await listAll(salesPath);
  assert.equal(runs.length, demo.length);
});

test('concurrent acceptances of one invitation: exactly one share subscription', async () => {
  await call('PUT', `${acctPath}/race-provider`, { body: { location: 'eastus', identity: { type: 'SystemAssigned' } } });
  await call('PUT', `${acctPath}/race-provider/shares/s1`, { body: { properties: {} } });
  const inv = await call('PUT', `${acctPath}/race-provider/shares/s1/invitations/to-admin`, { body: { properties: { targetEmail: 'ADMIN@stratus.test' } } });
  const invitationId = inv.body.properties.invitationId;
  await call('PUT', `${acctPath}/race-consumer`, { body: { location: 'eastus', identity: { type: 'SystemAssigned' } } });
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => call('PUT', `${acctPath}/race-consumer/shareSubscriptions/sub-${i}`, { body: { properties: { invitationId, sourceShareLocation: 'eastus' } } })),
  );
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((x) => x === 201).length, 1, statuses.join(','));
  assert.ok(statuses.every((x) => x === 201 || x === 409), statuses.join(','));
  // Concurrent creates of one account: one 201, never a 500.
  const accts = await Promise.all(Array.from({ length: 6 }, () => call('PUT', `${acctPath}/race-same`, { body: { location: 'eastus', identity: { type: 'SystemAssigned' } } })));
  const a = accts.map((r) => r.status);
  assert.equal(a.filter((x) => x === 201).length, 1, a.join(','));
  assert.ok(a.every((x) => x === 201 || x === 200 || x === 409), a.join(','));
});

test('a write body of another media type → 415 DataShareError, nothing changed (a form body used to PATCH as empty)', async () => {
  const before = await call('GET', `${acctPath}/stratus-share`);
  for (const [method, path, type, body] of [
    ['PATCH', `${acctPath}/stratus-share`, 'application/x-www-form-urlencoded', 'tags=x'],
    ['PUT', `${acctPath}/stratus-share/shares/formshare`, 'application/xml', '<share/>'],
    ['PUT', `${acctPath}/formacct`, 'text/plain', '{"location":"westus","identity":{"type":"SystemAssigned"}}'],
  ] as const) {
    const res = await fetch(`${s.url}${path}?api-version=${api}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': type }, body });
    const b = (await res.json()) as any;
    assert.equal(res.status, 415, `${method} ${path} ${JSON.stringify(b)}`);
    assert.equal(b.error.code, 'UnsupportedMediaType');
    assert.equal(b.error.additionalInfo, undefined);
  }
  assert.equal((await call('GET', `${acctPath}/stratus-share/shares/formshare`)).status, 404);
  assert.equal((await call('GET', `${acctPath}/formacct`)).status, 404);
  assert.deepEqual((await call('GET', `${acctPath}/stratus-share`)).body.systemData, before.body.systemData);
  // application/json with a charset and a +json type are JSON.
  const ok = await fetch(`${s.url}${acctPath}/stratus-share?api-version=${api}`, { method: 'PATCH', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/merge-patch+json; charset=utf-8' }, body: '{"tags":{"k":"v"}}' });
  assert.equal(ok.status, 200);
  assert.deepEqual(((await ok.json()) as any).tags, { k: 'v' });
});

test('a name holding an encoded slash cannot address another resource: 400 InvalidResourceName, nothing deleted', async () => {
  for (const [method, path] of [
    ['GET', `${acctPath}/stratus-share%2Fshares%2Fsales`],
    ['DELETE', `${acctPath}/stratus-share%2Fshares%2Fsales`],
    ['GET', `${acctPath}/stratus-share%2Fshares%2Fsales/shares`],
    ['DELETE', `${salesPath.replace(/\/sales$/u, '')}/sales%2Finvitations%2Fnone`],
  ] as const) {
    const r = await call(method, path);
    assert.equal(r.status, 400, `${method} ${path} ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, 'InvalidResourceName');
  }
  assert.equal((await call('GET', salesPath)).status, 200);
});

test('NUL in a path name or a body string, and a non-int32 durationMs in $filter → 400, never a database error', async () => {
  const nulName = await call('GET', `${acctPath}/%00`);
  assert.equal(nulName.status, 400);
  assert.equal(nulName.body.error.code, 'InvalidResourceName');
  for (const [path, body, target] of [
    [`${salesPath}/invitations/nulinvite`, { properties: { targetEmail: 'a\u0000@example.com' } }, 'properties.targetEmail'],
    [`${acctPath}/stratus-share/shareSubscriptions/nulsub`, { properties: { invitationId: '\u0000', sourceShareLocation: 'westus' } }, 'properties.invitationId'],
    [`${acctPath}/stratus-share/shares/nulshare`, { properties: { description: 'ok', terms: 't' }, tags: { ['k\u0000']: 'v' } }, 'tags.k\u0000'],
  ] as const) {
    const r = await call('PUT', path, { body });
    assert.equal(r.status, 400, `${path} ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, 'InvalidRequestContent');
    assert.equal(r.body.error.target, target);
  }
  // The invitation's target ids are GUIDs (a longer value was a PostgreSQL 500).
  const longIds = await call('PUT', `${salesPath}/invitations/longids`, { body: { properties: { targetActiveDirectoryId: 'x'.repeat(64), targetObjectId: 'y'.repeat(64) } } });
  assert.equal(longIds.status, 400, JSON.stringify(longIds.body));
  assert.equal(longIds.body.error.target, 'properties.targetActiveDirectoryId');
  const badObject = await call('PUT', `${salesPath}/invitations/longids`, { body: { properties: { targetActiveDirectoryId: '9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01', targetObjectId: 'not-a-guid' } } });
  assert.equal(badObject.status, 400);
  assert.equal(badObject.body.error.target, 'properties.targetObjectId');
  for (const f of ['durationMs gt 1.5', 'durationMs gt 99999999999999999999999', 'durationMs lt -2147483649']) {
    const r = await call('POST', `${salesPath}/listSynchronizations`, { query: { $filter: f } });
    assert.equal(r.status, 400, `${f} ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, 'InvalidFilter');
    assert.match(r.body.error.message, /at position 14: The number /u);
  }
  // A forged skip token holding NUL is refused like any bad token.
  const forged = Buffer.from(JSON.stringify({ a: '\u0000' })).toString('base64url');
  for (const path of [acctPath, `${acctPath}/stratus-share/shares`]) {
    const r = await call('GET', path, { query: { $skipToken: forged } });
    assert.equal(r.status, 400, `${path} ${JSON.stringify(r.body)}`);
    assert.equal(r.body.error.code, 'InvalidSkipToken');
  }
  const edge = await call('POST', `${salesPath}/listSynchronizations`, { query: { $filter: 'durationMs le 2147483647' } });
  assert.equal(edge.status, 200);
});


test('the published Shares_ListSynchronizations example, field by field (filter under `filter`, headers, run keys)', async (t) => {
  const dir = examplesDir(t);
  const ex = readExample(dir, 'Shares_ListSynchronizations.json');
  assert.equal(ex.parameters['api-version'], api);
  const exRun = ex.responses['200'].body.value[0];
  // The example filters on consumerTenantName under the key `filter`; the same shape on a demo consumer.
  const tenantName = demo.find((r) => r.consumerTenantName)!.consumerTenantName!;
  const res = await fetch(`${s.url}${salesPath}/listSynchronizations?api-version=${api}&filter=${encodeURIComponent(`consumerTenantName eq '${tenantName}'`)}`, { method: 'POST', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(res.status, 200);
  for (const h of Object.keys(ex.responses['200'].headers)) assert.ok(res.headers.get(h), `header ${h}`);
  assert.equal(res.headers.get('X-Content-Type-Options'), 'nosniff');
  assert.match(res.headers.get('x-vendor-ratelimit-remaining-subscription-reads')!, /^\d+$/u);
  const body = (await res.json()) as any;
  assert.ok(body.value.length > 0);
  assert.ok(body.value.every((r: any) => r.consumerTenantName === tenantName));
  // Top-level keys are the example's (no nextLink on a last page); a completed run has every key of the example's run, same types.
  if (!body.nextLink) assert.deepEqual(Object.keys(body).sort(), Object.keys(ex.responses['200'].body).sort());
  const run = body.value.find((r: any) => r.endTime !== undefined);
  for (const [k, v] of Object.entries(exRun)) {
    assert.ok(k in run, `field ${k}`);
    assert.equal(typeof run[k], typeof v, `type of ${k}`);
  }
  assert.ok(['Incremental', 'FullSync'].includes(run.synchronizationMode));
  assert.ok(!Number.isNaN(Date.parse(run.startTime)) && !Number.isNaN(Date.parse(run.endTime)));
});

test('accounts are listed by subscription across resource groups, keyset-paged; the user without roles gets 403', async () => {
  const subPath = `/subscriptions/${demoSubscription.id}/providers/Vendor.DataShare/accounts`;
  const otherRg = `/subscriptions/${demoSubscription.id}/resourceGroups/stratus-network/providers/Vendor.DataShare/accounts/net-share`;
  const created = await call('PUT', otherRg, { body: { location: 'westus', identity: { type: 'SystemAssigned' } } });
  assert.ok(created.status === 201 || created.status === 200, JSON.stringify(created.body));
  const names: string[] = [];
  let r = await call('GET', subPath);
  for (;;) {
    assert.equal(r.status, 200, JSON.stringify(r.body));
    names.push(...r.body.value.map((a: any) => a.name));
    if (!r.body.nextLink) break;
    assert.ok(r.body.nextLink.startsWith(`${s.url}${subPath}?`) && r.body.nextLink.includes('api-version='));
    r = await call('GET', r.body.nextLink);
  }
  assert.ok(names.includes('stratus-share'));
  assert.ok(names.includes('net-share'));
  assert.equal(new Set(names).size, names.length);
  const denied = await call('GET', subPath, { token: user });
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error.code, 'AuthorizationFailed');
});
