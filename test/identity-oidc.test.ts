/**
 * The OpenID Connect provider (issue 10 item 1) over HTTPS with plain requests: id_token and
 * client_info, refresh tokens (rotation, reuse refused, revocation by password and client-secret
 * change), the authorization-code grant with PKCE and its response modes, the device-code grant
 * and its page with the RFC 8628 polling errors, userinfo, instance and user-realm discovery,
 * metadata — with the tenant segment as id, domain, `common` and `organizations`.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify, decodeJwt } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokenRequest, identities } from './helpers/auth.ts';
import { demoAdmin, demoPublicClient, demoServicePrincipal, demoTenant, demoUser } from '../src/seed/demo.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.close();
});

const form = (o: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(o).toString(), redirect: 'manual' as const });
const json = (o: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(o) });
const password = (extra: Record<string, string> = {}, user: { username: string; password: string } = identities.admin) => ({
  grant_type: 'password',
  client_id: demoPublicClient.appId,
  username: user.username,
  password: user.password,
  scope: 'api://stratus/arm/user_impersonation openid profile offline_access',
  client_info: '1',
  ...extra,
});

async function advanceClock(seconds: number) {
  assert.equal((await s.control(`/_stratus/clock`, json({ advanceSeconds: seconds }))).status, 200);
}

describe('token responses', () => {
  test('password grant with openid profile offline_access and client_info=1: id_token, client_info, refresh_token, for every tenant segment', async () => {
    const jwks = createRemoteJWKSet(new URL(`${s.url}/${demoTenant.id}/discovery/v2.0/keys`));
    for (const tenant of [demoTenant.id, demoTenant.domain, 'common', 'organizations']) {
      const r = await tokenRequest(s.url, password(), tenant);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const { payload, protectedHeader } = await jwtVerify(r.body.id_token, jwks, { issuer: `${s.url}/${demoTenant.id}/v2.0`, audience: demoPublicClient.appId });
      assert.equal(protectedHeader.alg, 'RS256');
      assert.equal(payload.oid, demoAdmin.id);
      assert.equal(payload.tid, demoTenant.id);
      assert.equal(payload.preferred_username, demoAdmin.userPrincipalName);
      assert.equal(payload.name, demoAdmin.displayName);
      assert.equal(payload.ver, '2.0');
      assert.match(String(payload.sub), /^[A-Za-z0-9_-]{43}$/);
      for (const c of ['iat', 'exp', 'nbf']) assert.equal(typeof payload[c], 'number', c);
      assert.deepEqual(JSON.parse(Buffer.from(r.body.client_info, 'base64url').toString()), { uid: demoAdmin.id, utid: demoTenant.id });
      assert.equal(typeof r.body.refresh_token, 'string');
      assert.equal(decodeJwt(r.body.access_token).aud, 'api://stratus/arm');
    }
  });

  test('without openid, client_info or offline_access there is only the access token; the v1 endpoint always gives a refresh token', async () => {
    const r = await tokenRequest(s.url, { ...password(), scope: 'api://stratus/arm/user_impersonation', client_info: '0' });
    assert.equal(r.status, 200);
    assert.equal(r.body.id_token, undefined);
    assert.equal(r.body.client_info, undefined);
    assert.equal(r.body.refresh_token, undefined);
    const v1 = await fetch(`${s.url}/${demoTenant.id}/oauth2/token`, form({ grant_type: 'password', client_id: demoPublicClient.appId, username: identities.admin.username, password: identities.admin.password, resource: 'api://stratus/arm' }));
    const b = await v1.json();
    assert.equal(v1.status, 200);
    assert.equal(typeof b.refresh_token, 'string');
    // A v1 refresh may name another resource; without one, the original resource.
    const other = await (await fetch(`${s.url}/${demoTenant.id}/oauth2/token`, form({ grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: b.refresh_token, resource: 'api://stratus/mail' }))).json();
    assert.equal(decodeJwt(other.access_token).aud, 'api://stratus/mail');
    assert.equal(decodeJwt(other.access_token).scp, 'Mail.Read Mail.ReadWrite Mail.Send User.Read User.Read.All User.ReadWrite.All Group.Read.All Group.ReadWrite.All Application.Read.All Application.ReadWrite.All AppRoleAssignment.ReadWrite.All Directory.Read.All');
    const same = await (await fetch(`${s.url}/${demoTenant.id}/oauth2/token`, form({ grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: other.refresh_token }))).json();
    assert.equal(decodeJwt(same.access_token).aud, 'api://stratus/mail');
    const spent = await (await fetch(`${s.url}/${demoTenant.id}/oauth2/token`, form({ grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: b.refresh_token }))).json();
    assert.equal(spent.error, 'invalid_grant', 'rotated: the first refresh spent it');
  });
});

describe('refresh tokens', () => {
  test('rotation: each use returns a new refresh token and the old one is refused; scope may change resource', async () => {
    const first = await tokenRequest(s.url, password());
    const r1 = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: first.body.refresh_token, scope: 'api://stratus/mail/Mail.Read openid offline_access', client_info: '1' });
    assert.equal(r1.status, 200, JSON.stringify(r1.body));
    assert.notEqual(r1.body.refresh_token, first.body.refresh_token);
    assert.equal(decodeJwt(r1.body.access_token).scp, 'Mail.Read');
    assert.equal(decodeJwt(r1.body.id_token).aud, demoPublicClient.appId);
    assert.ok(r1.body.client_info);
    const reuse = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: first.body.refresh_token });
    assert.equal(reuse.status, 400);
    assert.equal(reuse.body.error, 'invalid_grant');
    // The replay revoked the whole family (issue 30 row 11): the token rotated from it is gone too.
    const revoked = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: r1.body.refresh_token });
    assert.equal(revoked.body.error, 'invalid_grant');
    const again = await tokenRequest(s.url, password());
    const r1b = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: again.body.refresh_token, scope: 'api://stratus/mail/Mail.Read openid offline_access' });
    assert.equal(r1b.status, 200, JSON.stringify(r1b.body));
    // Without scope the stored one applies.
    const r2 = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: r1b.body.refresh_token });
    assert.equal(r2.status, 200);
    assert.equal(decodeJwt(r2.body.access_token).aud, 'api://stratus/mail');
    // Another client cannot redeem it.
    const other = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoServicePrincipal.appId, client_secret: demoServicePrincipal.secret, refresh_token: r2.body.refresh_token });
    assert.equal(other.body.error, 'invalid_grant');
    const missing = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error, 'invalid_request');
  });

  test('a password change revokes the user\'s refresh tokens; other users keep theirs', async () => {
    const admin = await tokenRequest(s.url, password());
    const user = await tokenRequest(s.url, password({}, identities.user));
    const change = await s.control(`/_stratus/directory/users/${encodeURIComponent(demoAdmin.userPrincipalName)}/password`, json({ password: 'New-Admin-Pass-2' }));
    assert.equal(change.status, 204);
    const refused = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: admin.body.refresh_token });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'invalid_grant');
    assert.match(refused.body.error_description, /AADSTS50173/);
    assert.equal((await tokenRequest(s.url, password())).body.error, 'invalid_grant', 'the old password no longer works');
    assert.equal((await tokenRequest(s.url, password({ password: 'New-Admin-Pass-2' }))).status, 200);
    assert.equal((await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: user.body.refresh_token })).status, 200);
    // Back as it was, for the other tests; an unknown user and a bad body are 404 and 400.
    assert.equal((await s.control(`/_stratus/directory/users/${demoAdmin.id}/password`, json({ password: demoAdmin.password }))).status, 204);
    assert.equal((await s.control(`/_stratus/directory/users/nobody@stratus.test/password`, json({ password: 'x' }))).status, 404);
    assert.equal((await s.control(`/_stratus/directory/users/${demoAdmin.id}/password`, json({ pwd: 'x' }))).status, 400);
  });

  test('a client-secret change revokes the refresh tokens issued to that client, and the old secret stops working', async () => {
    const rt = await tokenRequest(s.url, { ...password(), client_id: demoServicePrincipal.appId, client_secret: demoServicePrincipal.secret });
    assert.equal(rt.status, 200, JSON.stringify(rt.body));
    const change = await s.control(`/_stratus/directory/apps/${demoServicePrincipal.appId}/secret`, json({ secret: 'rotated-secret' }));
    assert.equal(change.status, 204);
    const refused = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoServicePrincipal.appId, client_secret: 'rotated-secret', refresh_token: rt.body.refresh_token });
    assert.equal(refused.body.error, 'invalid_grant');
    const oldSecret = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: demoServicePrincipal.appId, client_secret: demoServicePrincipal.secret, scope: 'api://stratus/arm/.default' });
    assert.equal(oldSecret.status, 401);
    assert.equal((await s.control(`/_stratus/directory/apps/${demoServicePrincipal.appId}/secret`, json({ secret: demoServicePrincipal.secret }))).status, 204);
    assert.equal((await s.control(`/_stratus/directory/apps/00000000-0000-0000-0000-000000000000/secret`, json({ secret: 'x' }))).status, 404);
    // The control key guards these routes.
    assert.equal((await fetch(`${s.url}/_stratus/directory/apps/${demoServicePrincipal.appId}/secret`, json({ secret: 'stolen' }))).status, 401);
  });

  test('a refresh token expires after 90 days of the Stratus clock', async () => {
    // Two refresh tokens of one moment: the first is used on day 89 (still valid), the second, never
    // used, on day 91 (expired) — so the refusal is the expiry, not a rotation of a used token.
    const early = await tokenRequest(s.url, password());
    const unused = await tokenRequest(s.url, password());
    assert.equal(early.status, 200, JSON.stringify(early.body));
    assert.equal(unused.status, 200, JSON.stringify(unused.body));
    assert.notEqual(early.body.refresh_token, unused.body.refresh_token);
    await advanceClock(89 * 86400);
    const inTime = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: early.body.refresh_token });
    assert.equal(inTime.status, 200, `a refresh token works on day 89: ${JSON.stringify(inTime.body)}`);
    assert.equal(typeof inTime.body.access_token, 'string');
    await advanceClock(2 * 86400);
    const late = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: unused.body.refresh_token });
    assert.equal(late.status, 400);
    assert.equal(late.body.error, 'invalid_grant');
    assert.match(late.body.error_description, /^AADSTS50173: /);
  });
});

describe('authorization code with PKCE', () => {
  const redirect = 'http://localhost:5173/callback';
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');

  async function signIn(params: Record<string, string>, tenant = 'organizations'): Promise<Response> {
    const q = new URLSearchParams({ client_id: demoPublicClient.appId, redirect_uri: redirect, scope: 'api://stratus/mail/Mail.Read openid profile offline_access', state: 's-1', nonce: 'n-1', ...params });
    const pageRes = await fetch(`${s.url}/${tenant}/oauth2/v2.0/authorize?${q}`);
    const html = await pageRes.text();
    assert.equal(pageRes.status, 200);
    assert.match(html, /name="code_challenge"|response_type/);
    return fetch(`${s.url}/${tenant}/oauth2/v2.0/authorize?${q}`, form({ username: identities.admin.username, password: identities.admin.password }));
  }

  test('S256: code in the query, redeemed with the verifier for tokens with the nonce; single use', async () => {
    const res = await signIn({ response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' });
    assert.equal(res.status, 302);
    const loc = new URL(res.headers.get('location')!);
    assert.equal(`${loc.origin}${loc.pathname}`, redirect);
    assert.equal(loc.searchParams.get('state'), 's-1');
    const code = loc.searchParams.get('code')!;
    assert.ok(code);
    const bad = await tokenRequest(s.url, { grant_type: 'authorization_code', client_id: demoPublicClient.appId, code, redirect_uri: redirect, code_verifier: 'x'.repeat(43) });
    assert.equal(bad.body.error, 'invalid_grant');
    assert.match(bad.body.error_description, /Code_Verifier/);
    // The failed attempt spent the code (single use), as with the real provider.
    const res2 = await signIn({ response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' });
    const code2 = new URL(res2.headers.get('location')!).searchParams.get('code')!;
    const ok = await tokenRequest(s.url, { grant_type: 'authorization_code', client_id: demoPublicClient.appId, code: code2, redirect_uri: redirect, code_verifier: verifier, client_info: '1' });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(decodeJwt(ok.body.id_token).nonce, 'n-1');
    assert.equal(decodeJwt(ok.body.access_token).scp, 'Mail.Read');
    assert.ok(ok.body.refresh_token);
    const again = await tokenRequest(s.url, { grant_type: 'authorization_code', client_id: demoPublicClient.appId, code: code2, redirect_uri: redirect, code_verifier: verifier });
    assert.equal(again.body.error, 'invalid_grant');
  });

  test('plain, a wrong redirect_uri, form_post and fragment modes, bad challenges', async () => {
    const plain = await signIn({ response_type: 'code', code_challenge: verifier, code_challenge_method: 'plain' }, demoTenant.domain);
    const code = new URL(plain.headers.get('location')!).searchParams.get('code')!;
    const wrong = await tokenRequest(s.url, { grant_type: 'authorization_code', client_id: demoPublicClient.appId, code, redirect_uri: 'http://localhost:5173/other', code_verifier: verifier });
    assert.equal(wrong.body.error, 'invalid_grant');
    const plain2 = await signIn({ response_type: 'code', code_challenge: verifier, code_challenge_method: 'plain' });
    const ok = await tokenRequest(s.url, { grant_type: 'authorization_code', client_id: demoPublicClient.appId, code: new URL(plain2.headers.get('location')!).searchParams.get('code')!, redirect_uri: redirect, code_verifier: verifier });
    assert.equal(ok.status, 200);

    const post = await signIn({ response_type: 'code', response_mode: 'form_post', code_challenge: challenge, code_challenge_method: 'S256' });
    assert.equal(post.status, 200);
    const html = await post.text();
    assert.match(html, new RegExp(`<form method="post" action="${redirect}">`));
    assert.match(html, /name="code" value="[A-Za-z0-9_-]{43}"/);
    assert.match(html, /name="state" value="s-1"/);

    const frag = await signIn({ response_type: 'code', response_mode: 'fragment' });
    assert.match(new URL(frag.headers.get('location')!).hash, /^#code=/);

    const implicit = await signIn({ response_type: 'id_token token', scope: 'api://stratus/arm/user_impersonation openid' });
    const h = new URLSearchParams(new URL(implicit.headers.get('location')!).hash.slice(1));
    assert.equal(decodeJwt(h.get('id_token')!).nonce, 'n-1');
    assert.equal(decodeJwt(h.get('access_token')!).aud, 'api://stratus/arm');

    const badChallenge = await fetch(`${s.url}/common/oauth2/v2.0/authorize?${new URLSearchParams({ client_id: demoPublicClient.appId, redirect_uri: redirect, response_type: 'code', scope: 'openid', code_challenge: 'short', code_challenge_method: 'S256', state: 'z' })}`, { redirect: 'manual' });
    assert.equal(badChallenge.status, 302);
    const e = new URL(badChallenge.headers.get('location')!).searchParams;
    assert.equal(e.get('error'), 'invalid_request');
    assert.equal(e.get('state'), 'z');
    const tokenInQuery = await fetch(`${s.url}/common/oauth2/v2.0/authorize?${new URLSearchParams({ client_id: demoPublicClient.appId, redirect_uri: redirect, response_type: 'token', response_mode: 'query', scope: 'api://stratus/arm/user_impersonation' })}`, { redirect: 'manual' });
    assert.match(new URL(tokenInQuery.headers.get('location')!).hash, /error=invalid_request/);
  });

  test('an expired code is invalid_grant', async () => {
    const res = await signIn({ response_type: 'code' });
    const code = new URL(res.headers.get('location')!).searchParams.get('code')!;
    await advanceClock(601);
    const late = await tokenRequest(s.url, { grant_type: 'authorization_code', client_id: demoPublicClient.appId, code, redirect_uri: redirect });
    assert.equal(late.body.error, 'invalid_grant');
    assert.match(late.body.error_description, /AADSTS70008/);
  });
});

describe('device code', () => {
  async function start(tenant = 'organizations') {
    const r = await fetch(`${s.url}/${tenant}/oauth2/v2.0/devicecode`, form({ client_id: demoPublicClient.appId, scope: 'api://stratus/arm/user_impersonation openid offline_access' }));
    assert.equal(r.status, 200);
    return r.json();
  }
  const poll = (deviceCode: string) => tokenRequest(s.url, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: demoPublicClient.appId, device_code: deviceCode });

  test('devicecode answer, pending, slow_down, the page, then tokens once', async () => {
    const d = await start();
    assert.match(d.user_code, /^[A-Z0-9]{9}$/);
    assert.equal(d.verification_uri, `${s.url}/devicelogin`);
    assert.equal(d.expires_in, 900);
    assert.equal(d.interval, 5);
    assert.ok(d.message.includes(d.user_code) && d.message.includes(d.verification_uri));
    assert.equal((await poll(d.device_code)).body.error, 'authorization_pending');
    assert.equal((await poll(d.device_code)).body.error, 'slow_down');
    await advanceClock(5);
    assert.equal((await poll(d.device_code)).body.error, 'authorization_pending');

    const wrongCode = await (await fetch(`${s.url}/devicelogin`, form({ code: 'NOPE12345' }))).text();
    assert.match(wrongCode, /didn&#39;t work/);
    const step = await (await fetch(`${s.url}/devicelogin`, form({ code: d.user_code.toLowerCase() }))).text();
    assert.match(step, /Stratus Development Client/);
    const wrongPass = await (await fetch(`${s.url}/devicelogin`, form({ code: d.user_code, username: identities.admin.username, password: 'bad' }))).text();
    assert.match(wrongPass, /incorrect/);
    const done = await (await fetch(`${s.url}/devicelogin`, form({ code: d.user_code, username: identities.admin.username, password: identities.admin.password }))).text();
    assert.match(done, /signed in/);
    await advanceClock(5);
    const t = await poll(d.device_code);
    assert.equal(t.status, 200, JSON.stringify(t.body));
    assert.equal(decodeJwt(t.body.access_token).upn, demoAdmin.userPrincipalName);
    assert.ok(t.body.id_token && t.body.refresh_token);
    assert.equal((await poll(d.device_code)).body.error, 'invalid_grant');
  });

  test('declined → access_denied; expired → expired_token; tenant-bound code refuses another tenant\'s user', async () => {
    const d = await start();
    await fetch(`${s.url}/devicelogin`, form({ code: d.user_code, action: 'deny' }));
    const denied = await poll(d.device_code);
    assert.equal(denied.status, 400);
    assert.equal(denied.body.error, 'access_denied');

    const e = await start();
    await advanceClock(901);
    assert.equal((await poll(e.device_code)).body.error, 'expired_token');

    const bound = await start(demoTenant.domain);
    const other = await (await fetch(`${s.url}/devicelogin`, form({ code: bound.user_code, username: identities.eve.username, password: identities.eve.password }))).text();
    assert.match(other, /incorrect/);

    const badScope = await fetch(`${s.url}/common/oauth2/v2.0/devicecode`, form({ client_id: demoPublicClient.appId, scope: 'api://stratus/nothing/x' }));
    assert.equal(badScope.status, 400);
    assert.equal((await badScope.json()).error, 'invalid_scope');
  });
});

describe('userinfo, discovery, metadata', () => {
  test('userinfo answers GET and POST with a bearer token of any family; 401 without one', async () => {
    const r = await tokenRequest(s.url, password({ scope: 'openid profile email' }, identities.user));
    assert.equal(decodeJwt(r.body.access_token).aud, 'api://stratus/mail');
    for (const method of ['GET', 'POST']) {
      const u = await fetch(`${s.url}/oidc/userinfo`, { method, headers: { authorization: `Bearer ${r.body.access_token}` } });
      assert.equal(u.status, 200);
      const b = await u.json();
      assert.equal(b.name, demoUser.displayName);
      assert.equal(b.preferred_username, demoUser.userPrincipalName);
      assert.equal(b.sub, decodeJwt(r.body.id_token).sub);
      assert.equal(b.email, 'user@stratus.test');
    }
    const arm = await tokenRequest(s.url, password());
    assert.equal((await fetch(`${s.url}/${demoTenant.id}/openid/userinfo`, { headers: { authorization: `Bearer ${arm.body.access_token}` } })).status, 200);
    const none = await fetch(`${s.url}/oidc/userinfo`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate')!, /^Bearer/);
    const app = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: demoServicePrincipal.appId, client_secret: demoServicePrincipal.secret, scope: 'api://stratus/arm/.default' });
    assert.equal((await fetch(`${s.url}/oidc/userinfo`, { headers: { authorization: `Bearer ${app.body.access_token}` } })).status, 401);
  });

  test('instance discovery and user realm answer as for a managed tenant', async () => {
    const host = new URL(s.url).host;
    const auth = `${s.url}/${demoTenant.id}/oauth2/v2.0/authorize`;
    const d = await fetch(`${s.url}/common/discovery/instance?api-version=1.1&authorization_endpoint=${encodeURIComponent(auth)}`);
    assert.equal(d.status, 200);
    assert.deepEqual(await d.json(), {
      tenant_discovery_endpoint: `${s.url}/${demoTenant.id}/v2.0/.well-known/openid-configuration`,
      'api-version': '1.1',
      metadata: [{ preferred_network: host, preferred_cache: host, aliases: [host] }],
    });
    const foreign = await fetch(`${s.url}/common/discovery/instance?api-version=1.1&authorization_endpoint=${encodeURIComponent('https://elsewhere.example/common/oauth2/v2.0/authorize')}`);
    assert.equal(foreign.status, 400);
    assert.equal((await foreign.json()).error, 'invalid_instance');
    const realm = await fetch(`${s.url}/common/userrealm/${demoAdmin.userPrincipalName}?api-version=1.0`);
    assert.equal(realm.status, 200);
    assert.deepEqual(await realm.json(), { ver: '1.0', account_type: 'Managed', domain_name: 'stratus.test', cloud_instance_name: host, cloud_audience_urn: 'urn:federation:Stratus' });
    const unknown = await (await fetch(`${s.url}/common/userrealm/someone@nowhere.example?api-version=1.0`)).json();
    assert.equal(unknown.account_type, 'Unknown');
  });

  test('openid-configuration lists every endpoint, grant, response type and mode, and the claims; each endpoint answers', async () => {
    for (const tenant of ['common', 'organizations', demoTenant.id, demoTenant.domain]) {
      const m = await (await fetch(`${s.url}/${tenant}/v2.0/.well-known/openid-configuration`)).json();
      assert.deepEqual(m.grant_types_supported.sort(), ['authorization_code', 'client_credentials', 'implicit', 'password', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
      assert.deepEqual(m.response_types_supported, ['code', 'id_token', 'token', 'id_token token']);
      assert.deepEqual(m.response_modes_supported, ['query', 'fragment', 'form_post']);
      assert.deepEqual(m.code_challenge_methods_supported, ['S256', 'plain']);
      for (const c of ['nonce', 'oid', 'tid', 'preferred_username', 'name', 'sub', 'ver']) assert.ok(m.claims_supported.includes(c), c);
      const devicePost = await fetch(m.device_authorization_endpoint, form({ client_id: demoPublicClient.appId, scope: 'openid' }));
      assert.equal(devicePost.status, 200);
      assert.equal((await fetch(m.jwks_uri)).status, 200);
      assert.equal((await fetch(m.userinfo_endpoint)).status, 401);
      assert.equal((await fetch(m.end_session_endpoint)).status, 200);
      assert.equal((await fetch(`${m.authorization_endpoint}?client_id=${demoPublicClient.appId}&response_type=code&scope=openid`)).status, 200);
      const tok = await fetch(m.token_endpoint, form(password()));
      assert.equal(tok.status, 200);
    }
  });
});
