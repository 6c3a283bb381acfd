/**
 * The store's migration runner on the real database (SQLite, or PostgreSQL when
 * STRATUS_TEST_DATABASE_URL is set): pending migrations apply once, in name order; a failing
 * one applies nothing of its run; a store migrated by Kysely's own migrator is adopted.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dropSchemas } from './helpers/server.ts';
import type { Kysely } from 'kysely';
import { openStore, type Migrations, type Store } from '../src/store/db.ts';
import type { StoreTables } from '../src/store/tables.ts';

/** The store's table and the ones these tests make. */
type TestTables = StoreTables & {
  ok_table: { id: number };
  kysely_migration: { name: string; timestamp: string };
};

const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const schemas: string[] = [];
const stores: Store<TestTables>[] = [];

async function freshStore(): Promise<Store<TestTables>> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  schemas.push(schema);
  const s = dbUrl ? await openStore<TestTables>({ databaseUrl: dbUrl, databaseSchema: schema }) : await openStore<TestTables>({ sqliteFile: ':memory:' });
  stores.push(s);
  return s;
}

after(async () => {
  for (const s of stores) await s.close();
  await dropSchemas(dbUrl, ...schemas);
});

const table = (name: string) => ({ async up(db: Kysely<unknown>) { await db.schema.createTable(name).addColumn('id', 'integer', (c) => c.primaryKey()).execute(); } });

test('pending migrations apply once, in name order', async () => {
  const store = await freshStore();
  const order: string[] = [];
  const m: Migrations = {
    b_0002: { async up(db) { order.push('b_0002'); await table('tb').up(db); } },
    a_0001: { async up(db) { order.push('a_0001'); await table('ta').up(db); } },
  };
  await store.migrate(m);
  await store.migrate(m);
  assert.deepEqual(order, ['a_0001', 'b_0002']);
  const rows = await store.db.selectFrom('stratus_migrations').select('name').orderBy('name').execute();
  assert.deepEqual(rows.map((r: any) => r.name), ['a_0001', 'b_0002']);
});

test('a failing migration names itself and leaves nothing of its run behind', async () => {
  const store = await freshStore();
  await assert.rejects(
    store.migrate({ a_0001: table('ok_table'), b_0002: { async up() { throw new Error('boom'); } } }),
    /migration b_0002 failed: boom/,
  );
  const applied = await store.db.selectFrom('stratus_migrations').select('name').execute().catch(() => []);
  assert.deepEqual(applied, []);
  await store.migrate({ a_0001: table('ok_table') });
  assert.equal((await store.db.selectFrom('ok_table').selectAll().execute()).length, 0);
});

test("a store migrated by Kysely's migrator is adopted: its migrations do not run again", async () => {
  const store = await freshStore();
  const old: Migrations = { a_0001: table('legacy_a') };
  // The state Kysely's Migrator leaves (its table and columns), made directly: running the
  // Migrator itself introspects every schema of the database, which races with other test
  // files dropping theirs on a shared PostgreSQL (the reason Stratus stopped using it).
  await old.a_0001!.up(store.db);
  await store.db.schema.createTable('kysely_migration').addColumn('name', 'varchar(255)', (c) => c.primaryKey()).addColumn('timestamp', 'varchar(255)', (c) => c.notNull()).execute();
  await store.db.insertInto('kysely_migration').values({ name: 'a_0001', timestamp: new Date().toISOString() }).execute();
  await store.migrate({ ...old, b_0002: table('legacy_b') });
  const rows = await store.db.selectFrom('stratus_migrations').select('name').orderBy('name').execute();
  assert.deepEqual(rows.map((r: any) => r.name), ['a_0001', 'b_0002']);
});

test('a SQLite file store checkpoints on its worker thread', { skip: dbUrl ? 'SQLite file stores only' : false }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-ckpt-'));
  const file = path.join(dir, 'stratus.db');
  const store = await openStore<TestTables>({ sqliteFile: file });
  try {
    assert.ok(store.checkpointer, 'a file store has a checkpoint worker');
    await store.migrate({ a_0001: table('ok_table') });
    // 1,500 commits of one page or more each.
    for (let i = 0; i < 1500; i++) await store.db.insertInto('ok_table').values({ id: i }).execute();
    const done = await store.checkpointer.checkpoint();
    assert.ok(done, 'the worker ran the checkpoint');
    assert.equal(done.busy, 0);
    assert.equal(done.checkpointed, done.log, 'every page of the log was copied into the database file');
    await store.close();
    const again = await openStore<TestTables>({ sqliteFile: file });
    try {
      assert.equal((await again.db.selectFrom('ok_table').select((eb) => eb.fn.countAll().as('n')).executeTakeFirst())?.n, 1500);
    } finally {
      await again.close();
    }
  } finally {
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
