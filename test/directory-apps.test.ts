/**
 * The directory API, applications and service principals (issue 27 items 6–7), through the
 * official mail client `@microsoft/microsoft-graph-client` and the credential libraries:
 * - an application created through the API, `addPassword`, its service principal and an app
 *   role assignment on the mail family's resource principal: `@azure/identity`
 *   `ClientSecretCredential` obtains a token carrying the role; `removePassword` and the
 *   secret is refused; a deleted application obtains no token;
 * - a certificate made here (openssl) registered as a key credential: `@azure/identity`
 *   `ClientCertificateCredential` (JS) and `azure.identity.CertificateCredential` (Python,
 *   Debian's python3-azure) authenticate with client assertions;
 * - a redirect URI added by PATCH works for the authorization-code flow at once;
 * - a role assignment to a group grants a member access to a resource-manager read.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClientCertificateCredential, ClientSecretCredential, UsernamePasswordCredential } from '@azure/identity';
import { Client } from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokenRequest, userToken } from './helpers/auth.ts';
import { demoAdmin, demoPublicClient, demoSubscription, demoTenant } from '../src/seed/demo.ts';

const mailAudience = 'https://graph.microsoft.com';
const python = process.env.STRATUS_TEST_PYTHON ?? '/usr/bin/python3';

/** A self-signed RSA certificate (PEM of key and certificate, and the certificate's DER in base64), made with openssl. */
function makeCertificate(dir: string, name: string): { pem: string; derBase64: string; file: string } {
  const key = path.join(dir, `${name}.key`);
  const crt = path.join(dir, `${name}.crt`);
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', crt, '-days', '30', '-subj', `/CN=${name}`], { stdio: 'ignore' });
  const pem = fs.readFileSync(key, 'utf8') + fs.readFileSync(crt, 'utf8');
  const file = path.join(dir, `${name}.pem`);
  fs.writeFileSync(file, pem);
  const der = execFileSync('openssl', ['x509', '-in', crt, '-outform', 'DER']);
  return { pem, derBase64: der.toString('base64'), file };
}

