/**
 * The control plane: health, clock, reset, and the outbound-mail record (mail sent to
 * recipients outside the tenant), over HTTPS against a real server.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { userToken, identities } from './helpers/auth.ts';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

test('health reports the store; the clock moves forward, back and to an absolute time', async () => {
  const h = (await (await fetch(`${s.url}/_stratus/health`)).json()) as any;
  assert.equal(h.status, 'ok');
  assert.ok(['sqlite', 'postgres'].includes(h.store));
  const before = (await (await s.control(`/_stratus/clock`)).json()) as any;
  const moved = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 3600 }) });
  assert.equal(moved.status, 200);
  const after = (await moved.json()) as any;
  assert.ok(Date.parse(after.now) - Date.parse(before.now) >= 3600_000);
  const back = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: -5 }) });
  assert.equal(back.status, 200);
  assert.equal(((await back.json()) as any).offsetMs, after.offsetMs - 5000, 'a negative advance moves the clock back');
  const past = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ now: '2020-02-29T12:00:00Z' }) });
  assert.equal(past.status, 200);
  const at = Date.parse(((await past.json()) as any).now);
  assert.ok(at >= Date.parse('2020-02-29T12:00:00Z') && at < Date.parse('2020-02-29T12:01:00Z'), 'an absolute time in the past');
  const health = (await (await fetch(`${s.url}/_stratus/health`)).json()) as any;
  assert.match(health.time, /^2020-02-29T12:0/);
  await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ now: new Date(Date.now() + 3600_000).toISOString() }) });
});

test('mail to an outside recipient is recorded as delivered outbound; reset clears it', async () => {
  const token = await userToken(s.url, identities.user, ['api://stratus/mail/Mail.Send']);
  const subject = `outbound check ${Date.now()}`;
  const sent = await fetch(`${s.url}/v1.0/me/sendMail`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message: { subject, body: { contentType: 'Text', content: 'hello' }, toRecipients: [{ emailAddress: { address: 'partner@example.org' } }] } }),
  });
  assert.equal(sent.status, 202);
  const list = (await (await s.control(`/_stratus/mail/outbound?tenant=stratus.test`)).json()) as any;
  const mine = list.value.find((m: any) => m.subject === subject);
  assert.ok(mine, 'the outbound message is listed');
  assert.deepEqual(mine.recipients, ['partner@example.org']);
  assert.equal(mine.from, 'user@stratus.test');
  assert.equal((await s.control(`/_stratus/mail/outbound?tenant=nowhere.test`)).status, 404);
  assert.equal((await s.control(`/_stratus/mail/outbound?top=0`)).status, 400);
  const reset = await s.control(`/_stratus/reset`, { method: 'POST' });
  assert.equal(reset.status, 200);
  const afterReset = (await (await s.control(`/_stratus/mail/outbound`)).json()) as any;
  assert.equal(afterReset.value.find((m: any) => m.subject === subject), undefined);
});

test('a mailbox opened on first use answers again after a reset (its folders are made again, not remembered)', async () => {
  // Eve's mailbox is not part of the demo data: its folders are created by her first request.
  const token = await userToken(s.url, identities.eve, ['api://stratus/mail/Mail.ReadWrite']);
  const inbox = async () => fetch(`${s.url}/v1.0/me/mailFolders/inbox`, { headers: { authorization: `Bearer ${token}` } });
  const first = await inbox();
  assert.equal(first.status, 200);
  const id = ((await first.json()) as any).id;
  assert.equal((await s.control(`/_stratus/reset`, { method: 'POST' })).status, 200);
  const again = await inbox();
  assert.equal(again.status, 200);
  assert.equal(((await again.json()) as any).id, id);
  const draft = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'after reset' }) });
  assert.equal(draft.status, 201);
});

test('control-plane input is checked by its JSON schemas: problem+json 400s', async () => {
  for (const body of ['{"advanceSeconds":"10"}', '{}', '{"advanceSeconds":1,"now":"2026-01-01T00:00:00Z"}', '{"now":"yesterday"}', '{"now":"2026-01-01"}', '{"advance":1}', '{"advanceSeconds":1,"x":2}', '[1]', '{']) {
    const r = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(r.status, 400, body);
    assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const p = (await r.json()) as any;
    assert.equal(p.status, 400);
    assert.equal(typeof p.detail, 'string');
  }
  const bad = await s.control(`/_stratus/mail/outbound?top=abc`);
  assert.equal(bad.status, 400);
});

test('the control plane needs the control key, whatever the spelling of the path; health stays public', async () => {
  assert.ok(s.controlKey.length >= 32, 'a generated key is long');
  assert.equal((await fetch(`${s.url}/_stratus/health`)).status, 200);
  assert.equal((await fetch(`${s.url}/_STRATUS/Health`)).status, 200);
  const armToken = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
  const spellings = [
    '/_stratus/clock',
    '/_STRATUS/clock',
    '//_stratus/clock',
    '/%5Fstratus/clock',
    '/%5fstratus/clock',
    '/%255Fstratus/clock',
    '/_stratus%2Fclock',
    '/v1.0/../_stratus/clock',
    '/v1.0/%2e%2e/_stratus/clock',
    '/./_stratus/./clock',
    '/_stratus//clock',
    '/_stratus/clock/',
    '/_stratus/health/../clock',
    '/_stratus/reset',
    '/_stratus/mail/outbound',
    '/_stratus',
  ];
  for (const p of spellings) {
    for (const method of ['GET', 'POST']) {
      for (const authorization of [undefined, `Bearer ${armToken}`, 'Bearer wrong-key', `Basic ${Buffer.from(':' + s.controlKey).toString('base64')}`]) {
        const r = await fetch(`${s.url}${p}`, {
          method,
          headers: { ...(authorization ? { authorization } : {}), 'content-type': 'application/json' },
          body: method === 'POST' ? '{"advanceSeconds":1}' : undefined,
        });
        // A spelling the router does not map to a control route may answer 404; none may reach one.
        assert.ok(r.status === 401 || r.status === 404, `${method} ${p} with ${authorization?.slice(0, 12)}: ${r.status}`);
        if (r.status === 401) {
          assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/);
          assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/);
        }
      }
    }
  }
  // The clock did not move, the store was not reset: with the key the clock reads and moves.
  const ok = await s.control('/_stratus/clock');
  assert.equal(ok.status, 200);
  assert.equal(((await ok.json()) as any).offsetMs, 0, 'the reset of the second test put the clock back; nothing since moved it');
});
