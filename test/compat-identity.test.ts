/**
 * Credential-library compatibility (issue 10 item 5): the official JavaScript credential
 * libraries, configured as a user would — authority host = Stratus, the CA trusted through
 * NODE_EXTRA_CA_CERTS, a credential, and `STRATUS_AUDIENCE_ALIASES` — get tokens that the
 * resource manager and mail families accept. Nothing else is configured: no custom HTTP client,
 * no scope override, no pipeline policy.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { ClientSecretCredential, UsernamePasswordCredential, DeviceCodeCredential, type DeviceCodeInfo } from '@azure/identity';
import { ConfidentialClientApplication, PublicClientApplication } from '@azure/msal-node';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities } from './helpers/auth.ts';
import { demoAdmin, demoPublicClient, demoSubscription, demoTenant } from '../src/seed/demo.ts';

/** The audience alias a resource-manager client asks for (any URI the user picks). */
const armAlias = 'https://management.example/';

let s: TestServer;
before(async () => {
  s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `arm=${armAlias}` } });
});
after(async () => {
  await s?.close();
});

const skus = () => `${s.url}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'uksouth'")}`;

async function status(url: string, token: string): Promise<number> {
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await r.arrayBuffer();
  return r.status;
}

/** Moves the Stratus clock (tokens expire by it). */
async function advanceClock(seconds: number): Promise<void> {
  const r = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: seconds }) });
  assert.equal(r.status, 200);
}

/**
 * What a person does on the device page: open the verification URI, enter the code, sign in —
 * plain HTTP requests, as a browser would send them.
 */
async function signInOnDevicePage(info: { verificationUri: string; userCode: string }, user: { username: string; password: string }): Promise<string> {
  const first = await fetch(info.verificationUri);
  assert.equal(first.status, 200);
  assert.match(await first.text(), /name="code"/);
  const codeStep = await fetch(info.verificationUri, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ code: info.userCode }).toString() });
  const signIn = await codeStep.text();
  assert.match(signIn, /name="password"/);
  const done = await fetch(info.verificationUri, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ code: info.userCode, username: user.username, password: user.password, action: 'approve' }).toString(),
  });
  return done.text();
}

describe('@azure/identity', () => {
  const options = () => ({ authorityHost: s.url, disableInstanceDiscovery: true });

  test('ClientSecretCredential: <alias>/.default token works on the resource manager', async () => {
    const cred = new ClientSecretCredential(demoTenant.id, identities.sp.clientId, identities.sp.clientSecret, options());
    const t = await cred.getToken(`${armAlias}.default`);
    assert.ok(t.expiresOnTimestamp > Date.now());
    assert.equal(decodeJwt(t.token).aud, armAlias);
    assert.equal(await status(skus(), t.token), 200);
    const mail = await cred.getToken('api://stratus/mail/.default');
    assert.equal(await status(`${s.url}/v1.0/users/${demoAdmin.userPrincipalName}/messages?$top=1`, mail.token), 200);
  });

  test('UsernamePasswordCredential: delegated token with the user claims', async () => {
    const cred = new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, identities.admin.username, identities.admin.password, options());
    const t = await cred.getToken(`${armAlias}user_impersonation`);
    const c = decodeJwt(t.token);
    assert.equal(c.upn, demoAdmin.userPrincipalName);
    assert.equal(c.scp, 'user_impersonation');
    assert.equal(await status(skus(), t.token), 200);
    // A second call is served from the credential's cache (the same token).
    const again = await cred.getToken(`${armAlias}user_impersonation`);
    assert.equal(again.token, t.token);
  });

  test('DeviceCodeCredential: the user enters the code on the Stratus page', async () => {
    let signedIn: Promise<string> | undefined;
    let seen: DeviceCodeInfo | undefined;
    const cred = new DeviceCodeCredential({
      ...options(),
      tenantId: demoTenant.id,
      clientId: demoPublicClient.appId,
      userPromptCallback: (info) => {
        seen = info;
        signedIn = signInOnDevicePage(info, identities.admin);
      },
    });
    const t = await cred.getToken(`${armAlias}user_impersonation`);
    assert.ok(seen);
    assert.match(seen.message, new RegExp(seen.userCode));
    assert.equal(seen.verificationUri, `${s.url}/devicelogin`);
    assert.match(await signedIn!, /You're signed in/);
    assert.equal(decodeJwt(t.token).upn, demoAdmin.userPrincipalName);
    assert.equal(await status(skus(), t.token), 200);
  });
});

