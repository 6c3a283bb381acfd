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

/** GET of a message by id (as the text answered and parsed), with optional headers. */
async function getMessage(id: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${s.url}/v1.0/me/messages/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  assert.equal(r.status, 200);
  const text = await r.text();
  return { text, body: JSON.parse(text) };
}

test('a read-state PATCH drops only its own message: the others are read as stored, by REST and by immutable id', { skip: !!pgUrl && 'SQLite only' }, async () => {
  const list = await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=id,isRead,subject&$top=3&$orderby=receivedDateTime desc');
  const [a, b] = list.body.value as { id: string; isRead: boolean; subject: string }[];
  const bImmutable = (await getMessage(b!.id, { prefer: 'IdType="ImmutableId"' })).body.id as string;
  assert.notEqual(bImmutable, b!.id);
  // Both read twice (the second answer is the kept one), by both ids.
  for (let i = 0; i < 2; i++) {
    assert.equal((await getMessage(a!.id)).body.isRead, a!.isRead);
    assert.equal((await getMessage(b!.id)).body.subject, b!.subject);
    assert.equal((await getMessage(bImmutable)).body.subject, b!.subject);
  }
  // The read-state PATCH of A, then a general write of B (its categories): each is read at once.
  assert.equal((await call(s.url, token, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(a!.id)}`, { isRead: !a!.isRead })).status, 200);
  assert.equal((await getMessage(b!.id)).body.subject, b!.subject);
  assert.deepEqual((await getMessage(b!.id)).body.categories, []);
  assert.equal((await call(s.url, token, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(b!.id)}`, { categories: ['Red category'] })).status, 200);
  assert.deepEqual((await getMessage(b!.id)).body.categories, ['Red category']);
  assert.deepEqual((await getMessage(bImmutable)).body.categories, ['Red category']);
  // The read-state PATCH of A by its REST id, read by its immutable id.
  const aImmutable = (await getMessage(a!.id, { prefer: 'IdType="ImmutableId"' })).body.id as string;
  for (let i = 0; i < 2; i++) assert.equal((await getMessage(aImmutable)).body.isRead, !a!.isRead);
  assert.equal((await call(s.url, token, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(a!.id)}`, { isRead: a!.isRead })).status, 200);
  assert.equal((await getMessage(aImmutable)).body.isRead, a!.isRead);
  assert.equal((await getMessage(a!.id)).body.isRead, a!.isRead);
});

test('the PATCH answers the bytes a GET of the message answers, for the body type it was asked with only', { skip: !!pgUrl && 'SQLite only' }, async () => {
  const list = await call(s.url, token, 'GET', '/v1.0/me/mailFolders/inbox/messages?$select=id,isRead,body&$top=10&$orderby=receivedDateTime desc');
  const m = (list.body.value as { id: string; isRead: boolean; body: { contentType: string } }[]).find((x) => x.body.contentType === 'html')!;
  assert.ok(m, 'an HTML message in the inbox');
  const text = { prefer: 'outlook.body-content-type="text"' };
  const r = await fetch(`${s.url}/v1.0/me/messages/${encodeURIComponent(m.id)}`, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...text }, body: JSON.stringify({ isRead: !m.isRead }) });
  assert.equal(r.status, 200);
  const patched = await r.text();
  assert.equal(JSON.parse(patched).body.contentType, 'text');
  assert.equal(JSON.parse(patched).isRead, !m.isRead);
  assert.equal((await getMessage(m.id, text)).text, patched, 'the GET with the same options answers the same bytes');
  const html = await getMessage(m.id);
  assert.equal(html.body.body.contentType, 'html');
  assert.equal(html.body.isRead, !m.isRead);
  assert.equal(html.body.changeKey, JSON.parse(patched).changeKey);
});

test('a page of whole messages, named by row key alone, reads the stored version after every kind of write', { skip: !!pgUrl && 'SQLite only' }, async () => {
  // Each page asks a URL not asked before (`$top` grows), so its text is made anew from the kept message texts.
  let top = 20;
  const page = async () => {
    const r = await call(s.url, token, 'GET', `/v1.0/me/mailFolders/inbox/messages?$top=${top++}&$orderby=receivedDateTime desc`);
    assert.equal(r.status, 200);
    return r.body.value as { id: string; subject: string; isRead: boolean; categories: string[]; changeKey: string }[];
  };
  const first = await page();
  const [a, b, c] = first;
  assert.ok(a && b && c);
  assert.deepEqual((await page()).slice(0, 3), first.slice(0, 3), 'read again: the kept texts');
  // Another connection's write (the mailbox's data_version moves).
  assert.equal(other.prepare("update mail_messages set doc = json_set(doc, '$.subject', ?), subject = ?, subject_lc = lower(?), change_key = ? where id = ?").run('paged outside', 'paged outside', 'paged outside', 'outside-paged', a.id).changes, 1);
  let now = await page();
  assert.equal(now[0]!.subject, 'paged outside');
  assert.equal(now[1]!.subject, b.subject);
  // The read-state PATCH (only its own row's version drops).
  assert.equal((await call(s.url, token, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(b.id)}`, { isRead: !b.isRead })).status, 200);
  now = await page();
  assert.equal(now[1]!.isRead, !b.isRead);
  assert.equal(now[0]!.subject, 'paged outside');
  assert.equal(now[2]!.isRead, c.isRead);
  // A general write (categories).
  assert.equal((await call(s.url, token, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(c.id)}`, { categories: ['Blue category'] })).status, 200);
  now = await page();
  assert.deepEqual(now[2]!.categories, ['Blue category']);
  assert.equal(now[1]!.isRead, !b.isRead);
  // The read-state PATCH back, by a body that also names the type (no copy of the document either way).
  assert.equal((await call(s.url, token, 'PATCH', `/v1.0/me/messages/${encodeURIComponent(b.id)}`, { '@odata.type': '#vendor.graph.message', isRead: b.isRead })).status, 200);
  now = await page();
  assert.equal(now[1]!.isRead, b.isRead);
  assert.notEqual(now[1]!.changeKey, b.changeKey);
});
