/**
 * The resource-manager gateway (issue 2 §4; spec resource-manager §7, §8, §9; reference
 * §1.2–§1.4), driven with plain `fetch` over HTTPS against the compute SKU route (and the
 * role-management-policy PATCH for a body that is not JSON): bearer failures with their
 * codes, messages and `WWW-Authenticate`, authorization by role, api-version, subscription
 * checks, unknown routes, and the headers every ARM response carries.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, decodeJwt, importJWK, generateKeyPair } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { demoSubscription, otherSubscription } from '../src/seed/demo.ts';

const skuPath = `/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus`;
const ok = `${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'uksouth'")}`;
const uuidRe = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe('resource-manager gateway', () => {
  let s: TestServer;
  let token: string;

  async function call(pathAndQuery: string, init: { method?: string; auth?: string | null; headers?: Record<string, string>; body?: string } = {}) {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    const auth = init.auth === undefined ? `Bearer ${token}` : init.auth;
    if (auth !== null) headers.authorization = auth;
    const res = await fetch(`${s.url}${pathAndQuery}`, { method: init.method ?? 'GET', headers, body: init.body });
    const text = await res.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return { status: res.status, body, headers: res.headers };
  }

  /** Asserts the ErrorResponse envelope (spec §7) with `code` and, when given, the exact message. */
  function assertError(r: { status: number; body: any; headers: Headers }, status: number, code: string, message?: string | RegExp) {
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.match(r.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(typeof r.body.error, 'object');
    assert.equal(r.body.error.code, code);
    assert.equal(typeof r.body.error.message, 'string');
    for (const k of Object.keys(r.body.error)) assert.ok(['code', 'message', 'target', 'details', 'additionalInfo'].includes(k), k);
    if (typeof message === 'string') assert.equal(r.body.error.message, message);
    else if (message) assert.match(r.body.error.message, message);
    assertArmHeaders(r.headers);
  }
  function assertArmHeaders(h: Headers, correlation?: string) {
    assert.match(h.get('x-vendor-request-id') ?? '', uuidRe);
    assert.equal(h.get('x-vendor-correlation-request-id'), correlation ?? h.get('x-vendor-request-id'));
    assert.equal(h.get('x-content-type-options'), 'nosniff');
    const date = h.get('date');
    assert.ok(date && !Number.isNaN(Date.parse(date)), `Date: ${date}`);
  }
  function assertChallenge(h: Headers) {
    const w = h.get('www-authenticate') ?? '';
    assert.match(w, /^Bearer authorization_uri="https:\/\/[^"]+", error="invalid_token"/);
    assert.ok(w.includes(`authorization_uri="${s.url}/`), w);
  }
  /** A token signed with the server's own active signing key, with `claims` overriding a real token's. */
  async function forge(base: string, claims: Record<string, unknown>): Promise<string> {
    const row = await s.server.ctx.store.db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'asc').executeTakeFirstOrThrow();
    const jwk = JSON.parse(row.private_jwk);
    const key = await importJWK(jwk, 'RS256');
    const payload = { ...decodeJwt(base), ...claims };
    return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: row.kid }).sign(key);
  }

  before(async () => {
    s = await startTestServer();
    token = await appToken(s.url, 'arm');
  });
  after(async () => {
    await s?.close();
  });

  test('a valid call: 200 with the ARM headers; a client correlation id is echoed', async () => {
    const r = await call(ok);
    assert.equal(r.status, 200);
    assertArmHeaders(r.headers);
    const corr = 'b1f5a7c2-3d4e-4f60-8a9b-0c1d2e3f4a5b';
    const r2 = await call(ok, { headers: { 'x-vendor-correlation-request-id': corr } });
    assert.equal(r2.status, 200);
    assertArmHeaders(r2.headers, corr);
    assert.notEqual(r.headers.get('x-vendor-request-id'), r2.headers.get('x-vendor-request-id'));
  });

  test('no Authorization header: 401 AuthenticationFailed with a Bearer challenge', async () => {
    const r = await call(ok, { auth: null });
    assertError(r, 401, 'AuthenticationFailed', "Authentication failed. The 'Authorization' header is missing.");
    assertChallenge(r.headers);
    const empty = await call(ok, { auth: '' });
    assertError(empty, 401, 'AuthenticationFailed');
  });

  test('a malformed Authorization header: 401 AuthenticationFailedInvalidHeader', async () => {
    for (const auth of ['Basic dXNlcjpwYXNz', 'Bearer', `Bearer ${token} extra`, token]) {
      const r = await call(ok, { auth });
      assertError(r, 401, 'AuthenticationFailedInvalidHeader', "Authentication failed. The 'Authorization' header is provided in an invalid format.");
      assertChallenge(r.headers);
    }
  });

  test('a token that is not a JWT, or whose signature does not verify: 401 InvalidAuthenticationToken', async () => {
    const [h, p, sig] = token.split('.');
    const flipped = sig!.startsWith('A') ? 'B' + sig!.slice(1) : 'A' + sig!.slice(1);
    const { privateKey } = await generateKeyPair('RS256');
    const foreignKid = await new SignJWT(decodeJwt(token)).setProtectedHeader({ alg: 'RS256', kid: JSON.parse(Buffer.from(h!, 'base64url').toString()).kid }).sign(privateKey);
    // The token was just accepted (its verification is kept): its signature under another payload is still refused.
    assert.equal((await call(ok)).status, 200);
    const otherPayload = Buffer.from(JSON.stringify({ ...decodeJwt(token), oid: '00000000-0000-4000-8000-000000000001' })).toString('base64url');
    for (const bad of ['not-a-jwt', `${h}.${p}.${flipped}`, foreignKid, `${h}.${otherPayload}.${sig}`]) {
      const r = await call(ok, { auth: `Bearer ${bad}` });
      assertError(r, 401, 'InvalidAuthenticationToken', /^The access token is invalid\./);
      assertChallenge(r.headers);
    }
  });

  test('a token not yet valid (nbf an hour ahead), or without a signature: 401 InvalidAuthenticationToken', async () => {
    const now = Math.floor(Date.now() / 1000);
    const future = await forge(token, { nbf: now + 3600, iat: now + 3600, exp: now + 7200 });
    const [h, p] = token.split('.');
    for (const bad of [future, `${h}.${p}.`]) {
      const r = await call(ok, { auth: `Bearer ${bad}` });
      assertError(r, 401, 'InvalidAuthenticationToken', /^The access token is invalid\./);
      assertChallenge(r.headers);
    }
  });

  test('a token for another audience: 401 InvalidAuthenticationToken', async () => {
    const mail = await appToken(s.url, 'mail');
    const r = await call(ok, { auth: `Bearer ${mail}` });
    assertError(r, 401, 'InvalidAuthenticationToken', /audience/);
    assertChallenge(r.headers);
    const forged = await call(ok, { auth: `Bearer ${await forge(token, { aud: 'api://stratus/platform' })}` });
    assertError(forged, 401, 'InvalidAuthenticationToken', /audience/);
  });

  test('a token from another issuer (signed with the right key): 401 InvalidAuthenticationToken', async () => {
    const control = await call(ok, { auth: `Bearer ${await forge(token, {})}` });
    assert.equal(control.status, 200, 'the re-signed token itself is accepted');
    const r = await call(ok, { auth: `Bearer ${await forge(token, { iss: 'https://login.example.test/9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01/v2.0' })}` });
    assertError(r, 401, 'InvalidAuthenticationToken', /issuer/);
    assertChallenge(r.headers);
  });

  test('the user without a role: 403 AuthorizationFailed naming the caller, the action and the scope', async () => {
    const t = await userToken(s.url, identities.user, ['api://stratus/arm/user_impersonation']);
    const oid = decodeJwt(t).oid as string;
    const r = await call(ok, { auth: `Bearer ${t}` });
    assertError(
      r,
      403,
      'AuthorizationFailed',
      `The client '${identities.user.username}' with object id '${oid}' does not have authorization to perform action 'Vendor.Compute/skus/read' over scope '/subscriptions/${demoSubscription.id}' or the scope is invalid. If access was recently granted, please refresh your credentials.`,
    );
  });

  test('api-version is checked first: missing or empty → 400 MissingApiVersionParameter (even without a token)', async () => {
    for (const q of ['', '?api-version=', `?$filter=${encodeURIComponent("location eq 'westus'")}`]) {
      for (const auth of [undefined, null]) {
        const r = await call(`${skuPath}${q}`, { auth });
        assertError(r, 400, 'MissingApiVersionParameter', 'The api-version query parameter (?api-version=) is required for all requests.');
      }
    }
  });

  test('an unsupported api-version → 400 InvalidApiVersionParameter listing the supported versions', async () => {
    for (const v of ['2020-12-01', '2021-07-01-preview', 'latest']) {
      const r = await call(`${skuPath}?api-version=${v}`);
      assertError(r, 400, 'InvalidApiVersionParameter', `The api-version '${v}' is invalid. The supported versions are '2021-07-01'.`);
    }
  });

  test('a malformed subscription id → 400 InvalidSubscriptionId', async () => {
    for (const id of ['not-a-guid', '3c9a6f1e2b8d4e5a9f7c6d1e0a4b8c25x', '12345']) {
      const r = await call(`/subscriptions/${id}/providers/Vendor.Compute/skus?api-version=2021-07-01`);
      assertError(r, 400, 'InvalidSubscriptionId', `The provided subscription identifier '${id}' is malformed or invalid.`);
    }
  });

  test("an unknown subscription, or another tenant's → 404 SubscriptionNotFound", async () => {
    for (const id of ['0f0e0d0c-0b0a-4908-8706-050403020100', otherSubscription.id]) {
      const r = await call(`/subscriptions/${id}/providers/Vendor.Compute/skus?api-version=2021-07-01`);
      assertError(r, 404, 'SubscriptionNotFound', `The subscription '${id}' could not be found.`);
    }
  });

  test('an unknown route → 404 in the ARM envelope with the ARM headers', async () => {
    for (const p of [`/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/nothingHere?api-version=2021-07-01`, `/subscriptions/${demoSubscription.id}/providers/Vendor.Nothing/skus?api-version=2021-07-01`]) {
      const r = await call(p);
      assertError(r, 404, 'NotFound', /was not found/);
    }
  });

  test('a body that is not JSON → 400 InvalidRequestContent (role-management-policy PATCH)', async () => {
    const p = `/subscriptions/${demoSubscription.id}/providers/Vendor.Authorization/roleManagementPolicies/anything?api-version=2020-10-01`;
    // The administrator is Owner of the subscription (the service principal, a Contributor, may not write policies).
    const owner = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    const r = await call(p, { method: 'PATCH', auth: `Bearer ${owner}`, headers: { 'content-type': 'application/json' }, body: '{"properties": {"rules": [' });
    assertError(r, 400, 'InvalidRequestContent');
    const noAuth = await call(p, { method: 'PATCH', auth: null, headers: { 'content-type': 'application/json' }, body: 'not json' });
    assertError(noAuth, 401, 'AuthenticationFailed');
  });

  test('an expired token (clock moved past its lifetime) → 401 InvalidAuthenticationToken; a fresh one works', async () => {
    const before = await call(ok);
    assert.equal(before.status, 200);
    const lifetime = Number(decodeJwt(token).exp) - Number(decodeJwt(token).iat);
    const moved = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: lifetime + 300 }) });
    assert.equal(moved.status, 200);
    const r = await call(ok);
    assertError(r, 401, 'InvalidAuthenticationToken', /expired/);
    assertChallenge(r.headers);
    token = await appToken(s.url, 'arm');
    const fresh = await call(ok);
    assert.equal(fresh.status, 200);
  });
});
