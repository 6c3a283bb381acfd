/**
 * What PostgreSQL is given to plan with (issue 31: the 90/10 mix on PostgreSQL; bench/README.md,
 * twelfth pass). PostgreSQL only (skipped on the embedded store):
 * - a turn's batched reads by key (`src/core/row-batch.ts`) run on a kept generic plan after the
 *   server's first five custom ones, instead of being planned again on every execution (an
 *   `unnest` of an array parameter made every custom plan look cheaper);
 * - the bulk generator (`seedMailbox`, as `stratus seed mailbox`) leaves the messages' planner
 *   statistics made, so the first reads of a fresh store are planned on them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { rowInTurn, type RowRead } from '../src/core/row-batch.ts';
import { seedMailbox } from '../src/services/mail/bulk.ts';
import { demoTenant, demoUser } from '../src/seed/demo.ts';

const pgUrl = process.env.STRATUS_TEST_DATABASE_URL;
let s: TestServer;

before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.close();
});

test('the bulk generator leaves planner statistics of the messages', { skip: !pgUrl && 'PostgreSQL only' }, async () => {
  const store = s.server.ctx.store;
  const stats = async () => Number((await sql<{ n: string }>`select count(*)::text as n from pg_stats where schemaname = current_schema() and tablename = 'mail_messages'`.execute(store.db)).rows[0]!.n);
  assert.equal(await stats(), 0, 'a fresh schema has none');
  const user = { tenantId: demoTenant.id, id: demoUser.id, mail: demoUser.userPrincipalName, displayName: demoUser.displayName };
  await seedMailbox(store.db, user, 40, { batch: 40, seed: 5, transaction: (fn) => store.transaction(fn) });
  assert.ok((await stats()) > 0, 'statistics made after the bulk load');
  const rows = (await sql<{ n: string }>`select count(*)::text as n from mail_messages where tenant_id = ${demoTenant.id} and mailbox_id = ${demoUser.id}`.execute(store.db)).rows;
  assert.ok(Number(rows[0]!.n) >= 40);
});

test('a turn batch of reads by key keeps one generic plan on its connection', { skip: !pgUrl && 'PostgreSQL only' }, async () => {
  // The message read by id of `message-read.ts`, on the messages the bulk test wrote.
  const read: RowRead = {
    name: 'test: message by id',
    keyParts: 3,
    lookup: sql`select pk, id, subject from mail_messages where tenant_id = q.k1 and mailbox_id = q.k2 and (id = q.k3 or immutable_id = q.k3) limit 1`,
    columns: ['pk', 'id', 'subject'],
  };
  const ids = (await sql<{ id: string }>`select id from mail_messages where tenant_id = ${demoTenant.id} and mailbox_id = ${demoUser.id} order by pk limit 12`.execute(s.server.ctx.store.db)).rows.map((r) => r.id);
  assert.equal(ids.length, 12);
  // One pinned connection: its prepared statements are what pg_prepared_statements shows.
  await s.server.ctx.store.db.connection().execute(async (conn) => {
    for (const id of ids) {
      const row = await rowInTurn(conn, read, [demoTenant.id, demoUser.id, id]);
      assert.equal(row?.id, id);
    }
    assert.equal(await rowInTurn(conn, read, [demoTenant.id, demoUser.id, 'no-such-message']), undefined);
    const plans = (await sql<{ generic: string; custom: string }>`select generic_plans::text as generic, custom_plans::text as custom from pg_prepared_statements where statement like '%(id = q.k3 or immutable_id = q.k3) limit 1%' and statement not like '%pg_prepared_statements%'`.execute(conn)).rows;
    assert.equal(plans.length, 1, 'the batch ran as one named statement on this connection');
    // The server tries five custom plans, then keeps the generic one (13 executions).
    assert.ok(Number(plans[0]!.custom) <= 5, `custom plans: ${plans[0]!.custom}`);
    assert.ok(Number(plans[0]!.generic) >= 8, `generic plans: ${plans[0]!.generic}`);
  });
});
