/**
 * Automation webhooks (spec resource-manager §2.5, §4.6, §7, §8, §9; reference §6): accounts
 * and runbooks, the webhook life cycle (generateUri → PUT 201 with the uri → GET with `""`
 * → list with `null` → PUT 200 → PATCH → invoke without a bearer → job in the account's
 * jobs list, `lastInvokedTime` moved → DELETE), validation (subscription id, resource group,
 * names, body), 404 `ResourceNotFound` with the standard message, 403 for the user without
 * roles, paging to the last page and a write surviving a restart — with a plain `fetch`
 * client over HTTPS (the official `@azure/arm-automation` 11.x modular client needs Node 22).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { examplesDir, readExample } from './helpers/reference.ts';
import { demoSubscription } from '../src/seed/demo.ts';
import { demoWebhookToken } from '../src/seed/demo.ts';
import { automationPageSize, jobRunMs } from '../src/services/automation/rules.ts';

const api = '2024-10-23';
const rgPath = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}`;
const accounts = `${rgPath}/providers/Vendor.Automation/automationAccounts`;
const demoAcct = `${accounts}/stratus-automation`;

let s: TestServer;
let admin: string;
let user: string;
let sp: string;
let mi: string;

interface Res {
  status: number;
  body: any;
  headers: Headers;
  text: string;
}

async function call(method: string, pathOrUrl: string, opts: { token?: string | null; body?: unknown; query?: Record<string, string>; raw?: string } = {}): Promise<Res> {
  const token = opts.token === undefined ? admin : opts.token;
  let url = pathOrUrl.startsWith('https://') ? pathOrUrl : `${s.url}${pathOrUrl}`;
  if (!pathOrUrl.startsWith('https://')) url += `?${new URLSearchParams({ 'api-version': api, ...(opts.query ?? {}) }).toString()}`;
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, headers: res.headers, text };
}

async function invoke(uri: string, body?: unknown) {
  const res = await fetch(uri, { method: 'POST', headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
}

async function advance(seconds: number) {
  await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: seconds }) });
}

before(async () => {
  s = await startTestServer();
  const scope = ['api://stratus/arm/user_impersonation'];
  admin = await userToken(s.url, identities.admin, scope);
  user = await userToken(s.url, identities.user, scope);
  sp = await appToken(s.url, 'arm', identities.sp);
  mi = await appToken(s.url, 'arm', identities.mi);
});
after(async () => {
  await s?.close();
});

test('the demo account, runbook and webhook exist; the demo webhook can be invoked', async () => {
  const a = await call('GET', demoAcct);
  assert.equal(a.status, 200);
  assert.equal(a.body.type, 'Vendor.Automation/AutomationAccounts');
  const rb = await call('GET', `${demoAcct}/runbooks/nightly-report`);
  assert.equal(rb.status, 200);
  assert.equal(rb.body.properties.state, 'Published');
  const w = await call('GET', `${demoAcct}/webhooks/nightly-hook`);
  assert.equal(w.status, 200);
  assert.equal(w.body.id, `${demoAcct}/webhooks/nightly-hook`);
  assert.equal(w.body.type, 'Vendor.Automation/AutomationAccounts/Webhooks');
  assert.equal(w.body.properties.uri, '');
  assert.equal(w.body.properties.lastInvokedTime, null);
  assert.deepEqual(w.body.properties.runbook, { name: 'nightly-report' });
  assert.equal(w.body.systemData.createdBy, 'admin@stratus.test');
  for (const k of ['creationTime', 'expiryTime', 'isEnabled', 'lastModifiedBy', 'lastModifiedTime', 'parameters', 'runOn']) assert.ok(k in w.body.properties, k);
  const r = await invoke(`${s.url}/automation/webhooks?token=${demoWebhookToken}`, { report: 'x' });
  assert.equal(r.status, 202);
  assert.equal(r.body.JobIds.length, 1);
  const after = await call('GET', `${demoAcct}/webhooks/nightly-hook`);
  assert.notEqual(after.body.properties.lastInvokedTime, null);
  const job = await call('GET', `${demoAcct}/jobs/${r.body.JobIds[0]}`);
  assert.equal(job.status, 200);
  assert.equal(job.body.properties.runbook.name, 'nightly-report');
  assert.equal(job.body.properties.parameters.ReportDate, 'yesterday');
  assert.deepEqual(JSON.parse(job.body.properties.parameters.WebhookData).RequestBody, '{"report":"x"}');
});

test('webhook life cycle: generateUri, PUT 201/200, GET, list, PATCH, invoke, jobs, DELETE, restart', async () => {
  const acct = await call('PUT', `${accounts}/ops-account`, { body: { location: 'eastus', properties: { sku: { name: 'Basic' } } } });
  assert.equal(acct.status, 201);
  assert.equal(acct.body.properties.sku.name, 'Basic');
  assert.equal((await call('PUT', `${accounts}/ops-account`, { body: { location: 'eastus' } })).status, 200);
  const rb = await call('PUT', `${accounts}/ops-account/runbooks/cleanup`, { body: { properties: { runbookType: 'PowerShell', description: 'Cleans up' } } });
  assert.equal(rb.status, 201);
  const gen = await call('POST', `${accounts}/ops-account/webhooks/generateUri`);
  assert.equal(gen.status, 200);
  assert.equal(typeof gen.body, 'string');
  assert.ok(gen.body.startsWith(`${s.url}/automation/webhooks?token=`), gen.body);
  const uri = gen.body as string;

  const created = await call('PUT', `${accounts}/ops-account/webhooks/hook-1`, {
    body: { name: 'hook-1', properties: { isEnabled: true, uri, expiryTime: '2030-01-01T00:00:00Z', runbook: { name: 'cleanup' }, parameters: { Mode: 'fast' } } },
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.body.properties.uri, uri);
  assert.equal(created.body.properties.lastInvokedTime, null);
  assert.equal(created.body.properties.expiryTime, '2030-01-01T00:00:00.000Z');
  assert.equal(created.body.properties.runOn, null);
  assert.equal(created.body.systemData.createdByType, 'User');
  assert.equal(created.body.properties.lastModifiedBy, 'admin@stratus.test');

  const got = await call('GET', `${accounts}/ops-account/webhooks/hook-1`);
  assert.equal(got.status, 200);
  assert.equal(got.body.properties.uri, '');
  assert.deepEqual(got.body.properties.parameters, { Mode: 'fast' });
  const listed = await call('GET', `${accounts}/ops-account/webhooks`);
  assert.equal(listed.body.value.length, 1);
  assert.equal(listed.body.value[0].properties.uri, null);

  // PUT again: 200, uri not echoed; the same uri may be resent, another is refused.
  const updated = await call('PUT', `${accounts}/ops-account/webhooks/hook-1`, { body: { properties: { isEnabled: true, uri, runbook: { name: 'cleanup' }, runOn: 'workers', parameters: { Mode: 'fast' } } } });
  assert.equal(updated.status, 200, updated.text);
  assert.equal(updated.body.properties.uri, '');
  assert.equal(updated.body.properties.runOn, 'workers');
  assert.equal(updated.body.properties.creationTime, created.body.properties.creationTime);
  assert.equal(updated.body.systemData.createdAt, created.body.systemData.createdAt);
  const other = (await call('POST', `${accounts}/ops-account/webhooks/generateUri`)).body;
  const changed = await call('PUT', `${accounts}/ops-account/webhooks/hook-1`, { body: { properties: { uri: other, runbook: { name: 'cleanup' } } } });
  assert.equal(changed.status, 400);

  // PATCH: disable; invoking a disabled webhook is refused.
  await advance(5);
  const patched = await call('PATCH', `${accounts}/ops-account/webhooks/hook-1`, { body: { properties: { isEnabled: false, description: 'paused' } }, token: sp });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.properties.isEnabled, false);
  assert.equal(patched.body.properties.description, 'paused');
  assert.equal(patched.body.systemData.lastModifiedByType, 'Application');
  assert.equal(patched.body.systemData.createdBy, 'admin@stratus.test');
  assert.ok(patched.body.systemData.lastModifiedAt > created.body.systemData.lastModifiedAt);
  assert.equal((await invoke(uri)).status, 400);
  await call('PATCH', `${accounts}/ops-account/webhooks/hook-1`, { body: { properties: { isEnabled: true } } });

  // Invoke (no bearer): a job, lastInvokedTime moves; the job completes with the clock.
  const inv = await invoke(uri, { hello: 'world' });
  assert.equal(inv.status, 202);
  const jobId = inv.body.JobIds[0];
  const afterInvoke = await call('GET', `${accounts}/ops-account/webhooks/hook-1`);
  assert.ok(afterInvoke.body.properties.lastInvokedTime);
  const jobs = await call('GET', `${accounts}/ops-account/jobs`);
  assert.equal(jobs.status, 200);
  assert.equal(jobs.body.value.length, 1);
  assert.equal(jobs.body.value[0].properties.jobId, jobId);
  assert.equal(jobs.body.value[0].properties.status, 'Running');
  assert.equal(jobs.body.value[0].properties.runOn, 'workers');
  assert.equal(jobs.body.value[0].properties.creationTime, afterInvoke.body.properties.lastInvokedTime);
  await advance(jobRunMs / 1000 + 1);
  const job = await call('GET', `${accounts}/ops-account/jobs/${jobId}`);
  assert.equal(job.body.properties.status, 'Completed');
  assert.equal(job.body.properties.startedBy, 'hook-1');
  assert.equal(job.body.properties.parameters.Mode, 'fast');
  assert.equal((await call('GET', `${accounts}/ops-account/jobs/${'0'.repeat(8)}-0000-4000-8000-000000000000`)).status, 404);

  // A write survives a restart.
  await s.restart();
  const again = await call('GET', `${accounts}/ops-account/webhooks/hook-1`);
  assert.equal(again.status, 200);
  assert.equal(again.body.properties.runOn, 'workers');
  assert.equal(again.body.properties.lastInvokedTime, afterInvoke.body.properties.lastInvokedTime);
  assert.equal((await invoke(uri)).status, 202);
  assert.equal((await call('GET', `${accounts}/ops-account/jobs`)).body.value.length, 2);

  // Expiry: a webhook past its expiry time is refused.
  const shortUri = (await call('POST', `${accounts}/ops-account/webhooks/generateUri`)).body;
  const soon = new Date(Date.parse((await (await s.control(`/_stratus/clock`)).json() as any).now) + 60_000).toISOString();
  assert.equal((await call('PUT', `${accounts}/ops-account/webhooks/short`, { body: { properties: { isEnabled: true, uri: shortUri, expiryTime: soon, runbook: { name: 'cleanup' } } } })).status, 201);
  assert.equal((await invoke(shortUri)).status, 202);
  await advance(61);
  assert.equal((await invoke(shortUri)).status, 400);

  // DELETE: 200, then 404; the uri no longer works.
  const del = await call('DELETE', `${accounts}/ops-account/webhooks/hook-1`);
  assert.equal(del.status, 200);
  const gone = await call('GET', `${accounts}/ops-account/webhooks/hook-1`);
  assert.equal(gone.status, 404);
  assert.equal(gone.body.error.code, 'ResourceNotFound');
  assert.equal(gone.body.error.message, "The Resource 'Vendor.Automation/automationAccounts/ops-account/webhooks/hook-1' under resource group 'stratus-rg' was not found.");
  assert.equal((await call('DELETE', `${accounts}/ops-account/webhooks/hook-1`)).status, 404);
  assert.equal((await invoke(uri)).status, 404);
  // Deleting the account takes its webhooks and jobs.
  assert.equal((await call('DELETE', `${accounts}/ops-account`)).status, 200);
  assert.equal((await invoke(shortUri)).status, 404);
  assert.equal((await call('GET', `${accounts}/ops-account`)).status, 404);
});

test('webhook validation', async () => {
  await call('PUT', `${accounts}/val-account`, { body: { location: 'eastus' } });
  await call('PUT', `${accounts}/val-account/runbooks/rb`, { body: { properties: { runbookType: 'Python3' } } });
  const uri = (await call('POST', `${accounts}/val-account/webhooks/generateUri`)).body;
  const put = (name: string, body: unknown) => call('PUT', `${accounts}/val-account/webhooks/${name}`, { body });
  const cases: [string, unknown, string][] = [
    ['w', { properties: { isEnabled: true, runbook: { name: 'rb' } } }, 'properties.uri'],
    ['w', { properties: { uri: 'https://example.test/other?token=abc', runbook: { name: 'rb' } } }, 'properties.uri'],
    ['w', { properties: { uri } }, 'properties.runbook'],
    ['w', { properties: { uri, runbook: { name: 'nope' } } }, 'properties.runbook.name'],
    ['w', { properties: { uri, runbook: { name: 'rb' }, isEnabled: 'yes' } }, 'properties.isEnabled'],
    ['w', { properties: { uri, runbook: { name: 'rb' }, expiryTime: 'tomorrow' } }, 'properties.expiryTime'],
    ['w', { properties: { uri, runbook: { name: 'rb' }, expiryTime: '2001-01-01T00:00:00Z' } }, 'properties.expiryTime'],
    ['w', { properties: { uri, runbook: { name: 'rb' }, parameters: { a: 1 } } }, 'properties.parameters'],
    ['w', { name: 'other', properties: { uri, runbook: { name: 'rb' } } }, 'name'],
    ['w', {}, 'properties'],
    ['bad*name', { properties: { uri, runbook: { name: 'rb' } } }, 'webhookName'],
  ];
  for (const [name, body, target] of cases) {
    const r = await put(name, body);
    assert.equal(r.status, 400, `${JSON.stringify(body)} → ${r.text}`);
    assert.equal(r.body.error.code, 'InvalidParameter');
    assert.equal(r.body.error.target, target, JSON.stringify(body));
  }
  const badJson = await call('PUT', `${accounts}/val-account/webhooks/w`, { raw: '{"properties":' });
  assert.equal(badJson.status, 400);
  assert.ok(badJson.body.error.code);
  // The same uri cannot serve two webhooks.
  assert.equal((await put('first', { properties: { uri, runbook: { name: 'rb' } } })).status, 201);
  const dup = await put('second', { properties: { uri, runbook: { name: 'rb' } } });
  assert.equal(dup.status, 409);
  // Defaults: disabled, expiry one year out.
  const first = await call('GET', `${accounts}/val-account/webhooks/first`);
  assert.equal(first.body.properties.isEnabled, false);
  // Account and runbook validation.
  assert.equal((await call('PUT', `${accounts}/ab`, { body: { location: 'eastus' } })).body.error.target, 'automationAccountName');
  assert.equal((await call('PUT', `${accounts}/val-account2`, { body: {} })).body.error.target, 'location');
  assert.equal((await call('PUT', `${accounts}/val-account2`, { body: { location: 'x', properties: { sku: { name: 'Gold' } } } })).body.error.target, 'properties.sku.name');
  assert.equal((await call('PUT', `${accounts}/val-account/runbooks/rb2`, { body: { properties: { runbookType: 'Cobol' } } })).body.error.target, 'properties.runbookType');
  assert.equal((await call('PUT', `${accounts}/val-account/runbooks/1rb`, { body: { properties: { runbookType: 'Python3' } } })).body.error.target, 'runbookName');
  // Bodies above 512 KB are refused.
  const big = await fetch(`${s.url}/automation/webhooks?token=${demoWebhookToken}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(600 * 1024) });
  assert.equal(big.status, 413);
  // Invocation with a malformed token.
  assert.equal((await invoke(`${s.url}/automation/webhooks?token=short`)).status, 400);
  assert.equal((await invoke(`${s.url}/automation/webhooks?token=${'x'.repeat(43)}`)).status, 404);
});

test('gateway rules: api-version, subscription id, resource group, unknown account, tokens and roles', async () => {
  const hook = `${demoAcct}/webhooks/nightly-hook`;
  const miss = await fetch(`${s.url}${hook}`, { headers: { authorization: `Bearer ${admin}` } });
  assert.equal(miss.status, 400);
  assert.equal(((await miss.json()) as any).error.code, 'MissingApiVersionParameter');
  const empty = await fetch(`${s.url}${hook}?api-version=`, { headers: { authorization: `Bearer ${admin}` } });
  assert.equal(empty.status, 400);
  const old = await call('GET', hook, { query: { 'api-version': '2017-05-15-preview' } });
  assert.equal(old.status, 400);
  assert.equal(old.body.error.code, 'InvalidApiVersionParameter');
  assert.match(old.body.error.message, /'2024-10-23,2015-10-31'/);
  const sub = await call('GET', `/subscriptions/subid/resourceGroups/stratus-rg/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook`);
  assert.equal(sub.status, 400);
  assert.equal(sub.body.error.code, 'InvalidSubscriptionId');
  const rgBad = await call('GET', `/subscriptions/${demoSubscription.id}/resourceGroups/bad*rg/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook`);
  assert.equal(rgBad.status, 400);
  assert.equal(rgBad.body.error.code, 'InvalidResourceGroup');
  const rgLong = await call('GET', `/subscriptions/${demoSubscription.id}/resourceGroups/${'r'.repeat(91)}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook`);
  assert.equal(rgLong.status, 400);
  assert.equal(rgLong.body.error.code, 'InvalidResourceGroup');
  const rg90 = await call('GET', `/subscriptions/${demoSubscription.id}/resourceGroups/${'r'.repeat(90)}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook`);
  assert.equal(rg90.status, 404);
  assert.equal(rg90.body.error.code, 'ResourceGroupNotFound');
  const acct = await call('GET', `${accounts}/no-such-account/webhooks/nightly-hook`);
  assert.equal(acct.status, 404);
  assert.equal(acct.body.error.code, 'ResourceNotFound');
  assert.equal(acct.body.error.message, "The Resource 'Vendor.Automation/automationAccounts/no-such-account' under resource group 'stratus-rg' was not found.");
  const noTok = await call('GET', hook, { token: null });
  assert.equal(noTok.status, 401);
  assert.equal(noTok.body.error.code, 'AuthenticationFailed');
  const forbidden = await call('GET', hook, { token: user });
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.body.error.code, 'AuthorizationFailed');
  assert.equal((await call('POST', `${demoAcct}/webhooks/generateUri`, { token: user })).status, 403);
  assert.equal((await call('GET', `${demoAcct}/jobs`, { token: user })).status, 403);
  // Permission is checked before the body: the user without roles gets 403 even for a bad body.
  const badBody = await call('PUT', `${demoAcct}/webhooks/new-hook`, { token: user, raw: '{not json' });
  assert.equal(badBody.status, 403);
  assert.equal(badBody.body.error.code, 'AuthorizationFailed');
  // Another tenant does not see the subscription.
  const eve = await userToken(s.url, identities.eve, ['api://stratus/arm/user_impersonation']);
  const foreign = await call('GET', hook, { token: eve });
  assert.equal(foreign.status, 404);
  assert.equal(foreign.body.error.code, 'SubscriptionNotFound');
  // The managed identity is a Reader: it reads but does not write.
  assert.equal((await call('GET', hook, { token: mi })).status, 200);
  const miWrite = await call('PATCH', hook, { token: mi, body: { properties: { isEnabled: false } } });
  assert.equal(miWrite.status, 403);
  assert.equal(miWrite.body.error.code, 'AuthorizationFailed');
  assert.equal((await call('DELETE', hook, { token: mi })).status, 403);
});

test('webhook list: $filter and paging to the last page; jobs list paging', async () => {
  await call('PUT', `${accounts}/many-account`, { body: { location: 'eastus' } });
  await call('PUT', `${accounts}/many-account/runbooks/a`, { body: { properties: { runbookType: 'PowerShell' } } });
  await call('PUT', `${accounts}/many-account/runbooks/b`, { body: { properties: { runbookType: 'PowerShell' } } });
  const n = automationPageSize + 5;
  const uris: string[] = [];
  for (let i = 0; i < n; i++) {
    const uri = (await call('POST', `${accounts}/many-account/webhooks/generateUri`)).body;
    uris.push(uri);
    const r = await call('PUT', `${accounts}/many-account/webhooks/hook-${String(i).padStart(2, '0')}`, { body: { properties: { uri, isEnabled: i % 3 !== 0, runbook: { name: i % 2 ? 'a' : 'b' } } } });
    assert.equal(r.status, 201);
  }
  const names: string[] = [];
  let r = await call('GET', `${accounts}/many-account/webhooks`);
  let pages = 0;
  for (;;) {
    assert.equal(r.status, 200);
    pages++;
    names.push(...r.body.value.map((w: any) => w.name));
    if (!r.body.nextLink) break;
    assert.ok(r.body.nextLink.startsWith(`${s.url}${accounts}/many-account/webhooks?api-version=${api}`));
    r = await call('GET', r.body.nextLink);
  }
  assert.equal(pages, 2);
  assert.deepEqual(
    names,
    Array.from({ length: n }, (_, i) => `hook-${String(i).padStart(2, '0')}`),
  );
  const f = await call('GET', `${accounts}/many-account/webhooks`, { query: { $filter: "properties/runbook/name eq 'a' and properties/isEnabled eq true" } });
  assert.deepEqual(
    f.body.value.map((w: any) => w.name),
    Array.from({ length: n }, (_, i) => i).filter((i) => i % 2 === 1 && i % 3 !== 0).map((i) => `hook-${String(i).padStart(2, '0')}`),
  );
  const badF = await call('GET', `${accounts}/many-account/webhooks`, { query: { $filter: 'properties/colour eq 1' } });
  assert.equal(badF.status, 400);
  assert.equal(badF.body.error.target, '$filter');

  // Jobs: every enabled webhook invoked once, listed newest first across pages.
  const started: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) continue;
    const inv = await invoke(uris[i]!);
    assert.equal(inv.status, 202);
    started.push(inv.body.JobIds[0]);
  }
  const jobIds: string[] = [];
  let j = await call('GET', `${accounts}/many-account/jobs`);
  for (;;) {
    jobIds.push(...j.body.value.map((x: any) => x.properties.jobId));
    if (!j.body.nextLink) break;
    j = await call('GET', j.body.nextLink);
  }
  assert.deepEqual(jobIds, [...started].reverse());
});

test('a reset restores the demo set', async () => {
  await invoke(`${s.url}/automation/webhooks?token=${demoWebhookToken}`);
  const reset = await s.control(`/_stratus/reset`, { method: 'POST' });
  assert.equal(reset.status, 200);
  const w = await call('GET', `${demoAcct}/webhooks/nightly-hook`);
  assert.equal(w.status, 200);
  assert.equal(w.body.properties.lastInvokedTime, null);
  assert.deepEqual((await call('GET', `${demoAcct}/jobs`)).body.value, []);
  assert.equal((await call('GET', `${accounts}/many-account`)).status, 404);
  assert.equal((await invoke(`${s.url}/automation/webhooks?token=${demoWebhookToken}`)).status, 202);
});

test('concurrent creates of one webhook: one 201, the rest 200 or 409, never a 500', async () => {
  await call('PUT', `${accounts}/race-account`, { body: { location: 'eastus' } });
  await call('PUT', `${accounts}/race-account/runbooks/rb`, { body: { properties: { runbookType: 'PowerShell' } } });
  const uri = (await call('POST', `${accounts}/race-account/webhooks/generateUri`)).body;
  const results = await Promise.all(Array.from({ length: 8 }, () => call('PUT', `${accounts}/race-account/webhooks/racer`, { body: { properties: { uri, runbook: { name: 'rb' }, isEnabled: true } } })));
  const statuses = results.map((r) => r.status);
  assert.equal(statuses.filter((x) => x === 201).length, 1, statuses.join(','));
  assert.ok(statuses.every((x) => x === 201 || x === 200 || x === 409), statuses.join(','));
  const listed = await call('GET', `${accounts}/race-account/webhooks`);
  assert.equal(listed.body.value.length, 1);
  assert.equal((await invoke(uri)).status, 202);
});

test('a write body of another media type → 415 UnsupportedMediaType, nothing changed (a form body used to PATCH as empty)', async () => {
  const hook = `${demoAcct}/webhooks/nightly-hook`;
  const before = await call('GET', hook);
  for (const [method, path, type, body] of [
    ['PATCH', hook, 'application/x-www-form-urlencoded', 'properties=x'],
    ['PUT', `${demoAcct}/runbooks/formbook`, 'application/xml', '<runbook/>'],
    ['PUT', `${accounts}/form-account`, 'text/plain', '{"location":"westus"}'],
  ] as const) {
    const res = await fetch(`${s.url}${path}?api-version=${api}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': type }, body });
    const b = (await res.json()) as any;
    assert.equal(res.status, 415, `${method} ${path} ${JSON.stringify(b)}`);
    assert.equal(b.error.code, 'UnsupportedMediaType');
  }
  assert.equal((await call('GET', `${demoAcct}/runbooks/formbook`)).status, 404);
  assert.equal((await call('GET', `${accounts}/form-account`)).status, 404);
  assert.deepEqual((await call('GET', hook)).body.systemData, before.body.systemData);
});

test('a name holding an encoded slash cannot address another resource: 400 InvalidParameter, nothing deleted', async () => {
  for (const [method, path] of [
    ['GET', `${accounts}/stratus-automation%2Frunbooks%2Fnightly-report`],
    ['DELETE', `${accounts}/stratus-automation%2Frunbooks%2Fnightly-report`],
    ['GET', `${accounts}/stratus-automation%2Frunbooks%2Fnightly-report/runbooks`],
    ['DELETE', `${demoAcct}/runbooks/nightly-report%2Fx`],
  ] as const) {
    const r = await call(method, path);
    assert.equal(r.status, 400, `${method} ${path} ${r.text}`);
    assert.equal(r.body.error.code, 'InvalidParameter');
  }
  assert.equal((await call('GET', `${demoAcct}/runbooks/nightly-report`)).status, 200);
});

test('NUL in a path name or a body string → 400 InvalidParameter naming it, never a database error', async () => {
  for (const path of [`${accounts}/%00`, `${demoAcct}/webhooks/%00`, `${demoAcct}/jobs/a%00`]) {
    const r = await call('GET', path);
    assert.equal(r.status, 400, `${path} ${r.text}`);
    assert.equal(r.body.error.code, 'InvalidParameter');
  }
  const put = await call('PUT', `${demoAcct}/webhooks/nulhook`, { body: { properties: { runbook: { name: 'nightly\u0000' }, uri: 'x' } } });
  assert.equal(put.status, 400, put.text);
  assert.equal(put.body.error.target, 'properties.runbook.name');
  const forged = Buffer.from(JSON.stringify({ a: '\u0000' })).toString('base64url');
  for (const path of [accounts, `${demoAcct}/webhooks`]) {
    const r = await call('GET', path, { query: { $skipToken: forged } });
    assert.equal(r.status, 400, `${path} ${r.text}`);
    assert.equal(r.body.error.target, '$skipToken');
  }
  for (const logActivityTrace of ['1', 1.5, -1, 1e308]) {
    const rb = await call('PUT', `${demoAcct}/runbooks/tracebook`, { body: { properties: { runbookType: 'Script', logActivityTrace } } });
    assert.equal(rb.status, 400, `${logActivityTrace} ${rb.text}`);
    assert.equal(rb.body.error.target, 'properties.logActivityTrace');
  }
  const patch = await call('PATCH', `${demoAcct}/webhooks/nightly-hook`, { body: { properties: { parameters: { ['k\u0000']: 'v' } } } });
  assert.equal(patch.status, 400, patch.text);
  assert.equal(patch.body.error.target, 'properties.parameters.k\u0000');
});

test('the published createOrUpdateWebhook and getWebhook examples, field by field', async (t) => {
  const dir = examplesDir(t);
  const example = (name: string) => readExample(dir, name);
  const create = example('createOrUpdateWebhook.json');
  const get = example('getWebhook.json');
  assert.equal(create.parameters['api-version'], api);
  assert.equal(get.parameters['api-version'], api);
  // The example's request body, with a uri from generateUri, the demo runbook and a future expiry.
  const uri = (await call('POST', `${demoAcct}/webhooks/generateUri`)).body as string;
  const req = structuredClone(create.parameters.parameters);
  req.name = 'ExampleWebhook';
  req.properties.uri = uri;
  req.properties.runbook.name = 'nightly-report';
  req.properties.expiryTime = '2099-03-29T22:18:13.7002872Z';
  const hook = `${demoAcct}/webhooks/ExampleWebhook`;
  const first = await call('PUT', hook, { body: req });
  assert.equal(first.status, 201, first.text);
  const again = await call('PUT', hook, { body: req });
  assert.equal(again.status, 200, again.text);
  for (const [status, ours] of [['201', first.body], ['200', again.body]] as const) {
    const ex = create.responses[status].body;
    // Every key of the example (top level and properties), plus systemData (spec §2.5).
    for (const k of Object.keys(ex)) assert.ok(k in ours, `${status}: ${k}`);
    for (const k of Object.keys(ex.properties)) assert.ok(k in ours.properties, `${status}: properties.${k}`);
    assert.equal(ours.type, ex.type);
    assert.equal(ours.id, `${demoAcct}/webhooks/ExampleWebhook`);
    assert.equal(ours.properties.isEnabled, ex.properties.isEnabled);
    assert.equal(ours.properties.lastInvokedTime, null);
    assert.equal(ours.properties.runOn, null);
    assert.equal(ours.properties.parameters, null);
    assert.equal(Date.parse(ours.properties.expiryTime), Date.parse(req.properties.expiryTime.replace(/(\.\d{3})\d+/u, '$1')));
    assert.ok(ours.systemData.createdAt && ours.systemData.lastModifiedAt);
  }
  // The 200 of an update does not echo the uri, as in the example; the 201 shows it once (issue: "returned only when created").
  assert.equal(again.body.properties.uri, '');
  assert.equal(first.body.properties.uri, uri);
  const read = await call('GET', hook);
  assert.equal(read.status, 200);
  for (const k of Object.keys(get.responses['200'].body)) assert.ok(k in read.body, `get: ${k}`);
  for (const [k, v] of Object.entries(get.responses['200'].body.properties)) {
    assert.ok(k in read.body.properties, `get: properties.${k}`);
    if (v === null) assert.equal(read.body.properties[k], null, `get: properties.${k} is null`);
  }
  assert.equal(read.body.properties.uri, get.responses['200'].body.properties.uri);
  assert.equal((await call('DELETE', hook)).status, 200);
});

test('kept webhook answers (issue 9): per caller, per api-version, and never past a role or webhook change', async () => {
  const { ArmStore } = await import('../src/services/arm/store.ts');
  const { roleIds } = await import('../src/services/arm/index.ts');
  const { demoTenant, demoUser } = await import('../src/seed/demo.ts');
  const hook = `${demoAcct}/webhooks/nightly-hook`;
  // The admin's answer is kept (read twice); the user, with no role, still gets 403 for the same URL.
  assert.equal((await call('GET', hook)).status, 200);
  const kept = await call('GET', hook);
  assert.equal(kept.status, 200);
  assert.equal(kept.body.name, 'nightly-hook');
  assert.match(kept.headers.get('content-type') ?? '', /^application\/json/);
  assert.ok(kept.headers.get('x-vendor-request-id'));
  assert.equal((await call('GET', hook, { token: user })).status, 403);
  // The older api-version's shape (no systemData) is its own answer, also when kept.
  for (let i = 0; i < 2; i++) {
    const old = await call('GET', hook, { query: { 'api-version': '2015-10-31' } });
    assert.equal(old.status, 200);
    assert.equal(old.body.systemData, undefined);
  }
  assert.ok((await call('GET', hook)).body.systemData);
  // A role given and taken away counts on the very next request.
  const arm = new ArmStore(s.server.ctx.store.db, s.server.ctx.cache);
  const id = crypto.randomUUID();
  await arm.addAssignment({ id, tenantId: demoTenant.id, scope: `/subscriptions/${demoSubscription.id}`, roleDefinitionId: roleIds.reader, principalId: demoUser.id, principalType: 'User' });
  assert.equal((await call('GET', hook, { token: user })).status, 200);
  assert.equal((await call('GET', hook, { token: user })).status, 200);
  assert.equal(await arm.deleteAssignment(id), true);
  assert.equal((await call('GET', hook, { token: user })).status, 403);
  // A change of the webhook is what the next read answers.
  const patched = await call('PATCH', hook, { body: { properties: { description: 'kept answers follow writes' } } });
  assert.equal(patched.status, 200);
  assert.equal((await call('GET', hook)).body.properties.description, 'kept answers follow writes');
  // No token, or a forged one: 401 whatever was kept.
  assert.equal((await call('GET', hook, { token: null })).status, 401);
  assert.equal((await call('GET', hook, { token: admin.slice(0, -4) + 'AAAA' })).status, 401);
});
