/**
 * The console (issue 12 items 1 and 6): every page answers 401 without the control key (and
 * with an API token instead); the banner's link signs a browser in with a cookie; console
 * forms need the server's own Origin; the request log as JSON with secrets redacted; and the
 * console in a real headless browser (Debian's chromium driven by playwright-core): find a
 * message sent through the API by its subject, open it (its script does not run, its remote
 * image is not loaded), see a failed notification, see a 403 arrive in the live request log.
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, tokenRequest, userToken } from './helpers/auth.ts';
import { call as platformCall, definition, uniqueName } from './helpers/platform.ts';
import { platformDemoWorkspace } from '../src/seed/demo.ts';
import { graphClient, mailScopes } from './helpers/mail.ts';
import { demoSubscription, demoUser, demoTenant } from '../src/seed/demo.ts';
import { withDeadline } from './helpers/wait.ts';

const consolePages = [
  '/_stratus/console',
  '/_stratus/console/mail',
  '/_stratus/console/mail/outbound',
  `/_stratus/console/mail/${demoTenant.id}/${demoUser.id}`,
  '/_stratus/console/subscriptions',
  '/_stratus/console/operations',
  '/_stratus/console/resources',
  '/_stratus/console/requests',
  '/_stratus/console/requests/events',
  '/_stratus/console/faults',
  '/_stratus/console/app.js',
  '/_stratus/requests',
  '/_stratus/requests/events',
];

/** A local HTTP server: answers the subscription handshake, fails every notification with 500, counts hits per path. */
class Receiver {
  hits: { path: string; validation: boolean }[] = [];
  private waiters: (() => void)[] = [];
  server = http.createServer((req, res) => {
    const u = new URL(req.url!, 'http://x');
    req.resume();
    req.on('end', () => {
      const token = u.searchParams.get('validationToken');
      this.hits.push({ path: u.pathname, validation: token !== null });
      if (token !== null) res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
      else res.writeHead(500).end('receiver down');
      res.on('finish', () => this.waiters.splice(0).forEach((w) => w()));
    });
  });
  base = '';
  async start() {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** Resolves once `pred` holds (after a response has been sent). */
  async until(pred: () => boolean, what = 'the receiver condition') {
    await withDeadline(
      (async () => {
        while (!pred()) await new Promise<void>((r) => this.waiters.push(r));
      })(),
      what,
    );
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

describe('console', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t?.close();
  });

  test('every console page answers 401 without the control key, with a wrong key and with an API token', async () => {
    const apiToken = await userToken(t.url, identities.admin, mailScopes);
    for (const p of consolePages) {
      for (const headers of [{}, { authorization: `Bearer ${apiToken}` }, { authorization: 'Bearer wrong-key' }, { cookie: 'stratus_console=forged' }] as Record<string, string>[]) {
        const res = await fetch(t.httpUrl + p, { headers, redirect: 'manual' });
        assert.equal(res.status, 401, `${p} with ${JSON.stringify(Object.keys(headers))}`);
        assert.match(res.headers.get('content-type') ?? '', /problem\+json/);
        await res.arrayBuffer();
      }
    }
    // The login link with a wrong key, two keys, or on another path is refused too.
    for (const p of ['/_stratus/console?key=nope', `/_stratus/console?key=${t.controlKey}&key=${t.controlKey}`, `/_stratus/console/mail?key=${encodeURIComponent(t.controlKey)}`, `/_stratus/requests?key=${encodeURIComponent(t.controlKey)}`]) {
      const res = await fetch(t.httpUrl + p, { redirect: 'manual' });
      assert.equal(res.status, 401, p);
      await res.arrayBuffer();
    }
    // With the key every page answers.
    for (const p of consolePages.filter((x) => !x.endsWith('/events'))) {
      const res = await t.control(p);
      assert.equal(res.status, 200, p);
      const text = await res.text();
      if (res.headers.get('content-type')?.startsWith('text/html')) {
        assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'.*img-src data: cid:/);
        assert.match(text, /<main id="main"><h1>/);
      }
    }
  });

  test('the banner link sets an HttpOnly SameSite=Strict cookie (Secure over HTTPS) and redirects without the key', async () => {
    const { banner } = await import('../src/server.ts');
    const link = /console: +(\S+)/.exec(banner(t.server))![1]!;
    assert.equal(link, `${t.server.ctx.origin()}/_stratus/console?key=${encodeURIComponent(t.controlKey)}`);
    const res = await fetch(`${t.url}/_stratus/console?key=${encodeURIComponent(t.controlKey)}`, { redirect: 'manual' });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/_stratus/console');
    const cookie = res.headers.get('set-cookie')!;
    assert.match(cookie, /^stratus_console=[\w-]+; Path=\/_stratus; HttpOnly; SameSite=Strict; Secure$/);
    assert.ok(!cookie.includes(t.controlKey), 'the cookie is not the key');
    const plain = await fetch(`${t.httpUrl}/_stratus/console?key=${encodeURIComponent(t.controlKey)}`, { redirect: 'manual' });
    assert.doesNotMatch(plain.headers.get('set-cookie')!, /Secure/);
    const session = cookie.split(';')[0]!;
    const page = await fetch(`${t.url}/_stratus/console/mail`, { headers: { cookie: session } });
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Stratus User/);
  });

