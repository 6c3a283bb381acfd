/**
 * Issue 30 (hardening, third round): one test per reproduced defect, on SQLite and PostgreSQL
 * (STRATUS_TEST_DATABASE_URL). The console cookie authorises no cross-origin change (also in
 * Chromium: a page on another port of the same host); fault globs are linear and never touch the
 * control plane; body limits per family; the identity provider's holes (post-logout redirects,
 * PKCE downgrade, smart lockout, device-code starts, tenant binding, replay revocation, bad
 * characters in a redirect URI); secrets in the request log and the debug log; writers outside
 * the server (`stratus seed`, `stratus reset`) wait for the live instances.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { spawn, execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, tokenRequest, userToken } from './helpers/auth.ts';
import { mailScopes } from './helpers/mail.ts';
import { demoPublicClient, demoServicePrincipal, demoSubscription, demoTenant, demoUser, otherTenant } from '../src/seed/demo.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer({ settings: { signInLockoutThreshold: 3, signInLockoutSeconds: 60, deviceCodeStartsPerAddress: 3, deviceCodeStartsPerClient: 100 } });
});
after(async () => s?.close());

const form = (o: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(o).toString(), redirect: 'manual' as const });
const redirect = 'http://localhost/callback';

async function advanceClock(seconds: number): Promise<void> {
  const r = await s.control('/_stratus/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: seconds }) });
  assert.equal(r.status, 200);
}

/** Signs the admin in on the authorize endpoint of `tenant` (POST with the password); the 302 (or form_post page). */
async function signIn(params: Record<string, string>, tenant: string = demoTenant.domain): Promise<Response> {
  const q = new URLSearchParams({ client_id: demoPublicClient.appId, redirect_uri: redirect, scope: 'api://stratus/mail/Mail.Read openid offline_access', state: 's', response_type: 'code', ...params });
  return fetch(`${s.url}/${tenant}/oauth2/v2.0/authorize?${q}`, form({ username: identities.admin.username, password: identities.admin.password }));
}
const codeOf = (r: Response) => new URL(r.headers.get('location')!).searchParams.get('code')!;
const redeem = (code: string, extra: Record<string, string> = {}, tenant: string = demoTenant.domain) =>
  tokenRequest(s.url, { grant_type: 'authorization_code', client_id: demoPublicClient.appId, code, redirect_uri: redirect, ...extra }, tenant);
const refresh = (rt: string) => tokenRequest(s.url, { grant_type: 'refresh_token', client_id: demoPublicClient.appId, refresh_token: rt });

/** One raw HTTP/1.1 exchange on the plain listener: what came back before the close (or `deadlineMs`). */
function raw(request: string, deadlineMs = 10_000): Promise<string> {
  const u = new URL(s.httpUrl);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => sock.write(request));
    const chunks: Buffer[] = [];
    sock.on('data', (c) => {
      chunks.push(c);
      // One answer is enough: a 413 closes the connection, but stop at a complete head too.
      if (Buffer.concat(chunks).includes('\r\n\r\n')) sock.end();
    });
    sock.on('error', (e) => (chunks.length ? resolve(Buffer.concat(chunks).toString('latin1')) : reject(e)));
    sock.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    sock.setTimeout(deadlineMs, () => sock.destroy());
  });
}

