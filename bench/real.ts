/**
 * `npm run bench:real` (issue 31): Stratus on workloads that do not repeat one URL, against the
 * framework floor, with the harness of `npm run bench` (`bench/harness.ts`: Stratus, the bare
 * Fastify floor and autocannon as three processes, warm-up, interleaved rounds, ratios to the
 * floor run right before each run).
 *
 * Data, made before the servers take load: `--users` directory users of the demo tenant with
 * `--messages` generated messages in all (the bulk generator of `stratus seed mailbox`,
 * `bench/real-seed.ts`), `--webhooks` webhooks created with `PUT` through the API, and inbox
 * page variants probed through the API (`bench/real-pools.ts`). Each request comes from a pool
 * the load generator cycles through (`bench/load.ts`), with its own token (the mailbox owner's
 * for mail); the floor is sent the very same pool (same paths, headers and bodies), so the load
 * generator's own cost per request is the same on both sides.
 *
 * Scenarios: `webhooks` (GET among the webhooks), `messages` (GET among the messages, each by
 * its owner), `pages` (inbox pages of every mailbox, `--variants` combinations of `$filter`,
 * `$orderby`, `$select`, `$skip`, `$top`), `mix` (90 % reads / 10 % writes on the webhooks and
 * messages: webhook GET and message GET 45 % each, webhook PUT and message PATCH `isRead` 5 %
 * each). SQLite runs `--scenarios` (default all four); PostgreSQL runs `--pg-scenarios`
 * (default `mix`) with one instance and then, on the same schema and data, with two
 * (`--instances`; autocannon spreads the connections over both).
 *
 *   npm run bench:real
 *   npm run bench:real -- --seconds 5 --rounds 2 --db sqlite --scenarios pages,mix
 *
 * Flags: `--seconds` (10), `--rounds` (3), `--connections` (50), `--warmup` (3), `--db`
 * (`sqlite,postgres`), `--instances` (`1,2`), `--scenarios`, `--pg-scenarios`, `--users` (50),
 * `--messages` (10000), `--webhooks` (1000), `--variants` (3000), `--mix` (pool size, 20000),
 * `--database-url`, `--log-level` (`info`), `--stratus-dir` (serve another checkout),
 * `--cpu-prof <dir>`. Markdown tables on stdout.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { exited, fleet, interleavedRounds, pgReachable, roundsTable, startBare, stop, type RoundScenario } from './harness.ts';
import { prepare, writePool, type PoolName } from './real-pools.ts';
import type { PoolFile } from './load.ts';
import type { SeededUser } from './real-seed.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '3' },
    db: { type: 'string', default: 'sqlite,postgres' },
    instances: { type: 'string', default: '1,2' },
    scenarios: { type: 'string', default: 'webhooks,messages,pages,mix' },
    'pg-scenarios': { type: 'string', default: 'mix' },
    users: { type: 'string', default: '50' },
    messages: { type: 'string', default: '10000' },
    webhooks: { type: 'string', default: '1000' },
    variants: { type: 'string', default: '3000' },
    mix: { type: 'string', default: '20000' },
    'database-url': { type: 'string', default: process.env.STRATUS_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
    'log-level': { type: 'string', default: 'info' },
    'stratus-dir': { type: 'string', default: path.resolve(here, '..') },
    'cpu-prof': { type: 'string' },
  },
});
const num = (k: keyof typeof flags) => Number(flags[k]);
const rounds = num('rounds');
const seconds = num('seconds');
const connections = num('connections');
const warmup = num('warmup');
const users = num('users');
const stratusDir = path.resolve(flags['stratus-dir']!);
const password = 'Bench-Pass-1';

const names: Record<PoolName, string> = {
  webhooks: `GET among ${flags.webhooks} distinct webhooks`,
  messages: `GET among ${flags.messages} distinct messages in ${users} mailboxes, owner's token`,
  pages: `inbox pages of ${users} mailboxes, ${flags.variants} variants of \`$skip\`/\`$filter\`/\`$select\`/\`$orderby\``,
  mix: '90 % reads / 10 % writes (webhook GET/PUT, message GET/PATCH `isRead`)',
};
const poolNames = (list: string) => list.split(',').filter(Boolean).map((x) => {
  if (!(x in names)) throw new Error(`unknown scenario ${x} (known: ${Object.keys(names).join(', ')})`);
  return x as PoolName;
});

/** Fills the store of `env` with the users and their mailboxes (`bench/real-seed.ts` as a child process). */
async function seed(env: Record<string, string>): Promise<SeededUser[]> {
  const args = { stratusDir, users, messages: Math.ceil(num('messages') / users), password };
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'real-seed.ts'), JSON.stringify(args)], { cwd: stratusDir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  await exited(child);
  if (child.exitCode !== 0) throw new Error(`seeding exited with ${child.exitCode}`);
  return JSON.parse(out.trim().split('\n').pop()!) as SeededUser[];
}

