/**
 * Issue 11, item 1: outbound calls (the mail subscription validation handshake) never reach
 * Stratus itself, whatever the spelling of its address (localhost, 127.0.0.1, [::1], 0.0.0.0,
 * decimal / hex / octal / short IPv4, IPv4-mapped IPv6), on its HTTP and its HTTPS port, with
 * either scheme; no redirect is followed; loopback receivers on other ports stay allowed unless
 * STRATUS_ALLOW_LOOPBACK_RECEIVERS=false. "Never reaches" is counted on the server's own sockets.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { userToken, identities } from './helpers/auth.ts';
import { call, mailScopes } from './helpers/mail.ts';
import { OutboundGuard, OutboundRefused } from '../src/core/outbound.ts';

const inMinutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();

/** Every request a receiver (or the server under test) sees, with its URL. */
function counter(...servers: http.Server[]): string[] {
  const seen: string[] = [];
  for (const s of servers) s.on('request', (req: http.IncomingMessage) => seen.push(`${req.method} ${req.url}`));
  return seen;
}

/** A receiver answering the validation handshake (or redirecting to `redirectTo`). */
async function receiver(redirectTo?: string): Promise<{ base: string; server: http.Server; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const token = new URL(req.url!, 'http://x').searchParams.get('validationToken');
    req.resume();
    if (redirectTo) {
      res.writeHead(307, { location: redirectTo }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(token ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** Host spellings that all mean this machine. */
const selfHosts = ['localhost', 'LOCALHOST', '127.0.0.1', '127.0.0.2', '127.1', '0.0.0.0', '0', '2130706433', '0x7f000001', '0x7f.0.0.1', '0177.0.0.1', '017700000001', '[::1]', '[::]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[0:0:0:0:0:ffff:127.0.0.1]'];

describe('outbound calls cannot reach Stratus itself', () => {
  let s: TestServer;
  let token: string;
  let seen: string[];
  before(async () => {
    s = await startTestServer();
    token = await userToken(s.url, identities.user, mailScopes);
    seen = counter(s.server.app.server as http.Server, s.server.httpServer);
  });
  after(async () => s?.close());

  test('every spelling of the server’s own address, on its HTTP and HTTPS port, with either scheme, is refused and never reached', async () => {
    const ports = [new URL(s.url).port, new URL(s.httpUrl).port];
    let tried = 0;
    for (const host of selfHosts) {
      for (const port of ports) {
        for (const scheme of ['http', 'https']) {
          for (const path of ['/_stratus/reset', '/_STRATUS/reset', '/automation/webhooks?token=x']) {
            const before = seen.length;
            const notificationUrl = `${scheme}://${host}:${port}${path}`;
            const r = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl, resource: 'me/messages', expirationDateTime: inMinutes(60) });
            // The create request itself is counted once; nothing else may reach the server.
            assert.deepEqual(seen.slice(before).filter((x) => !x.startsWith('POST /v1.0/subscriptions')), [], notificationUrl);
            assert.equal(r.status, 400, `${notificationUrl}: ${JSON.stringify(r.body)}`);
            assert.ok(['ValidationError', 'InvalidRequest'].includes(r.body.error.code), notificationUrl);
            assert.equal(typeof r.body.error.message, 'string');
            tried++;
          }
        }
      }
    }
    assert.equal(tried, selfHosts.length * 12);
    // The https spellings get as far as the handshake and fail it exactly like the service's failed validation.
    const r = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `https://localhost:${ports[0]}/_stratus/reset`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(r.body.error.code, 'ValidationError');
    // Data intact: the store was not reset (the user's subscriptions list still answers, the seeded mailbox is there).
    const inbox = await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox');
    assert.equal(inbox.status, 200);
    assert.ok(inbox.body.totalItemCount > 0, 'seeded inbox still has messages');
  });

  test('a loopback receiver on another port is allowed; a redirect to the server is not followed', async () => {
    const ok = await receiver();
    const okSeen = counter(ok.server);
    const created = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${ok.base}/hook`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(okSeen.length, 1);
    await ok.close();

    const redirect = await receiver(`${s.httpUrl}/_stratus/reset`);
    const before = seen.length;
    const r = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${redirect.base}/hook`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'ValidationError');
    assert.deepEqual(seen.slice(before).filter((x) => !x.startsWith('POST /v1.0/subscriptions')), []);
    await redirect.close();
  });

  test('the handshake carries no credential of Stratus’s', async () => {
    const headers: http.IncomingHttpHeaders[] = [];
    const rx = await receiver();
    rx.server.on('request', (req: http.IncomingMessage) => headers.push(req.headers));
    const created = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/hook`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(created.status, 201);
    assert.equal(headers.length, 1);
    assert.equal(headers[0]!.authorization, undefined);
    assert.equal(headers[0]!.cookie, undefined);
    assert.equal(headers[0]!.host, new URL(rx.base).host);
    await rx.close();
  });
});

describe('STRATUS_ALLOW_LOOPBACK_RECEIVERS=false', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ env: { STRATUS_ALLOW_LOOPBACK_RECEIVERS: 'false' } });
  });
  after(async () => s?.close());

  test('a loopback receiver on another port is refused and never contacted', async () => {
    const token = await userToken(s.url, identities.user, mailScopes);
    const rx = await receiver();
    const rxSeen = counter(rx.server);
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
      const port = new URL(rx.base).port;
      const r = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `http://${host}:${port}/hook`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
      assert.equal(r.status, 400, host);
      assert.ok(['ValidationError', 'InvalidRequest'].includes(r.body.error.code));
    }
    for (const host of ['10.1.2.3', '192.168.1.1', '172.16.0.1', '169.254.169.254', '100.64.0.1', '[fd00::1]', '[fe80::1]']) {
      const r = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `https://${host}/hook`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
      assert.equal(r.status, 400, host);
      assert.equal(r.body.error.code, 'ValidationError', host);
    }
    assert.equal(rxSeen.length, 0);
    await rx.close();
  });
});

