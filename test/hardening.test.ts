/**
 * Issue 11 regressions (items 3–5): the reproduced 500s answer the family's 400; tokens need
 * `exp` (and a future `iat`/`nbf` is refused) in every family; router- and parser-level failures
 * (invalid UTF-8, over-long URLs and headers, bad chunking, unknown methods, CONNECT) answer in the
 * family's envelope. On SQLite and PostgreSQL (STRATUS_TEST_DATABASE_URL).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { SignJWT, decodeJwt, importJWK } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { demoPublicClient, demoSubscription, demoTenant } from '../src/seed/demo.ts';

const rgPath = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}`;
const webhook = `${rgPath}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/deep-hook?api-version=2024-10-23`;
const share = `${rgPath}/providers/Vendor.DataShare/accounts/stratus-share/shares/deep-share?api-version=2021-08-01`;
const skus = `/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01`;

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => s?.close());

/** A request with fetch; the body parsed when JSON. */
async function call(method: string, path: string, init: { token?: string; body?: string; type?: string } = {}) {
  const res = await fetch(s.url + path, {
    method,
    headers: { ...(init.token ? { authorization: `Bearer ${init.token}` } : {}), ...(init.body !== undefined ? { 'content-type': init.type ?? 'application/json' } : {}) },
    body: init.body,
    redirect: 'manual',
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* text */
  }
  return { status: res.status, body, headers: res.headers };
}

/**
 * One raw HTTP/1.1 exchange over a plain socket to the HTTP listener; resolves with what came
 * back before the close. `halfClose` false keeps the sending side open (a `CONNECT` client waits
 * for the answer: a FIN that arrives before the server takes the socket over may close it unanswered).
 */
function raw(request: string | Buffer, halfClose = true): Promise<string> {
  const u = new URL(s.httpUrl);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => (halfClose ? sock.end(request) : sock.write(request)));
    const chunks: Buffer[] = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', (e) => (chunks.length ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(e)));
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    sock.setTimeout(10_000, () => sock.destroy());
  });
}

/** Status and parsed JSON body of a raw response. */
function parseRaw(text: string): { status: number; body: any; head: string } {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  assert.ok(m, `no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`);
  const i = text.indexOf('\r\n\r\n');
  const head = text.slice(0, i);
  let bodyText = text.slice(i + 4);
  if (/transfer-encoding: chunked/i.test(head)) bodyText = bodyText.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '');
  let body: any;
  try {
    body = bodyText ? JSON.parse(bodyText) : undefined;
  } catch {
    body = bodyText;
  }
  return { status: Number(m[1]), body, head };
}

