/**
 * Fault injection (issue 12 item 2): rules made through `/_stratus/faults` answer in the
 * family's envelope, and the official clients — the resource manager's pipeline through
 * `@azure/arm-compute` and the mail client's retry middleware — retry a 429 and a 503 and
 * then succeed. Seeded rules replay the same hits and misses.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ComputeManagementClient } from '@azure/arm-compute';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, staticCredential, userToken } from './helpers/auth.ts';
import { vendorNamespacePolicy } from './helpers/arm.ts';
import { graphClient, mailScopes } from './helpers/mail.ts';
import { demoSubscription } from '../src/seed/demo.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.close();
});

async function addRule(rule: unknown): Promise<any> {
  const r = await s.control('/_stratus/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rule) });
  assert.equal(r.status, 201, await r.clone().text());
  return r.json();
}
async function rules(): Promise<any[]> {
  return ((await (await s.control('/_stratus/faults')).json()) as any).value;
}

test('fault rules need the control key and a valid body (problem+json 400s)', async () => {
  const unauth = await fetch(`${s.url}/_stratus/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"effect":{"status":429}}' });
  assert.equal(unauth.status, 401);
  for (const body of [{}, { effect: { status: 404 } }, { effect: { status: 429 }, probability: 2 }, { effect: { delayMs: -1 } }, { effect: { reset: false } }, { effect: { status: 429 }, match: { family: 'nope' } }, { effect: { status: 503 }, extra: 1 }]) {
    const r = await s.control('/_stratus/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.match(r.headers.get('content-type') ?? '', /problem\+json/);
  }
  assert.equal((await s.control('/_stratus/faults/00000000-0000-0000-0000-000000000000', { method: 'DELETE' })).status, 404);
});

test('a 429 rule answers in each family envelope with Retry-After; the control plane is never hit', async () => {
  await addRule({ effect: { status: 429, retryAfterSeconds: 7 }, match: { path: '/**' } });
  const arm = await fetch(`${s.url}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01`);
  assert.equal(arm.status, 429);
  assert.equal(arm.headers.get('retry-after'), '7');
  assert.equal(arm.headers.get('x-vendor-ratelimit-remaining-subscription-reads'), '0');
  assert.equal(((await arm.json()) as any).error.code, 'TooManyRequests');
  const platform = await fetch(`${s.url}/v1/workspaces/00000000-0000-0000-0000-000000000000/eventstreams`, { method: 'POST' });
  assert.equal(platform.status, 429);
  const pb = (await platform.json()) as any;
  assert.equal(pb.isRetriable, true);
  assert.equal(typeof pb.requestId, 'string');
  const mail = await fetch(`${s.url}/v1.0/me/messages`);
  assert.equal(mail.status, 429);
  assert.equal(((await mail.json()) as any).error.code, 'TooManyRequests');
  const oauth = await fetch(`${s.url}/common/discovery/v2.0/keys`);
  assert.equal(oauth.status, 429);
  assert.equal(((await oauth.json()) as any).error, 'temporarily_unavailable');
  assert.equal((await fetch(`${s.url}/_stratus/health`)).status, 200);
  assert.equal((await s.control('/_stratus/clock')).status, 200);
  const [rule] = await rules();
  assert.equal(rule.hits, 4);
  assert.equal((await s.control('/_stratus/faults', { method: 'DELETE' })).status, 204);
  assert.deepEqual(await rules(), []);
});

test('the resource-manager client retries an injected 429 and a 503, then succeeds', async () => {
  const client = new ComputeManagementClient(staticCredential(() => appToken(s.url, 'arm')), demoSubscription.id, { endpoint: s.url });
  client.pipeline.addPolicy(vendorNamespacePolicy);
  for (const effect of [{ status: 429, retryAfterSeconds: 0 }, { status: 503, retryAfterSeconds: 0 }]) {
    const rule = await addRule({ match: { family: 'arm', method: 'GET', path: '/subscriptions/*/providers/*/skus' }, effect, count: 1 });
    let n = 0;
    for await (const sku of client.resourceSkus.list({ filter: "location eq 'westeurope'" })) {
      assert.ok(sku.name);
      if (++n >= 3) break;
    }
    assert.equal(n, 3, `listed after the injected ${effect.status}`);
    // The rule was spent by the client's first attempt (count 1), so the client did meet it.
    assert.equal((await rules()).find((r) => r.id === rule.id), undefined);
  }
});

test('the mail client retries an injected 429 and a 503, then succeeds', async () => {
  const token = await userToken(s.url, identities.user, mailScopes);
  const client = graphClient(s.url, token);
  for (const effect of [{ status: 429, retryAfterSeconds: 0 }, { status: 503, retryAfterSeconds: 0 }]) {
    const rule = await addRule({ match: { family: 'mail', method: 'GET', path: '/v1.0/me/messages' }, effect, count: 2 });
    const page = await client.api('/me/messages').select('subject').top(2).get();
    assert.ok(Array.isArray(page.value) && page.value.length > 0);
    assert.equal((await rules()).find((r) => r.id === rule.id), undefined, 'both injected answers were met and retried');
  }
});

test('a seeded probability rule replays the same hits and misses; delay and reset effects', async () => {
  const token = await appToken(s.url, 'arm');
  const url = `${s.url}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=location eq 'westus'`;
  async function sequence(): Promise<number[]> {
    const rule = await addRule({ match: { family: 'arm' }, effect: { status: 500 }, probability: 0.5, seed: 12345 });
    assert.equal(rule.seed, 12345);
    const out: number[] = [];
    for (let i = 0; i < 16; i++) out.push((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status);
    await s.control(`/_stratus/faults/${rule.id}`, { method: 'DELETE' });
    return out;
  }
  const first = await sequence();
  assert.ok(first.includes(500) && first.includes(200), first.join(','));
  assert.deepEqual(await sequence(), first);

  await addRule({ match: { family: 'arm' }, effect: { delayMs: 300 }, count: 1 });
  const t0 = performance.now();
  assert.equal((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  assert.ok(performance.now() - t0 >= 290, 'the answer waited for the delay');

  await addRule({ match: { family: 'arm' }, effect: { reset: true }, count: 1 });
  await assert.rejects(fetch(url, { headers: { authorization: `Bearer ${token}`, connection: 'close' } }));
  assert.equal((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status, 200);
});
