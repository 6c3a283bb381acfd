/**
 * Scale-out on PostgreSQL (issue 9 item 9): two Stratus instances on ONE database schema, each
 * with its own caches, workers and ports, called alternately as a round-robin balancer would.
 * Proves: a write on one is read on the other at once (also through the gateway's caches: a new
 * or removed role assignment, a created or deleted subscription); the request budget is shared;
 * a long-running operation completes once; a mail change is notified once; signing keys are
 * shared (also a key created after the other instance started).
 *
 * PostgreSQL only: with SQLite one process owns the data file, so there is no second instance
 * to prove anything about. The suite is skipped there with a message; CI runs it on PostgreSQL.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { mailScopes } from './helpers/mail.ts';
import { advance, call, uniqueName } from './helpers/platform.ts';
import { ArmStore } from '../src/services/arm/store.ts';
import { platformDemoWorkspace } from '../src/seed/demo.ts';
import { demoAdmin, demoSubscription, demoTenant, demoUser } from '../src/seed/demo.ts';
import { roleIds } from '../src/services/arm/index.ts';
import { withDeadline } from './helpers/wait.ts';

const onPostgres = !!process.env.STRATUS_TEST_DATABASE_URL;
const skipReason = onPostgres ? false : 'scale-out is a PostgreSQL feature: set STRATUS_TEST_DATABASE_URL (CI runs the suite on PostgreSQL too)';

const budget = 20;
const settings = { platformProvisioningDelaySeconds: 20, platformRequestsPerWindow: budget, platformWindowSeconds: 3600, mailNotificationPollMs: 50 };
const skus = (sub: string) => `/subscriptions/${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'westus'")}`;

async function get(base: string, path: string, token: string): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: r.status, body };
}

/** A notification receiver on loopback: answers the validation handshake, records notifications, lets a test wait for one. */
class Receiver {
  readonly notifications: any[] = [];
  private waiters: { pred: () => boolean; resolve: () => void }[] = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const token = new URL(req.url!, 'http://x').searchParams.get('validationToken');
      if (token !== null) {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      this.notifications.push(...body.value);
      res.writeHead(202).end();
      this.waiters = this.waiters.filter((w) => (w.pred() ? (w.resolve(), false) : true));
    });
  });
  url = '';
  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  /** Resolves once `pred` holds (checked on every notification): an event, not a timer. */
  until(pred: () => boolean, what = 'the receiver condition'): Promise<void> {
    if (pred()) return Promise.resolve();
    return withDeadline(new Promise((resolve) => this.waiters.push({ pred, resolve })), what);
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/**
 * What the app does before it answers a request that wrote (its `onSend` hook): waits until
 * every live instance applied this instance's writes. The tests below write through the store
 * directly, so they wait here as a write request would before its answer.
 */
async function answered(s: TestServer): Promise<void> {
  if (s.server.ctx.cache.unsettled()) await s.server.ctx.cache.settle(3000);
}

describe('two instances on one PostgreSQL schema', { skip: skipReason }, () => {
  let a: TestServer;
  let b: TestServer;
  let armApp: string;
  let armAdmin: string;
  let armUser: string;

  before(async () => {
    a = await startTestServer({ settings });
    // Behind a balancer both instances answer for one public origin (the token issuer).
    b = await startTestServer({ settings, shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    armApp = await appToken(a.url, 'arm');
    armAdmin = await userToken(a.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    armUser = await userToken(b.url, identities.user, ['api://stratus/arm/user_impersonation']);
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('a write on one instance is read on the other at once', async () => {
    const account = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/${uniqueName('acct').replace('_', '-')}`;
    const q = '?api-version=2024-10-23';
    assert.equal((await get(b.url, account + q, armApp)).status, 404);
    const put = await fetch(a.url + account + q, { method: 'PUT', headers: { authorization: `Bearer ${armApp}`, 'content-type': 'application/json' }, body: JSON.stringify({ location: 'eastus', properties: { sku: { name: 'Basic' } } }) });
    assert.equal(put.status, 201);
    const read = await get(b.url, account + q, armApp);
    assert.equal(read.status, 200);
    assert.equal(read.body.properties.sku.name, 'Basic');
    // B holds the account in its resource cache now; a change made on A is what B answers next.
    const update = await fetch(a.url + account + q, { method: 'PUT', headers: { authorization: `Bearer ${armApp}`, 'content-type': 'application/json' }, body: JSON.stringify({ location: 'eastus', tags: { tier: 'changed-on-a' }, properties: { sku: { name: 'Basic' } } }) });
    assert.equal(update.status, 200);
    assert.equal((await get(b.url, account + q, armApp)).body.tags?.tier, 'changed-on-a');
    const del = await fetch(a.url + account + q, { method: 'DELETE', headers: { authorization: `Bearer ${armApp}` } });
    assert.equal(del.status, 200);
    assert.equal((await get(b.url, account + q, armApp)).status, 404);
  });

  test('a role assignment made or removed on one instance counts on the very next request to the other', async () => {
    // B answers (and caches) "no role" for the user first.
    const refused = await get(b.url, skus(demoSubscription.id), armUser);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'AuthorizationFailed');
    const arm = new ArmStore(a.server.ctx.store.db, a.server.ctx.cache);
    const id = crypto.randomUUID();
    await arm.addAssignment({ id, tenantId: demoTenant.id, scope: `/subscriptions/${demoSubscription.id}`, roleDefinitionId: roleIds.reader, principalId: demoUser.id, principalType: 'User' });
    await answered(a);
    const allowed = await get(b.url, skus(demoSubscription.id), armUser);
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.ok(allowed.body.value.length > 0);
    assert.equal((await get(a.url, skus(demoSubscription.id), armUser)).status, 200);
    assert.equal(await arm.deleteAssignment(id), true);
    await answered(a);
    assert.equal((await get(b.url, skus(demoSubscription.id), armUser)).status, 403);
    assert.equal((await get(a.url, skus(demoSubscription.id), armUser)).status, 403);
  });

  test('a subscription created or deleted on one instance is seen by the other at once', async () => {
    const sub = crypto.randomUUID();
    const missing = await get(b.url, skus(sub), armAdmin);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'SubscriptionNotFound');
    const arm = new ArmStore(a.server.ctx.store.db, a.server.ctx.cache);
    // Under the management group where the admin is Owner (tenant root): access through the chain.
    await arm.addSubscription({ subscriptionId: sub, tenantId: demoTenant.id, displayName: 'scale-out', state: 'Enabled', managementGroup: 'stratus-platform' });
    await answered(a);
    assert.equal((await get(b.url, skus(sub), armAdmin)).status, 200);
    assert.equal((await get(a.url, skus(sub), armAdmin)).status, 200);
    assert.equal(await arm.deleteSubscription(sub), true);
    await answered(a);
    const gone = await get(b.url, skus(sub), armAdmin);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, 'SubscriptionNotFound');
    assert.equal((await get(a.url, skus(sub), armAdmin)).status, 404);
  });

  test('signing keys are shared: a token from A verifies on B, also one signed with a key A created after B started', async () => {
    assert.equal((await get(b.url, skus(demoSubscription.id), armApp)).status, 200);
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const kid = `scale-${crypto.randomUUID().slice(0, 8)}`;
    await a.server.ctx.store.db
      .insertInto('signing_keys')
      .values({
        kid,
        private_jwk: JSON.stringify({ ...(await exportJWK(privateKey)), kid, alg: 'RS256' }),
        public_jwk: JSON.stringify({ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig', kty: 'RSA' }),
        created_at: new Date().toISOString(),
      })
      .execute();
    const token = await new SignJWT(decodeJwt(armApp)).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid }).sign(privateKey);
    assert.equal((await get(b.url, skus(demoSubscription.id), token)).status, 200);
    const keysRes = await fetch(`${b.url}/${demoTenant.id}/discovery/v2.0/keys`);
    assert.equal(keysRes.status, 200);
    const jwks = (await keysRes.json()) as { keys: { kid: string }[] };
    assert.ok(Array.isArray(jwks.keys), 'the JWKS has a keys array');
    assert.ok(jwks.keys.some((k) => k.kid === kid), 'B publishes the new key');
    // A forged signature with a known kid is still refused on both.
    const forged = token.slice(0, token.lastIndexOf('.') + 1) + Buffer.from('x'.repeat(256)).toString('base64url');
    assert.equal((await get(b.url, skus(demoSubscription.id), forged)).status, 401);
  });

  test('the request budget is shared by the instances', async () => {
    const token = await userToken(a.url, identities.admin, ['api://stratus/platform/Item.ReadWrite.All']);
    const path = `/v1/workspaces/${platformDemoWorkspace.id}/eventstreams`;
    let allowed = 0;
    const seen: number[] = [];
    for (let i = 0; i < budget + 10; i++) {
      const r = await call(i % 2 === 0 ? a.url : b.url, 'GET', path, token);
      seen.push(r.status);
      if (r.status === 429) break;
      allowed++;
    }
    assert.equal(seen.at(-1), 429, `statuses: ${seen.join(',')}`);
    assert.ok(allowed >= budget && allowed <= budget + 1, `allowed ${allowed} of a shared budget of ${budget}`);
    // Both instances refuse now.
    assert.equal((await call(a.url, 'GET', path, token)).status, 429);
    assert.equal((await call(b.url, 'GET', path, token)).status, 429);
  });

  test('a long-running operation completes once, whichever instance is polled', async () => {
    const sp = await appToken(a.url, 'platform');
    const ws = platformDemoWorkspace.id;
    // B reads the workspace first (its caches: the workspace, the role, no pending operation).
    assert.equal((await call(b.url, 'GET', `/v1/workspaces/${ws}/eventstreams`, sp)).status, 200);
    const name = uniqueName('scale');
    const created = await call(a.url, 'POST', `/v1/workspaces/${ws}/eventstreams`, sp, { displayName: name });
    assert.equal(created.status, 202, created.text);
    const location = created.headers.get('location')!;
    const running = await call(b.url, 'GET', location, sp);
    assert.equal(running.body.status, 'Running');
    await advance(a, 21);
    // B's listing completes the due operation although B cached "nothing pending" before A's write.
    const listedB = await call(b.url, 'GET', `/v1/workspaces/${ws}/eventstreams`, sp);
    const mine = listedB.body.value.filter((x: any) => x.displayName === name);
    assert.equal(mine.length, 1, JSON.stringify(listedB.body));
    const [doneA, doneB] = await Promise.all([call(a.url, 'GET', location, sp), call(b.url, 'GET', location, sp)]);
    assert.equal(doneA.body.status, 'Succeeded');
    assert.deepEqual(doneB.body, doneA.body);
    const listedA = await call(a.url, 'GET', `/v1/workspaces/${ws}/eventstreams`, sp);
    assert.equal(listedA.body.value.filter((x: any) => x.displayName === name).length, 1);
    const ops = await a.server.ctx.store.db.selectFrom('platform_operations').select(['status']).where('id', '=', created.headers.get('x-vendor-operation-id')!).execute();
    assert.deepEqual(ops.map((o: any) => o.status), ['Succeeded']);
  });

  test('a mail change is notified once, whichever instance wrote it', async () => {
    const rx = new Receiver();
    await rx.start();
    try {
      const mail = await userToken(a.url, identities.user, mailScopes);
      const expirationDateTime = new Date(Date.now() + 3600_000).toISOString();
      const subRes = await fetch(`${a.url}/v1.0/subscriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' },
        body: JSON.stringify({ changeType: 'created,updated', notificationUrl: rx.url, resource: 'me/messages', expirationDateTime, clientState: 'scale' }),
      });
      assert.equal(subRes.status, 201, await subRes.clone().text());
      const sub = await subRes.json();
      // The change is written through B; both workers run on the one log.
      const draft = await fetch(`${b.url}/v1.0/me/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' },
        body: JSON.stringify({ subject: 'scale-out', toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] }),
      });
      assert.equal(draft.status, 201);
      const msg = await draft.json();
      const forMsg = (type: string) => rx.notifications.filter((n) => n.subscriptionId === sub.id && n.changeType === type && n.resourceData.id === msg.id);
      await rx.until(() => forMsg('created').length > 0);
      // A later change through A, delivered after the first: by then a duplicate of the first would have come too.
      const patched = await fetch(`${a.url}/v1.0/me/messages/${msg.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'scale-out 2' }) });
      assert.equal(patched.status, 200);
      await rx.until(() => forMsg('updated').length > 0);
      assert.equal(forMsg('created').length, 1);
      assert.equal(forMsg('updated').length, 1);
      assert.equal((await fetch(`${b.url}/v1.0/subscriptions/${sub.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${mail}` } })).status, 204);
    } finally {
      await rx.stop();
    }
  });

  test('a mail answer kept on one instance follows a write made on the other', async () => {
    const mail = await userToken(a.url, identities.user, mailScopes);
    const created = await fetch(`${a.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'kept on b' }) });
    const msg = await created.json();
    const page = '/v1.0/me/mailFolders/drafts/messages?$select=subject&$top=100';
    // Read twice on B: the second answer is B's kept text.
    for (let i = 0; i < 2; i++) {
      assert.equal((await get(b.url, `/v1.0/me/messages/${msg.id}`, mail)).body.subject, 'kept on b');
      assert.ok((await get(b.url, page, mail)).body.value.some((m: any) => m.subject === 'kept on b'));
    }
    const patched = await fetch(`${a.url}/v1.0/me/messages/${msg.id}`, { method: 'PATCH', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'changed on a' }) });
    assert.equal(patched.status, 200);
    assert.equal((await get(b.url, `/v1.0/me/messages/${msg.id}`, mail)).body.subject, 'changed on a');
    assert.ok((await get(b.url, page, mail)).body.value.some((m: any) => m.subject === 'changed on a'));
  });

  test('a webhook answer kept on one instance follows a write made on the other', async () => {
    const hook = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`;
    // B keeps its answer (read twice), then A changes the webhook: B answers the change next.
    for (let i = 0; i < 2; i++) assert.equal((await get(b.url, hook, armApp)).status, 200);
    const description = `changed on A ${crypto.randomUUID()}`;
    const patch = await fetch(a.url + hook, { method: 'PATCH', headers: { authorization: `Bearer ${armApp}`, 'content-type': 'application/json' }, body: JSON.stringify({ properties: { description } }) });
    assert.equal(patch.status, 200);
    assert.equal((await get(b.url, hook, armApp)).body.properties.description, description);
  });

  test('a role management policy changed on one instance is what the other answers next', async () => {
    const admin = await userToken(a.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    const scope = `/subscriptions/${demoSubscription.id}`;
    const filter = encodeURIComponent(`roleDefinitionId eq '${scope}/providers/Vendor.Authorization/roleDefinitions/${roleIds.reader}'`);
    const list = `${scope}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2020-10-01&$filter=${filter}`;
    const rule = (p: any) => p.properties.rules.find((r: any) => r.id === 'Expiration_Admin_Assignment').maximumDuration;
    // B reads (and keeps) the computed policy first.
    const before = (await get(b.url, list, admin)).body.value[0];
    assert.equal(rule((await get(b.url, list, admin)).body.value[0]), rule(before));
    const url = `${a.url}${scope}/providers/Vendor.Authorization/roleManagementPolicies/${before.name}?api-version=2020-10-01`;
    const patched = await fetch(url, { method: 'PATCH', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ properties: { rules: [{ id: 'Expiration_Admin_Assignment', ruleType: 'RoleManagementPolicyExpirationRule', maximumDuration: 'P97D' }] } }) });
    assert.equal(patched.status, 200, await patched.clone().text());
    assert.equal(rule((await get(b.url, list, admin)).body.value[0]), 'P97D');
    assert.equal((await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } })).status, 200);
    assert.equal(rule((await get(b.url, list, admin)).body.value[0]), rule(before));
  });
});