describe('directory applications and service principals', () => {
  let s: TestServer;
  let host: string;
  let admin: Client;
  let dir: string;
  const options = () => ({ authorityHost: s.url, disableInstanceDiscovery: true });

  before(async () => {
    s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `mail=${mailAudience}` } });
    host = new URL(s.url).hostname;
    const authProvider = new TokenCredentialAuthenticationProvider(new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, demoAdmin.userPrincipalName, demoAdmin.password, options()), {
      scopes: [`${mailAudience}/.default`],
    });
    admin = Client.initWithMiddleware({ authProvider, baseUrl: s.url, customHosts: new Set([host]) });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-dir-certs-'));
  });
  after(async () => {
    await s?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The mail family's resource principal and the id of one of its app roles. */
  async function mailRole(value: string): Promise<{ resourceId: string; appRoleId: string }> {
    const list = await admin.api('/servicePrincipals').filter(`displayName eq 'Stratus Mail and Directory API'`).get();
    assert.equal(list.value.length, 1, 'the built-in resource principal of the mail family is listed');
    const role = list.value[0].appRoles.find((r: any) => r.value === value);
    assert.ok(role, value);
    return { resourceId: list.value[0].id, appRoleId: role.id };
  }

  test('register an application, add a secret, create its principal, grant an app role: client credentials carry it; removePassword refuses the secret', async () => {
    const app = await admin.api('/applications').post({ displayName: 'Daemon' });
    assert.match(app.appId, /^[0-9a-f-]{36}$/);
    assert.notEqual(app.id, app.appId);
    const byAppId = await admin.api('/applications').filter(`appId eq '${app.appId}'`).get();
    assert.deepEqual(byAppId.value.map((a: any) => a.id), [app.id]);
    const pw = await admin.api(`/applications/${app.id}/addPassword`).post({ passwordCredential: { displayName: 'first' } });
    assert.equal(typeof pw.secretText, 'string');
    assert.equal(pw.hint, pw.secretText.slice(0, 3));
    const second = await admin.api(`/applications/${app.id}/addPassword`).post({ passwordCredential: { displayName: 'second' } });
    const shown = await admin.api(`/applications/${app.id}`).get();
    assert.deepEqual(shown.passwordCredentials.map((c: any) => [c.keyId, c.secretText]).sort(), [[pw.keyId, null], [second.keyId, null]].sort(), 'secrets are never shown again');

    // No service principal yet: client credentials are refused as the real service does.
    const early = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: app.appId, client_secret: pw.secretText, scope: 'api://stratus/mail/.default' });
    assert.equal(early.status, 400);
    assert.match(early.body.error_description, /AADSTS7000229/);
    const sp = await admin.api('/servicePrincipals').post({ appId: app.appId });
    assert.equal(sp.appId, app.appId);
    await assert.rejects(admin.api('/servicePrincipals').post({ appId: app.appId }), (e: any) => e.statusCode === 409);
    assert.deepEqual((await admin.api('/servicePrincipals').filter(`appId eq '${app.appId}'`).get()).value.map((x: any) => x.id), [sp.id]);

    const { resourceId, appRoleId } = await mailRole('User.Read.All');
    const assignment = await admin.api(`/servicePrincipals/${sp.id}/appRoleAssignments`).post({ principalId: sp.id, resourceId, appRoleId });
    assert.equal(assignment.appRoleId, appRoleId);
    assert.equal(assignment.principalId, sp.id);
    assert.ok((await admin.api(`/servicePrincipals/${resourceId}/appRoleAssignedTo`).get()).value.some((a: any) => a.id === assignment.id));
    await assert.rejects(admin.api(`/servicePrincipals/${sp.id}/appRoleAssignments`).post({ principalId: sp.id, resourceId, appRoleId }), (e: any) => e.statusCode === 409);

    for (const secret of [pw.secretText, second.secretText]) {
      const cred = new ClientSecretCredential(demoTenant.id, app.appId, secret, options());
      const t = await cred.getToken(`${mailAudience}/.default`);
      assert.deepEqual(decodeJwt(t.token).roles, ['User.Read.All']);
      assert.equal(decodeJwt(t.token).oid, sp.id);
      const daemon = Client.initWithMiddleware({ authProvider: new TokenCredentialAuthenticationProvider(cred, { scopes: [`${mailAudience}/.default`] }), baseUrl: s.url, customHosts: new Set([host]) });
      assert.equal((await daemon.api(`/users/${demoAdmin.id}`).get()).userPrincipalName, demoAdmin.userPrincipalName);
      await assert.rejects(daemon.api('/applications').get(), (e: any) => e.statusCode === 403, 'the role grants users, not applications');
    }

    await admin.api(`/applications/${app.id}/removePassword`).post({ keyId: pw.keyId });
    const refused = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: app.appId, client_secret: pw.secretText, scope: 'api://stratus/mail/.default' });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');
    await assert.rejects(admin.api(`/applications/${app.id}/removePassword`).post({ keyId: pw.keyId }), (e: any) => e.statusCode === 400);
    const still = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: app.appId, client_secret: second.secretText, scope: 'api://stratus/mail/.default' });
    assert.equal(still.status, 200, 'the other secret still works');

    await admin.api(`/servicePrincipals/${sp.id}/appRoleAssignments/${assignment.id}`).delete();
    const noRole = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: app.appId, client_secret: second.secretText, scope: 'api://stratus/mail/.default' });
    assert.equal(decodeJwt(noRole.body.access_token).roles, undefined, 'the removed assignment is gone from the next token');

    await admin.api(`/applications/${app.id}`).delete();
    const gone = await tokenRequest(s.url, { grant_type: 'client_credentials', client_id: app.appId, client_secret: second.secretText, scope: 'api://stratus/mail/.default' });
    assert.equal(gone.status, 401, 'a deleted application obtains no token');
    await assert.rejects(admin.api(`/servicePrincipals/${sp.id}`).get(), (e: any) => e.statusCode === 404);
  });

  test('a certificate key credential: ClientCertificateCredential (JS) and CertificateCredential (Python) authenticate with client assertions', async () => {
    const app = await admin.api('/applications').post({ displayName: 'Cert daemon' });
    await admin.api('/servicePrincipals').post({ appId: app.appId });
    const cert = makeCertificate(dir, 'daemon');
    await assert.rejects(admin.api(`/applications/${app.id}`).patch({ keyCredentials: [{ type: 'AsymmetricX509Cert', usage: 'Verify', key: Buffer.from('not a cert').toString('base64') }] }), (e: any) => e.statusCode === 400);
    await admin.api(`/applications/${app.id}`).patch({ keyCredentials: [{ type: 'AsymmetricX509Cert', usage: 'Verify', key: cert.derBase64, displayName: 'CN=daemon' }] });
    const shown = await admin.api(`/applications/${app.id}`).get();
    assert.equal(shown.keyCredentials.length, 1);
    assert.equal(shown.keyCredentials[0].key, null);

    const cred = new ClientCertificateCredential(demoTenant.id, app.appId, { certificate: cert.pem }, options());
    const t = await cred.getToken(`${mailAudience}/.default`);
    assert.equal(decodeJwt(t.token).appid, app.appId);

    const py = await promisify(execFile)(
      python,
      [
        '-c',
        [
          'import os, json',
          'from azure.identity import CertificateCredential',
          'c = CertificateCredential(os.environ["T"], os.environ["C"], certificate_path=os.environ["P"], authority=os.environ["U"], instance_discovery=False)',
          'print(json.dumps({"token": c.get_token(os.environ["S"]).token}))',
        ].join('\n'),
      ],
      { env: { PATH: process.env.PATH, REQUESTS_CA_BUNDLE: path.resolve('.stratus-test/tls/ca.pem'), T: demoTenant.id, C: app.appId, P: cert.file, U: s.url, S: `${mailAudience}/.default` }, timeout: 120_000 },
    );
    assert.equal(decodeJwt(JSON.parse(py.stdout).token).appid, app.appId);

    // A hand-made assertion signed by another key is refused; PS256 with x5t#S256 and RS256 with x5t both verify.
    const { SignJWT, importPKCS8 } = await import('jose');
    const keyPem = cert.pem.slice(0, cert.pem.indexOf('-----BEGIN CERTIFICATE-----'));
    const der = Buffer.from(cert.derBase64, 'base64');
    const { createHash } = await import('node:crypto');
    const aud = `${s.url}/${demoTenant.id}/oauth2/v2.0/token`;
    const assertion = async (alg: 'RS256' | 'PS256', header: Record<string, string>, pem = keyPem) =>
      new SignJWT({ jti: crypto.randomUUID() })
        .setProtectedHeader({ alg, ...header })
        .setIssuer(app.appId)
        .setSubject(app.appId)
        .setAudience(aud)
        .setIssuedAt()
        .setExpirationTime('5m')
        .sign(await importPKCS8(pem, alg));
    const form = (jwt: string) => ({ grant_type: 'client_credentials', client_id: app.appId, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: jwt, scope: 'api://stratus/mail/.default' });
    const ps = await assertion('PS256', { 'x5t#S256': createHash('sha256').update(der).digest('base64url') });
    assert.equal(decodeProtectedHeader(ps).alg, 'PS256');
    assert.equal((await tokenRequest(s.url, form(ps))).status, 200);
    assert.equal((await tokenRequest(s.url, form(await assertion('RS256', { x5t: createHash('sha1').update(der).digest('base64url') })))).status, 200);
    const other = makeCertificate(dir, 'other');
    const forged = await assertion('RS256', { x5t: createHash('sha1').update(der).digest('base64url') }, other.pem.slice(0, other.pem.indexOf('-----BEGIN CERTIFICATE-----')));
    const bad = await tokenRequest(s.url, form(forged));
    assert.equal(bad.status, 401);
    assert.match(bad.body.error_description, /AADSTS700027/);
  });

  test('a redirect URI added by PATCH works for the authorization-code flow at once', async () => {
    const app = await admin.api('/applications').post({ displayName: 'Native', isFallbackPublicClient: true, publicClient: { redirectUris: ['https://app.example/first'] } });
    const authorize = (redirectUri: string) =>
      fetch(`${s.url}/${demoTenant.id}/oauth2/v2.0/authorize`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: app.appId, redirect_uri: redirectUri, response_type: 'code', scope: 'api://stratus/mail/User.Read offline_access', username: demoAdmin.userPrincipalName, password: demoAdmin.password }).toString(),
      });
    const before = await authorize('https://app.example/second');
    assert.notEqual(before.status, 302, 'not registered yet');
    await before.arrayBuffer();
    await admin.api(`/applications/${app.id}`).patch({ publicClient: { redirectUris: ['https://app.example/first', 'https://app.example/second'] } });
    const r = await authorize('https://app.example/second');
    assert.equal(r.status, 302);
    const code = new URL(r.headers.get('location')!).searchParams.get('code')!;
    const t = await tokenRequest(s.url, { grant_type: 'authorization_code', client_id: app.appId, code, redirect_uri: 'https://app.example/second' });
    assert.equal(t.status, 200, JSON.stringify(t.body));
    assert.equal(decodeJwt(t.body.access_token).appid, app.appId);
    const shown = await admin.api(`/applications/${app.id}`).get();
    assert.deepEqual(shown.publicClient.redirectUris, ['https://app.example/first', 'https://app.example/second']);
    assert.equal(shown.isFallbackPublicClient, true);
    // Deleted: the refresh token it was issued and a new sign-in are refused.
    assert.equal(typeof t.body.refresh_token, 'string');
    await admin.api(`/applications/${app.id}`).delete();
    const refresh = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: app.appId, refresh_token: t.body.refresh_token });
    assert.equal(refresh.status, 400);
    const again = await authorize('https://app.example/second');
    assert.notEqual(again.status, 302, 'no code for a deleted application');
    assert.match(await again.text(), /AADSTS700016/);
  });

  test('a role assignment to a group grants its members a resource-manager read; removing the member takes it away', async () => {
    const user = await admin.api('/users').post({
      accountEnabled: true,
      displayName: 'Group Reader',
      mailNickname: 'greader',
      userPrincipalName: `greader@${demoTenant.domain}`,
      passwordProfile: { password: 'Group-Pass-1' },
    });
    const group = await admin.api('/groups').post({ displayName: 'ARM readers', mailEnabled: false, mailNickname: 'armreaders', securityEnabled: true });
    await admin.api(`/groups/${group.id}/members/$ref`).post({ '@odata.id': `${s.url}/v1.0/directoryObjects/${user.id}` });
    const adminArm = await userToken(s.url, { username: demoAdmin.userPrincipalName, password: demoAdmin.password }, ['api://stratus/arm/user_impersonation']);
    const scope = `/subscriptions/${demoSubscription.id}`;
    const put = await fetch(`${s.url}${scope}/providers/Vendor.Authorization/roleAssignments/${crypto.randomUUID()}?api-version=2022-04-01`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminArm}`, 'content-type': 'application/json' },
      body: JSON.stringify({ properties: { roleDefinitionId: `${scope}/providers/Vendor.Authorization/roleDefinitions/acdd72a7-3385-48ef-bd42-f606fba81ae7`, principalId: group.id, principalType: 'Group' } }),
    });
    assert.equal(put.status, 201, await put.text());
    const memberArm = await userToken(s.url, { username: `greader@${demoTenant.domain}`, password: 'Group-Pass-1' }, ['api://stratus/arm/user_impersonation']);
    const read = () => fetch(`${s.url}${scope}/resourcegroups/${demoSubscription.resourceGroup}?api-version=2021-04-01`, { headers: { authorization: `Bearer ${memberArm}` } }).then(async (r) => (await r.arrayBuffer(), r.status));
    assert.equal(await read(), 200, 'the group assignment grants the member');
    await admin.api(`/groups/${group.id}/members/${user.id}/$ref`).delete();
    assert.equal(await read(), 403, 'the very next request after the membership write');
  });
});
