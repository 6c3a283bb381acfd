/**
 * WAL checkpoints of a SQLite file store run on the store's worker thread (issue 31,
 * `src/store/checkpointer.ts`): committed pages reach the database file without the writing
 * connection checkpointing, every committed row is there after a reopen, and the store's close
 * still removes the WAL (the worker's connection closes first). SQLite file stores only:
 * skipped on PostgreSQL and for `:memory:`.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { openStore } from '../src/store/db.ts';
import { fallbackCheckpointPages } from '../src/store/checkpointer.ts';
import type { StoreTables } from '../src/store/tables.ts';
import { waitFor } from './helpers/wait.ts';

type Tables = StoreTables & { ckpt_rows: { id: number; body: string } };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-ckpt-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));
const onPostgres = Boolean(process.env.STRATUS_TEST_DATABASE_URL);

test('committed pages reach the database file through the worker, and close removes the WAL', { skip: onPostgres && 'SQLite file stores only' }, async () => {
  const file = path.join(dir, 'a.db');
  const store = await openStore<Tables>({ sqliteFile: file });
  const db = store.db as Kysely<Tables>;
  await sql`create table ckpt_rows (id integer primary key, body text not null)`.execute(db);
  // The writing connection never checkpoints below the fallback threshold.
  const [auto] = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows;
  assert.equal(Number(auto!.wal_autocheckpoint), fallbackCheckpointPages);
  const sizeBefore = fs.statSync(file).size;
  const body = 'x'.repeat(2000);
  for (let i = 1; i <= 300; i++) await db.insertInto('ckpt_rows').values({ id: i, body }).execute();
  // About 150 pages of rows: far below the fallback, so only the worker can have copied them into the file.
  await waitFor(() => fs.statSync(file).size >= sizeBefore + 300 * 2000, 'the worker to checkpoint the WAL into the database file');
  await store.close();
  assert.equal(fs.existsSync(`${file}-wal`), false, 'the WAL is removed at close');
  const again = await openStore<Tables>({ sqliteFile: file });
  const [n] = (await sql<{ n: number }>`select count(*) as n from ckpt_rows`.execute(again.db as Kysely<Tables>)).rows;
  assert.equal(Number(n!.n), 300);
  await again.close();
});

test('a store that never wrote starts no worker and closes at once', { skip: onPostgres && 'SQLite file stores only' }, async () => {
  const file = path.join(dir, 'b.db');
  const store = await openStore<Tables>({ sqliteFile: file });
  await sql`select 1`.execute(store.db);
  await store.close();
  assert.equal(fs.existsSync(`${file}-wal`), false);
});