describe('row 1: the console cookie never authorises a change from another origin', () => {
  async function session(): Promise<string> {
    const r = await fetch(`${s.httpUrl}/_stratus/console?key=${encodeURIComponent(s.controlKey)}`, { redirect: 'manual' });
    return r.headers.get('set-cookie')!.split(';')[0]!;
  }

  test('every state-changing control route (not only console forms) needs the own Origin or Sec-Fetch-Site: same-origin', async () => {
    const cookie = await session();
    const before = await (await s.control('/_stratus/clock')).json();
    // Refused calls ask for an hour (it would show); accepted ones for nothing.
    const post = (p: string, headers: Record<string, string>, advanceSeconds = 3600) =>
      fetch(`${s.httpUrl}${p}`, { method: 'POST', headers: { cookie, 'content-type': 'application/json', ...headers }, body: JSON.stringify({ advanceSeconds }) });
    const otherPort = `http://127.0.0.1:${Number(new URL(s.httpUrl).port) + 1}`;
    const refused: Record<string, string>[] = [{}, { origin: otherPort }, { origin: 'null' }, { 'sec-fetch-site': 'same-site', origin: s.httpUrl }, { referer: `${otherPort}/x` }];
    for (const headers of refused) {
      const r = await post('/_stratus/clock', headers);
      assert.equal(r.status, 403, JSON.stringify(headers));
      assert.match(await r.text(), /console session must be sent from the console itself/);
    }
    for (const p of ['/_stratus/reset', '/_stratus/faults']) assert.equal((await post(p, { origin: otherPort })).status, 403, p);
    const del = await fetch(`${s.httpUrl}/_stratus/faults`, { method: 'DELETE', headers: { cookie, origin: otherPort } });
    assert.equal(del.status, 403);
    assert.deepEqual((await (await s.control('/_stratus/clock')).json()).offsetMs, before.offsetMs, 'the clock did not move');
    // Reads with the cookie, changes from the own origin, and bearer callers are unaffected.
    assert.equal((await fetch(`${s.httpUrl}/_stratus/clock`, { headers: { cookie } })).status, 200);
    assert.equal((await post('/_stratus/clock', { origin: s.httpUrl }, 0)).status, 200);
    assert.equal((await post('/_stratus/clock', { 'sec-fetch-site': 'same-origin' }, 0)).status, 200);
    assert.equal((await s.control('/_stratus/clock', { method: 'POST', headers: { 'content-type': 'application/json', origin: otherPort }, body: JSON.stringify({ advanceSeconds: 0 }) })).status, 200);
  });

  const chromiumPath = '/usr/bin/chromium';
  test('in Chromium: a page on another port of the same host cannot reset the store with the console cookie', { skip: !fs.existsSync(chromiumPath) && !process.env.CI ? `${chromiumPath} missing` : false }, async () => {
    const token = await userToken(s.url, identities.user, mailScopes);
    const made = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: `csrf canary ${randomBytes(4).toString('hex')}` }) });
    assert.equal(made.status, 201);
    const canary = ((await made.json()) as { id: string }).id;
    const target = `${s.httpUrl}/_stratus/reset`;
    const evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(
        `<!doctype html><title>start</title><script>fetch(${JSON.stringify(target)},{method:'POST',mode:'no-cors',credentials:'include'}).then(()=>{document.title='sent'},()=>{document.title='failed'})</script>`,
      );
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()));
    const { chromium } = await import('playwright-core');
    const userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-chromium-'));
    const browser = await chromium.launchPersistentContext(userDir, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage();
      // The developer signs in to the console (the banner's link), on the plain-HTTP listener.
      await page.goto(`${s.httpUrl}/_stratus/console?key=${encodeURIComponent(s.controlKey)}`);
      assert.ok((await browser.cookies(`${s.httpUrl}/_stratus/console`)).some((c) => c.name === 'stratus_console'), 'signed in');
      // The console itself (same origin) may still change state with the cookie.
      const own = await page.evaluate(async () => (await fetch('/_stratus/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"advanceSeconds":0}' })).status);
      assert.equal(own, 200);
      // Another page, another port of the same host (same site, another origin).
      const attacker = await browser.newPage();
      await attacker.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      await attacker.waitForFunction(() => document.title !== 'start', undefined, { timeout: 15_000 });
      assert.equal(await attacker.title(), 'sent', 'the cross-origin request was sent');
    } finally {
      await browser.close();
      fs.rmSync(userDir, { recursive: true, force: true });
      evil.closeAllConnections();
      await new Promise<void>((r) => evil.close(() => r()));
    }
    const still = await fetch(`${s.url}/v1.0/me/messages/${encodeURIComponent(canary)}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(still.status, 200, 'the store was not reset by the cross-origin page');
  });
});

describe('rows 2 and 13: fault globs', () => {
  test('a backtracking-prone glob answers at once on a long path (linear matcher)', async () => {
    const add = await s.control('/_stratus/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: { path: '**/a*a*a*a*a*a*b' }, effect: { status: 503 } }) });
    assert.equal(add.status, 201);
    try {
      const r = await fetch(`${s.url}/v1.0/me/${'a'.repeat(200)}`, { signal: AbortSignal.timeout(10_000) });
      assert.ok(r.status >= 400 && r.status < 500, `unmatched: the request goes on to its own answer (${r.status})`);
      const hit = await fetch(`${s.url}/v1.0/me/${'a'.repeat(200)}b`, { signal: AbortSignal.timeout(10_000) });
      assert.equal(hit.status, 503, 'the rule still matches what it names');
      assert.equal((await fetch(`${s.url}/_stratus/health`, { signal: AbortSignal.timeout(10_000) })).status, 200);
    } finally {
      await (await s.control('/_stratus/faults', { method: 'DELETE' })).arrayBuffer();
    }
    const long = await s.control('/_stratus/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: { path: `/${'*a'.repeat(200)}` }, effect: { status: 503 } }) });
    assert.equal(long.status, 400, 'patterns are bounded');
  });

  test('a catch-all reset rule never touches a control route, whatever its spelling', async () => {
    const add = await s.control('/_stratus/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: { path: '**' }, effect: { reset: true } }) });
    assert.equal(add.status, 201);
    try {
      for (const p of ['/%5Fstratus/faults', '/%5fSTRATUS/faults', '//_stratus/./faults', '/x/../_stratus/faults']) {
        const r = await fetch(`${s.url}${p}`, { headers: { authorization: `Bearer ${s.controlKey}` }, signal: AbortSignal.timeout(10_000) }).catch((e: Error) => e);
        assert.ok(!(r instanceof Error), `${p}: ${r instanceof Error ? r.message : ''}`);
        assert.equal((r as Response).status, 200, p);
      }
    } finally {
      await (await s.control('/_stratus/faults', { method: 'DELETE' })).arrayBuffer();
    }
  });
});

describe('row 3: body limits per family, answered before the body is read', () => {
  test('mail: over 4 MB → 413 in the mail envelope; a subject over 255 characters → 400', async () => {
    const token = await userToken(s.url, identities.user, mailScopes);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const big = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers, body: JSON.stringify({ subject: 'x'.repeat(5 * 1024 * 1024) }) });
    assert.equal(big.status, 413);
    assert.equal(((await big.json()) as any).error.code, 'ErrorRequestEntityTooLarge');
    const long = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers, body: JSON.stringify({ subject: 'y'.repeat(256) }) });
    assert.equal(long.status, 400);
    assert.equal(((await long.json()) as any).error.code, 'ErrorInvalidProperty');
    const ok = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers, body: JSON.stringify({ subject: 'y'.repeat(255) }) });
    assert.equal(ok.status, 201);
    const id = ((await ok.json()) as any).id as string;
    const patch = await fetch(`${s.url}/v1.0/me/messages/${encodeURIComponent(id)}`, { method: 'PATCH', headers, body: JSON.stringify({ subject: 'z'.repeat(300) }) });
    assert.equal(patch.status, 400);
    // A declared 100 MB body is refused from its Content-Length, without waiting for a byte of it.
    const head = await raw(`POST /v1.0/me/messages HTTP/1.1\r\nHost: ${new URL(s.httpUrl).host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n{"subject":"`);
    assert.match(head, /^HTTP\/1\.1 413 /, head.slice(0, 200) || '(no answer within 10 s: the server waited for the body)');
  });

  test('resource manager 4 MB, identity provider forms 64 KiB, control plane 1 MiB: 413 in each envelope', async () => {
    const arm = await appToken(s.url, 'arm');
    const hook = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/huge?api-version=2024-10-23`;
    const r1 = await fetch(`${s.url}${hook}`, { method: 'PUT', headers: { authorization: `Bearer ${arm}`, 'content-type': 'application/json' }, body: JSON.stringify({ properties: { pad: 'p'.repeat(5 * 1024 * 1024) } }) });
    assert.equal(r1.status, 413);
    assert.equal(((await r1.json()) as any).error.code, 'RequestEntityTooLarge');
    const r2 = await fetch(`${s.url}/${demoTenant.id}/oauth2/v2.0/token`, form({ grant_type: 'client_credentials', client_id: demoServicePrincipal.appId, client_secret: 's'.repeat(100 * 1024) }));
    assert.equal(r2.status, 413);
    assert.equal(((await r2.json()) as any).error, 'invalid_request');
    const r3 = await s.control('/_stratus/clock', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 0, pad: 'p'.repeat(2 * 1024 * 1024) }) });
    assert.equal(r3.status, 413);
  });
});

describe('identity provider', () => {
  test('row 4: post_logout_redirect_uri is followed only when registered for the named client', async () => {
    const evil = await fetch(`${s.url}/${demoTenant.domain}/oauth2/v2.0/logout?post_logout_redirect_uri=${encodeURIComponent('https://evil.example/phish')}`, { redirect: 'manual' });
    assert.equal(evil.status, 200);
    assert.equal(evil.headers.get('location'), null);
    const evilNamed = await fetch(`${s.url}/${demoTenant.domain}/oauth2/v2.0/logout?client_id=${demoPublicClient.appId}&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/phish')}`, { redirect: 'manual' });
    assert.equal(evilNamed.status, 200);
    const ok = await fetch(`${s.url}/${demoTenant.domain}/oauth2/v2.0/logout?client_id=${demoPublicClient.appId}&state=x&post_logout_redirect_uri=${encodeURIComponent(redirect)}`, { redirect: 'manual' });
    assert.equal(ok.status, 302);
    assert.equal(ok.headers.get('location'), `${redirect}?state=x`);
  });

  test('row 5: a code issued without code_challenge is refused with a code_verifier (PKCE downgrade)', async () => {
    const res = await signIn({});
    assert.equal(res.status, 302);
    const r = await redeem(codeOf(res), { code_verifier: randomBytes(32).toString('base64url') });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid_grant');
    const plain = await redeem(codeOf(await signIn({})));
    assert.equal(plain.status, 200, 'without a verifier it is redeemed');
  });

  test('row 10: codes and device codes are bound to the tenant they were issued at', async () => {
    const code = codeOf(await signIn({}, demoTenant.domain));
    const elsewhere = await redeem(code, {}, otherTenant.domain);
    assert.equal(elsewhere.status, 400);
    assert.equal(elsewhere.body.error, 'invalid_grant');
    // Issued at `organizations`: bound to the user's tenant (redeemed there, not at another).
    const org = codeOf(await signIn({}, 'organizations'));
    assert.equal((await redeem(org, {}, otherTenant.id)).status, 400);
    assert.equal((await redeem(codeOf(await signIn({}, 'organizations')), {}, demoTenant.id)).status, 200);
    const d = (await (await fetch(`${s.url}/${demoTenant.domain}/oauth2/v2.0/devicecode`, form({ client_id: demoPublicClient.appId, scope: 'api://stratus/arm/user_impersonation' }))).json()) as any;
    await fetch(`${s.url}/devicelogin`, form({ code: d.user_code, username: identities.admin.username, password: identities.admin.password }));
    const foreign = await tokenRequest(s.url, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: demoPublicClient.appId, device_code: d.device_code }, otherTenant.domain);
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error, 'invalid_grant');
    const home = await tokenRequest(s.url, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: demoPublicClient.appId, device_code: d.device_code }, demoTenant.domain);
    assert.equal(home.status, 200, JSON.stringify(home.body));
  });

  test('row 11: replaying a redeemed code revokes its refresh tokens; replaying a rotated refresh token revokes the family', async () => {
    const code = codeOf(await signIn({}));
    const first = await redeem(code);
    assert.equal(first.status, 200);
    const rt1 = first.body.refresh_token as string;
    const replay = await redeem(code);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    assert.equal((await refresh(rt1)).body.error, 'invalid_grant', 'the refresh token issued from the replayed code is revoked');

    const other = await redeem(codeOf(await signIn({})));
    const r2 = await refresh(other.body.refresh_token);
    assert.equal(r2.status, 200);
    const r3 = await refresh(r2.body.refresh_token);
    assert.equal(r3.status, 200);
    assert.equal((await refresh(other.body.refresh_token)).body.error, 'invalid_grant', 'a rotated token replayed');
    assert.equal((await refresh(r3.body.refresh_token)).body.error, 'invalid_grant', 'the whole family is revoked');
  });

  test('row 12: CR/LF or a character above U+00FF in a redirect URI → the error page (400), never 500', async () => {
    for (const uri of ['http://localhost/callback?a\r\nb', 'http://localhost/callback?a\u0100b', 'http://localhost/callback?a\u2028b', 'http://localhost/call\nback']) {
      const q = new URLSearchParams({ client_id: demoPublicClient.appId, response_type: 'bogus', redirect_uri: uri });
      const r = await fetch(`${s.url}/${demoTenant.domain}/oauth2/v2.0/authorize?${q}`, { redirect: 'manual' });
      assert.equal(r.status, 400, JSON.stringify(uri));
      assert.match(await r.text(), /AADSTS50011/);
    }
  });

  test('row 9: unauthenticated device-code starts are limited per address; an over-long scope is refused', async () => {
    const long = await fetch(`${s.url}/common/oauth2/v2.0/devicecode`, form({ client_id: demoPublicClient.appId, scope: `api://stratus/arm/user_impersonation ${'x'.repeat(3000)}` }));
    assert.equal(long.status, 400);
    assert.equal(((await long.json()) as any).error, 'invalid_scope');
    await advanceClock(61); // a fresh window of the start limit
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 5; i++) {
      const r = await fetch(`${s.url}/common/oauth2/v2.0/devicecode`, form({ client_id: demoPublicClient.appId, scope: 'api://stratus/arm/user_impersonation' }));
      statuses.push(r.status);
      if (r.status === 429) refused ??= r;
      else await r.arrayBuffer();
    }
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
    assert.ok(Number(refused!.headers.get('retry-after')) >= 1);
    assert.equal(((await refused!.json()) as any).error, 'temporarily_unavailable');
    await advanceClock(61);
    assert.equal((await fetch(`${s.url}/common/oauth2/v2.0/devicecode`, form({ client_id: demoPublicClient.appId, scope: 'api://stratus/arm/user_impersonation' }))).status, 200);
  });

  test('row 8: smart lockout of guessed passwords (per account) and client secrets (per client), with Retry-After, on the Stratus clock', async () => {
    const pw = (password: string) => tokenRequest(s.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: demoUser.userPrincipalName, password, scope: 'api://stratus/arm/user_impersonation' });
    for (let i = 0; i < 3; i++) assert.match((await pw(`wrong-${i}`)).body.error_description, /AADSTS50126/);
    const locked = await fetch(`${s.url}/${demoTenant.id}/oauth2/v2.0/token`, form({ grant_type: 'password', client_id: demoPublicClient.appId, username: demoUser.userPrincipalName.toUpperCase(), password: demoUser.password, scope: 'api://stratus/arm/user_impersonation' }));
    assert.equal(locked.status, 400);
    assert.ok(Number(locked.headers.get('retry-after')) >= 1 && Number(locked.headers.get('retry-after')) <= 60);
    const body = (await locked.json()) as any;
    assert.equal(body.error, 'invalid_grant');
    assert.match(body.error_description, /AADSTS50053/);
    // The sign-in page says so too.
    const page = await fetch(`${s.url}/${demoTenant.domain}/oauth2/v2.0/authorize?${new URLSearchParams({ client_id: demoPublicClient.appId, redirect_uri: redirect, response_type: 'code', scope: 'openid' })}`, form({ username: demoUser.userPrincipalName, password: demoUser.password }));
    assert.match(await page.text(), /AADSTS50053/);

    const cs = (secret: string) => tokenRequest(s.url, { grant_type: 'client_credentials', client_id: demoServicePrincipal.appId, client_secret: secret, scope: 'api://stratus/arm/.default' });
    for (let i = 0; i < 3; i++) assert.equal((await cs(`wrong-${i}`)).status, 401);
    const clientLocked = await cs(demoServicePrincipal.secret);
    assert.equal(clientLocked.status, 401);
    assert.match(clientLocked.body.error_description, /AADSTS50053/);
    // Other accounts are not affected.
    assert.equal((await tokenRequest(s.url, { grant_type: 'password', client_id: demoPublicClient.appId, username: identities.admin.username, password: identities.admin.password, scope: 'api://stratus/arm/user_impersonation' })).status, 200);

    await advanceClock(61);
    assert.equal((await pw(demoUser.password)).status, 200, 'the lock ends with its window');
    assert.equal((await cs(demoServicePrincipal.secret)).status, 200);
  });
});

