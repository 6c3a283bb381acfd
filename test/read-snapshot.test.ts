/**
 * The embedded store's shared read transaction (`src/store/read-snapshot.ts`, issue 31): the
 * direct reads of one event-loop turn run in one read transaction, which ends at the end of the
 * turn and before any other statement on the connection — so a write of this process is read at
 * once, a Kysely transaction can begin, and another process's write is read from the next turn.
 * On a real SQLite file (WAL) with a second connection as the other process; no timing.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { openStore, type Store } from '../src/store/db.ts';
import { param, prepared } from '../src/store/prepared.ts';
import type { StoreTables } from '../src/store/tables.ts';

type T = StoreTables & { snap_t: { id: number; v: number } };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-snapshot-'));
let store: Store<T>;
let other: SQLite.Database;
const read = prepared((db: Kysely<T>) => db.selectFrom('snap_t').select('v').where('id', '=', param<number>(0)));
const value = async (p: Promise<{ v: number }[]>) => (await p)[0]?.v;
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

before(async () => {
  store = await openStore<T>({ sqliteFile: path.join(dir, 'stratus.db') });
  await store.migrate({ t_0001: { async up(db: Kysely<any>) { await db.schema.createTable('snap_t').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('v', 'integer').execute(); } } });
  await store.db.insertInto('snap_t').values({ id: 1, v: 1 }).execute();
  other = new SQLite(path.join(dir, 'stratus.db'));
  other.pragma('busy_timeout = 5000');
});
after(async () => {
  other?.close();
  await store?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test("another connection's write is read from the next turn on (the turn's reads share one snapshot)", async () => {
  await nextTurn();
  other.prepare('update snap_t set v = 1 where id = 1').run();
  const first = read(store.db, 1);
  other.prepare('update snap_t set v = 2 where id = 1').run();
  const second = read(store.db, 1);
  assert.equal(await value(first), 1);
  assert.equal(await value(second), 1, 'the same turn reads the same snapshot');
  await nextTurn();
  assert.equal(await value(read(store.db, 1)), 2, 'the snapshot ended with the turn');
});

test("this connection's own write ends the snapshot: the very next read sees it", async () => {
  await nextTurn();
  assert.equal(await value(read(store.db, 1)), 2);
  await store.db.updateTable('snap_t').set({ v: 3 }).where('id', '=', 1).execute();
  assert.equal(await value(read(store.db, 1)), 3);
});

test('a Kysely transaction begins while a snapshot is open, and its write is read after it', async () => {
  await nextTurn();
  const before = read(store.db, 1);
  await store.db.transaction().execute(async (trx) => {
    await trx.updateTable('snap_t').set({ v: 4 }).where('id', '=', 1).execute();
  });
  assert.equal(await value(before), 3);
  assert.equal(await value(read(store.db, 1)), 4);
  // Nothing is left open: another connection can write and this one reads it next turn.
  other.prepare('update snap_t set v = 5 where id = 1').run();
  await nextTurn();
  assert.equal(await value(read(store.db, 1)), 5);
});