describe('@azure/msal-node', () => {
  const authority = () => `${s.url}/${demoTenant.id}`;

  test('ConfidentialClientApplication: client credentials', async () => {
    const cca = new ConfidentialClientApplication({ auth: { clientId: identities.sp.clientId, clientSecret: identities.sp.clientSecret, authority: authority(), knownAuthorities: [new URL(s.url).host] } });
    const r = await cca.acquireTokenByClientCredential({ scopes: [`${armAlias}.default`] });
    assert.ok(r?.accessToken);
    assert.equal(await status(skus(), r.accessToken), 200);
  });

  test('PublicClientApplication: username/password, then acquireTokenSilent uses the refresh token once the access token expired', async () => {
    const pca = new PublicClientApplication({ auth: { clientId: demoPublicClient.appId, authority: authority(), knownAuthorities: [new URL(s.url).host] } });
    const first = await pca.acquireTokenByUsernamePassword({ scopes: [`${armAlias}user_impersonation`], username: identities.admin.username, password: identities.admin.password });
    assert.ok(first?.account, 'MSAL cached an account (id_token + client_info)');
    assert.equal(first.account.username, demoAdmin.userPrincipalName);
    assert.equal(first.account.homeAccountId, `${demoAdmin.id}.${demoTenant.id}`);
    assert.equal(first.account.tenantId, demoTenant.id);
    assert.equal(first.idTokenClaims && (first.idTokenClaims as { aud?: string }).aud, demoPublicClient.appId);
    const accounts = await pca.getTokenCache().getAllAccounts();
    assert.equal(accounts.length, 1);

    // From the cache while the access token is valid.
    const cached = await pca.acquireTokenSilent({ account: accounts[0]!, scopes: [`${armAlias}user_impersonation`] });
    assert.equal(cached.accessToken, first.accessToken);
    assert.equal(cached.fromCache, true);

    // MSAL measures expiry on the real clock: forceRefresh makes it redeem the refresh token now.
    const refreshed = await pca.acquireTokenSilent({ account: accounts[0]!, scopes: [`${armAlias}user_impersonation`], forceRefresh: true });
    assert.notEqual(refreshed.accessToken, first.accessToken);
    assert.equal(refreshed.fromCache, false);
    assert.equal(await status(skus(), refreshed.accessToken), 200);

    // The rotated refresh token keeps working for another resource.
    const mail = await pca.acquireTokenSilent({ account: accounts[0]!, scopes: ['api://stratus/mail/Mail.Read'] });
    assert.equal(decodeJwt(mail.accessToken).scp, 'Mail.Read');

    // After the Stratus clock passes the access token's expiry, the old token is refused and the refreshed one is new.
    await advanceClock(2 * 3600);
    assert.equal(await status(skus(), first.accessToken), 401);
    const again = await pca.acquireTokenSilent({ account: accounts[0]!, scopes: [`${armAlias}user_impersonation`], forceRefresh: true });
    assert.equal(await status(skus(), again.accessToken), 200);
  });

  test('acquireTokenSilent refreshes on its own when the cached access token counts as expired', async () => {
    // MSAL renews tokens within 5 minutes of expiry: a 2-minute lifetime is "expired" at once.
    const short = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `arm=${armAlias}` }, settings: { tokenLifetimeSeconds: 120 } });
    try {
      const pca = new PublicClientApplication({ auth: { clientId: demoPublicClient.appId, authority: `${short.url}/${demoTenant.id}`, knownAuthorities: [new URL(short.url).host] } });
      const first = await pca.acquireTokenByUsernamePassword({ scopes: [`${armAlias}user_impersonation`], username: identities.admin.username, password: identities.admin.password });
      const [account] = await pca.getTokenCache().getAllAccounts();
      const silent = await pca.acquireTokenSilent({ account: account!, scopes: [`${armAlias}user_impersonation`] });
      assert.equal(silent.fromCache, false);
      assert.notEqual(silent.accessToken, first!.accessToken);
      const r = await fetch(`${short.url}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'uksouth'")}`, { headers: { authorization: `Bearer ${silent.accessToken}` } });
      await r.arrayBuffer();
      assert.equal(r.status, 200);
    } finally {
      await short.close();
    }
  });
});
