/**
 * Malformed input to the mail API never gives a 500, on SQLite or PostgreSQL: NUL characters in
 * bodies, paths and queries, out-of-range `$skip`, repeated system query options.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { sql } from 'kysely';
import { tokens, call } from './helpers/mail.ts';
import { baseQuery } from '../src/services/mail/query.ts';
import { isPostgres } from '../src/store/db.ts';

describe('mail malformed input', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  before(async () => {
    s = await startTestServer({ settings: { mailRequestsPerWindow: 10000, mailWindowSeconds: 60 } });
    t = await tokens(s.url);
  });
  after(async () => {
    await s?.close();
  });

  test('a NUL character in a JSON body is a 400, and nothing is stored', async () => {
    const before = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/drafts');
    for (const body of [{ subject: 'a\u0000b' }, { body: { contentType: 'text', content: 'x\u0000' } }, { toRecipients: [{ emailAddress: { address: 'a\u0000@example.com' } }] }, { categories: ['c\u0000'] }]) {
      const r = await call(s.url, t.user, 'POST', '/v1.0/me/messages', body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.error.code, 'ErrorInvalidRequest');
    }
    const after = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/drafts');
    assert.equal(after.body.totalItemCount, before.body.totalItemCount);
    const f = await call(s.url, t.user, 'POST', '/v1.0/me/mailFolders', { displayName: 'x\u0000' });
    assert.equal(f.status, 400);
  });

  test('a NUL character in the path or the query is a 400', async () => {
    const u = await call(s.url, t.app, 'GET', '/v1.0/users/a%00b/messages');
    assert.equal(u.status, 400);
    assert.equal(u.body.error.code, 'ErrorInvalidRequest');
    const e = await call(s.url, t.user, 'GET', "/v1.0/me/messages?$expand=singleValueExtendedProperties($filter=id%20eq%20'%00')");
    assert.equal(e.status, 400);
    const f = await call(s.url, t.user, 'GET', "/v1.0/me/messages?$filter=subject%20eq%20'a%00'");
    assert.equal(f.status, 400);
  });

  test('$skip beyond a 32-bit offset is a 400; the largest one is an empty page', async () => {
    for (const p of ['/v1.0/me/messages', '/v1.0/me/mailFolders/inbox/messages', '/v1.0/me/mailFolders', '/v1.0/me/mailFolders/inbox/childFolders']) {
      const r = await call(s.url, t.user, 'GET', `${p}?$skip=99999999999999999999`);
      assert.equal(r.status, 400, p);
      assert.equal(r.body.error.code, 'BadRequest');
      const ok = await call(s.url, t.user, 'GET', `${p}?$skip=2147483647`);
      assert.equal(ok.status, 200, p);
      assert.deepEqual(ok.body.value, []);
    }
  });

  test('a system query option given twice is a 400 (literal and %24 spellings alike)', async () => {
    for (const q of ['$top=1&$top=2', '%24top=2&$top=3', '$filter=isRead%20eq%20true&$FILTER=isRead%20eq%20false', '$select=subject&$select=id']) {
      const r = await call(s.url, t.user, 'GET', `/v1.0/me/messages?${q}`);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.error.code, 'BadRequest');
      assert.match(r.body.error.message, /more than once/);
    }
    assert.equal((await call(s.url, t.user, 'GET', '/v1.0/me/messages?$top=1&custom=a&custom=b')).status, 200);
  });

  test('a from-address $filter seeks the lower-case expression index, not the whole mailbox', async () => {
    const db = (s.server as any).ctx.store.db;
    const q = baseQuery(db, { tenantId: 't', mailboxId: 'm', excludeFolderIds: [], q: new URLSearchParams("$filter=from/emailAddress/address eq 'A@example.com'") })
      .selectAll('mail_messages')
      .compile();
    if (isPostgres(db)) {
      const idx = await sql<{ indexdef: string }>`select indexdef from pg_indexes where indexname = 'mail_messages_from_lower' and schemaname = current_schema()`.execute(db);
      assert.match(idx.rows[0]!.indexdef, /lower\(\(from_address_lc\)::text\)/);
      assert.match(q.sql, /lower\("mail_messages"."from_address_lc"\)/);
    } else {
      const plan = await db.executeQuery({ ...q, sql: 'explain query plan ' + q.sql });
      assert.match(plan.rows.map((r: any) => r.detail).join('\n'), /mail_messages_from_lower/);
    }
  });

  test('values longer than their columns are a 400 on both databases (a PostgreSQL 500 before)', async () => {
    const L = 'x'.repeat(5000);
    const d = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'long values' })).body;
    const M = `/v1.0/me/messages/${d.id}`;
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', '/v1.0/me/messages', { internetMessageId: `<${L}@example.com>` }, /internetMessageId/],
      ['POST', '/v1.0/me/messages', { categories: [L] }, /categories/],
      ['PATCH', M, { categories: ['ok', L] }, /categories/],
      ['POST', '/v1.0/me/messages', { singleValueExtendedProperties: [{ id: `String {66f5a359-4659-4830-9070-00040ec6ac6e} Name ${L}`, value: 'v' }] }, /extended property id/],
      ['PATCH', M, { multiValueExtendedProperties: [{ id: `StringArray {66f5a359-4659-4830-9070-00040ec6ac6e} Name ${L}`, value: ['v'] }] }, /extended property id/],
      ['POST', `${M}/attachments`, { '@odata.type': '#microsoft.graph.fileAttachment', name: L, contentBytes: 'AA==' }, /'name'/],
      ['POST', `${M}/attachments`, { '@odata.type': '#microsoft.graph.fileAttachment', name: 'a.txt', contentType: L, contentBytes: 'AA==' }, /contentType/],
      ['POST', `${M}/attachments`, { '@odata.type': '#microsoft.graph.referenceAttachment', name: L, sourceUrl: 'https://files.example.com/a' }, /'name'/],
      ['POST', `${M}/attachments/createUploadSession`, { AttachmentItem: { attachmentType: 'file', name: L, size: 4_000_000 } }, /'name'/],
      ['POST', '/v1.0/me/sendMail', { message: { subject: 'a', internetMessageId: `<${L}@example.com>`, toRecipients: [{ emailAddress: { address: 'a@example.com' } }] } }, /internetMessageId/],
    ];
    for (const [method, path, body, re] of cases) {
      const r = await call(s.url, t.user, method, path, body);
      assert.equal(r.status, 400, `${method} ${path} ${JSON.stringify(body).slice(0, 80)}`);
      assert.equal(r.body.error.code, 'ErrorInvalidRequest');
      assert.match(r.body.error.message, re);
    }
    const after = await call(s.url, t.user, 'GET', `${M}?$expand=attachments`);
    assert.deepEqual(after.body.categories, []);
    assert.deepEqual(after.body.attachments, []);
    const up = await fetch(`${s.url}/v1.0/_mailupload/a%00b`, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-range': 'bytes 0-0/1' }, body: 'a' });
    assert.equal(up.status, 404);
  });

  test('a JSON body nested more than 64 levels is a 400 (an item attachment 100000 deep was a 500)', async () => {
    const d = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'deep' })).body;
    const deep = '['.repeat(100000) + ']'.repeat(100000);
    for (const [method, path, body] of [
      ['POST', `/v1.0/me/messages/${d.id}/attachments`, `{"@odata.type":"#microsoft.graph.itemAttachment","name":"a","item":{"subject":${deep}}}`],
      ['POST', `/v1.0/me/messages/${d.id}/extensions`, `{"extensionName":"Com.Example.Deep","x":${deep}}`],
      ['PATCH', `/v1.0/me/messages/${d.id}`, deep],
    ]) {
      const res = await fetch(s.url + path!, { method, headers: { authorization: `Bearer ${t.user}`, 'content-type': 'application/json' }, body });
      assert.equal(res.status, 400, path);
      assert.equal(((await res.json()) as any).error.code, 'RequestBodyRead');
    }
    const ok = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${d.id}/extensions`, { extensionName: 'Com.Example.Nested', a: { b: { c: [1, [2, [3]]] } } });
    assert.equal(ok.status, 201);
  });

  test('two concurrent PUTs of the same upload range: one is taken, the other is a 416, never a 500', async () => {
    const d = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'upload race' })).body;
    const size = 3 * 1024 * 1024 + 10;
    const session = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${d.id}/attachments/createUploadSession`, { AttachmentItem: { attachmentType: 'file', name: 'race.bin', size } });
    assert.equal(session.status, 201);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    const put = () => fetch(session.body.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${chunk.length - 1}/${size}` }, body: chunk });
    const statuses = (await Promise.all([put(), put(), put()])).map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 416, 416]);
  });

  test('Mail.Read cannot DELETE an attachment: 403 before the attachment is looked up', async () => {
    const d = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'perm order' })).body;
    const a = (await call(s.url, t.user, 'POST', `/v1.0/me/messages/${d.id}/attachments`, { '@odata.type': '#microsoft.graph.fileAttachment', name: 'a.txt', contentBytes: 'QQ==' })).body;
    for (const id of [a.id, 'AAMkAGZub3RoZXJlAAA=']) {
      const r = await call(s.url, t.userRead, 'DELETE', `/v1.0/me/messages/${d.id}/attachments/${id}`);
      assert.equal(r.status, 403, id);
      assert.equal(r.body.error.code, 'ErrorAccessDenied');
    }
    assert.equal((await call(s.url, t.userRead, 'GET', `/v1.0/me/messages/${d.id}/attachments/${a.id}`)).status, 200);
    assert.equal((await call(s.url, t.user, 'DELETE', `/v1.0/me/messages/${d.id}/attachments/${a.id}`)).status, 204);
  });
});
