/**
 * What a message write costs PostgreSQL (issue 31: the 90/10 mix on PostgreSQL; bench/README.md,
 * thirteenth pass). PostgreSQL only (skipped on the embedded store):
 * - the full-text vector lives in `mail_search` (`mail_0014_search_table`): a read-state PATCH
 *   leaves its row as it is (no new GIN entries), a subject PATCH rewrites it, and `$search`
 *   answers from it;
 * - the version trigger of a message UPDATE is row-level (`mail_0016`): one notification naming
 *   the mailbox and the message, and the mailbox's version moves by one.
 * On both stores: `mail_messages_received` is gone (`mail_0015`, a prefix of another index).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokens, call } from './helpers/mail.ts';
import { demoTenant, demoUser } from '../src/seed/demo.ts';

const pgUrl = process.env.STRATUS_TEST_DATABASE_URL;
let s: TestServer;
let t: Awaited<ReturnType<typeof tokens>>;

before(async () => {
  s = await startTestServer();
  t = await tokens(s.url);
});
after(async () => {
  await s?.close();
});

/** The `xmin` (writing transaction) of the message's `mail_search` row, and its pk. */
async function searchRow(id: string): Promise<{ pk: string; xmin: string } | undefined> {
  const r = await sql<{ pk: string; xmin: string }>`select s.pk::text as pk, s.xmin::text as xmin from mail_search s join mail_messages m on m.pk = s.pk where m.id = ${id}`.execute(s.server.ctx.store.db);
  return r.rows[0];
}

test('the redundant received-time index is gone', async () => {
  const db = s.server.ctx.store.db;
  const names = pgUrl
    ? (await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema() and tablename = 'mail_messages'`.execute(db)).rows
    : (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'mail_messages'`.execute(db)).rows;
  const set = new Set(names.map((r) => r.name));
  assert.ok(set.has('mail_messages_received_pk'), 'the index that serves its queries stays');
  assert.ok(!set.has('mail_messages_received'));
});

test('the search vector has its own table: a read-state PATCH leaves it, a subject PATCH rewrites it', { skip: !pgUrl && 'PostgreSQL only' }, async () => {
  const db = s.server.ctx.store.db;
  const cols = (await sql<{ c: string }>`select column_name as c from information_schema.columns where table_schema = current_schema() and table_name = 'mail_messages'`.execute(db)).rows.map((r) => r.c);
  assert.ok(!cols.includes('search_tsv'), 'no vector in the message row');
  const made = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'Zorbleflap agenda', body: { contentType: 'text', content: 'about the quarnix' } });
  assert.equal(made.status, 201);
  const id = made.body.id as string;
  const first = await searchRow(id);
  assert.ok(first, 'the insert wrote its search row');
  const find = async (word: string) => {
    const r = await call(s.url, t.user, 'GET', `/v1.0/me/messages?$search=%22${word}%22&$select=subject`);
    assert.equal(r.status, 200);
    return r.body.value.map((m: any) => m.subject);
  };
  assert.deepEqual(await find('quarnix'), ['Zorbleflap agenda']);
  // Read state: the message row changes, its search row does not.
  assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${id}`, { isRead: true })).status, 200);
  assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${id}`, { isRead: false })).status, 200);
  assert.deepEqual(await searchRow(id), first, 'the search row was not written');
  // Subject: the search row is written again and search follows.
  assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${id}`, { subject: 'Plimquat agenda' })).status, 200);
  const second = await searchRow(id);
  assert.equal(second?.pk, first.pk);
  assert.notEqual(second?.xmin, first.xmin);
  assert.deepEqual(await find('zorbleflap'), []);
  assert.deepEqual(await find('plimquat'), ['Plimquat agenda']);
  // A row delete (a folder's purge, a world reset): the search row goes with the message row.
  await sql`delete from mail_messages where pk = ${Number(first.pk)}`.execute(db);
  const left = await sql<{ m: string; s: string }>`select (select count(*) from mail_messages where pk = ${Number(first.pk)})::text as m, (select count(*) from mail_search where pk = ${Number(first.pk)})::text as s`.execute(db);
  assert.deepEqual(left.rows[0], { m: '0', s: '0' });
  assert.deepEqual(await find('plimquat'), []);
});

test('a message update moves its mailbox version once and names the message in one notification', { skip: !pgUrl && 'PostgreSQL only' }, async () => {
  const db = s.server.ctx.store.db;
  const schema = s.config.databaseSchema!;
  const channel = `stratus_cache_${schema}`;
  const listener = new pg.Client({ connectionString: pgUrl });
  await listener.connect();
  try {
    const heard: string[] = [];
    const waiting = new Map<string, () => void>();
    listener.on('notification', (n) => {
      if (n.channel !== channel) return;
      const done = waiting.get(n.payload ?? '');
      if (done) done();
      else heard.push(n.payload ?? '');
    });
    await listener.query(`listen "${channel}"`);
    // Notifications arrive in commit order: once a marker sent after a write is heard, so is
    // everything the write's commit sent.
    let markers = 0;
    const drain = async () => {
      const marker = `test marker ${++markers}`;
      const heardIt = new Promise<void>((resolve) => waiting.set(marker, resolve));
      await sql`select pg_notify(${channel}, ${marker})`.execute(db);
      await heardIt;
    };
    const made = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'Version check' });
    assert.equal(made.status, 201);
    const pk = Number((await sql<{ pk: string }>`select pk::text as pk from mail_messages where id = ${made.body.id}`.execute(db)).rows[0]!.pk);
    const version = async () => Number((await sql<{ v: string }>`select version::text as v from mail_mailbox_versions where tenant_id = ${demoTenant.id} and mailbox_id = ${demoUser.id}`.execute(db)).rows[0]!.v);
    const v0 = await version();
    await drain();
    heard.length = 0;
    assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${made.body.id}`, { isRead: true })).status, 200);
    assert.equal(await version(), v0 + 1);
    await drain();
    const expected = `0 mail:${demoTenant.id}/${demoUser.id},msg:${demoTenant.id}/${pk}`;
    assert.deepEqual(heard.filter((p) => p.startsWith('0 ')), [expected]);
    assert.equal((await call(s.url, t.user, 'DELETE', `/v1.0/me/messages/${made.body.id}`)).status, 204);
  } finally {
    await listener.end();
  }
});
