/**
 * `STRATUS_AUDIENCE_ALIASES` (issue 10 item 2): a token asked for `<alias>/.default`,
 * `<alias>//.default`, `<alias>/user_impersonation` or `resource=<alias>` is issued for the
 * alias's family with the alias as `aud`, and that family accepts it next to its own audience;
 * other families refuse it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokenRequest, identities } from './helpers/auth.ts';
import { demoSubscription } from '../src/seed/demo.ts';
import { loadConfig, ConfigError } from '../src/config.ts';

const armAlias = 'https://management.example/';
const mailAlias = 'https://mail.example';
let s: TestServer;
before(async () => {
  s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `arm=${armAlias}, mail=${mailAlias}` } });
});
after(async () => {
  await s?.close();
});

const skus = () => `/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'uksouth'")}`;

async function get(path: string, token: string): Promise<number> {
  const r = await fetch(`${s.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  await r.arrayBuffer();
  return r.status;
}

test('client credentials for <alias>/.default and <alias>//.default carry the alias as aud; the family accepts it', async () => {
  for (const scope of [`${armAlias}.default`, `${armAlias}/.default`, 'https://management.example/.default']) {
    const r = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, scope });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(decodeJwt(r.body.access_token).aud, armAlias);
    assert.equal(r.body.scope, 'https://management.example/.default');
    assert.equal(await get(skus(), r.body.access_token), 200);
    // Another family refuses it.
    assert.equal(await get('/v1.0/users/admin@stratus.test/messages?$top=1', r.body.access_token), 401);
  }
});

test('resource= (v1) with an alias, with and without the trailing slash', async () => {
  for (const resource of [armAlias, 'https://management.example']) {
    const r = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, resource });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(decodeJwt(r.body.access_token).aud, armAlias);
    assert.equal(await get(skus(), r.body.access_token), 200);
  }
  const u = await tokenRequest(s.url, { grant_type: 'password', username: identities.admin.username, password: identities.admin.password, resource: armAlias, scope: 'openid' });
  assert.equal(u.status, 200, JSON.stringify(u.body));
  assert.equal(decodeJwt(u.body.access_token).scp, 'user_impersonation');
});

test('delegated <alias>/user_impersonation and a mail alias with named scopes', async () => {
  const r = await tokenRequest(s.url, { grant_type: 'password', username: identities.admin.username, password: identities.admin.password, scope: `${armAlias}user_impersonation openid profile offline_access` });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const c = decodeJwt(r.body.access_token);
  assert.equal(c.aud, armAlias);
  assert.equal(c.scp, 'user_impersonation');
  assert.equal(await get(skus(), r.body.access_token), 200);
  const m = await tokenRequest(s.url, { grant_type: 'password', username: identities.admin.username, password: identities.admin.password, scope: `${mailAlias}/Mail.Read ${mailAlias}/Mail.Send` });
  assert.equal(m.status, 200, JSON.stringify(m.body));
  assert.equal(decodeJwt(m.body.access_token).aud, mailAlias);
  assert.equal(decodeJwt(m.body.access_token).scp, 'Mail.Read Mail.Send');
  assert.equal(await get('/v1.0/me/messages?$top=1', m.body.access_token), 200);
  assert.equal(await get(skus(), m.body.access_token), 401);
  // The family's own audience keeps working.
  const own = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, scope: 'api://stratus/arm/.default' });
  assert.equal(decodeJwt(own.body.access_token).aud, 'api://stratus/arm');
  assert.equal(await get(skus(), own.body.access_token), 200);
});

test('an unconfigured real-cloud resource names the setting that accepts it (scope and resource=, both grants); mixed families are invalid_scope; a bad setting is a ConfigError', async () => {
  const hint = /AADSTS500011: The resource principal named https:\/\/elsewhere\.example was not found.*STRATUS_AUDIENCE_ALIASES=<family>=https:\/\/elsewhere\.example .*e\.g\. mail=https:\/\/elsewhere\.example/;
  for (const form of <Record<string, string>[]>[
    { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, scope: 'https://elsewhere.example/.default' },
    { grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, resource: 'https://elsewhere.example/' },
    { grant_type: 'password', username: identities.admin.username, password: identities.admin.password, scope: 'openid https://elsewhere.example//.default' },
    { grant_type: 'password', username: identities.admin.username, password: identities.admin.password, scope: 'openid', resource: 'https://elsewhere.example' },
  ]) {
    const r = await tokenRequest(s.url, form);
    assert.equal(r.status, 400, JSON.stringify(form));
    assert.equal(r.body.error, 'invalid_resource', JSON.stringify(form));
    assert.match(r.body.error_description, hint, JSON.stringify(form));
  }
  const mixed = await tokenRequest(s.url, { grant_type: 'password', username: identities.admin.username, password: identities.admin.password, scope: `${armAlias}user_impersonation ${mailAlias}/Mail.Read` });
  assert.equal(mixed.status, 400);
  assert.equal(mixed.body.error, 'invalid_scope');
  assert.throws(() => loadConfig({}, { STRATUS_AUDIENCE_ALIASES: 'nothing=https://x.example/' }), ConfigError);
  assert.throws(() => loadConfig({}, { STRATUS_AUDIENCE_ALIASES: 'arm' }), ConfigError);
  assert.throws(() => loadConfig({}, { STRATUS_AUDIENCE_ALIASES: 'arm=https://a.example/,mail=https://a.example' }), ConfigError);
  assert.deepEqual(loadConfig({}, { STRATUS_AUDIENCE_ALIASES: ' arm=https://a.example/ ,,mail=https://b.example' }).audienceAliases, [
    { family: 'arm', uri: 'https://a.example/' },
    { family: 'mail', uri: 'https://b.example' },
  ]);
});