describe('rows 6 and 7: secrets in the logs', () => {
  test('row 6: the request log redacts codes and tokens in Location, form_post HTML and device_code form fields', async () => {
    const q = await signIn({ state: 'log-q' });
    const code = codeOf(q);
    const fp = await signIn({ state: 'log-fp', response_mode: 'form_post' });
    const html = await fp.text();
    const fpCode = /name="code" value="([^"]+)"/.exec(html)![1]!;
    const implicit = await signIn({ state: 'log-frag', response_type: 'token', scope: 'api://stratus/arm/user_impersonation' });
    const fragToken = new URLSearchParams(new URL(implicit.headers.get('location')!).hash.slice(1)).get('access_token')!;
    assert.ok(fragToken);
    const d = (await (await fetch(`${s.url}/common/oauth2/v2.0/devicecode`, form({ client_id: demoPublicClient.appId, scope: 'api://stratus/arm/user_impersonation' }))).json()) as any;
    const poll = await tokenRequest(s.url, { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: demoPublicClient.appId, device_code: d.device_code });
    assert.equal(poll.body.error, 'authorization_pending');
    const log = JSON.stringify((await (await s.control('/_stratus/requests?family=oauth&limit=50')).json()) as unknown);
    for (const [what, secret] of [
      ['query code', code],
      ['form_post code', fpCode],
      ['fragment token', fragToken],
      ['device code', d.device_code as string],
    ] as const) {
      assert.ok(!log.includes(secret), `${what} is not in the request log`);
    }
    assert.match(log, /code=\[redacted\]/);
  });

  test('row 7: at debug level the query (key=, client_secret=) and the Cookie header are redacted', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-debug-'));
    const tls = path.resolve('.stratus-test/tls');
    const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
    const schema = dbUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
    const key = `debug-key-${randomBytes(8).toString('hex')}`;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      env: {
        ...process.env,
        STRATUS_DATA_DIR: dataDir,
        STRATUS_LOG_LEVEL: 'debug',
        STRATUS_CONTROL_KEY: key,
        STRATUS_HTTPS_PORT: '0',
        STRATUS_HTTP_PORT: '0',
        STRATUS_TLS_CERT: path.join(tls, 'server.pem'),
        STRATUS_TLS_KEY: path.join(tls, 'server-key.pem'),
        ...(dbUrl ? { STRATUS_DATABASE_URL: dbUrl, STRATUS_DATABASE_SCHEMA: schema! } : {}),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.resume();
    let out = '';
    const waiters: (() => void)[] = [];
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      waiters.splice(0).forEach((w) => w());
    });
    const until = async (pred: () => boolean, what: string) => {
      const deadline = Date.now() + 60_000;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; output so far:\n${out.slice(-2000)}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 1000).unref();
        });
      }
    };
    try {
      await until(() => /public URL:\s+\S+\n/.test(out) && /console:\s+\S+\n/.test(out), 'the banner');
      const origin = /public URL:\s+(\S+)\n/.exec(out)![1]!;
      const login = await fetch(`${origin}/_stratus/console?key=${encodeURIComponent(key)}`, { redirect: 'manual' }).catch((e: Error) => {
        throw new Error(`${origin}: ${String((e as { cause?: unknown }).cause)}`);
      });
      assert.equal(login.status, 303);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      await (await fetch(`${origin}/_stratus/console`, { headers: { cookie } })).arrayBuffer();
      const secret = `cs-${randomBytes(8).toString('hex')}`;
      await (await fetch(`${origin}/${demoTenant.id}/oauth2/v2.0/authorize?client_id=${demoPublicClient.appId}&client_secret=${secret}&marker=debug-done`, { redirect: 'manual' })).arrayBuffer();
      await until(() => out.includes('debug-done'), 'the debug line of the last request');
      // The request lines (the banner prints the key on purpose: it is the developer's terminal).
      const lines = out.split('\n').filter((l) => l.includes('"msg":"request"'));
      assert.ok(lines.length >= 3, out.slice(-2000));
      const logged = lines.join('\n');
      assert.match(logged, /"query":"key=\[redacted\]"/);
      assert.ok(!logged.includes(key), 'the control key is not in the debug log');
      assert.ok(!logged.includes(secret), 'client_secret is not in the debug log');
      assert.ok(!logged.includes(cookie.split('=')[1]!), 'the console cookie is not in the debug log');
    } finally {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (dbUrl) {
        const c = new pg.Client({ connectionString: dbUrl });
        await c.connect();
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await c.end();
      }
    }
  });
});

