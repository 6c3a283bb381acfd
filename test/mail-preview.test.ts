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
import { firstCodePoints } from '../src/services/mail/message.ts';
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
