/**
 * The data share read budget (spec resource-manager §8; reference §1.4): every data share
 * response carries `x-vendor-ratelimit-remaining-subscription-reads`, counting down per
 * subscription within its window (a small window from `settings`); at zero the caller gets
 * 429 `DataShareError` with `Retry-After`, and the budget returns when the clock passes the
 * window.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities, userToken } from './helpers/auth.ts';
import { demoSubscription, otherSubscription } from '../src/seed/demo.ts';

const api = '2021-08-01';
const salesPath = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.DataShare/accounts/stratus-share/shares/sales`;

let s: TestServer;
let admin: string;
let eve: string;

async function post(path: string, token = admin) {
  const res = await fetch(`${s.url}${path}?api-version=${api}`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const body = (await res.json()) as any;
  return { status: res.status, body, remaining: res.headers.get('x-vendor-ratelimit-remaining-subscription-reads'), retryAfter: res.headers.get('retry-after') };
}

before(async () => {
  s = await startTestServer({ settings: { armReadsPerWindow: 5, armReadWindowSeconds: 60 } });
  const scope = ['api://stratus/arm/user_impersonation'];
  admin = await userToken(s.url, identities.admin, scope);
  eve = await userToken(s.url, identities.eve, scope);
});
after(async () => {
  await s?.close();
});

test('the header counts down per subscription, then 429 with Retry-After until the window passes', async () => {
  const seen: (string | null)[] = [];
  for (let i = 0; i < 5; i++) {
    const r = await post(`${salesPath}/listSynchronizations`);
    assert.equal(r.status, 200);
    seen.push(r.remaining);
  }
  assert.deepEqual(seen, ['4', '3', '2', '1', '0']);
  // A gateway rejection of the subscription's own tenant carries the remainder without counting.
  const badVersion = await fetch(`${s.url}${salesPath}/listSynchronizations?api-version=2018-11-01-preview`, { method: 'POST', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(badVersion.status, 400);
  assert.equal(badVersion.headers.get('x-vendor-ratelimit-remaining-subscription-reads'), '0');
  // An anonymous caller or another tenant learns nothing about the subscription's budget.
  const anon = await fetch(`${s.url}${salesPath}/listSynchronizations?api-version=${api}`, { method: 'POST' });
  assert.equal(anon.status, 401);
  assert.equal(anon.headers.get('x-vendor-ratelimit-remaining-subscription-reads'), null);
  const stranger = await post(`${salesPath}/listSynchronizations`, eve);
  assert.equal(stranger.status, 404);
  assert.equal(stranger.remaining, null);
  const limited = await post(`${salesPath}/listSynchronizations`);
  assert.equal(limited.status, 429);
  assert.equal(limited.body.error.code, 'TooManyRequests');
  assert.equal(limited.remaining, '0');
  const retry = Number(limited.retryAfter);
  assert.ok(retry >= 1 && retry <= 60, String(limited.retryAfter));
  // Another subscription has its own budget.
  const other = await post(`/subscriptions/${otherSubscription.id}/resourceGroups/${otherSubscription.resourceGroup}/providers/Vendor.DataShare/accounts/none/shares/none/listSynchronizations`, eve);
  assert.equal(other.status, 404);
  assert.equal(other.remaining, '4');
  // The window passes.
  await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: retry + 1 }) });
  // Once the window has passed, a rejection reads the full budget (peek of an expired window) without counting.
  const fresh = await fetch(`${s.url}${salesPath}/listSynchronizations?api-version=2018-11-01-preview`, { method: 'POST', headers: { authorization: `Bearer ${admin}` } });
  assert.equal(fresh.status, 400);
  assert.equal(fresh.headers.get('x-vendor-ratelimit-remaining-subscription-reads'), '5');
  const back = await post(`${salesPath}/listSynchronizations`);
  assert.equal(back.status, 200);
  assert.equal(back.remaining, '4');
});