describe('the reproduced 500s are 400s in the family envelope', () => {
  test('a repeated client_id on authorize (GET and POST) → 400 invalid_request', async () => {
    const q = `client_id=${demoPublicClient.appId}&client_id=x&response_type=token&redirect_uri=${encodeURIComponent('http://localhost:5173/callback')}&scope=api://stratus/arm/user_impersonation`;
    for (const path of [`/${demoTenant.id}/oauth2/authorize?${q}`, `/${demoTenant.id}/oauth2/v2.0/authorize?${q}`]) {
      const g = await call('GET', path);
      assert.equal(g.status, 400, path);
      assert.equal(g.body.error, 'invalid_request');
      assert.match(g.body.error_description, /client_id/);
      const p = await call('POST', path, { body: 'username=a&password=b', type: 'application/x-www-form-urlencoded' });
      assert.equal(p.status, 400);
      assert.equal(p.body.error, 'invalid_request');
    }
    // A repeated form parameter on the token endpoint, too (RFC 6749 §3.1).
    const t = await call('POST', `/${demoTenant.id}/oauth2/v2.0/token`, { body: `grant_type=client_credentials&client_id=${identities.sp.clientId}&client_id=${identities.sp.clientId}&client_secret=${identities.sp.clientSecret}&scope=api://stratus/arm/.default`, type: 'application/x-www-form-urlencoded' });
    assert.equal(t.status, 400);
    assert.equal(t.body.error, 'invalid_request');
  });

  test('NUL and lone surrogates in client_id, username and the tenant segment → 400 invalid_request', async () => {
    const form = (f: Record<string, string>) => ({ body: new URLSearchParams(f).toString(), type: 'application/x-www-form-urlencoded' });
    const cases: [string, string, ReturnType<typeof form> | undefined][] = [
      ['POST', `/${demoTenant.id}/oauth2/v2.0/token`, form({ grant_type: 'client_credentials', client_id: 'a\u0000b', client_secret: 'x', scope: 'api://stratus/arm/.default' })],
      ['POST', `/${demoTenant.id}/oauth2/v2.0/token`, form({ grant_type: 'password', client_id: demoPublicClient.appId, username: 'a\u0000@b', password: 'x', scope: 'api://stratus/arm/.default' })],
      ['POST', `/${demoTenant.id}/oauth2/v2.0/token`, { body: 'grant_type=password&username=a%00&password=x&scope=api://stratus/arm/.default', type: 'application/x-www-form-urlencoded' }],
      ['POST', '/a%00b/oauth2/v2.0/token', form({ grant_type: 'client_credentials', client_id: identities.sp.clientId, client_secret: identities.sp.clientSecret, scope: 'api://stratus/arm/.default' })],
      ['GET', `/${demoTenant.id}/oauth2/authorize?client_id=a%00b&response_type=token&redirect_uri=x`, undefined],
      ['GET', '/%00/oauth2/authorize?client_id=x&response_type=token', undefined],
      ['GET', '/a%00/v2.0/.well-known/openid-configuration', undefined],
      ['GET', '/%ED%A0%80/discovery/v2.0/keys', undefined],
    ];
    for (const [method, path, init] of cases) {
      const r = await call(method, path, init ?? {});
      assert.equal(r.status, 400, `${method} ${path} ${init?.body ?? ''}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.error, 'invalid_request', path);
      assert.equal(typeof r.body.error_description, 'string');
    }
  });

  test('JSON 5,000 levels deep on webhook PUT/PATCH and data share PUT → 400 in the ARM / data share envelope', async () => {
    const admin = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    const deep = `{"properties":{"parameters":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}}`;
    const arrays = '['.repeat(100_000) + ']'.repeat(100_000);
    for (const [method, path, code] of [
      ['PUT', webhook, 'InvalidRequestContent'],
      ['PATCH', webhook, 'InvalidRequestContent'],
      ['PUT', share, 'InvalidRequestContent'],
    ] as const) {
      for (const body of [deep, arrays]) {
        const r = await call(method, path, { token: admin, body });
        assert.equal(r.status, 400, `${method} ${path}`);
        assert.deepEqual(Object.keys(r.body), ['error']);
        assert.equal(r.body.error.code, code);
        assert.match(r.body.error.message, /nested more than 64 levels/);
      }
    }
    // Depth 64 is still accepted by the guard (the area answers for its own content).
    const ok = await call('PUT', share, { token: admin, body: `{"properties":{"description":"d","terms":"t"},"tags":{}}` });
    assert.ok(ok.status < 300, JSON.stringify(ok.body));
    // Strings holding brackets do not count as nesting.
    const inString = await call('PATCH', `${rgPath}/providers/Vendor.DataShare/accounts/stratus-share/shares/deep-share?api-version=2021-08-01`, { token: admin, body: JSON.stringify({ properties: { description: '['.repeat(1000) } }) });
    assert.notEqual(inString.status, 500);
    assert.doesNotMatch(JSON.stringify(inString.body), /nested more than/);
  });

  test('a deep body is refused the same way in the mail, platform and analytics families', async () => {
    const deep = '['.repeat(70) + ']'.repeat(70);
    const mail = await call('POST', '/v1.0/me/messages', { token: await userToken(s.url, identities.user, ['api://stratus/mail/Mail.ReadWrite']), body: deep });
    assert.equal(mail.status, 400);
    assert.equal(mail.body.error.code, 'RequestBodyRead');
    const platform = await call('POST', '/v1/workspaces', { token: await userToken(s.url, identities.user, ['api://stratus/platform/Item.ReadWrite.All']), body: deep });
    assert.equal(platform.status, 400);
    assert.equal(platform.body.errorCode, 'InvalidInput');
    assert.equal(typeof platform.body.requestId, 'string');
  });

  test('api-version and OData options given twice → 400 InvalidParameter', async () => {
    const token = await appToken(s.url, 'arm');
    for (const q of ['&api-version=2021-07-01', '&API-VERSION=2021-07-01', '&$filter=x&$FILTER=y']) {
      const r = await call('GET', skus + q, { token });
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'InvalidParameter', q);
      assert.match(r.body.error.message, /more than once/);
    }
  });
});

describe('tokens need exp; nbf and iat are checked', () => {
  /** A token signed with the server's own active key: a real token's claims with `edit` applied. */
  async function forge(base: string, edit: (c: Record<string, unknown>) => void): Promise<string> {
    const row = await s.server.ctx.store.db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'asc').executeTakeFirstOrThrow();
    const key = await importJWK(JSON.parse(row.private_jwk), 'RS256');
    const claims: Record<string, unknown> = { ...decodeJwt(base) };
    edit(claims);
    return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: row.kid }).sign(key);
  }

  test('every family refuses a token without exp, with a non-numeric exp, or issued in the future; the unedited token works', async () => {
    const now = Math.floor(Date.now() / 1000);
    const families: [string, string, string][] = [
      ['arm', skus, 'api://stratus/arm/user_impersonation'],
      ['datashare', `${rgPath}/providers/Vendor.DataShare/accounts?api-version=2021-08-01`, 'api://stratus/arm/user_impersonation'],
      ['mail', '/v1.0/me/messages?$top=1', 'api://stratus/mail/Mail.Read'],
      ['platform', '/v1/workspaces', 'api://stratus/platform/Item.ReadWrite.All'],
      ['analytics', '/v1.0/myorg/admin/dataflows', 'api://stratus/analytics/Tenant.Read.All'],
    ];
    for (const [family, path, scope] of families) {
      const good = await userToken(s.url, identities.admin, [scope]);
      const base = await call('GET', path, { token: good });
      assert.ok(base.status < 400, `${family}: ${base.status} ${JSON.stringify(base.body)}`);
      const forged = [
        await forge(good, (c) => delete c.exp),
        await forge(good, (c) => (c.exp = 'never')),
        await forge(good, (c) => (c.iat = now + 3600)),
        await forge(good, (c) => (c.nbf = now + 3600)),
      ];
      for (const t of forged) {
        const r = await call('GET', path, { token: t });
        assert.equal(r.status, 401, `${family}: ${JSON.stringify(decodeJwt(t))}`);
      }
      // Unchanged claims re-signed are accepted: the refusals above are the claim checks.
      assert.ok((await call('GET', path, { token: await forge(good, () => undefined) })).status < 400, family);
    }
    // An expired token is still reported as expired (not as a token without exp).
    const armToken = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    const expired = await call('GET', skus, { token: await forge(armToken, (c) => (c.exp = now - 3600)) });
    assert.equal(expired.status, 401);
    assert.match(expired.body.error.message, /expired/);
    const noExp = await call('GET', skus, { token: await forge(armToken, (c) => delete c.exp) });
    assert.doesNotMatch(noExp.body.error.message, /expired/);
    // wopi answers its 401 with no body.
    const wopi = await forge(await userToken(s.url, identities.admin, ['api://stratus/wopi/user_impersonation']), (c) => delete c.exp);
    assert.equal((await call('GET', `/wopi/ecosystem?access_token=${wopi}`)).status, 401);
  });
});

describe('router- and parser-level failures answer in the envelope', () => {
  test('invalid UTF-8 / bad percent-encoding in path or query → the family’s 400', async () => {
    for (const [path, check] of [
      [`/subscriptions/${demoSubscription.id}/resourceGroups/%E0%A4%A?api-version=2021-04-01`, (b: any) => assert.equal(typeof b.error.code, 'string')],
      ['/v1.0/me/messages?$filter=%FF', (b: any) => assert.equal(typeof b.error.code, 'string')],
      ['/v1/workspaces/%C3%28', (b: any) => assert.equal(typeof b.errorCode, 'string')],
      ['/%FF%FE/oauth2/v2.0/token', (b: any) => assert.equal(b.error, 'invalid_request')],
    ] as const) {
      const r = await call('GET', path);
      assert.ok(r.status >= 400 && r.status < 500, `${path}: ${r.status}`);
      assert.equal(typeof r.body, 'object', `${path}: ${JSON.stringify(r.body)}`);
      check(r.body);
    }
  });

  test('unknown methods → 405/501 in the envelope; CONNECT is answered', async () => {
    const arm = parseRaw(await raw(`PROPFIND ${skus} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    assert.ok([405, 501].includes(arm.status), arm.head);
    assert.equal(typeof arm.body.error.code, 'string');
    const mail = parseRaw(await raw('BREW /v1.0/me/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    assert.ok([400, 405, 501].includes(mail.status), mail.head);
    assert.equal(typeof mail.body.error.code, 'string');
    const connect = parseRaw(await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', false));
    assert.ok(connect.status >= 400 && connect.status < 500, connect.head);
    assert.equal(typeof connect.body.error.code, 'string');
  });

  test('bad chunked encoding, over-long headers and URLs → 4xx in the envelope', async () => {
    const chunked = parseRaw(await raw(`PUT ${webhook} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`));
    assert.equal(chunked.status, 400, chunked.head);
    assert.equal(typeof chunked.body.error.code, 'string');
    const bigHeader = parseRaw(await raw(`GET /v1.0/me/messages HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`));
    assert.equal(bigHeader.status, 431, bigHeader.head);
    assert.equal(typeof bigHeader.body.error.code, 'string');
    assert.equal(typeof bigHeader.body.error.innerError, 'object', 'the mail envelope');
    const bigUrl = parseRaw(await raw(`GET /v1/workspaces?x=${'a'.repeat(70 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`));
    assert.ok([414, 431].includes(bigUrl.status), bigUrl.head);
    assert.equal(typeof bigUrl.body.errorCode, 'string');
    const garbage = parseRaw(await raw('GET /v1/workspaces HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n'));
    assert.equal(garbage.status, 400, garbage.head);
    assert.equal(typeof garbage.body.errorCode, 'string');
    // The server is still serving.
    assert.equal((await fetch(`${s.url}/_stratus/health`)).status, 200);
  });
});
