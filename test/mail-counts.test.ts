/**
 * The folder counters (`mail_folder_counts`, kept by triggers in the same transaction as every
 * message write) agree with the messages after every kind of write, and `$count`,
 * `@odata.count` and the folders' totals read them; a `$search` is answered from the
 * full-text match (query plan) rather than by walking the mailbox. Bulk data from
 * `seedMailbox` (the generator of `stratus seed mailbox`). SQLite and PostgreSQL.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokens, call } from './helpers/mail.ts';
import { demoAdmin, demoTenant } from '../src/seed/demo.ts';
import { seedMailbox, bulkMessages } from '../src/services/mail/bulk.ts';
import { baseQuery, ordering } from '../src/services/mail/query.ts';
import { hiddenFromMailboxList, openMailbox } from '../src/services/mail/store.ts';
import { isPostgres } from '../src/store/db.ts';

describe('mail folder counters and index-driven queries', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  const admin = { tenantId: demoTenant.id, id: demoAdmin.id, mail: demoAdmin.userPrincipalName, displayName: demoAdmin.displayName };
  before(async () => {
    s = await startTestServer({ settings: { mailRequestsPerWindow: 100000, mailWindowSeconds: 60 } });
    const store = s.server.ctx.store;
    let progress = 0;
    await seedMailbox(store.db, admin, 3000, { batch: 1000, onProgress: (n) => (progress = n), transaction: (fn) => store.transaction(fn) });
    assert.equal(progress, 3000);
    // Tokens after the seeding: no keep-alive connection sits idle through it.
    t = await tokens(s.url);
  });
  after(async () => {
    await s?.close();
  });

  /** Counts computed from the messages themselves, per folder. */
  async function truth(): Promise<Map<string, { total: number; unread: number }>> {
    const rows = await s.server.ctx.store.db
      .selectFrom('mail_messages')
      .select(['folder_id'])
      .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum<number>(eb.parens(eb.lit<number>(1), '-', eb.ref('is_read'))).as('u')])
      .where('tenant_id', '=', admin.tenantId)
      .where('mailbox_id', '=', admin.id)
      .groupBy('folder_id')
      .execute();
    return new Map(rows.map((r: any) => [r.folder_id, { total: Number(r.n), unread: Number(r.u) }]));
  }

  async function checkCounters(when: string): Promise<void> {
    const want = await truth();
    const rows = await s.server.ctx.store.db.selectFrom('mail_folder_counts').selectAll().where('tenant_id', '=', admin.tenantId).where('mailbox_id', '=', admin.id).execute();
    const got = new Map(rows.map((r: any) => [r.folder_id, { total: Number(r.total), unread: Number(r.unread) }]));
    for (const [f, c] of want) assert.deepEqual(got.get(f), c, `${when}: folder ${f}`);
    for (const [f, c] of got) if (!want.has(f)) assert.deepEqual(c, { total: 0, unread: 0 }, `${when}: folder ${f} has no messages`);
    const mb = await openMailbox(s.server.ctx.store.db, admin);
    const hidden = new Set(hiddenFromMailboxList.map((n) => mb.wellKnown.get(n)));
    const visible = [...want].filter(([f]) => !hidden.has(f)).reduce((n, [, c]) => n + c.total, 0);
    const all = await call(s.url, t.admin, 'GET', '/v1.0/me/messages/$count');
    assert.equal(Number(all.body), visible, `${when}: /me/messages/$count`);
    const inbox = want.get(mb.wellKnown.get('inbox')!) ?? { total: 0, unread: 0 };
    const folder = await call(s.url, t.admin, 'GET', '/v1.0/me/mailFolders/inbox');
    assert.equal(folder.body.totalItemCount, inbox.total, `${when}: inbox totalItemCount`);
    assert.equal(folder.body.unreadItemCount, inbox.unread, `${when}: inbox unreadItemCount`);
    const unread = await call(s.url, t.admin, 'GET', '/v1.0/me/mailFolders/inbox/messages?$count=true&$filter=isRead%20eq%20false&$top=1');
    assert.equal(unread.body['@odata.count'], inbox.unread, `${when}: inbox unread @odata.count`);
    const read = await call(s.url, t.admin, 'GET', '/v1.0/me/mailFolders/inbox/messages/$count?$filter=IsRead%20eq%20true');
    assert.equal(Number(read.body), inbox.total - inbox.unread, `${when}: inbox read $count`);
  }

  test('the counters match the messages after bulk seeding and after every kind of write', async () => {
    await checkCounters('after seeding');
    const inbox = (await call(s.url, t.admin, 'GET', '/v1.0/me/mailFolders/inbox/messages?$top=5&$select=id,isRead')).body.value as { id: string; isRead: boolean }[];
    // Read state both ways.
    await call(s.url, t.admin, 'PATCH', `/v1.0/me/messages/${inbox[0]!.id}`, { isRead: !inbox[0]!.isRead });
    await call(s.url, t.admin, 'PATCH', `/v1.0/me/messages/${inbox[1]!.id}`, { isRead: false });
    await checkCounters('after PATCH isRead');
    // Move, copy, delete, permanent delete.
    assert.equal((await call(s.url, t.admin, 'POST', `/v1.0/me/messages/${inbox[2]!.id}/move`, { destinationId: 'archive' })).status, 201);
    assert.equal((await call(s.url, t.admin, 'POST', `/v1.0/me/messages/${inbox[3]!.id}/copy`, { destinationId: 'junkemail' })).status, 201);
    assert.equal((await call(s.url, t.admin, 'DELETE', `/v1.0/me/messages/${inbox[4]!.id}`)).status, 204);
    await checkCounters('after move, copy and delete');
    // A new draft, and mail sent to oneself (lands in the inbox unread and in Sent Items).
    assert.equal((await call(s.url, t.admin, 'POST', '/v1.0/me/messages', { subject: 'counted draft' })).status, 201);
    assert.equal((await call(s.url, t.admin, 'POST', '/v1.0/me/sendMail', { message: { subject: 'to myself', toRecipients: [{ emailAddress: { address: admin.mail } }] } })).status, 202);
    await checkCounters('after create and sendMail');
    // A user folder with messages, deleted twice (into Deleted Items, then for good).
    const f = (await call(s.url, t.admin, 'POST', '/v1.0/me/mailFolders', { displayName: 'Counted' })).body;
    const some = (await call(s.url, t.admin, 'GET', '/v1.0/me/mailFolders/inbox/messages?$top=3&$select=id')).body.value as { id: string }[];
    for (const m of some) await call(s.url, t.admin, 'POST', `/v1.0/me/messages/${m.id}/move`, { destinationId: f.id });
    assert.equal((await call(s.url, t.admin, 'GET', `/v1.0/me/mailFolders/${f.id}`)).body.totalItemCount, 3);
    await call(s.url, t.admin, 'DELETE', `/v1.0/me/mailFolders/${f.id}`);
    await call(s.url, t.admin, 'DELETE', `/v1.0/me/mailFolders/${f.id}`);
    await checkCounters('after deleting a folder with messages');
  });

  test('$search counts and pages from the full-text match; on SQLite the plan starts at the match', async () => {
    const db = s.server.ctx.store.db;
    const mb = await openMailbox(db, admin);
    // The generator is deterministic apart from ids: count the project word in the generated text.
    const word = 'onyxbeacon';
    let expected = 0;
    for (const m of bulkMessages(mb, 3000, 7)) if (`${m.doc.subject} ${m.doc.body.content}`.toLowerCase().includes(word)) expected++;
    assert.ok(expected > 0);
    const r = await call(s.url, t.admin, 'GET', `/v1.0/me/messages?$search=%22${word}%22&$count=true&$top=1000&$select=subject`);
    assert.equal(r.status, 200);
    assert.equal(r.body['@odata.count'], expected);
    assert.equal(r.body.value.length, expected);
    const none = await call(s.url, t.admin, 'GET', '/v1.0/me/messages?$search=%22zyxwvut%22&$count=true');
    assert.equal(none.body['@odata.count'], 0);
    assert.deepEqual(none.body.value, []);
    if (!isPostgres(db)) {
      const lq = { tenantId: admin.tenantId, mailboxId: admin.id, excludeFolderIds: [mb.wellKnown.get('root')!], q: new URLSearchParams(`$search="${word}"`) };
      let q = baseQuery(db, lq).selectAll('mail_messages');
      for (const o of ordering(lq.q)) q = q.orderBy(o.column as any, o.direction);
      const c = q.limit(11).compile();
      const plan = (await db.executeQuery({ ...c, sql: 'explain query plan ' + c.sql })).rows.map((x: any) => x.detail).join('\n');
      assert.match(plan, /mail_fts VIRTUAL TABLE/);
      assert.match(plan, /SEARCH mail_messages USING INTEGER PRIMARY KEY/);
      assert.doesNotMatch(plan, /mail_messages USING (COVERING )?INDEX/);
    }
  });

  test('on SQLite the folder page and $count read indexes and counters, not the mailbox', async (tc) => {
    const db = s.server.ctx.store.db;
    if (isPostgres(db)) return tc.skip('SQLite query plans');
    const mb = await openMailbox(db, admin);
    const lq = { tenantId: admin.tenantId, mailboxId: admin.id, folderId: mb.wellKnown.get('inbox')!, excludeFolderIds: [], q: new URLSearchParams('') };
    let q = baseQuery(db, lq).selectAll('mail_messages');
    for (const o of ordering(lq.q)) q = q.orderBy(o.column as any, o.direction);
    const c = q.limit(11).offset(990).compile();
    const plan = (await db.executeQuery({ ...c, sql: 'explain query plan ' + c.sql })).rows.map((x: any) => x.detail).join('\n');
    assert.match(plan, /SEARCH mail_messages USING (COVERING )?INDEX mail_messages_folder_page/);
    assert.doesNotMatch(plan, /TEMP B-TREE/);
  });
});
