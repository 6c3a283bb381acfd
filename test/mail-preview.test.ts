/**
 * `bodyPreview` (spec mail §2.3: the first 255 characters of the body as text): the cut counts
 * code points, so a surrogate pair is never split (`firstCodePoints` of `message.ts`, which
 * replaced `[...text].slice(0, 255).join('')` for speed, issue 31). The function against that
 * definition on generated strings (fast-check, fixed seed), and a message with emoji made and read
 * through the real server.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bodyPreview, firstCodePoints } from '../src/services/mail/message.ts';
import { bulkMessages, seedMailbox } from '../src/services/mail/bulk.ts';
import { demoAdmin, demoTenant } from '../src/seed/demo.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { call, tokens } from './helpers/mail.ts';

let s: TestServer;
let token: string;

before(async () => {
  s = await startTestServer();
  token = (await tokens(s.url)).user;
});
after(async () => {
  await s?.close();
});

test('firstCodePoints is [...s].slice(0, n).join("") (surrogate pairs, lone surrogates, any length)', () => {
  const unit = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom('\ud83d', '\ude00', '😀', 'a'));
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 30 }), fc.integer({ min: 0, max: 300 }), (parts, n) => {
      const text = parts.join('');
      assert.equal(firstCodePoints(text, n), [...text].slice(0, n).join(''));
    }),
    { seed: 31, numRuns: 2000 },
  );
});

test('a long body with emoji: bodyPreview is its first 255 code points, never half a pair', async () => {
  const content = '😀 preview '.repeat(40);
  const draft = await call(s.url, token, 'POST', '/v1.0/me/messages', { subject: 'preview', body: { contentType: 'text', content } });
  assert.equal(draft.status, 201);
  const expected = [...content.replace(/\s+/g, ' ').trim()].slice(0, 255).join('');
  assert.equal(draft.body.bodyPreview, expected);
  const read = await call(s.url, token, 'GET', `/v1.0/me/messages/${encodeURIComponent(draft.body.id)}?$select=bodyPreview`);
  assert.equal(read.body.bodyPreview, expected);
  assert.equal([...read.body.bodyPreview].length, 255);
});

test('the preview made from the body text stored with a message equals the one made from its body', async () => {
  // Messages written by the bulk generator (`stratus seed mailbox`), never rendered in this
  // process: their first reads make the preview from the stored `search_body`, the expected
  // previews are made here from the same generated documents.
  const store = s.server.ctx.store;
  const admin = { tenantId: demoTenant.id, id: demoAdmin.id, mail: demoAdmin.userPrincipalName, displayName: demoAdmin.displayName };
  const newestMs = Date.parse('2026-06-01T12:00:00Z');
  const mb = await seedMailbox(store.db, admin, 60, { batch: 60, seed: 11, newestMs, transaction: (fn) => store.transaction(fn) });
  // Matched by subject and received time (the generated ids are random; the rest is seeded).
  const keyOf = (subject: string, received: string) => `${subject}|${received.replace(/\.\d+Z$/, 'Z')}`;
  const expected = new Map([...bulkMessages(mb, 60, 11, newestMs)].map((m) => [keyOf(m.doc.subject, m.receivedAt), bodyPreview(m.doc)]));
  assert.ok([...bulkMessages(mb, 60, 11, newestMs)].some((m) => m.doc.body.contentType === 'html'), 'HTML bodies among them');
  const adminToken = (await tokens(s.url)).admin;
  const page = await call(s.url, adminToken, 'GET', '/v1.0/me/messages?$top=500&$select=subject,receivedDateTime,bodyPreview');
  assert.equal(page.status, 200);
  const matched = (page.body.value as { id: string; subject: string; receivedDateTime: string; bodyPreview: string }[]).filter((m) => expected.has(keyOf(m.subject, m.receivedDateTime)));
  assert.equal(matched.length, 60);
  for (const m of matched) assert.equal(m.bodyPreview, expected.get(keyOf(m.subject, m.receivedDateTime)));
  // One read by id, then a forward of it whose body is changed: the preview is the new body's.
  const id = matched[0]!.id;
  assert.equal((await call(s.url, adminToken, 'GET', `/v1.0/me/messages/${encodeURIComponent(id)}`)).body.bodyPreview, matched[0]!.bodyPreview);
  const draft = await call(s.url, adminToken, 'POST', `/v1.0/me/messages/${encodeURIComponent(id)}/createForward`, {});
  assert.equal(draft.status, 201);
  const patched = await call(s.url, adminToken, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(draft.body.id)}`, { body: { contentType: 'html', content: '<p>changed &amp; new</p>' } });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.bodyPreview, 'changed & new');
  assert.equal((await call(s.url, adminToken, 'GET', `/v1.0/me/messages/${encodeURIComponent(draft.body.id)}?$select=bodyPreview`)).body.bodyPreview, 'changed & new');
});
