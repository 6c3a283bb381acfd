/**
 * The identity provider (spec: resource-manager §5): token endpoint grants and errors,
 * JWKS, OpenID metadata, the implicit flow through the sign-in page, keys across restarts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRemoteJWKSet, jwtVerify, decodeJwt } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokenRequest, identities, userToken } from './helpers/auth.ts';
import { demoTenant, demoServicePrincipal, demoAdmin, demoPublicClient, demoUser, otherUser, demoManagedIdentity, demoSecretHashes, tenantReaderApp } from '../src/seed/demo.ts';
import { verifySecret } from '../src/core/identity/directory.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.close();
});

test('client credentials issue an app token with the standard claims, verifiable by the JWKS', async () => {
  const r = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, scope: 'api://stratus/mail/.default' });
  assert.equal(r.status, 200);
  assert.equal(r.body.token_type, 'Bearer');
  assert.ok(r.body.expires_in > 0);
  const jwks = createRemoteJWKSet(new URL(`${s.url}/${demoTenant.id}/discovery/v2.0/keys`));
  const { payload, protectedHeader } = await jwtVerify(r.body.access_token, jwks, { issuer: `${s.url}/${demoTenant.id}/v2.0`, audience: 'api://stratus/mail' });
  assert.equal(protectedHeader.alg, 'RS256');
  assert.equal(payload.tid, demoTenant.id);
  assert.equal(payload.oid, demoServicePrincipal.objectId);
  assert.equal(payload.appid, demoServicePrincipal.appId);
  assert.deepEqual(payload.roles, ['Mail.Read', 'Mail.ReadWrite', 'Mail.Send']);
  assert.equal(payload.scp, undefined);
  for (const c of ['iat', 'nbf', 'exp', 'sub']) assert.ok(payload[c] !== undefined, c);
});

test('password grant issues a delegated token with scp, upn and name; tenant by domain and common', async () => {
  for (const tenant of [demoTenant.id, demoTenant.domain, 'common']) {
    const r = await tokenRequest(s.url, { grant_type: 'password', username: demoAdmin.userPrincipalName, password: demoAdmin.password, scope: 'api://stratus/mail/Mail.Read api://stratus/mail/Mail.Send offline_access' }, tenant);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const c = decodeJwt(r.body.access_token);
    assert.equal(c.scp, 'Mail.Read Mail.Send');
    assert.equal(c.upn, demoAdmin.userPrincipalName);
    assert.equal(c.name, demoAdmin.displayName);
    assert.equal(c.oid, demoAdmin.id);
    assert.equal(c.aud, 'api://stratus/mail');
  }
});

test('OAuth 2.0 errors: invalid_client 401, invalid_grant, invalid_scope, unsupported_grant_type 400', async () => {
  const bad = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: 'wrong', scope: 'api://stratus/arm/.default' });
  assert.equal(bad.status, 401);
  assert.equal(bad.body.error, 'invalid_client');
  assert.match(bad.body.error_description, /AADSTS/);
  const grant = await tokenRequest(s.url, { grant_type: 'password', username: demoAdmin.userPrincipalName, password: 'nope', scope: 'api://stratus/arm/user_impersonation' });
  assert.equal(grant.status, 400);
  assert.equal(grant.body.error, 'invalid_grant');
  const scope = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, scope: 'api://stratus/nothing/.default' });
  assert.equal(scope.status, 400);
  assert.equal(scope.body.error, 'invalid_scope');
  const scope2 = await tokenRequest(s.url, { grant_type: 'password', username: demoAdmin.userPrincipalName, password: demoAdmin.password, scope: 'api://stratus/mail/Mail.Everything' });
  assert.equal(scope2.body.error, 'invalid_scope');
  const unsupported = await tokenRequest(s.url, { grant_type: 'urn:ietf:params:oauth:grant-type:saml2-bearer', assertion: 'x' });
  assert.equal(unsupported.status, 400);
  assert.equal(unsupported.body.error, 'unsupported_grant_type');
});

test('OpenID configuration names the endpoints on the public origin', async () => {
  const res = await fetch(`${s.url}/${demoTenant.domain}/v2.0/.well-known/openid-configuration`);
  assert.equal(res.status, 200);
  const m = await res.json();
  assert.equal(m.issuer, `${s.url}/${demoTenant.id}/v2.0`);
  assert.equal(m.token_endpoint, `${s.url}/${demoTenant.id}/oauth2/v2.0/token`);
  assert.equal(m.jwks_uri, `${s.url}/${demoTenant.id}/discovery/v2.0/keys`);
  const unknown = await fetch(`${s.url}/nope.example/v2.0/.well-known/openid-configuration`);
  assert.equal(unknown.status, 400);
});

test('implicit flow: sign-in page, form post, redirect with the token in the fragment', async () => {
  const q = new URLSearchParams({ client_id: demoPublicClient.appId, response_type: 'token', redirect_uri: 'http://localhost:5173/callback', scope: 'api://stratus/arm/user_impersonation', state: 'xyz-123', nonce: 'n1' });
  const page = await fetch(`${s.url}/common/oauth2/authorize?${q}`);
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /<form method="post">/);
  assert.match(html, /name="state" value="xyz-123"/);
  const wrong = await fetch(`${s.url}/common/oauth2/authorize?${q}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: demoAdmin.userPrincipalName, password: 'bad' }).toString(), redirect: 'manual' });
  assert.equal(wrong.status, 200);
  assert.match(await wrong.text(), /incorrect/);
  const res = await fetch(`${s.url}/common/oauth2/authorize?${q}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: demoAdmin.userPrincipalName, password: demoAdmin.password }).toString(), redirect: 'manual' });
  assert.equal(res.status, 302);
  const loc = new URL(res.headers.get('location')!);
  assert.equal(`${loc.origin}${loc.pathname}`, 'http://localhost:5173/callback');
  const frag = new URLSearchParams(loc.hash.slice(1));
  assert.equal(frag.get('token_type'), 'Bearer');
  assert.equal(frag.get('state'), 'xyz-123');
  assert.ok(Number(frag.get('expires_in')) > 0);
  const claims = decodeJwt(frag.get('access_token')!);
  assert.equal(claims.aud, 'api://stratus/arm');
  assert.equal(claims.scp, 'user_impersonation');
  assert.equal(claims.upn, demoAdmin.userPrincipalName);
});

test('implicit flow refuses an unregistered redirect_uri on the page, never redirecting', async () => {
  const q = new URLSearchParams({ client_id: demoPublicClient.appId, response_type: 'token', redirect_uri: 'https://evil.example/cb', scope: 'api://stratus/arm/user_impersonation', state: 's' });
  for (const method of ['GET', 'POST']) {
    const res = await fetch(`${s.url}/common/oauth2/authorize?${q}`, {
      method,
      redirect: 'manual',
      ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ username: demoAdmin.userPrincipalName, password: demoAdmin.password }).toString() } : {}),
    });
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('location'), null);
    assert.match(await res.text(), /AADSTS50011/);
  }
});

test('a token issued before a restart still verifies after it (keys live in the store)', async () => {
  const token = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  const sub = '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25';
  const call = () => fetch(`${s.url}/subscriptions/${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal((await call()).status, 200);
  await s.restart();
  assert.equal((await call()).status, 200);
});

test('the precomputed hashes of the demo credentials match them (and only them)', async () => {
  const secrets = [demoAdmin.password, demoUser.password, otherUser.password, demoServicePrincipal.secret, demoManagedIdentity.secret, tenantReaderApp.secret];
  assert.deepEqual(Object.keys(demoSecretHashes).sort(), [...secrets].sort());
  for (const s of secrets) {
    assert.equal(await verifySecret(s, demoSecretHashes[s]), true, s);
    assert.equal(await verifySecret(`${s}x`, demoSecretHashes[s]), false, s);
  }
  // The seeded store signs a password grant in with them.
  const user = await tokenRequest(s.url, { grant_type: 'password', username: demoUser.userPrincipalName, password: demoUser.password, scope: 'api://stratus/mail/Mail.Read' });
  assert.equal(user.status, 200, JSON.stringify(user.body));
  const app = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: demoServicePrincipal.appId, client_secret: demoServicePrincipal.secret, scope: 'api://stratus/mail/.default' });
  assert.equal(app.status, 200, JSON.stringify(app.body));
});