  test('console forms need the server\'s own Origin (CSRF)', async () => {
    const session = (await fetch(`${t.httpUrl}/_stratus/console?key=${encodeURIComponent(t.controlKey)}`, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
    const post = (headers: Record<string, string>) =>
      fetch(`${t.httpUrl}/_stratus/console/faults/clear`, { method: 'POST', headers: { cookie: session, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: '', redirect: 'manual' });
    const none = await post({});
    assert.equal(none.status, 403);
    // The control plane's problem+json: the code is its title.
    assert.match(none.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const problem = await none.json();
    assert.equal(problem.title, 'CsrfCheckFailed');
    assert.equal(problem.status, 403);
    assert.equal(typeof problem.detail, 'string');
    assert.equal((await post({ origin: 'http://evil.test' })).status, 403);
    assert.equal((await post({ origin: t.httpUrl })).status, 303);
  });

  test('mailbox pages: search, paging, attachment download, read toggle', async () => {
    const client = graphClient(t.url, await userToken(t.url, identities.user, mailScopes));
    const tag = `pagetag${Date.now()}`;
    for (let i = 0; i < 27; i++) await client.api('/me/messages').post({ subject: `${tag} number ${i}` });
    const bytes = Buffer.from('attached bytes \u0000\u0001 end');
    const withFile = await client.api('/me/messages').post({ subject: `${tag} with file`, attachments: [{ '@odata.type': '#microsoft.graph.fileAttachment', name: 'report.bin', contentType: 'application/octet-stream', contentBytes: bytes.toString('base64') }] });
    const base = `/_stratus/console/mail/${demoTenant.id}/${demoUser.id}`;
    const first = await (await t.control(`${base}?q=${tag}`)).text();
    assert.equal((first.match(new RegExp(`>${tag} `, 'g')) ?? []).length, 25, 'a page holds 25 messages');
    const next = /href="([^"]+)" rel="next"/.exec(first)![1]!.replace(/&amp;/g, '&');
    const second = await (await t.control(next)).text();
    assert.equal((second.match(new RegExp(`>${tag} `, 'g')) ?? []).length, 3);
    assert.match(second, /rel="prev"/);
    assert.doesNotMatch(second, /rel="next"/);
    assert.match(first + second, /Drafts <span class="muted">\(\d+\)/, 'the folder tree shows counts');
    const msgPage = await (await t.control(`${base}/messages/${encodeURIComponent(withFile.id)}`)).text();
    const att = /href="([^"]+\/attachments\/[^"]+)" download>report\.bin/.exec(msgPage)![1]!;
    const dl = await t.control(att.replace(/&amp;/g, '&'));
    assert.equal(dl.status, 200);
    assert.match(dl.headers.get('content-disposition') ?? '', /attachment; filename="report\.bin"/);
    assert.deepEqual(Buffer.from(await dl.arrayBuffer()), bytes);
    // Read toggle with the key in the header (no CSRF check for a Bearer caller); the API sees it.
    const mark = await t.control(`${base}/messages/${encodeURIComponent(withFile.id)}/read`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'read=true', redirect: 'manual' });
    assert.equal(mark.status, 303);
    assert.equal((await client.api(`/me/messages/${withFile.id}`).get()).isRead, true);
    const missing = await t.control(`/_stratus/console/mail/${demoTenant.id}/00000000-0000-0000-0000-000000000000`);
    assert.equal(missing.status, 404);
  });

  test('operations and resource-manager pages show the demo data and a long-running operation', async () => {
    const sp = await appToken(t.url, 'platform');
    const name = uniqueName('console');
    const lro = await platformCall(t.url, 'POST', `/v1/workspaces/${platformDemoWorkspace.id}/eventstreams`, sp, { displayName: name, definition: definition() });
    assert.equal(lro.status, 202, lro.text);
    const opId = lro.headers.get('x-vendor-operation-id')!;
    await platformCall(t.url, 'GET', `/v1/operations/${opId}`, sp);
    const ops = await (await t.control('/_stratus/console/operations')).text();
    assert.match(ops, new RegExp(`<td>${opId}</td><td>[^<]+</td><td>[^<]+</td><td><span class="">Succeeded</span></td><td>100</td><td>${t.url}/v1/operations/${opId}/result</td>`));
    assert.ok(ops.includes(`<td>${name}</td>`), 'the eventstream is listed');
    assert.match(ops, /nightly-hook/);
    const res = await (await t.control('/_stratus/console/resources')).text();
    for (const want of [demoSubscription.displayName, demoSubscription.resourceGroup, '<td>Owner</td>', 'G000000001', 'Expiration_Admin_Eligibility']) assert.ok(res.includes(want), want);
  });

  test('the faults page adds, lists and deletes rules through /_stratus/faults', async () => {
    const cleared = await t.control('/_stratus/faults', { method: 'DELETE' });
    await cleared.arrayBuffer();
    assert.equal(cleared.status, 204, 'DELETE /_stratus/faults clears the rules');
    const session = (await fetch(`${t.httpUrl}/_stratus/console?key=${encodeURIComponent(t.controlKey)}`, { redirect: 'manual' })).headers.get('set-cookie')!.split(';')[0]!;
    const form = (p: string, body: string) => fetch(`${t.httpUrl}${p}`, { method: 'POST', headers: { cookie: session, origin: t.httpUrl, 'content-type': 'application/x-www-form-urlencoded' }, body, redirect: 'manual' });
    const added = await form('/_stratus/console/faults', 'family=arm&method=GET&path=%2Fsubscriptions%2F*&effect=status&status=503&probability=1&count=2&seed=7');
    assert.equal(added.status, 303);
    assert.match(decodeURIComponent(added.headers.get('location')!.replace(/\+/g, ' ')), /Rule \S+ added\./);
    const listed = await t.control('/_stratus/faults');
    assert.equal(listed.status, 200);
    const list = (await listed.json()).value as any[];
    assert.equal(list.length, 1);
    assert.deepEqual({ family: list[0].match.family, method: list[0].match.method, path: list[0].match.path, status: list[0].effect.status }, { family: 'arm', method: 'GET', path: '/subscriptions/*', status: 503 });
    const pageText = await (await fetch(`${t.httpUrl}/_stratus/console/faults`, { headers: { cookie: session } })).text();
    assert.ok(pageText.includes(`Delete rule ${list[0].id}`));
    const del = await form(`/_stratus/console/faults/${encodeURIComponent(list[0].id)}/delete`, '');
    assert.equal(del.status, 303);
    const after = await (await t.control('/_stratus/faults')).json();
    assert.deepEqual(after.value, []);
  });

  test('GET /_stratus/requests lists requests with filters, bearer tokens and secrets redacted', async () => {
    const grant = await tokenRequest(t.url, { grant_type: 'password', username: identities.user.username, password: identities.user.password, scope: 'api://stratus/mail/Mail.Read' });
    assert.equal(grant.status, 200);
    const token = grant.body.access_token as string;
    const me = await fetch(`${t.url}/v1.0/me/messages?$top=1`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200);
    const denied = await fetch(`${t.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"subject":"no scope"}' });
    assert.equal(denied.status, 403);
    await fetch(`${t.url}/_stratus/clock`, { headers: { authorization: `Bearer ${t.controlKey}` } });

    const res = await t.control('/_stratus/requests?limit=50');
    assert.equal(res.status, 200);
    const text = await res.text();
    for (const secret of [token, identities.user.password, t.controlKey, token.split('.')[1]!]) assert.ok(!text.includes(secret), 'no secret in the log');
    const all = JSON.parse(text).value as any[];
    const tokenCall = all.find((e) => e.family === 'oauth' && e.method === 'POST');
    assert.ok(tokenCall, 'the token request is logged');
    assert.match(tokenCall.requestBody, /password=\[redacted\]/);
    assert.match(tokenCall.requestBody, /username=user%40stratus\.test|username=user@stratus\.test/);
    assert.match(tokenCall.responseBody, /"access_token":"\[redacted\]"/);
    const read = all.find((e) => e.family === 'mail' && e.status === 200);
    assert.equal(read.requestHeaders.authorization, 'Bearer [redacted]');
    assert.equal(read.upn, identities.user.username);
    assert.ok(read.durationMs >= 0 && typeof read.id === 'string');
    // Headers and bodies as sent and answered: the answer's own headers (its request id, type and length) and small bodies.
    assert.equal(read.responseHeaders['request-id'], read.id);
    assert.match(read.responseHeaders['content-type'], /^application\/json/);
    assert.equal(Number(read.responseHeaders['content-length']), read.responseBody.length);
    assert.equal(JSON.parse(read.responseBody)['@odata.context'] !== undefined, true);
    assert.equal(read.requestHeaders.host, new URL(t.url).host);
    const post = all.find((e) => e.family === 'mail' && e.status === 403);
    assert.equal(post.requestBody, '{"subject":"no scope"}');
    assert.equal(post.requestHeaders['content-type'], 'application/json');
    assert.ok(JSON.parse(post.responseBody).error.code);
    const clock = all.find((e) => e.path === '/_stratus/clock');
    assert.equal(clock.requestHeaders.authorization, 'Bearer [redacted]');
    assert.ok(!all.some((e) => e.path.startsWith('/_stratus/requests') || e.path.startsWith('/_stratus/console')), 'the console\'s own requests are not logged');

    const forbidden = (await (await t.control('/_stratus/requests?status=403&family=mail')).json()).value as any[];
    assert.ok(forbidden.length >= 1 && forbidden.every((e) => e.status === 403 && e.family === 'mail'));
    const fourxx = (await (await t.control('/_stratus/requests?status=4xx')).json()).value as any[];
    assert.ok(fourxx.every((e) => e.status >= 400 && e.status < 500));
    const byText = (await (await t.control(`/_stratus/requests?q=${forbidden[0].id}`)).json()).value as any[];
    assert.deepEqual(byText.map((e) => e.id), [forbidden[0].id]);
    assert.equal((await (await t.control('/_stratus/requests?limit=1')).json()).value.length, 1);
    // The live feed for scripts: server-sent events, filtered, without headers and bodies.
    const abort = new AbortController();
    const feed = await t.control('/_stratus/requests/events?status=4xx&q=-feed', { signal: abort.signal });
    assert.equal(feed.status, 200);
    assert.match(feed.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = feed.body!.getReader();
    await reader.read(); // the stream's opening comment: subscribed
    await (await fetch(`${t.url}/_stratus/clock`, { headers: { authorization: `Bearer ${t.controlKey}` } })).arrayBuffer();
    const missing = await fetch(`${t.url}/subscriptions/${'0'.repeat(8)}-feed?api-version=2022-12-01`);
    await missing.arrayBuffer();
    let sse = '';
    await withDeadline(
      (async () => {
        while (!sse.includes('\n\n')) sse += new TextDecoder().decode((await reader.read()).value);
      })(),
      'the request-log event of the 404 on the live feed',
    );
    abort.abort();
    const event = JSON.parse(/^data: (.*)$/m.exec(sse)![1]!);
    assert.equal(event.status, missing.status);
    assert.ok(event.status >= 400 && event.status < 500);
    assert.match(event.url, /-feed\?api-version/);
    assert.equal(event.requestHeaders, undefined);
    assert.match(sse, /^id: \d+\nevent: request\n/);
    const bad = await t.control('/_stratus/requests?limit=0');
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /problem\+json/);
  });
});

const chromiumPath = '/usr/bin/chromium';
const haveChromium = fs.existsSync(chromiumPath);
if (!haveChromium && !process.env.CI) {
  console.error(`\n*** console browser test SKIPPED: ${chromiumPath} is missing (apt-get install -y chromium). It always runs in CI. ***\n`);
}

describe('console in a headless browser', { skip: !haveChromium && !process.env.CI ? `${chromiumPath} missing` : false }, () => {
  let t: TestServer;
  let rx: Receiver;
  let tracker: http.Server;
  let trackerHits = 0;
  let trackerBase = '';
  let browser: import('playwright-core').BrowserContext;
  let userDir: string;

  before(async () => {
    t = await startTestServer({ settings: { mailNotificationPollMs: 50 } });
    rx = new Receiver();
    await rx.start();
    tracker = http.createServer((_req, res) => {
      trackerHits++;
      res.writeHead(200, { 'content-type': 'image/png' }).end();
    });
    await new Promise<void>((r) => tracker.listen(0, '127.0.0.1', () => r()));
    trackerBase = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}`;
    const { chromium } = await import('playwright-core');
    userDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-chromium-'));
    browser = await chromium.launchPersistentContext(userDir, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await rx?.stop();
    tracker?.closeAllConnections();
    await new Promise<void>((r) => (tracker ? tracker.close(() => r()) : r()));
    if (userDir) fs.rmSync(userDir, { recursive: true, force: true });
  });

  test('a kept mail answer is logged by reference with the same body as a fresh one', async () => {
    const token = await userToken(t.url, identities.user, mailScopes);
    const headers = { authorization: `Bearer ${token}` };
    const page = (await (await fetch(`${t.url}/v1.0/me/messages?$top=1&$select=subject`, { headers })).json()) as { value: { id: string }[] };
    const url = `${t.url}/v1.0/me/messages/${encodeURIComponent(page.value[0]!.id)}`;
    // The first read makes and keeps the text; the second is answered from it (held by reference in the log).
    const answers: { id: string; text: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(url, { headers });
      assert.equal(r.status, 200);
      answers.push({ id: r.headers.get('request-id')!, text: await r.text() });
    }
    assert.equal(answers[0]!.text, answers[1]!.text);
    const all = (await (await t.control('/_stratus/requests?family=mail&limit=20')).json()).value as any[];
    for (const a of answers) {
      const e = all.find((x) => x.id === a.id);
      assert.ok(e, `request ${a.id} is logged`);
      assert.equal(e.responseBody, a.text);
      assert.equal(Number(e.responseHeaders['content-length']), Buffer.byteLength(a.text));
    }
  });

  test('a kept resource-manager answer is sent before the handler, logged with the same body and headers as a fresh one', async () => {
    const headers = { authorization: `Bearer ${await appToken(t.url, 'arm')}`, 'x-vendor-correlation-request-id': 'console-kept-check' };
    const url = `${t.url}/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`;
    // The first read makes and keeps the answer; the second is answered from it in `onRequest`.
    const answers: { id: string; text: string; type: string | null }[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await fetch(url, { headers });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('x-vendor-correlation-request-id'), 'console-kept-check');
      assert.equal(r.headers.get('cache-control'), 'no-cache');
      answers.push({ id: r.headers.get('x-vendor-request-id')!, text: await r.text(), type: r.headers.get('content-type') });
    }
    assert.notEqual(answers[0]!.id, answers[1]!.id);
    assert.equal(answers[1]!.text, answers[0]!.text);
    assert.equal(answers[1]!.type, answers[0]!.type);
    assert.equal(JSON.parse(answers[1]!.text).name, 'nightly-hook');
    const all = (await (await t.control('/_stratus/requests?family=arm&limit=50')).json()).value as any[];
    for (const a of answers) {
      const e = all.find((x) => x.id === a.id);
      assert.ok(e, `request ${a.id} is logged`);
      assert.equal(e.status, 200);
      assert.equal(e.responseBody, a.text);
      assert.equal(Number(e.responseHeaders['content-length']), Buffer.byteLength(a.text));
    }
  });

  test('find a sent message by subject, read it safely, see a failed notification and a 403 in the live log', async () => {
    const token = await userToken(t.url, identities.user, mailScopes);
    const client = graphClient(t.url, token);
    const subject = `Console check ${Date.now()}`;
    const content = `<p id="greeting">Hello from the <b>API</b></p><script>document.title = 'pwned'; window.__pwned = true;</script><img src="${trackerBase}/pixel.png" alt="tracker"><img src="x" onerror="document.title='pwned'"><a href="${trackerBase}/click" target="_top">a link</a>`;
    await client.api('/me/sendMail').post({ message: { subject, body: { contentType: 'HTML', content }, toRecipients: [{ emailAddress: { address: 'someone@elsewhere.example' } }] } });

    const page = await browser.newPage();
    const consoleRequests: string[] = [];
    page.on('request', (r) => consoleRequests.push(r.url()));
    // The banner's link: signs in and lands on the console without the key in the URL.
    await page.goto(`${t.httpUrl}/_stratus/console?key=${encodeURIComponent(t.controlKey)}`);
    assert.equal(new URL(page.url()).pathname, '/_stratus/console');
    assert.equal(new URL(page.url()).search, '');
    assert.equal(await page.locator('h1').textContent(), 'Overview');

    // Mail → the sender's mailbox → search by subject → open the message.
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Mail', exact: true }).click();
    await page.getByRole('link', { name: demoUser.displayName }).first().click();
    await page.getByLabel('Search messages').fill(subject);
    await page.getByRole('button', { name: 'Search' }).click();
    const hit = page.getByRole('link', { name: subject });
    assert.equal(await hit.count(), 1, 'the search finds the message');
    await hit.click();
    assert.equal(await page.locator('h1').textContent(), subject);
    assert.equal(await page.locator('#mail-body #greeting').count(), 0, 'ids are not kept');
    assert.match((await page.locator('#mail-body').textContent()) ?? '', /Hello from the API/);
    assert.match((await page.locator('#mail-body').textContent()) ?? '', /\[image blocked\]/);
    assert.notEqual(await page.title(), 'pwned');
    assert.equal(await page.evaluate(() => (window as any).__pwned), undefined, 'the script in the body did not run');
    assert.equal(await page.locator('#mail-body script').count(), 0);
    assert.equal(await page.locator('#mail-body a[href]').count(), 0, 'links are not followed');
    assert.equal(trackerHits, 0, 'the remote image was not loaded');
    assert.ok(!consoleRequests.some((u) => u.startsWith(trackerBase)));
    // Read/unread toggle (a POST with the page's Origin).
    const toggle = page.getByRole('button', { name: /Mark (read|unread)/ });
    const before = await toggle.textContent();
    await toggle.click();
    assert.notEqual(await page.getByRole('button', { name: /Mark (read|unread)/ }).textContent(), before);
    // Outbound mail lists it (the recipient is outside the tenant).
    await page.goto(`${t.httpUrl}/_stratus/console/mail/outbound`);
    assert.equal(await page.getByRole('cell', { name: subject }).count(), 1);

    // A subscription whose receiver validates, then fails every notification.
    await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/hook`, resource: 'me/mailFolders/drafts/messages', expirationDateTime: new Date(Date.now() + 3600_000).toISOString() });
    await client.api('/me/messages').post({ subject: 'triggers a notification' });
    await rx.until(() => rx.hits.some((h) => h.path === '/hook' && !h.validation));
    // The worker records the attempt right after the receiver answers; the page shows it once recorded.
    let failedShown = false;
    for (let i = 0; i < 50 && !failedShown; i++) {
      await page.goto(`${t.httpUrl}/_stratus/console/subscriptions`);
      failedShown = (await page.getByRole('cell', { name: 'HTTP 500' }).count()) > 0;
    }
    assert.ok(failedShown, 'the failed delivery is shown');
    assert.ok((await page.getByRole('cell', { name: `${rx.base}/hook` }).count()) >= 1);
    assert.ok((await page.getByRole('cell', { name: /^failed/ }).count()) >= 1);

    // The live request log: a 403 made now appears without reloading.
    await page.goto(`${t.httpUrl}/_stratus/console/requests?status=403`);
    await page.locator('#live-status', { hasText: 'Live' }).waitFor();
    const readOnly = await userToken(t.url, identities.user, ['api://stratus/mail/Mail.Read']);
    const denied = await fetch(`${t.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${readOnly}`, 'content-type': 'application/json' }, body: '{"subject":"denied"}' });
    assert.equal(denied.status, 403);
    const requestId = denied.headers.get('request-id')!;
    const row = page.locator('tr', { hasText: requestId });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /403/);
    // Its detail view: headers with the token redacted.
    await row.getByRole('link').click();
    assert.match((await page.locator('main').textContent()) ?? '', /Bearer \[redacted\]/);
    assert.ok(!((await page.content()).includes(readOnly)));
    await page.close();
  });
});

describe('request log size', () => {
  test('STRATUS_REQUEST_LOG_SIZE bounds the ring buffer; 0 turns the log off', async () => {
    const t = await startTestServer({ env: { STRATUS_REQUEST_LOG_SIZE: '3' } });
    try {
      for (let i = 0; i < 5; i++) await (await fetch(`${t.url}/_stratus/health?n=${i}`)).arrayBuffer();
      const body = await (await t.control('/_stratus/requests')).json();
      assert.equal(body.size, 3);
      assert.deepEqual(body.value.map((e: any) => e.url), ['/_stratus/health?n=4', '/_stratus/health?n=3', '/_stratus/health?n=2']);
      assert.ok(body.value[0].seq > body.value[1].seq);
    } finally {
      await t.close();
    }
    const off = await startTestServer({ env: { STRATUS_REQUEST_LOG_SIZE: '0' } });
    try {
      await (await fetch(`${off.url}/_stratus/health`)).arrayBuffer();
      assert.deepEqual((await (await off.control('/_stratus/requests')).json()).value, []);
    } finally {
      await off.close();
    }
  });
});
