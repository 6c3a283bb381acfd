/**
 * `npm run bench:store`: micro-measurements of the store's request-path costs, each against
 * what it replaced (issue 9, items 1 and 2), in one process, sequentially:
 * - a small indexed select through Kysely: prepared anew per call vs the cached statement;
 * - one rate-limit hit: the former per-request upsert + commit (`synchronous=FULL`, then
 *   `NORMAL`) vs the in-memory counter (SQLite);
 * - on PostgreSQL (`--database-url`, default `STRATUS_BENCH_DATABASE_URL` or the local
 *   test database; skipped when unreachable): the shared upsert on a logged vs an UNLOGGED
 *   `rate_limits` table.
 *
 *   npm run bench:store [-- --n 5000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { cachingSqlite, openStore } from '../src/store/db.ts';
import { RateLimiter, rateLimitMigrations } from '../src/core/rate-limit.ts';
import type { RateLimitDatabase } from '../src/core/tables.ts';

const { values: flags } = parseArgs({
  options: {
    n: { type: 'string', default: '3000' },
    'database-url': { type: 'string', default: process.env.STRATUS_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
  },
});
const n = Number(flags.n);
const out: string[] = [];
const report = (what: string, t0: number) => out.push(`| ${what} | ${(((performance.now() - t0) * 1000) / n).toFixed(1)} |`);

// 1. Statement preparation: the same select through Kysely, fresh vs cached statements.
{
  const database = new SQLite(':memory:');
  database.exec('create table t (id text primary key, body text)');
  const ins = database.prepare('insert into t values (?, ?)');
  for (let i = 0; i < 1000; i++) ins.run(`k${i}`, 'x'.repeat(300));
  for (const [what, dialectDb] of [
    ['select by key, statement prepared per call (Kysely SqliteDialect as is)', database],
    ['select by key, cached statement (`cachingSqlite`)', cachingSqlite(database)],
  ] as const) {
    const db = new Kysely<any>({ dialect: new SqliteDialect({ database: dialectDb as any }) });
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await db.selectFrom('t').selectAll().where('id', '=', `k${i % 1000}`).execute();
    report(what, t0);
  }
  database.close();
}

// 2. Rate-limit hit on SQLite: the former upsert + commit per request vs the in-memory counter.
for (const mode of ['FULL', 'NORMAL'] as const) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-micro-'));
  const s = await openStore<RateLimitDatabase>({ sqliteFile: path.join(dir, 'stratus.db'), sqliteSynchronous: mode });
  await s.migrate(rateLimitMigrations);
  let t0 = performance.now();
  for (let i = 0; i < n; i++) {
    await sql`INSERT INTO rate_limits (bucket, window_start_ms, count) VALUES (${'b'}, ${Date.now()}, 1)
      ON CONFLICT (bucket) DO UPDATE SET
        count = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${600000} THEN 1 ELSE rate_limits.count + 1 END,
        window_start_ms = CASE WHEN excluded.window_start_ms - rate_limits.window_start_ms >= ${600000} THEN excluded.window_start_ms ELSE rate_limits.window_start_ms END
      RETURNING window_start_ms, count`.execute(s.db);
  }
  report(`rate-limit hit, former upsert + commit, SQLite synchronous=${mode}`, t0);
  if (mode === 'NORMAL') {
    const rl = new RateLimiter(s.db);
    t0 = performance.now();
    for (let i = 0; i < n; i++) await rl.hit('c', 1e9, 600);
    report('rate-limit hit, in memory (SQLite, written behind once a second)', t0);
    await rl.close();
  }
  await s.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

// 3. PostgreSQL: the shared upsert on a logged vs an unlogged table.
const schema = `micro_${randomBytes(4).toString('hex')}`;
try {
  const s = await openStore<RateLimitDatabase>({ databaseUrl: flags['database-url'], databaseSchema: schema });
  try {
    await s.migrate({ core_0002_rate_limits: rateLimitMigrations.core_0002_rate_limits! });
    for (const unlogged of [false, true]) {
      if (unlogged) await sql`alter table rate_limits set unlogged`.execute(s.db);
      const rl = new RateLimiter(s.db);
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await rl.hit('c', 1e9, 600);
      report(`rate-limit hit, PostgreSQL upsert on a ${unlogged ? 'UNLOGGED' : 'logged'} table`, t0);
    }
    await sql`drop schema ${sql.id(schema)} cascade`.execute(s.db);
  } finally {
    await s.close();
  }
} catch (e) {
  out.push(`| PostgreSQL skipped: ${(e as Error).message} | |`);
}

process.stdout.write(`\nstore micro-measurements — ${new Date().toISOString()}, ${os.cpus().length} CPUs, Node ${process.version}, ${n} calls each, sequential\n\n| operation | µs per call |\n|---|---|\n${out.join('\n')}\n`);