describe('row 14: writers outside the server wait for the live instances', () => {
  /** Runs the CLI against `s`'s store (its own data folder; the same database and schema). */
  function cli(...args: string[]): Promise<string> {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-cli3-'));
    // PostgreSQL: the server's database and schema; SQLite: the server's own data folder (its file).
    const store = s.config.databaseUrl ? { STRATUS_DATA_DIR: dataDir, STRATUS_DATABASE_URL: s.config.databaseUrl, STRATUS_DATABASE_SCHEMA: s.config.databaseSchema! } : { STRATUS_DATA_DIR: s.config.dataDir };
    const env = { ...process.env, STRATUS_LOG_LEVEL: 'warn', ...store };
    return new Promise((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env, timeout: 120_000 }, (e, stdout, stderr) => {
        fs.rmSync(dataDir, { recursive: true, force: true });
        return e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout);
      }),
    );
  }

  test('`stratus seed transactions` then a read at once: the running instance counts them (no sleeping)', async () => {
    const token = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    const list = async () => {
      const r = await fetch(`${s.url}/providers/Vendor.Billing/billingAccounts/70000001/invoices/G000000001/transactions?api-version=2024-04-01&count=true&top=5`, { headers: { authorization: `Bearer ${token}` } });
      const text = await r.text();
      assert.equal(r.status, 200, text);
      return (JSON.parse(text) as { totalCount: number }).totalCount;
    };
    const first = await list();
    assert.equal(await list(), first, 'kept');
    await cli('seed', 'transactions', '--billing-account', '70000001', '--invoice', 'G000000001', '--count', '5');
    assert.equal(await list(), first + 5);
  });

  test('PostgreSQL: the command does not return before a lagging live instance acknowledged its writes', { skip: process.env.STRATUS_TEST_DATABASE_URL ? false : 'PostgreSQL only (one process owns a SQLite store)' }, async () => {
    // A live instance that is slow to apply: it holds a lease (renewed) and acknowledges every
    // notification only 1.5 s after it arrived.
    const schema = s.config.databaseSchema!;
    const c = new pg.Client({ connectionString: s.config.databaseUrl });
    await c.connect();
    const id = `slow-peer-${randomBytes(4).toString('hex')}`;
    const acks: { seq: number; at: number }[] = [];
    const timers = new Set<NodeJS.Timeout>();
    try {
      await c.query(`set search_path to ${schema}`);
      const nowSql = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;
      await c.query(`insert into stratus_instances (id, acked, lease_until) select $1, version, ${nowSql} + 60000 from stratus_cache_versions where area = '*'`, [id]);
      await c.query(`listen "stratus_cache_${schema}"`);
      c.on('notification', (n) => {
        const seq = Number((n.payload ?? '').split(' ')[0]);
        if (!seq) return;
        const t = setTimeout(() => {
          timers.delete(t);
          void c.query(`update stratus_instances set acked = greatest(acked, $2), lease_until = ${nowSql} + 60000 where id = $1`, [id, seq]).then(() => acks.push({ seq, at: Date.now() }));
        }, 1500);
        timers.add(t);
      });
      await cli('seed', 'transactions', '--billing-account', '70000001', '--invoice', 'G000000001', '--count', '3');
      const returned = Date.now();
      const { rows } = await c.query(`select version::text as v from stratus_cache_versions where area = '*'`);
      const last = Number(rows[0].v);
      assert.ok(acks.some((a) => a.seq >= last && a.at <= returned), `the command returned before the slow instance acknowledged sequence ${last} (acks: ${JSON.stringify(acks)})`);
    } finally {
      for (const t of timers) clearTimeout(t);
      await c.query(`delete from stratus_instances where id = $1`, [id]).catch(() => undefined);
      await c.end();
    }
  });

  test('`stratus reset` while serving: the next read sees the demo data set again', async () => {
    const token = await userToken(s.url, identities.user, mailScopes);
    const made = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'gone after reset' }) });
    const id = ((await made.json()) as { id: string }).id;
    assert.equal((await fetch(`${s.url}/v1.0/me/messages/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    await cli('reset');
    assert.equal((await fetch(`${s.url}/v1.0/me/messages/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${await userToken(s.url, identities.user, mailScopes)}` } })).status, 404);
  });
});
