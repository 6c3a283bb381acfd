/**
 * The document host's bootstrapper (spec analytics §2.4, §4.4, §5, §7; reference §6):
 * Bootstrap, GET_ROOT_CONTAINER, GET_NEW_ACCESS_TOKEN, the 401 challenge, 404 and 501, and
 * the ecosystem and container endpoints followed with the tokens the bootstrapper hands out.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, tokenRequest, userToken } from './helpers/auth.ts';
import { demoAdmin, demoTenant, demoUser, otherUser } from '../src/seed/demo.ts';
import { rootContainerId } from '../src/services/wopi/store.ts';

const wopiScope = 'api://stratus/wopi/user_impersonation';

async function call(url: string, init: { method?: string; token?: string; authorization?: string; headers?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...(init.headers ?? {}) };
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  else if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(url, { method: init.method ?? 'GET', headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
}

describe('bootstrapper', () => {
  let s: TestServer;
  let admin: string;
  let user: string;
  before(async () => {
    s = await startTestServer();
    admin = await userToken(s.url, identities.admin, [wopiScope]);
    user = await userToken(s.url, identities.user, [wopiScope]);
  });
  after(async () => {
    await s?.close();
  });
  const boot = () => `${s.url}/wopibootstrapper`;
  const challenge = () => `Bearer authorization_uri="${s.url}/common/oauth2/authorize",tokenIssuance_uri="${s.url}/common/oauth2/v2.0/token"`;

  test('GET: the plain Bootstrap of the signed-in user, with an ecosystem URL carrying an access token', async () => {
    const r = await call(boot(), { token: admin });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(r.headers.get('www-authenticate'), null);
    assert.deepEqual(Object.keys(r.body), ['Bootstrap']);
    const b = r.body.Bootstrap;
    assert.equal(b.UserId, demoAdmin.id);
    assert.equal(b.SignInName, demoAdmin.userPrincipalName);
    assert.equal(b.UserFriendlyName, demoAdmin.displayName);
    assert.match(b.EcosystemUrl, new RegExp(`^${s.url}/wopi/ecosystem\\?access_token=[A-Za-z0-9_-]{20,}$`));
    const eco = await call(b.EcosystemUrl);
    assert.equal(eco.status, 200);
    assert.equal(eco.body.SupportsContainers, true);
  });

  test('POST GET_ROOT_CONTAINER: Bootstrap and RootContainerInfo; the container URL, followed with its token, answers', async () => {
    const r = await call(boot(), { method: 'POST', token: admin, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['Bootstrap', 'RootContainerInfo']);
    assert.equal(r.body.Bootstrap.UserId, demoAdmin.id);
    const { ContainerPointer: ptr, ContainerInfo: info } = r.body.RootContainerInfo;
    const id = rootContainerId(demoTenant.id, demoAdmin.id);
    assert.equal(ptr.Name, 'My Files');
    assert.match(ptr.Url, new RegExp(`^${s.url}/wopi/containers/${id}\\?access_token=[A-Za-z0-9_-]{20,}$`));
    assert.equal(info.Name, 'My Files');
    for (const k of ['UserCanCreateChildContainer', 'UserCanCreateChildFile', 'UserCanDelete', 'UserCanRename']) assert.equal(info[k], false, k);
    assert.equal(typeof info.HostUrl, 'string');
    assert.equal(typeof info.SharingUrl, 'string');

    const check = await call(ptr.Url);
    assert.equal(check.status, 200);
    assert.equal(check.body.Name, 'My Files');
    assert.equal(check.body.UserCanRename, false);
    const token = new URL(ptr.Url).searchParams.get('access_token')!;
    const children = await call(`${s.url}/wopi/containers/${id}/children?access_token=${token}`);
    assert.deepEqual(children.body, { ChildContainers: [], ChildFiles: [] });
    const ancestry = await call(`${s.url}/wopi/containers/${id}/ancestry?access_token=${token}`);
    assert.deepEqual(ancestry.body, { AncestorsWithRootFirst: [] });
    const ecoPtr = await call(`${s.url}/wopi/containers/${id}/ecosystem_pointer?access_token=${token}`);
    assert.equal(ecoPtr.status, 200);
    assert.equal((await call(ecoPtr.body.Url)).status, 200);
    // The validator's way: the token as a bearer header instead of the query parameter.
    assert.equal((await call(`${s.url}/wopi/containers/${id}`, { token })).status, 200);

    // The ecosystem's own GetRootContainer points at the same container, with a fresh token.
    const eco = new URL(r.body.Bootstrap.EcosystemUrl);
    const root = await call(`${s.url}/wopi/ecosystem/root_container_pointer?access_token=${eco.searchParams.get('access_token')}`);
    assert.equal(root.status, 200);
    assert.equal(root.body.ContainerPointer.Name, 'My Files');
    assert.equal(new URL(root.body.ContainerPointer.Url).pathname, `/wopi/containers/${id}`);
    assert.notEqual(new URL(root.body.ContainerPointer.Url).searchParams.get('access_token'), token);
    assert.equal((await call(root.body.ContainerPointer.Url)).status, 200);
  });

  test('every 200 body has the shape of the reference\'s wire example, field by field (names and JSON types)', async () => {
    // Shapes of reference examples/fabric-pbi-wopi/wopi/bootstrapper-wire-examples.json, values replaced by their types.
    const bootstrap = { EcosystemUrl: 'string', UserId: 'string', SignInName: 'string', UserFriendlyName: 'string' };
    const containerInfo = { Name: 'string', HostUrl: 'string', SharingUrl: 'string', UserCanCreateChildContainer: 'boolean', UserCanCreateChildFile: 'boolean', UserCanDelete: 'boolean', UserCanRename: 'boolean' };
    const rootContainerInfo = { ContainerPointer: { Url: 'string', Name: 'string' }, ContainerInfo: containerInfo };
    const shape = (v: unknown): unknown =>
      Array.isArray(v) ? v.map(shape) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, x]) => [k, shape(x)])) : typeof v;
    const same = (got: unknown, want: unknown, what: string) => assert.deepEqual(shape(got), shape(JSON.parse(JSON.stringify(want).replace(/"(string|boolean|number)"/g, (_m, t) => (t === 'string' ? '"s"' : t === 'boolean' ? 'true' : '1')))), what);
    const id = rootContainerId(demoTenant.id, demoAdmin.id);

    const get = await call(boot(), { token: admin });
    same(get.body, { Bootstrap: bootstrap }, 'GET_bootstrap_200');
    const root = await call(boot(), { method: 'POST', token: admin, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    same(root.body, { Bootstrap: bootstrap, RootContainerInfo: rootContainerInfo }, 'POST_GET_ROOT_CONTAINER_200');
    const nat = await call(boot(), { method: 'POST', token: admin, headers: { 'X-WOPI-EcosystemOperation': 'GET_NEW_ACCESS_TOKEN', 'X-WOPI-WopiSrc': `${s.url}/wopi/containers/${id}` } });
    same(nat.body, { Bootstrap: bootstrap, AccessTokenInfo: { AccessToken: 'string', AccessTokenExpiry: 'number' } }, 'POST_GET_NEW_ACCESS_TOKEN_200');
    const eco = new URL(root.body.Bootstrap.EcosystemUrl).searchParams.get('access_token');
    const ptr = await call(`${s.url}/wopi/ecosystem/root_container_pointer?access_token=${eco}`);
    same(ptr.body, rootContainerInfo, 'ecosystem_GetRootContainer_200');
    same((await call(root.body.Bootstrap.EcosystemUrl)).body, { SupportsContainers: 'boolean' }, 'CheckEcosystem_200');
    // No property is ever null (reference §6.4).
    for (const b of [get.body, root.body, nat.body, ptr.body]) assert.ok(!JSON.stringify(b).includes('null'));
  });

  test('the Authorization header may be written `Bearer: <token>` and the token Base64-encoded (spec §4.4)', async () => {
    const colon = await call(boot(), { authorization: `Bearer: ${admin}` });
    assert.equal(colon.status, 200);
    const b64 = await call(boot(), { method: 'POST', authorization: `Bearer: ${Buffer.from(admin).toString('base64')}`, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    assert.equal(b64.status, 200);
    assert.equal(b64.body.Bootstrap.UserId, demoAdmin.id);
  });

  test('each user gets their own root container; the other tenant\'s user gets one on first use', async () => {
    const u = await call(boot(), { method: 'POST', token: user, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    assert.equal(u.status, 200);
    assert.equal(u.body.Bootstrap.UserId, demoUser.id);
    const uid = rootContainerId(demoTenant.id, demoUser.id);
    assert.equal(new URL(u.body.RootContainerInfo.ContainerPointer.Url).pathname, `/wopi/containers/${uid}`);
    const eveToken = await userToken(s.url, identities.eve, [wopiScope]);
    const e = await call(boot(), { method: 'POST', token: eveToken, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    assert.equal(e.status, 200);
    assert.equal(e.body.Bootstrap.SignInName, otherUser.userPrincipalName);
    const eveUrl = new URL(e.body.RootContainerInfo.ContainerPointer.Url);
    assert.notEqual(eveUrl.pathname, `/wopi/containers/${uid}`);
    assert.equal((await call(eveUrl.toString())).status, 200);
    // Again: the same container (stored), not a new one.
    const again = await call(boot(), { method: 'POST', token: eveToken, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    assert.equal(new URL(again.body.RootContainerInfo.ContainerPointer.Url).pathname, eveUrl.pathname);
  });

  test('WOPI access tokens are scoped: another container, the ecosystem with a container token, a container with an ecosystem token, a tampered or missing token → 401', async () => {
    const a = await call(boot(), { method: 'POST', token: admin, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    const ctoken = new URL(a.body.RootContainerInfo.ContainerPointer.Url).searchParams.get('access_token')!;
    const etoken = new URL(a.body.Bootstrap.EcosystemUrl).searchParams.get('access_token')!;
    const mine = rootContainerId(demoTenant.id, demoAdmin.id);
    const theirs = rootContainerId(demoTenant.id, demoUser.id);
    for (const url of [
      `${s.url}/wopi/containers/${theirs}?access_token=${ctoken}`,
      `${s.url}/wopi/ecosystem?access_token=${ctoken}`,
      `${s.url}/wopi/ecosystem/root_container_pointer?access_token=${ctoken}`,
      `${s.url}/wopi/containers/${mine}?access_token=${etoken}`,
      `${s.url}/wopi/containers/${mine}?access_token=${ctoken}x`,
      `${s.url}/wopi/containers/${mine}`,
      `${s.url}/wopi/ecosystem`,
      `${s.url}/wopi/ecosystem?access_token=${admin}`,
    ]) {
      const r = await call(url);
      assert.equal(r.status, 401, url);
      assert.equal(r.text, '');
    }
  });

  test('GET_NEW_ACCESS_TOKEN: a fresh container token for the caller\'s own container; 404 without, or for an unknown or foreign WopiSrc', async () => {
    const id = rootContainerId(demoTenant.id, demoAdmin.id);
    const before = Date.now();
    const r = await call(boot(), { method: 'POST', token: admin, headers: { 'X-WOPI-EcosystemOperation': 'GET_NEW_ACCESS_TOKEN', 'X-WOPI-WopiSrc': `${s.url}/wopi/containers/${id}` } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), ['AccessTokenInfo', 'Bootstrap']);
    const { AccessToken, AccessTokenExpiry } = r.body.AccessTokenInfo;
    assert.equal(typeof AccessToken, 'string');
    assert.ok(AccessTokenExpiry > before + 9 * 3600_000 && AccessTokenExpiry < before + 11 * 3600_000, String(AccessTokenExpiry));
    assert.equal((await call(`${s.url}/wopi/containers/${id}?access_token=${AccessToken}`)).status, 200);
    for (const src of [undefined, `${s.url}/wopi/containers/${rootContainerId(demoTenant.id, demoUser.id)}`, `${s.url}/wopi/containers/00000000-0000-4000-8000-000000000000`, `${s.url}/wopi/files/abc`, `https://elsewhere.test/wopi/containers/${id}`, 'not a url ::', `${s.url}/wopi/containers/%E0%A4%A`, `${s.url}/wopi/containers/%00`, `${s.url}/wopi/containers/${'a'.repeat(3000)}`]) {
      const headers: Record<string, string> = { 'X-WOPI-EcosystemOperation': 'GET_NEW_ACCESS_TOKEN' };
      if (src) headers['X-WOPI-WopiSrc'] = src;
      const n = await call(boot(), { method: 'POST', token: admin, headers });
      assert.equal(n.status, 404, String(src));
      assert.equal(n.text, '');
    }
  });

  test('an unknown or missing operation → 501 with no body; the reserved GET_WOPI_SRC_WITH_ACCESS_TOKEN answers as a plain Bootstrap', async () => {
    for (const headers of [{ 'X-WOPI-EcosystemOperation': 'BOGUS_OPERATION' }, {}, { 'X-WOPI-EcosystemOperation': 'get_root_container' }] as Record<string, string>[]) {
      const r = await call(boot(), { method: 'POST', token: admin, headers });
      assert.equal(r.status, 501, JSON.stringify(headers));
      assert.equal(r.text, '');
      assert.equal(r.headers.get('www-authenticate'), null);
    }
    const reserved = await call(boot(), { method: 'POST', token: admin, headers: { 'X-WOPI-EcosystemOperation': 'GET_WOPI_SRC_WITH_ACCESS_TOKEN' } });
    assert.equal(reserved.status, 200);
    assert.deepEqual(Object.keys(reserved.body), ['Bootstrap']);
  });

  test('missing, blank, malformed, invalid, foreign-audience or app tokens → 401 with exactly the challenge header and no body', async () => {
    const mail = await userToken(s.url, identities.admin, ['api://stratus/mail/Mail.Read']);
    const app = await appToken(s.url, 'wopi');
    const [h, p, sig] = admin.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p!, 'base64url').toString()), oid: demoUser.id })).toString('base64url')}.${sig}`;
    const cases: [string, string | undefined][] = [
      ['missing', undefined],
      ['blank', ''],
      ['scheme only', 'Bearer '],
      ['basic', 'Basic dXNlcjpwYXNz'],
      ['garbage', 'Bearer not-a-token'],
      ['forged', `Bearer ${forged}`],
      ['mail audience', `Bearer ${mail}`],
      ['app token', `Bearer ${app}`],
    ];
    for (const [what, authorization] of cases) {
      for (const method of ['GET', 'POST']) {
        const r = await call(boot(), { method, authorization, headers: { 'X-WOPI-EcosystemOperation': 'BOGUS_OPERATION' } });
        assert.equal(r.status, 401, `${what} ${method}`);
        assert.equal(r.headers.get('www-authenticate'), challenge(), what);
        assert.equal(r.text, '', what);
      }
    }
  });

  test('request bodies are ignored: malformed JSON, other types or a large body neither fail the call nor hide the 401', async () => {
    const post = (headers: Record<string, string>, body: string) => fetch(boot(), { method: 'POST', headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER', ...headers }, body });
    for (const [type, body] of [['application/json', '{bad'], ['application/json', '[1,2'], ['text/plain', 'hello'], ['application/x-www-form-urlencoded', 'a=%%%'], ['application/octet-stream', 'x'.repeat(2_000_000)]]) {
      const ok = await post({ authorization: `Bearer ${admin}`, 'content-type': type! }, body!);
      assert.equal(ok.status, 200, type);
      assert.equal(((await ok.json()) as any).Bootstrap.UserId, demoAdmin.id, type);
      const anon = await post({ 'content-type': type! }, body!);
      assert.equal(anon.status, 401, type);
      assert.equal(anon.headers.get('www-authenticate'), challenge(), type);
      assert.equal(await anon.text(), '', type);
    }
  });

  test('the challenge points at Stratus\'s identity provider: its token URI issues a token the bootstrapper accepts', async () => {
    const r = await call(boot());
    const m = /tokenIssuance_uri="([^"]+)"/.exec(r.headers.get('www-authenticate') ?? '');
    assert.ok(m);
    const res = await fetch(m[1]!, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: identities.user.username, password: identities.user.password, scope: wopiScope }).toString(),
    });
    assert.equal(res.status, 200);
    const { access_token } = (await res.json()) as { access_token: string };
    assert.equal((await call(boot(), { token: access_token })).body.Bootstrap.UserId, demoUser.id);
    const a = /authorization_uri="([^"]+)"/.exec(r.headers.get('www-authenticate') ?? '');
    assert.notEqual((await fetch(a![1]!)).status, 404);
  });

  test('unknown resources → 404 with no body', async () => {
    for (const [method, p] of [['GET', '/wopibootstrapper/other'], ['GET', '/wopi/files/abc'], ['GET', '/wopi/nothing'], ['PUT', '/wopibootstrapper']] as const) {
      const r = await call(`${s.url}${p}`, { method, token: admin });
      assert.equal(r.status, 404, p);
      assert.equal(r.text, '');
    }
  });

  test('tokens and containers survive a restart; expired WOPI and OAuth tokens are refused', async () => {
    const r = await call(boot(), { method: 'POST', token: admin, headers: { 'X-WOPI-EcosystemOperation': 'GET_ROOT_CONTAINER' } });
    const url = r.body.RootContainerInfo.ContainerPointer.Url as string;
    await s.restart();
    assert.equal((await call(url)).status, 200);
    assert.equal((await call(r.body.Bootstrap.EcosystemUrl)).status, 200);
    const fresh = await tokenRequest(s.url, { grant_type: 'password', username: identities.admin.username, password: identities.admin.password, scope: wopiScope });
    const clock = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 10 * 3600 + 1 }) });
    assert.equal(clock.status, 200);
    assert.equal((await call(url)).status, 401);
    assert.equal((await call(r.body.Bootstrap.EcosystemUrl)).status, 401);
    const expired = await call(boot(), { token: fresh.body.access_token });
    assert.equal(expired.status, 401);
    assert.equal(expired.headers.get('www-authenticate'), challenge());
  });
});
