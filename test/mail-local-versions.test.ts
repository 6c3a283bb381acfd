/**
 * The embedded store's kept mailbox versions (`src/services/mail/local-versions.ts`, issue 31):
 * a message GET and a page answer from texts kept per mailbox version, and the version itself
 * is kept in memory. A write made OUTSIDE the server — another connection to the same SQLite
 * file, as `stratus seed` or another process would — must still be read by the next request
 * (SQLite's `data_version` moves), and so must the server's own writes. Real server over HTTP,
 * the other writer a connection of its own; no timing. SQLite only (PostgreSQL keeps versions
 * by notification: `test/live-instances.test.ts`).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { call, tokens } from './helpers/mail.ts';

const pgUrl = process.env.STRATUS_TEST_DATABASE_URL;
let s: TestServer;
let token: string;
let other: SQLite.Database;

before(async () => {
  if (pgUrl) return;
  s = await startTestServer();
  token = (await tokens(s.url)).user;
  other = new SQLite(path.join(s.config.dataDir, 'stratus.db'));
  other.pragma('busy_timeout = 5000');
});
after(async () => {
  other?.close();
  await s?.close();
});

/** The subject of a message by id, and the subjects of the inbox's first page (each asked twice: the second answer is a kept one). */
async function reads(id: string): Promise<{ message: string; page: string[] }> {
  let message = '';
  let page: string[] = [];
  for (let i = 0; i < 2; i++) {
    const m = await call(s.url, token, 'GET', `/v1.0/me/messages/${encodeURIComponent(id)}?$select=subject`);
    assert.equal(m.status, 200);
    message = m.body.subject;
    const p = await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=subject&$top=50&$orderby=receivedDateTime desc');
    assert.equal(p.status, 200);
    page = p.body.value.map((x: { subject: string }) => x.subject);
  }
  return { message, page };
}

test("another connection's write of a message is read by the next request (message by id and page)", { skip: !!pgUrl && 'SQLite only' }, async () => {
  const list = await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=id,subject&$top=1&$orderby=receivedDateTime desc');
  const first = list.body.value[0] as { id: string; subject: string };
  const before = await reads(first.id);
  assert.equal(before.message, first.subject);
  for (const subject of ['changed outside 1', 'changed outside 2']) {
    // What a real writer does: the document and its columns, a new change key (the mailbox version moves by trigger).
    const n = other
      .prepare("update mail_messages set doc = json_set(doc, '$.subject', ?), subject = ?, subject_lc = lower(?), change_key = ? where id = ?")
      .run(subject, subject, subject, `outside-${subject.slice(-1)}`, first.id).changes;
    assert.equal(n, 1);
    const after = await reads(first.id);
    assert.equal(after.message, subject, 'the message by id is the stored one');
    assert.equal(after.page[0], subject, 'the page is the stored one');
  }
});

test("another connection's new message is listed by the next request", { skip: !!pgUrl && 'SQLite only' }, async () => {
  const page = async () => (await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=subject&$count=true&$top=1')).body['@odata.count'] as number;
  const before = await page();
  assert.equal(await page(), before);
  // A copy of one inbox row under a new key and ids: the insert triggers move the mailbox version and the counts.
  const cols = (other.prepare('pragma table_info(mail_messages)').all() as { name: string }[]).map((c) => c.name).filter((c) => c !== 'pk');
  const mine = (await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=id&$top=1')).body.value[0].id as string;
  const row = other.prepare('select * from mail_messages where id = ?').get(mine) as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...row, id: `${String(row.id).slice(0, -6)}OUTSDE`, immutable_id: `${String(row.immutable_id).slice(0, -6)}OUTSDE`, internet_message_id: '<outside@stratus.test>' };
  other.prepare(`insert into mail_messages (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`).run(...cols.map((c) => copy[c] as never));
  assert.equal(await page(), before + 1);
});

test("the server's own write is read by the next request (PATCH, then GET)", { skip: !!pgUrl && 'SQLite only' }, async () => {
  const list = await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=id,isRead&$top=1&$orderby=receivedDateTime desc');
  const m = list.body.value[0] as { id: string; isRead: boolean };
  for (const isRead of [!m.isRead, m.isRead]) {
    for (let i = 0; i < 2; i++) assert.equal((await call(s.url, token, 'GET', `/v1.0/me/messages/${encodeURIComponent(m.id)}?$select=isRead`)).body.isRead, !isRead);
    assert.equal((await call(s.url, token, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(m.id)}`, { isRead })).status, 200);
    assert.equal((await call(s.url, token, 'GET', `/v1.0/me/messages/${encodeURIComponent(m.id)}?$select=isRead`)).body.isRead, isRead);
  }
});
