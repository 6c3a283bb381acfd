/**
 * Snapshots and the complete reset (issue 28 items 4–7), on SQLite and PostgreSQL: a reset puts
 * the clock and the fault rules back with the rows; a snapshot → writes of several kinds
 * (resource manager, mail through the official mail client, the directory, the clock, fault
 * rules) → restore leaves none of the writes and the clock back; the snapshot routes' errors.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities, tokenRequest, userToken } from './helpers/auth.ts';
import { graphClient, mailScopes } from './helpers/mail.ts';
import { demoSubscription } from '../src/seed/demo.ts';

const json = { 'content-type': 'application/json' };
const armApi = '2024-10-23';
const accounts = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts`;

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

async function clock(): Promise<{ now: string; offsetMs: number }> {
  return (await (await s.control('/_stratus/clock')).json()) as any;
}

async function moveClock(body: unknown): Promise<void> {
  const r = await s.control('/_stratus/clock', { method: 'POST', headers: json, body: JSON.stringify(body) });
  assert.equal(r.status, 200, await r.text());
}

async function arm(method: string, path: string, token: string, body?: unknown): Promise<number> {
  const r = await fetch(`${s.url}${path}?api-version=${armApi}`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? json : {}) }, body: body ? JSON.stringify(body) : undefined });
  await r.arrayBuffer();
  return r.status;
}

test('a reset puts back the clock and the fault rules with the rows', async () => {
  await moveClock({ advanceSeconds: 7200 });
  const rule = await s.control('/_stratus/faults', { method: 'POST', headers: json, body: JSON.stringify({ match: { path: '/nowhere' }, effect: { status: 503 } }) });
  assert.equal(rule.status, 201);
  assert.ok((await clock()).offsetMs >= 7_200_000);
  const reset = await s.control('/_stratus/reset', { method: 'POST' });
  assert.equal(reset.status, 200);
  assert.equal((await clock()).offsetMs, 0, 'the demo world runs on the machine clock');
  assert.deepEqual(((await (await s.control('/_stratus/faults')).json()) as any).value, [], 'the fault rules are gone');
  // Moving back past the world's start works too, and a reset undoes it.
  await moveClock({ now: '2021-06-01T00:00:00Z' });
  assert.match((await clock()).now, /^2021-06-01T00:0/);
  assert.equal((await s.control('/_stratus/reset', { method: 'POST' })).status, 200);
  assert.equal((await clock()).offsetMs, 0);
});

test('snapshot → writes of several kinds → restore: the writes are gone and the clock is back', async () => {
  await moveClock({ advanceSeconds: 600 });
  const savedClock = Date.parse((await clock()).now);
  const saved = await s.control('/_stratus/snapshots', { method: 'POST', headers: json, body: JSON.stringify({ name: 'before-writes' }) });
  const info = (await saved.json()) as any;
  assert.equal(saved.status, 201, JSON.stringify(info));
  assert.equal(info.name, 'before-writes');
  assert.ok(info.rows > 100, `the demo world's rows are in it (${info.rows})`);
  assert.match(saved.headers.get('location') ?? '', /\/_stratus\/snapshots\/before-writes$/);

  // Writes: a resource-manager resource, a mail message (official client), a password, the clock, a fault rule.
  const admin = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  assert.equal(await arm('PUT', `${accounts}/snap-acct`, admin, { location: 'westus', properties: { sku: { name: 'Basic' } } }), 201);
  const mailToken = await userToken(s.url, identities.user, mailScopes);
  const created = await graphClient(s.url, mailToken).api('/me/messages').post({ subject: 'written after the snapshot' });
  assert.ok(created.id);
  const changed = await s.control(`/_stratus/directory/users/${encodeURIComponent(identities.user.username)}/password`, { method: 'POST', headers: json, body: JSON.stringify({ password: 'Another-Secret-42' }) });
  assert.equal(changed.status, 204);
  await moveClock({ advanceSeconds: 86400 * 3 });
  assert.equal((await s.control('/_stratus/faults', { method: 'POST', headers: json, body: JSON.stringify({ match: { path: '/nowhere' }, effect: { status: 500 } }) })).status, 201);

  const restored = await s.control('/_stratus/snapshots/before-writes/restore', { method: 'POST' });
  const restoredBody = (await restored.json()) as any;
  assert.equal(restored.status, 200, JSON.stringify(restoredBody));
  assert.equal(restoredBody.restored, 'before-writes');

  const now = Date.parse((await clock()).now);
  assert.ok(now >= savedClock && now < savedClock + 60_000, 'the clock is back at the snapshot time');
  const admin2 = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  assert.equal(await arm('GET', `${accounts}/snap-acct`, admin2), 404, 'the automation account is gone');
  assert.equal(await arm('GET', `${accounts}/stratus-automation`, admin2), 200, 'the demo account is still there');
  const newPassword = await tokenRequest(s.url, { grant_type: 'password', username: identities.user.username, password: 'Another-Secret-42', scope: mailScopes.join(' ') });
  assert.equal(newPassword.status, 400, 'the password set after the snapshot no longer works');
  const mailToken2 = await userToken(s.url, identities.user, mailScopes); // the old password works again
  const found = await graphClient(s.url, mailToken2).api('/me/messages').filter("subject eq 'written after the snapshot'").get();
  assert.equal(found.value.length, 0, 'the message is gone');
  assert.deepEqual(((await (await s.control('/_stratus/faults')).json()) as any).value, [], 'the fault rules are gone');

  // The snapshot is kept: a second restore works the same; list and delete.
  assert.equal(await arm('PUT', `${accounts}/snap-acct-2`, admin2, { location: 'westus', properties: { sku: { name: 'Basic' } } }), 201);
  assert.equal((await s.control('/_stratus/snapshots/before-writes/restore', { method: 'POST' })).status, 200);
  assert.equal(await arm('GET', `${accounts}/snap-acct-2`, admin2), 404);
  const list = (await (await s.control('/_stratus/snapshots')).json()) as any;
  assert.deepEqual(list.value.map((x: any) => x.name), ['before-writes'], 'the world snapshot is not listed');
  assert.equal((await s.control('/_stratus/snapshots/before-writes', { method: 'DELETE' })).status, 204);
  assert.deepEqual(((await (await s.control('/_stratus/snapshots')).json()) as any).value, []);
  assert.equal((await s.control('/_stratus/reset', { method: 'POST' })).status, 200);
});

test('snapshot routes: a taken name, an unknown name and an invalid name are refused and change nothing', async () => {
  const post = (name: unknown) => s.control('/_stratus/snapshots', { method: 'POST', headers: json, body: JSON.stringify({ name }) });
  assert.equal((await post('one')).status, 201);
  const again = await post('one');
  assert.equal(again.status, 409);
  assert.match(((await again.json()) as any).detail, /snapshot named 'one' exists/);
  for (const bad of ['', '$world', '../x', 'a b', 'x'.repeat(65)]) {
    const r = await post(bad);
    assert.equal(r.status, 400, bad);
  }
  const missing = await s.control('/_stratus/snapshots/nope/restore', { method: 'POST' });
  assert.equal(missing.status, 404);
  assert.match(((await missing.json()) as any).detail, /No snapshot 'nope'/);
  assert.equal((await s.control('/_stratus/snapshots/nope', { method: 'DELETE' })).status, 404);
  assert.equal((await s.control('/_stratus/snapshots/$world', { method: 'DELETE' })).status, 400, 'the world snapshot cannot be deleted');
  assert.deepEqual(((await (await s.control('/_stratus/snapshots')).json()) as any).value.map((x: any) => x.name), ['one']);
  assert.equal((await s.control('/_stratus/snapshots/one', { method: 'DELETE' })).status, 204);
});