describe('the guard’s resolution (a name resolving to this machine, mixed answers, the pinned address)', () => {
  // A resolver standing in for DNS (the system resolver cannot be pointed at test names); the guard itself is the real one.
  const names: Record<string, { address: string; family: number }[]> = {
    'self.test': [{ address: '127.0.0.1', family: 4 }],
    'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
    'mixed.test': [{ address: '93.184.215.14', family: 4 }, { address: '::1', family: 6 }],
    'public.test': [{ address: '93.184.215.14', family: 4 }],
  };
  const guard = (allowLoopback: boolean) => new OutboundGuard({ ownPorts: () => [8443, 8080], allowLoopback, lookup: async (h) => names[h] ?? [] });

  test('names resolving to this machine on Stratus’s ports are refused; other ports allowed only with loopback receivers on', async () => {
    for (const url of ['https://self.test:8443/x', 'http://mapped.test:8080/x', 'https://mixed.test:8443/', 'https://nowhere.test/']) {
      await assert.rejects(guard(true).resolve(url), OutboundRefused, url);
    }
    assert.equal((await guard(true).resolve('https://self.test:9999/x')).address, '127.0.0.1');
    await assert.rejects(guard(false).resolve('https://self.test:9999/x'), OutboundRefused);
    await assert.rejects(guard(false).resolve('https://mixed.test:9999/x'), OutboundRefused);
  });

  test('the connection goes to the address resolved once; credentials in the URL and other schemes are refused', async () => {
    const r = await guard(false).resolve('https://public.test/hook?a=1');
    assert.deepEqual([r.address, r.port, r.family, r.url.hostname], ['93.184.215.14', 443, 4, 'public.test']);
    for (const url of ['ftp://public.test/', 'https://user:pw@public.test/', 'file:///etc/passwd', 'not a url']) {
      await assert.rejects(guard(true).resolve(url), OutboundRefused, url);
    }
    await assert.rejects(guard(true).resolve('https://[ff02::1]:9999/'), OutboundRefused, 'multicast');
  });
});
