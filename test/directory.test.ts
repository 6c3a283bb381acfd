/**
 * The directory API, users and groups (issue 27 items 6–7), through the official mail client
 * `@microsoft/microsoft-graph-client` configured as test/compat-mail.test.ts does (base URL, host
 * allow-list, an `@azure/identity` credential, the audience alias): users (create with
 * passwordProfile, get by id and UPN, list with $filter / $select / $top / $count and next links,
 * PATCH, DELETE, the 400s of bad input), `/me`, groups and members (`$ref` add / remove,
 * `memberOf`), the organization; a created user signs in with its password at once and reads
 * `/me`; a deleted or disabled user is refused a token and its refresh token; a user without a
 * directory role is refused writes (403 in the mail envelope). The Kiota-based
 * `@microsoft/msgraph-sdk` (users package) creates, reads, lists and deletes a user too.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { UsernamePasswordCredential, type TokenCredential } from '@azure/identity';
import { Client } from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import { AzureIdentityAuthenticationProvider } from '@microsoft/kiota-authentication-azure';
import { createGraphServiceClient, GraphRequestAdapter } from '@microsoft/msgraph-sdk';
import '@microsoft/msgraph-sdk-users';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokenRequest } from './helpers/auth.ts';
import { demoAdmin, demoPublicClient, demoTenant, demoUser } from '../src/seed/demo.ts';

const mailAudience = 'https://graph.microsoft.com';

describe('directory users and groups through the official mail client', () => {
  let s: TestServer;
  let host: string;
  let admin: Client;
  let plainUser: Client;

  function client(credential: TokenCredential): Client {
    const authProvider = new TokenCredentialAuthenticationProvider(credential, { scopes: [`${mailAudience}/.default`] });
    return Client.initWithMiddleware({ authProvider, baseUrl: s.url, customHosts: new Set([host]) });
  }
  const options = () => ({ authorityHost: s.url, disableInstanceDiscovery: true });

  before(async () => {
    s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `mail=${mailAudience}` } });
    host = new URL(s.url).hostname;
    admin = client(new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, demoAdmin.userPrincipalName, demoAdmin.password, options()));
    plainUser = client(new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, demoUser.userPrincipalName, demoUser.password, options()));
  });
  after(async () => {
    await s?.close();
  });

  const newUser = (nick: string, extra: Record<string, unknown> = {}) => ({
    accountEnabled: true,
    displayName: `Test ${nick}`,
    mailNickname: nick,
    userPrincipalName: `${nick}@${demoTenant.domain}`,
    passwordProfile: { forceChangePasswordNextSignIn: false, password: 'Fresh-Pass-1' },
    ...extra,
  });

  test('organization and /me of the administrator', async () => {
    const org = await admin.api('/organization').get();
    assert.equal(org.value[0].id, demoTenant.id);
    assert.equal(org.value[0].verifiedDomains[0].name, demoTenant.domain);
    assert.match(org['@odata.context'], new RegExp(`^${s.url}/v1.0/\\$metadata#organization$`));
    const me = await admin.api('/me').get();
    assert.equal(me.id, demoAdmin.id);
    assert.equal(me.userPrincipalName, demoAdmin.userPrincipalName);
    assert.equal(me['@odata.context'], `${s.url}/v1.0/$metadata#users/$entity`);
  });

  test('a created user is listed, found by id and UPN, signs in at once, reads /me and its mailbox, receives mail', async () => {
    const created = await admin.api('/users').post(newUser('alice', { givenName: 'Alice', jobTitle: 'Tester' }));
    assert.match(created.id, /^[0-9a-f-]{36}$/);
    assert.equal(created.userPrincipalName, `alice@${demoTenant.domain}`);
    assert.equal(created.mail, `alice@${demoTenant.domain}`);
    assert.equal(created.givenName, 'Alice');
    assert.equal(created.accountEnabled, true);
    assert.equal((await admin.api(`/users/${created.id}`).get()).displayName, 'Test alice');
    assert.equal((await admin.api(`/users/alice@${demoTenant.domain}`).get()).id, created.id);
    const filtered = await admin.api('/users').filter("startswith(displayName,'Test al')").select('id,displayName').get();
    assert.deepEqual(filtered.value, [{ id: created.id, displayName: 'Test alice' }]);
    const byUpn = await admin.api('/users').filter(`userPrincipalName eq 'ALICE@${demoTenant.domain}'`).get();
    assert.equal(byUpn.value.length, 1);
    // Password grant, then /me and the mailbox (created on first use) with the new user's own token.
    const t = await tokenRequest(s.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: `alice@${demoTenant.domain}`, password: 'Fresh-Pass-1', scope: `api://stratus/mail/User.Read api://stratus/mail/Mail.ReadWrite` });
    assert.equal(t.status, 200, JSON.stringify(t.body));
    const me = await fetch(`${s.url}/v1.0/me`, { headers: { authorization: `Bearer ${t.body.access_token}` } });
    assert.equal(me.status, 200);
    assert.equal((await me.json()).id, created.id);
    const inbox = await fetch(`${s.url}/v1.0/me/mailFolders/inbox/messages`, { headers: { authorization: `Bearer ${t.body.access_token}` } });
    assert.equal(inbox.status, 200);
    assert.deepEqual((await inbox.json()).value, []);
    // Mail from the administrator is delivered into the new user's mailbox.
    await admin.api('/me/sendMail').post({ message: { subject: 'Welcome Alice', body: { contentType: 'Text', content: 'Hello' }, toRecipients: [{ emailAddress: { address: `alice@${demoTenant.domain}` } }] } });
    const after = await fetch(`${s.url}/v1.0/me/mailFolders/inbox/messages?$select=subject`, { headers: { authorization: `Bearer ${t.body.access_token}` } });
    assert.deepEqual((await after.json()).value.map((m: any) => m.subject), ['Welcome Alice']);
  });

  test('paging with $top and next links, $orderby, $count with ConsistencyLevel', async () => {
    for (const n of ['pg1', 'pg2', 'pg3']) await admin.api('/users').post(newUser(n));
    const seen: string[] = [];
    let page = await admin.api('/users').filter("startswith(mailNickname,'pg')").top(2).get();
    seen.push(...page.value.map((u: any) => u.mailNickname));
    assert.ok(page['@odata.nextLink'], 'a next link after two of three');
    assert.ok(page['@odata.nextLink'].startsWith(`${s.url}/v1.0/users?`));
    page = await admin.api(page['@odata.nextLink']).get();
    seen.push(...page.value.map((u: any) => u.mailNickname));
    assert.equal(page['@odata.nextLink'], undefined);
    assert.deepEqual(seen.sort(), ['pg1', 'pg2', 'pg3']);
    // $orderby: pages in that order (offset skip tokens).
    const ordered: string[] = [];
    let sorted = await admin.api('/users').filter("startswith(mailNickname,'pg')").orderby('displayName desc').top(2).get();
    ordered.push(...sorted.value.map((u: any) => u.mailNickname));
    sorted = await admin.api(sorted['@odata.nextLink']).get();
    ordered.push(...sorted.value.map((u: any) => u.mailNickname));
    assert.deepEqual(ordered, ['pg3', 'pg2', 'pg1']);
    await assert.rejects(admin.api('/applications').orderby('displayName').get(), (e: any) => e.statusCode === 400 && e.code === 'Request_UnsupportedQuery');
    const counted = await admin.api('/users').header('ConsistencyLevel', 'eventual').count(true).filter("startswith(mailNickname,'pg')").get();
    assert.equal(counted['@odata.count'], 3);
    await assert.rejects(admin.api('/users').count(true).get(), (e: any) => e.statusCode === 400 && e.code === 'Request_BadRequest');
  });

  test('bad input: missing property, taken UPN, foreign domain, weak password, unknown property, bad filter', async () => {
    const bad = async (body: unknown, code: string, re: RegExp) =>
      assert.rejects(admin.api('/users').post(body), (e: any) => e.statusCode === 400 && e.code === code && re.test(e.message));
    const { mailNickname: _n, ...noNick } = newUser('nonick');
    await bad(noNick, 'Request_BadRequest', /mailNickname/);
    await admin.api('/users').post(newUser('dup'));
    await bad(newUser('dup'), 'Request_BadRequest', /same value for property userPrincipalName/);
    await bad({ ...newUser('x'), userPrincipalName: 'x@elsewhere.test' }, 'Request_BadRequest', /domain portion/);
    await bad({ ...newUser('weak'), passwordProfile: { password: 'short' } }, 'Request_BadRequest', /complexity/);
    await bad({ ...newUser('odd'), favouriteColour: 'blue' }, 'Request_BadRequest', /favouriteColour/);
    await assert.rejects(admin.api('/users').search('"displayName:x"').get(), (e: any) => e.statusCode === 400 && e.code === 'Request_UnsupportedQuery' && /\$search/.test(e.message));
    await assert.rejects(admin.api('/users').filter('nosuch eq 1').get(), (e: any) => e.statusCode === 400 && e.code === 'Request_UnsupportedQuery');
    await assert.rejects(admin.api('/users/00000000-0000-4000-8000-000000000000').get(), (e: any) => e.statusCode === 404 && e.code === 'Request_ResourceNotFound');
    // Concurrent creates of one UPN: exactly one wins, the others get the 400 (never a 500).
    const tries = await Promise.all([1, 2, 3, 4, 5].map(() => admin.api('/users').post(newUser('race')).then(() => 201, (e: any) => e.statusCode)));
    assert.deepEqual(tries.sort(), [201, 400, 400, 400, 400]);
    const list = await admin.api('/users').filter("mailNickname eq 'x'").get();
    assert.equal(list.value.length, 0, 'nothing partial was left by the refused creations');
  });

  test('PATCH, disabling and DELETE: the user is refused tokens and its refresh token', async () => {
    const u = await admin.api('/users').post(newUser('bob'));
    await admin.api(`/users/${u.id}`).patch({ displayName: 'Bob Renamed', jobTitle: 'Lead' });
    const got = await admin.api(`/users/${u.id}`).select('displayName,jobTitle,accountEnabled').get();
    assert.deepEqual({ d: got.displayName, j: got.jobTitle, a: got.accountEnabled }, { d: 'Bob Renamed', j: 'Lead', a: true });
    const form = { grant_type: 'password', client_id: demoPublicClient.appId, username: `bob@${demoTenant.domain}`, password: 'Fresh-Pass-1', scope: 'api://stratus/mail/User.Read offline_access' };
    const first = await tokenRequest(s.url, form);
    assert.equal(first.status, 200);
    await admin.api(`/users/${u.id}`).patch({ accountEnabled: false });
    assert.equal((await tokenRequest(s.url, form)).status, 400, 'a disabled account does not sign in');
    await admin.api(`/users/${u.id}`).patch({ accountEnabled: true, passwordProfile: { password: 'Other-Pass-2' } });
    const second = await tokenRequest(s.url, { ...form, password: 'Other-Pass-2' });
    assert.equal(second.status, 200);
    await admin.api(`/users/${u.id}`).delete();
    const refused = await tokenRequest(s.url, { ...form, password: 'Other-Pass-2' });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'invalid_grant');
    const refresh = await tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: second.body.refresh_token });
    assert.equal(refresh.body.error, 'invalid_grant', 'the deleted user\'s refresh token is refused');
    await assert.rejects(admin.api(`/users/${u.id}`).get(), (e: any) => e.statusCode === 404);
  });

  test('a user without a directory role reads users but is refused writes (403 in the mail envelope)', async () => {
    const list = await plainUser.api('/users').get();
    assert.ok(list.value.some((u: any) => u.id === demoAdmin.id));
    await assert.rejects(plainUser.api('/users').post(newUser('nope')), (e: any) => e.statusCode === 403 && e.code === 'Authorization_RequestDenied');
    const raw = await fetch(`${s.url}/v1.0/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${(await tokenRequest(s.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: demoUser.userPrincipalName, password: demoUser.password, scope: 'api://stratus/mail/User.ReadWrite.All' })).body.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify(newUser('nope2')),
    });
    assert.equal(raw.status, 403);
    const body = await raw.json();
    assert.equal(body.error.code, 'Authorization_RequestDenied');
    assert.equal(typeof body.error.innerError, 'object', 'the mail envelope');
    const mailOnly = (await tokenRequest(s.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: demoAdmin.userPrincipalName, password: demoAdmin.password, scope: 'api://stratus/mail/Mail.Read' })).body.access_token;
    const noScope = await fetch(`${s.url}/v1.0/users`, { headers: { authorization: `Bearer ${mailOnly}` } });
    assert.equal(noScope.status, 403, 'an administrator without a directory scope is refused too');
    assert.equal((await fetch(`${s.url}/v1.0/users`)).status, 401);
  });

  test('groups: create, members $ref add / list / remove, memberOf, delete', async () => {
    const u = await admin.api('/users').post(newUser('carol'));
    const g = await admin.api('/groups').post({ displayName: 'Readers', mailEnabled: false, mailNickname: 'readers', securityEnabled: true });
    assert.equal(g.displayName, 'Readers');
    await admin.api(`/groups/${g.id}/members/$ref`).post({ '@odata.id': `https://graph.microsoft.com/v1.0/directoryObjects/${u.id}` });
    await assert.rejects(admin.api(`/groups/${g.id}/members/$ref`).post({ '@odata.id': `${s.url}/v1.0/directoryObjects/${u.id}` }), (e: any) => e.statusCode === 400 && /already exist/.test(e.message));
    await assert.rejects(admin.api(`/groups/${g.id}/members/$ref`).post({ '@odata.id': `${s.url}/v1.0/directoryObjects/not-a-guid` }), (e: any) => e.statusCode === 400);
    const members = await admin.api(`/groups/${g.id}/members`).get();
    assert.deepEqual(members.value.map((m: any) => [m['@odata.type'], m.id]), [['#vendor.graph.user', u.id]]);
    const asObject = await admin.api(`/directoryObjects/${u.id}`).get();
    assert.equal(asObject['@odata.type'], '#vendor.graph.user');
    const byIds = await admin.api('/directoryObjects/getByIds').post({ ids: [g.id, u.id, '00000000-0000-4000-8000-000000000000'], types: ['user', 'group'] });
    assert.deepEqual(byIds.value.map((o: any) => [o['@odata.type'], o.id]), [['#vendor.graph.group', g.id], ['#vendor.graph.user', u.id]]);
    await assert.rejects(admin.api('/directoryObjects/00000000-0000-4000-8000-000000000000').get(), (e: any) => e.statusCode === 404);
    const memberOf = await admin.api(`/users/${u.id}/memberOf`).get();
    assert.deepEqual(memberOf.value.map((x: any) => x.id), [g.id]);
    const found = await admin.api('/groups').filter(`displayName eq 'Readers'`).get();
    assert.equal(found.value[0].id, g.id);
    await admin.api(`/groups/${g.id}`).patch({ description: 'People who read' });
    assert.equal((await admin.api(`/groups/${g.id}`).get()).description, 'People who read');
    await admin.api(`/groups/${g.id}/members/${u.id}/$ref`).delete();
    assert.deepEqual((await admin.api(`/groups/${g.id}/members`).get()).value, []);
    await assert.rejects(admin.api(`/groups/${g.id}/members/${u.id}/$ref`).delete(), (e: any) => e.statusCode === 404);
    await admin.api(`/groups/${g.id}`).delete();
    await assert.rejects(admin.api(`/groups/${g.id}`).get(), (e: any) => e.statusCode === 404);
    await assert.rejects(plainUser.api('/groups').post({ displayName: 'X', mailEnabled: false, mailNickname: 'x', securityEnabled: true }), (e: any) => e.statusCode === 403);
  });

  test('tenants are isolated: the other tenant\'s administrator sees and changes only its own directory', async () => {
    const eveToken = (await tokenRequest(s.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: 'eve@other.test', password: 'Eve-Pass-1', scope: 'api://stratus/mail/.default' }, 'other.test')).body.access_token;
    const get = (path: string, init: RequestInit = {}) => fetch(`${s.url}/v1.0${path}`, { ...init, headers: { authorization: `Bearer ${eveToken}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
    const list = await (await get('/users')).json();
    assert.deepEqual(list.value.map((u: any) => u.userPrincipalName), ['eve@other.test']);
    assert.equal((await get(`/users/${demoAdmin.id}`)).status, 404);
    assert.equal((await get(`/users/${demoAdmin.userPrincipalName}`)).status, 404);
    assert.equal((await get(`/users/${demoUser.id}`, { method: 'DELETE' })).status, 404);
    const apps = await (await get('/applications')).json();
    assert.deepEqual(apps.value, []);
    const foreignUpn = await get('/users', { method: 'POST', body: JSON.stringify(newUser('eve2')) });
    assert.equal(foreignUpn.status, 400, "a UPN in the demo tenant's domain is not the other tenant's");
    const own = await get('/users', { method: 'POST', body: JSON.stringify({ ...newUser('eve2'), userPrincipalName: 'eve2@other.test' }) });
    assert.equal(own.status, 201);
    assert.equal((await admin.api('/users').filter("userPrincipalName eq 'eve2@other.test'").get()).value.length, 0, 'not visible to the demo tenant');
  });

  test('malformed input on every directory route answers 4xx in the mail envelope, never 5xx', async () => {
    const token = (await tokenRequest(s.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: demoAdmin.userPrincipalName, password: demoAdmin.password, scope: 'api://stratus/mail/.default' })).body.access_token;
    const g = await admin.api('/groups').post({ displayName: 'Fuzz', mailEnabled: false, mailNickname: 'fuzz', securityEnabled: true });
    const a = await admin.api('/applications').post({ displayName: 'Fuzz app' });
    const victim = await admin.api('/users').post(newUser('fuzzvictim'));
    const paths = ['/directoryObjects/getByIds', `/directoryObjects/${victim.id}`, '/users', `/users/${victim.id}`, '/groups', `/groups/${g.id}`, `/groups/${g.id}/members/$ref`, '/applications', `/applications/${a.id}`, `/applications/${a.id}/addPassword`, `/applications/${a.id}/removePassword`, '/servicePrincipals', `/servicePrincipals/${demoUser.id}/appRoleAssignments`, '/me', '/organization', '/users/%E0%A4%A'];
    const bodies = ['[]', '"x"', 'null', '{"displayName": 5}', '{"displayName": ""}', '{"web": {"redirectUris": ["::"]}}', '{"keyCredentials": [{"type": "AsymmetricX509Cert", "usage": "Verify", "key": 7}]}', '{"passwordProfile": {"password": 12}}', '{"@odata.id": 12}', '{"keyId": "nope"}', '{"appId": "x"}', '{"principalId": "x"}', '{not json', '{"passwordCredential": {"endDateTime": "soon"}}'];
    const queries = ['', '?$top=0', '?$top=abc', '?$filter=(', "?$filter=accountEnabled eq 'x'", '?$select=nosuch', '?$skiptoken=bad', '?$count=maybe'];
    let n = 0;
    for (const p of paths) {
      for (const q of queries) {
        const r = await fetch(`${s.url}/v1.0${p}${q}`, { headers: { authorization: `Bearer ${token}` } });
        const text = await r.text();
        assert.ok(r.status < 500, `GET ${p}${q}: ${r.status} ${text}`);
        n++;
      }
      for (const method of ['POST', 'PATCH', 'DELETE']) {
        for (const body of bodies) {
          const r = await fetch(`${s.url}/v1.0${p}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: method === 'DELETE' ? undefined : body });
          const text = await r.text();
          assert.ok(r.status < 500, `${method} ${p} ${body}: ${r.status} ${text}`);
          if (r.status >= 400) assert.equal(typeof JSON.parse(text).error.code, 'string', `${method} ${p}: the mail envelope`);
          n++;
          if (method === 'DELETE') break;
        }
      }
    }
    assert.ok(n > 400);
  });

  test('the Kiota-based @microsoft/msgraph-sdk (users package) creates, reads, lists and deletes a user', async () => {
    const authProvider = new AzureIdentityAuthenticationProvider(new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, demoAdmin.userPrincipalName, demoAdmin.password, options()), undefined, undefined, new Set([host]));
    const adapter = new GraphRequestAdapter(authProvider);
    adapter.baseUrl = `${s.url}/v1.0`;
    const kiota = createGraphServiceClient(adapter);
    const created = await kiota.users.post({ accountEnabled: true, displayName: 'Kiota User', mailNickname: 'kiota', userPrincipalName: `kiota@${demoTenant.domain}`, passwordProfile: { password: 'Kiota-Pass-1', forceChangePasswordNextSignIn: false } });
    assert.equal(created?.userPrincipalName, `kiota@${demoTenant.domain}`);
    const got = await kiota.users.byUserId(created!.id!).get();
    assert.equal(got?.displayName, 'Kiota User');
    const listed = await kiota.users.get({ queryParameters: { filter: "startswith(displayName,'Kiota')", select: ['id', 'displayName'] } });
    assert.deepEqual(listed?.value?.map((u) => u.id), [created!.id]);
    const ms = await kiota.users.byUserId(created!.id!).memberOf.get();
    assert.deepEqual(ms?.value, []);
    await kiota.users.byUserId(created!.id!).delete();
    await assert.rejects(kiota.users.byUserId(created!.id!).get(), (e: any) => e.responseStatusCode === 404);
  });

  test('the mailbox routes of the mail area are untouched by the directory routes', async () => {
    const r = await admin.api(`/users/${demoUser.id}/messages`).get().catch((e: any) => e);
    // The admin's delegated token reaches only its own mailbox: the mail area's 403, not a directory answer.
    assert.equal(r.statusCode, 403);
    assert.equal(r.code, 'ErrorAccessDenied');
    const own = await admin.api('/me/messages').top(1).get();
    assert.ok(Array.isArray(own.value));
  });
});
