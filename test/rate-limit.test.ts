/**
 * The rate limiter and the store's statement handling on the real database (SQLite, or
 * PostgreSQL when STRATUS_TEST_DATABASE_URL is set):
 * - on PostgreSQL two stores on one schema (as two instances) count one budget: the
 *   limit holds exactly across them, and `rate_limits` is an unlogged table; an upsert
 *   reserves a lease ahead for a large budget, and one turn's counts and cache-version read
 *   are one statement;
 * - on SQLite the budget is counted in memory, written behind, and a window survives
 *   closing and reopening the store (a restart);
 * - the same SQL text runs from one prepared statement (SQLite: the cached statement;
 *   PostgreSQL: one named statement in `pg_prepared_statements`).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { dropSchemas } from './helpers/server.ts';
import { sql } from 'kysely';
import SQLite from 'better-sqlite3';
import { cachingSqlite, openStore, type Store } from '../src/store/db.ts';
import { leaseFor, maxLease, maxRateLease, rateLease, RateLimiter, rateLimitMigrations } from '../src/core/rate-limit.ts';
import { bumpCacheVersions, CacheHub } from '../src/core/cache.ts';
import { cacheMigrations } from '../src/core/cache-migrations.ts';
import type { RateLimitDatabase } from '../src/core/tables.ts';

const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const schema = `t_${randomBytes(6).toString('hex')}`;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-ratelimit-'));
const opened: Store<RateLimitDatabase>[] = [];

async function open(): Promise<Store<RateLimitDatabase>> {
  const s = dbUrl ? await openStore<RateLimitDatabase>({ databaseUrl: dbUrl, databaseSchema: schema }) : await openStore<RateLimitDatabase>({ sqliteFile: path.join(dir, 'stratus.db') });
  await s.migrate(rateLimitMigrations);
  opened.push(s);
  return s;
}

after(async () => {
  for (const s of opened) await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
  await dropSchemas(dbUrl, schema);
});

test('a budget is counted once across instances (PostgreSQL) or across a restart (SQLite)', async () => {
  const bucket = `test:${randomBytes(4).toString('hex')}`;
  const a = await open();
  const limiterA = new RateLimiter(a.db);
  if (dbUrl) {
    const b = await open();
    const limiterB = new RateLimiter(b.db);
    // 10 requests spread over both instances, 7 allowed: exactly 7 pass, whichever instance answers.
    const decisions = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? limiterA : limiterB).hit(bucket, 7, 600)));
    assert.equal(decisions.filter((d) => d.allowed).length, 7);
    // The hits of one turn share an upsert, and each still gets its own place in the count.
    assert.deepEqual(decisions.map((d) => d.remaining).sort((x, y) => x - y), [0, 0, 0, 0, 1, 2, 3, 4, 5, 6]);
    assert.equal((await limiterB.peek(bucket, 7, 600)).remaining, 0);
    assert.equal((await limiterA.peek(bucket, 7, 600)).allowed, false);
    const kind = await sql<{ p: string }>`select relpersistence as p from pg_class where oid = 'rate_limits'::regclass`.execute(a.db);
    assert.equal(kind.rows[0]!.p, 'u', 'rate_limits is UNLOGGED');
  } else {
    for (let i = 0; i < 3; i++) assert.equal((await limiterA.hit(bucket, 5, 600)).remaining, 4 - i);
    // Nothing is written per request: the table still holds no row of the bucket.
    assert.equal((await a.db.selectFrom('rate_limits').select('count').where('bucket', '=', bucket).execute()).length, 0);
    await limiterA.close();
    await a.close();
    const again = await open();
    const limiter = new RateLimiter(again.db);
    assert.equal((await limiter.peek(bucket, 5, 600)).remaining, 2);
    assert.equal((await limiter.hit(bucket, 5, 600)).remaining, 1);
    assert.equal((await limiter.hit(bucket, 5, 600)).remaining, 0);
    const over = await limiter.hit(bucket, 5, 600);
    assert.equal(over.allowed, false);
    assert.ok(over.retryAfterSeconds >= 1 && over.retryAfterSeconds <= 600);
    await limiter.clear();
    assert.equal((await limiter.hit(bucket, 5, 600)).remaining, 4);
  }
});

test('one SQL text runs from one prepared statement', async () => {
  if (dbUrl) {
    const s = await open();
    for (let i = 0; i < 3; i++) await s.db.selectFrom('rate_limits').select('count').where('bucket', '=', `b${i}`).execute();
    // Every connection of the pool that ran it holds the statement once, by one name.
    const r = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements where statement like '%from "rate_limits" where "bucket" = $1'`.execute(s.db);
    assert.ok(r.rows.length >= 1);
    assert.equal(new Set(r.rows.map((x) => x.name)).size, 1);
  } else {
    const database = new SQLite(':memory:');
    const db = cachingSqlite(database);
    const one = db.prepare('select 1 as x where 1 = ?');
    assert.equal(db.prepare('select 1 as x where 1 = ?'), one);
    assert.notEqual(db.prepare('select 2 as x where 1 = ?'), one);
    // A statement still being iterated is not handed out again.
    const it = (one as any).iterate([1]);
    it.next();
    assert.notEqual(db.prepare('select 1 as x where 1 = ?'), one);
    it.return();
    database.close();
  }
});

test('lease sizes: 64, or about 100 ms of a busy bucket\'s traffic, never more than 1/16 of what is left', () => {
  // The rate of the last lease: `granted` requests used in `elapsedMs`.
  assert.equal(rateLease(0, 10), 0);
  assert.equal(rateLease(64, 100), 64);
  assert.equal(rateLease(64, 10), 640);
  assert.equal(rateLease(64, 1000), 7);
  assert.equal(rateLease(64, 0), maxRateLease);
  assert.equal(leaseFor(1e9, 0), maxLease);
  assert.equal(leaseFor(1e9, 0, 7), maxLease, 'a slow bucket keeps 64');
  assert.equal(leaseFor(1e9, 0, 640), 640, 'a busy one gets more');
  assert.equal(leaseFor(1600, 0, 640), 100, 'at most 1/16 of the budget');
  assert.equal(leaseFor(1600, 1500, 640), 6, 'at most 1/16 of what is left');
  assert.equal(leaseFor(10, 0, 640), 0, 'none for a budget under 16');
});

test('PostgreSQL: an upsert reserves a lease ahead, answered without a round trip; the limit holds across instances and one instance counts exactly', async (t) => {
  if (!dbUrl) return t.skip('PostgreSQL only (SQLite counts in memory)');
  const a = await open();
  const b = await open();
  const limiterA = new RateLimiter(a.db);
  const limiterB = new RateLimiter(b.db);
  const row = async (bucket: string) => Number((await a.db.selectFrom('rate_limits').select('count').where('bucket', '=', bucket).executeTakeFirst())?.count ?? 0);

  // A large budget: the first hit also reserves `maxLease` requests, and the next ones are answered from them.
  const big = `lease:${randomBytes(4).toString('hex')}`;
  const limit = 1600;
  assert.equal(leaseFor(limit, 0), maxLease);
  assert.equal((await limiterA.hit(big, limit, 600)).remaining, limit - 1);
  assert.equal(await row(big), 1 + maxLease);
  for (let i = 2; i <= 1 + maxLease; i++) {
    const d = limiterA.hit(big, limit, 600);
    assert.ok(!(d instanceof Promise), 'answered from the lease, no round trip');
    assert.equal(d.remaining, limit - i);
  }
  assert.equal(await row(big), 1 + maxLease, 'the lease was used without touching the row');
  // B counts after what A reserved; A's next hit counts after B's reservation.
  assert.equal((await limiterB.hit(big, limit, 600)).remaining, limit - (1 + maxLease) - 1);
  const rowBefore = await row(big);
  const next = limiterA.hit(big, limit, 600);
  assert.ok(next instanceof Promise, 'a used-up lease goes back to the database');
  assert.ok((await next).remaining < limit - 2 * (1 + maxLease));
  // Its lease (sized by how fast the last one was used: at least 64, at most 1/16 of what was
  // left at A's last count, 1 + maxLease).
  const rowAfter = await row(big);
  const lease = rowAfter - rowBefore - 1;
  assert.ok(lease >= maxLease && lease <= Math.floor((limit - (1 + maxLease)) / 16), `lease ${lease}`);
  // peek counts what this instance reserved and has not used as still available.
  const peekA = await limiterA.peek(big, limit, 600);
  assert.equal(peekA.remaining, limit - rowAfter + lease);

  // One instance alone counts exactly, lease or not: 50 allowed of 50, remaining 49 … 0.
  const alone = `alone:${randomBytes(4).toString('hex')}`;
  const seen: number[] = [];
  let allowed = 0;
  for (let i = 0; i < 60; i++) {
    const d = await limiterA.hit(alone, 50, 600);
    if (d.allowed) {
      allowed++;
      seen.push(d.remaining);
    }
  }
  assert.equal(allowed, 50);
  assert.deepEqual(seen, Array.from({ length: 50 }, (_, i) => 49 - i));

  // Two instances, concurrent and alternating: never more than the limit; refused early by at most the other's lease.
  const shared = `shared:${randomBytes(4).toString('hex')}`;
  const decisions = await Promise.all(Array.from({ length: 120 }, (_, i) => (i % 2 ? limiterA : limiterB).hit(shared, 50, 600)));
  let more = 0;
  for (let i = 0; i < 40; i++) if ((await (i % 2 ? limiterA : limiterB).hit(shared, 50, 600)).allowed) more++;
  const total = decisions.filter((d) => d.allowed).length + more;
  assert.ok(total <= 50, `allowed ${total} of 50`);
  assert.ok(total >= 50 - 2 * leaseFor(50, 0), `allowed ${total} of 50 (tolerance: the leases)`);

  // A reset forgets this instance's lease with the rows.
  await limiterA.clear();
  assert.equal((await limiterA.hit(big, limit, 600)).remaining, limit - 1);
});

test('PostgreSQL: the cache-version read and the rate-limit counts of one turn are one statement', async (t) => {
  if (!dbUrl) return t.skip('PostgreSQL only (SQLite has no round trip to share)');
  const s = await open();
  await s.migrate(cacheMigrations);
  let statements = 0;
  // The real components over a handle that counts the statements it compiles.
  const counted = s.db.withPlugin({
    transformQuery: (args) => {
      statements++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  // A store over the counting handle; its own-write hook is not needed here (nothing is written through it).
  const hub = new CacheHub({ db: counted, watchWrites: () => undefined } as unknown as Store);
  const limiter = new RateLimiter(counted);
  const bucket = `trip:${randomBytes(4).toString('hex')}`;
  await hub.sync();
  statements = 0;
  const [, d1, d2] = await Promise.all([hub.sync(), limiter.hit(bucket, 5, 600), limiter.hit(`${bucket}:other`, 5, 600)]);
  assert.equal(statements, 1, 'one statement for the versions and both buckets');
  assert.equal(d1.remaining, 4);
  assert.equal(d2.remaining, 4);
  // A version bumped by another writer is seen by the next turn's statement.
  const gen = hub.generation('arm');
  await bumpCacheVersions(s.db as never, ['arm']);
  statements = 0;
  await hub.sync();
  assert.equal(statements, 1);
  assert.equal(hub.generation('arm'), gen + 1, 'the arm caches were emptied');
});
