/**
 * Admin dataflows (spec analytics §2.1, §4.1, §5, §8; reference §1): listing, OData
 * `$filter` against answers computed from the seed, `$top`/`$skip`, access rules, tenant
 * isolation and the per-caller throttle with `Retry-After`.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { demoTenant, otherTenant } from '../src/seed/demo.ts';
import { demoWorkspace, tenantReaderApp } from '../src/seed/demo.ts';
import { demoDataflows, type DemoDataflow } from './helpers/demo-world.ts';
import { checkAdminAccess } from '../src/services/analytics/rules.ts';
import type { Principal } from '../src/core/identity/identity.ts';
import { ApiError } from '../src/core/errors/index.ts';

const path = '/v1.0/myorg/admin/dataflows';
const all = demoDataflows();
const demo = all.filter((d) => d.tenantId === demoTenant.id).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.objectId < b.objectId ? -1 : 1));
const ids = (xs: { objectId: string }[]) => xs.map((x) => x.objectId);

async function list(base: string, token: string | undefined, query = ''): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${base}${path}${query}`, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
const q = (filter: string) => `?$filter=${encodeURIComponent(filter)}`;

describe('admin dataflows', () => {
  let s: TestServer;
  let admin: string;
  before(async () => {
    s = await startTestServer();
    admin = await userToken(s.url, identities.admin, ['api://stratus/analytics/Tenant.Read.All']);
  });
  after(async () => {
    await s?.close();
  });

  test('the default budget is the spec §8 limit: 200 requests per hour', () => {
    assert.equal(s.config.settings.analyticsRequestsPerWindow, 200);
    assert.equal(s.config.settings.analyticsWindowSeconds, 3600);
  });

  test('the demo data: at least 200 dataflows across at least 5 workspaces, Stratus Demo among them', () => {
    assert.ok(demo.length >= 200);
    const ws = new Set(demo.map((d) => d.workspaceId));
    assert.ok(ws.size >= 5);
    assert.ok(ws.has(demoWorkspace.id));
  });

  test('an administrator lists every dataflow of the tenant: AdminDataflows with only the §2.1 fields and users []', async () => {
    const r = await list(s.url, admin);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    assert.ok(r.headers.get('requestid'));
    assert.equal(r.headers.get('cache-control'), 'no-store, must-revalidate, no-cache');
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(r.body['@odata.context'], `${s.url}/v1.0/myorg/admin/$metadata#dataflows`);
    assert.deepEqual(Object.keys(r.body).sort(), ['@odata.context', 'value']);
    assert.deepEqual(ids(r.body.value), ids(demo));
    const first = r.body.value[0];
    assert.deepEqual(Object.keys(first).sort(), ['configuredBy', 'description', 'modelUrl', 'name', 'objectId', 'users', 'workspaceId']);
    const seeded = demo[0]!;
    assert.deepEqual(first, { objectId: seeded.objectId, name: seeded.name, description: seeded.description, modelUrl: seeded.modelUrl, configuredBy: seeded.configuredBy, users: [], workspaceId: seeded.workspaceId });
    for (const d of r.body.value) assert.deepEqual(d.users, []);
  });

  const cases: [string, (d: DemoDataflow) => boolean][] = [
    ["contains(name,'sales')", (d) => d.name.toLowerCase().includes('sales')],
    ["startswith(name,'Payroll') and configuredBy eq 'li.wei@stratus.test'", (d) => d.name.toLowerCase().startsWith('payroll') && d.configuredBy === 'li.wei@stratus.test'],
    [`endswith(name,'apac') or workspaceId eq ${demoWorkspace.id.toUpperCase()}`, (d) => d.name.toLowerCase().endsWith('apac') || d.workspaceId === demoWorkspace.id],
    ["not contains(description,'crm')", (d) => !d.description.toLowerCase().includes('crm')],
    ["configuredBy ne 'admin@stratus.test' and configuredBy ne 'user@stratus.test'", (d) => d.configuredBy !== 'admin@stratus.test' && d.configuredBy !== 'user@stratus.test'],
    ["name eq 'Headcount - Staging'", (d) => d.name === 'Headcount - Staging'],
    ["name eq 'headcount - staging'", () => false],
    [`workspaceId eq '${demoWorkspace.id}' and (contains(name,'daily') or contains(name,'EMEA'))`, (d) => d.workspaceId === demoWorkspace.id && (d.name.toLowerCase().includes('daily') || d.name.toLowerCase().includes('emea'))],
    ["description eq ''", (d) => d.description === ''],
    [`objectId eq ${demo[17]!.objectId}`, (d) => d.objectId === demo[17]!.objectId],
    [`objectId eq '${demo[42]!.objectId}'`, (d) => d.objectId === demo[42]!.objectId],
  ];
  for (const [filter, pred] of cases) {
    test(`$filter=${filter} gives the known answer`, async () => {
      const expected = demo.filter(pred);
      const r = await list(s.url, admin, q(filter));
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(ids(r.body.value), ids(expected));
    });
  }

  test('the filters are not trivial: each matching set is a proper, non-empty subset (except the deliberate empty one)', () => {
    const sizes = cases.map(([, p]) => demo.filter(p).length);
    assert.ok(sizes.filter((n) => n > 0 && n < demo.length).length >= cases.length - 1, JSON.stringify(sizes));
  });

  test('$top and $skip page in a stable order, also with a filter', async () => {
    const r1 = await list(s.url, admin, '?$top=10');
    assert.deepEqual(ids(r1.body.value), ids(demo.slice(0, 10)));
    const r2 = await list(s.url, admin, '?$skip=10&$top=25');
    assert.deepEqual(ids(r2.body.value), ids(demo.slice(10, 35)));
    const r3 = await list(s.url, admin, `?$skip=${demo.length - 3}`);
    assert.deepEqual(ids(r3.body.value), ids(demo.slice(-3)));
    const r4 = await list(s.url, admin, '?$top=0');
    assert.deepEqual(r4.body.value, []);
    const sales = demo.filter((d) => d.name.toLowerCase().includes('sales'));
    const r5 = await list(s.url, admin, `${q("contains(name,'sales')")}&$skip=2&$top=3`);
    assert.deepEqual(ids(r5.body.value), ids(sales.slice(2, 5)));
    const r6 = await list(s.url, admin, `?$skip=${demo.length + 5}`);
    assert.deepEqual(r6.body.value, []);
  });

  test('a bad filter, an unknown property, a negative or non-numeric $top/$skip → 400 with the analytics error body', async () => {
    for (const query of [q('name eq'), q("foo eq 'x'"), q("contains(name,'x'"), q('name eq 5'), '?$top=-1', '?$skip=-5', '?$top=abc', '?$skip=1.5', '?$top=99999999999', '?$top=1&$top=2']) {
      const r = await list(s.url, admin, query);
      assert.equal(r.status, 400, query);
      assert.equal(r.body.error.code, 'BadRequest', query);
      assert.equal(typeof r.body.error.message, 'string');
      assert.equal(r.body.error['analytics.error'].code, 'BadRequest', query);
      assert.ok(r.headers.get('requestid'));
    }
    const pos = await list(s.url, admin, q("name eq 'a' and"));
    assert.match(pos.body.error.message, /position/);
  });

  test('malformed input never gives a 500: NUL characters, deep nesting, a repeated option under another case → 400', async () => {
    const queries = [
      q("name eq '\u0000'"),
      q("contains(name,'a\u0000')"),
      q("objectId eq 'a\u0000'"),
      q("name in ('\u0000')"),
      q('not '.repeat(1100) + "name eq 'a'"),
      q('('.repeat(2000) + "name eq 'a'" + ')'.repeat(2000)),
      q(Array(150).fill("name eq 'a'").join(' or ')),
      '?$TOP=1&$top=2',
      '?$skip=1&$Skip=2',
      `${q("name eq 'a'")}&$FILTER=${encodeURIComponent("name eq 'b'")}`,
    ];
    for (const query of queries) {
      const r = await list(s.url, admin, query);
      assert.equal(r.status, 400, query.slice(0, 80));
      assert.equal(r.body.error.code, 'BadRequest', query.slice(0, 80));
    }
    // Within the limits: a long but shallow expression, unicode literals, an option in upper case.
    const ok = await list(s.url, admin, q(Array(90).fill("name eq 'a'").join(' or ') + " or name eq 'Headcount - Staging'"));
    assert.equal(ok.status, 200);
    assert.deepEqual(ids(ok.body.value), ids(demo.filter((d) => d.name === 'Headcount - Staging')));
    const uni = await list(s.url, admin, q("contains(name,'𝔘ñí') or name eq 'Ünïcode'"));
    assert.equal(uni.status, 200);
    assert.deepEqual(uni.body.value, []);
    const upper = await list(s.url, admin, '?$TOP=2&$SKIP=1');
    assert.deepEqual(ids(upper.body.value), ids(demo.slice(1, 3)));
  });

  test('access: admin with Tenant.ReadWrite.All and a plain service principal are admitted', async () => {
    const rw = await userToken(s.url, identities.admin, ['api://stratus/analytics/Tenant.ReadWrite.All']);
    assert.equal((await list(s.url, rw, '?$top=1')).status, 200);
    const sp = await appToken(s.url, 'analytics');
    const r = await list(s.url, sp, '?$top=5');
    assert.equal(r.status, 200);
    assert.deepEqual(ids(r.body.value), ids(demo.slice(0, 5)));
    const mi = await appToken(s.url, 'analytics', identities.mi);
    assert.equal((await list(s.url, mi, '?$top=1')).status, 200);
  });

  test('access rule (spec §5) for principals the identity provider cannot mint: an admin without the scopes, an app with another analytics role', () => {
    const base: Principal = { tenantId: demoTenant.id, objectId: 'x', kind: 'user', appId: 'a', scopes: ['Tenant.Read.All'], roles: [], isTenantAdmin: true, audience: 'analytics', claims: {} };
    assert.doesNotThrow(() => checkAdminAccess(base));
    const refused = (p: Principal) => assert.throws(() => checkAdminAccess(p), (e: unknown) => e instanceof ApiError && e.status === 401 && e.code === 'AnalyticsNotAuthorizedException');
    refused({ ...base, scopes: [] });
    refused({ ...base, scopes: ['Mail.Read'] });
    refused({ ...base, isTenantAdmin: false });
    refused({ ...base, kind: 'app', scopes: [], roles: ['Tenant.ReadWrite.All'] });
    refused({ ...base, kind: 'app', scopes: [], roles: ['Dataset.Read.All'] });
    assert.doesNotThrow(() => checkAdminAccess({ ...base, kind: 'app', scopes: [], roles: [], isTenantAdmin: false }));
  });

  test('access: a non-admin user, a service principal holding Tenant.Read.All, a missing or foreign token → 401 AnalyticsNotAuthorizedException', async () => {
    const user = await userToken(s.url, identities.user, ['api://stratus/analytics/Tenant.Read.All']);
    const reader = await appToken(s.url, 'analytics', { clientId: tenantReaderApp.appId, clientSecret: tenantReaderApp.secret });
    const mailToken = await userToken(s.url, identities.admin, ['api://stratus/mail/Mail.Read']);
    for (const [who, token] of [['user', user], ['reader app', reader], ['none', undefined], ['mail audience', mailToken], ['garbage', 'not.a.jwt']] as const) {
      const r = await list(s.url, token);
      assert.equal(r.status, 401, who);
      assert.equal(r.body.error.code, 'AnalyticsNotAuthorizedException', who);
      assert.ok(r.body.error.message, who);
      // The observed body, field by field (reference examples/fabric-pbi-wopi/powerbi/observed-error-and-throttle-responses.json).
      assert.deepEqual(Object.keys(r.body), ['error'], who);
      assert.deepEqual(Object.keys(r.body.error).sort(), ['analytics.error', 'code', 'message'], who);
      assert.deepEqual(r.body.error['analytics.error'], { code: 'AnalyticsNotAuthorizedException', parameters: {}, details: [], exceptionCulprit: 1 }, who);
      assert.equal(r.body.value, undefined, who);
    }
    const noToken = await list(s.url, undefined);
    assert.match(noToken.headers.get('www-authenticate') ?? '', /^Bearer authorization_uri="https:\/\/[^"]+\/common\/oauth2\/authorize"$/);
    const garbage = await list(s.url, 'not.a.jwt');
    assert.match(garbage.headers.get('www-authenticate') ?? '', /^Bearer authorization_uri="https:\/\/[^"]+\/common\/oauth2\/authorize", error="invalid_token"$/);
  });

  test('tenant isolation: the other tenant\'s administrator sees only its own dataflows', async () => {
    const eve = await userToken(s.url, identities.eve, ['api://stratus/analytics/Tenant.Read.All']);
    const r = await list(s.url, eve);
    assert.equal(r.status, 200);
    const others = all.filter((d) => d.tenantId === otherTenant.id);
    assert.deepEqual(ids(r.body.value).sort(), ids(others).sort());
    const cross = await list(s.url, eve, q(`objectId eq ${demo[0]!.objectId}`));
    assert.deepEqual(cross.body.value, []);
    const mine = await list(s.url, admin, q("name eq 'Ledger Export'"));
    assert.deepEqual(mine.body.value, []);
  });

  test('an expired token → 401 TokenExpired with a Bearer challenge (runs last: it moves the clock)', async () => {
    const clock = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 2 * 3600 }) });
    assert.equal(clock.status, 200);
    const r = await list(s.url, admin);
    assert.equal(r.status, 401);
    assert.equal(r.body.error.code, 'TokenExpired');
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer /);
  });
});

describe('admin dataflows throttling', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ settings: { analyticsRequestsPerWindow: 3, analyticsWindowSeconds: 600 } });
  });
  after(async () => {
    await s?.close();
  });

  test('the request after the budget gets 429 with Retry-After; the window is per caller, survives a restart and ends by its expiry', async () => {
    const admin = await userToken(s.url, identities.admin, ['api://stratus/analytics/Tenant.Read.All']);
    const sp = await appToken(s.url, 'analytics');
    for (let i = 0; i < 3; i++) assert.equal((await list(s.url, admin, '?$top=1')).status, 200);
    const over = await list(s.url, admin, '?$top=1');
    assert.equal(over.status, 429);
    const retry = Number(over.headers.get('retry-after'));
    assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 600, String(retry));
    assert.match(over.body.message, new RegExp(`Retry in ${retry} seconds`));
    assert.ok(over.headers.get('requestid'));
    // The observed 429, field by field (reference examples/fabric-pbi-wopi/powerbi/observed-error-and-throttle-responses.json).
    assert.deepEqual(over.body, { message: `You have exceeded the amount of requests allowed in the current time frame and further requests will fail. Retry in ${retry} seconds.` });
    const observed: Record<string, string> = {
      'cache-control': 'no-store, must-revalidate, no-cache',
      pragma: 'no-cache',
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'content-type': 'application/json; charset=utf-8',
    };
    for (const [k, v] of Object.entries(observed)) assert.equal(over.headers.get(k), v, k);
    // Another caller has its own window.
    assert.equal((await list(s.url, sp, '?$top=1')).status, 200);
    // The window lives in the store: a restart does not end it.
    await s.restart();
    assert.equal((await list(s.url, admin, '?$top=1')).status, 429);
    // Only its expiry does.
    const clock = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: retry + 1 }) });
    assert.equal(clock.status, 200);
    assert.equal((await list(s.url, admin, '?$top=1')).status, 200);
  });

  test('the control-plane reset clears the windows and reloads the same demo dataflows and reader app', async () => {
    const admin = await userToken(s.url, identities.admin, ['api://stratus/analytics/Tenant.Read.All']);
    let status = 0;
    for (let i = 0; i < 5 && status !== 429; i++) status = (await list(s.url, admin, '?$top=1')).status;
    assert.equal(status, 429);
    const reset = await s.control(`/_stratus/reset`, { method: 'POST' });
    assert.equal(reset.status, 200);
    // The reset also put the clock back (the earlier test moved it): a token issued before is not valid yet.
    assert.equal((await list(s.url, admin)).status, 401);
    const r = await list(s.url, await userToken(s.url, identities.admin, ['api://stratus/analytics/Tenant.Read.All']));
    assert.equal(r.status, 200);
    assert.deepEqual(ids(r.body.value), ids(demo));
    const reader = await appToken(s.url, 'analytics', { clientId: tenantReaderApp.appId, clientSecret: tenantReaderApp.secret });
    assert.equal((await list(s.url, reader)).status, 401);
  });
});
