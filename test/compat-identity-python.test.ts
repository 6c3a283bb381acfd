/**
 * Credential-library compatibility, Python (issue 10 item 5): Debian's `python3-msal`
 * (ConfidentialClientApplication client credentials; PublicClientApplication username/password,
 * then acquire_token_silent from the cache and with force_refresh through the refresh token) and
 * `python3-azure`'s azure-identity (ClientSecretCredential; UsernamePasswordCredential incl.
 * authenticate(), which builds an AuthenticationRecord from the id_token and client_info).
 * The script (test/compat/identity.py) runs with REQUESTS_CA_BUNDLE = the test CA; every token
 * it got is then used against the server.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities } from './helpers/auth.ts';
import { demoAdmin, demoPublicClient, demoSubscription, demoTenant } from '../src/seed/demo.ts';

const armAlias = 'https://management.example/';
const python = process.env.STRATUS_TEST_PYTHON ?? '/usr/bin/python3';
let s: TestServer;
before(async () => {
  s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `arm=${armAlias}` } });
});
after(async () => {
  await s?.close();
});

async function status(url: string, token: string): Promise<number> {
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await r.arrayBuffer();
  return r.status;
}

test('python3-msal and azure-identity get tokens the resource manager accepts', async () => {
  const { stdout } = await promisify(execFile)(python, [path.resolve('test/compat/identity.py')], {
    env: {
      PATH: process.env.PATH,
      REQUESTS_CA_BUNDLE: path.resolve('.stratus-test/tls/ca.pem'),
      STRATUS_URL: s.url,
      STRATUS_TENANT: demoTenant.id,
      STRATUS_ARM_ALIAS: armAlias,
      STRATUS_SP_ID: identities.sp.clientId,
      STRATUS_SP_SECRET: identities.sp.clientSecret,
      STRATUS_PUBLIC_CLIENT_ID: demoPublicClient.appId,
      STRATUS_USERNAME: identities.admin.username,
      STRATUS_PASSWORD: identities.admin.password,
    },
    timeout: 120_000,
  });
  const r = JSON.parse(stdout);
  const skus = `${s.url}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'uksouth'")}`;
  for (const k of ['msal_client_credentials', 'msal_password', 'msal_silent', 'msal_refreshed', 'identity_client_secret', 'identity_password']) {
    assert.equal(decodeJwt(r[k]).aud, armAlias, k);
    assert.equal(await status(skus, r[k]), 200, k);
  }
  assert.equal(decodeJwt(r.msal_password).upn, demoAdmin.userPrincipalName);
  assert.equal(r.msal_id_token_claims.aud, demoPublicClient.appId);
  assert.equal(r.msal_id_token_claims.preferred_username, demoAdmin.userPrincipalName);
  assert.deepEqual(r.msal_accounts, [{ username: demoAdmin.userPrincipalName, home_account_id: `${demoAdmin.id}.${demoTenant.id}` }]);
  assert.equal(r.msal_silent, r.msal_password, 'silent call served from the cache');
  assert.notEqual(r.msal_refreshed, r.msal_password, 'force_refresh redeemed the refresh token');
  assert.deepEqual(r.identity_record, { username: demoAdmin.userPrincipalName, tenant_id: demoTenant.id, home_account_id: `${demoAdmin.id}.${demoTenant.id}`, authority: new URL(s.url).host });
});