/** Sends the first requests of a pool once to `origin`: a reason to skip the scenario when one is refused. */
async function probePool(origin: string, file: string): Promise<string | undefined> {
  const pool = JSON.parse(fs.readFileSync(file, 'utf8')) as PoolFile;
  for (const r of pool.requests.slice(0, 20)) {
    const body = r.body?.replaceAll('{seq}', '0').replaceAll('{bool}', 'true');
    const headers: Record<string, string> = { ...(r.token !== undefined ? { authorization: `Bearer ${pool.tokens[r.token]}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) };
    const res = await fetch(origin + r.path, { method: r.method, headers, body });
    await res.arrayBuffer();
    if (res.status >= 300) return `probe: ${r.method} ${r.path.split('?')[0]} answered ${res.status}`;
  }
  return undefined;
}

/** Runs one database's configurations (PostgreSQL: each instance count in turn on one schema); returns the tables. */
async function benchDb(db: 'sqlite' | 'postgres'): Promise<string[]> {
  const counts = db === 'sqlite' ? [1] : flags.instances!.split(',').map(Number).sort((a, b) => a - b);
  const chosen = poolNames(db === 'sqlite' ? flags.scenarios! : flags['pg-scenarios']!);
  const f = await fleet({ db, slots: Math.max(...counts), stratusDir, logLevel: flags['log-level']!, databaseUrl: flags['database-url']!, cpuProf: flags['cpu-prof'] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-real-'));
  const bare = await startBare();
  const tables: string[] = [];
  try {
    let t0 = Date.now();
    const seeded = await seed(f.env(0));
    await f.start(0);
    const seededMs = Date.now() - t0;
    t0 = Date.now();
    const data = await prepare(f.origins[0]!, seeded, password, { webhooks: num('webhooks'), variants: num('variants') });
    process.stderr.write(
      `[${db}] seeded ${seeded.length} users and mailboxes in ${(seededMs / 1000).toFixed(1)} s; ${data.webhooks.length} webhooks created, ${data.messages.length} messages listed, ` +
        `${data.pages.length} page variants in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${data.refused.length} option combinations refused by the service and left out\n`,
    );
    const pools = new Map(chosen.map((n) => [n, writePool(dir, n, data, num('mix'))]));
    let started = 1;
    for (const n of counts) {
      while (started < n) await f.start(started++);
      const urls = f.origins.slice(0, n);
      const list: RoundScenario[] = chosen.map((id) => ({
        id,
        name: names[id],
        stratus: { urls, pool: pools.get(id)! },
        bare: { urls: [bare.origin], pool: pools.get(id)! },
        probe: () => probePool(urls[0]!, pools.get(id)!),
        pids: () => f.pids().slice(0, n),
        barePid: () => bare.child.pid,
      }));
      const runs = await interleavedRounds(list, { rounds, seconds, connections, warmup, label: `${db} ×${n}` });
      tables.push(roundsTable(`${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${n} instance${n > 1 ? 's on one schema (connections spread over both)' : ''}`, list, runs));
    }
    return tables;
  } finally {
    await stop(bare.child);
    await f.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const tables: string[] = [];
for (const db of flags.db!.split(',') as ('sqlite' | 'postgres')[]) {
  if (db === 'postgres' && !(await pgReachable(flags['database-url']!))) {
    tables.push(`### PostgreSQL: skipped (${flags['database-url']} not reachable)`);
    continue;
  }
  tables.push(...(await benchDb(db)));
}
process.stdout.write(
  `\nStratus real-workload benchmark — ${new Date().toISOString()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; ` +
    `${connections} connections, ${seconds} s per run, ${rounds} interleaved rounds after ${warmup} s of warm-up, Stratus log level ${flags['log-level']}; ` +
    `${users} users, ${flags.messages} messages, ${flags.webhooks} webhooks\n\n` +
    tables.join('\n\n') +
    '\n',
);
