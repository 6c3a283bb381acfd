/**
 * `npm run bench`: Stratus against the framework floor, each in its own process.
 *
 * - Stratus runs as `stratus serve` child processes (one, or two on one PostgreSQL schema),
 *   the floor is a bare Fastify endpoint (`bench/bare.ts`) in another process, and the load
 *   generator is autocannon in a third (`bench/load.ts`), so no two of them share an event loop.
 * - Each scenario is warmed up once, uncounted, on both sides before its first round.
 * - Rounds are interleaved: in every round each scenario runs right after a bare-Fastify run
 *   of the same length and connections, and its ratio is taken against that run. The table
 *   reports the median req/s, the median p99 and the median and every round's ratio.
 * - Two instances: both Stratus processes serve one PostgreSQL schema and one public URL;
 *   autocannon is given both URLs and spreads its connections over them round-robin.
 *
 *   npm run bench                                 # SQLite ×1, PostgreSQL ×1 and ×2 (when reachable)
 *   npm run bench -- --seconds 3 --rounds 1 --scenarios health,webhook --db sqlite
 *
 * Flags: `--seconds` (per run, default 10), `--rounds` (default 3), `--connections`
 * (default 50), `--scenarios` (comma list of ids, default all), `--db` (`sqlite,postgres`),
 * `--instances` (`1,2`; two only on PostgreSQL), `--database-url` (default
 * `STRATUS_BENCH_DATABASE_URL` or `postgres://postgres@127.0.0.1:5432/test`),
 * `--log-level` (Stratus's, default `info` as a user runs it), `--stratus-dir` (the
 * checkout whose `src/cli.ts` is served, default this one — to bench another tree with the
 * same harness), `--cpu-prof <dir>` (Stratus runs with `node --cpu-prof` into that folder),
 * `--warmup` (seconds of uncounted load on the floor and on Stratus before a scenario's first
 * round, default 3; 0 for none). Results go to stdout as markdown tables. Scenarios whose probe does not answer 2xx are skipped.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { inboxMessageId, scenarios, token, type Scenario, type TokenKind } from './scenarios.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    scenarios: { type: 'string' },
    db: { type: 'string', default: 'sqlite,postgres' },
    instances: { type: 'string', default: '1,2' },
    'database-url': { type: 'string', default: process.env.STRATUS_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test' },
    'log-level': { type: 'string', default: 'info' },
    'stratus-dir': { type: 'string', default: path.resolve(here, '..') },
    'cpu-prof': { type: 'string' },
    warmup: { type: 'string', default: '3' },
  },
});
const seconds = Number(flags.seconds);
const warmupSeconds = Number(flags.warmup);
const rounds = Number(flags.rounds);
const connections = Number(flags.connections);
const stratusDir = path.resolve(flags['stratus-dir']!);

const chosen = flags.scenarios ? scenarios.filter((s) => flags.scenarios!.split(',').includes(s.id)) : scenarios;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  await exited(child);
}

/** Starts one `stratus serve`; resolves when `/_stratus/health` answers. */
async function startStratus(env: Record<string, string>, httpPort: number, httpsPort: number): Promise<ChildProcess> {
  // What users run: the compiled bundle (built when missing or stale); a checkout without the
  // build script is served through tsx.
  const bundle = fs.existsSync(path.join(stratusDir, 'scripts/build.mjs'));
  if (bundle) execFileSync(process.execPath, ['scripts/build.mjs', '--if-needed'], { cwd: stratusDir, stdio: 'ignore' });
  const entry = bundle ? ['dist/stratus.mjs', 'serve'] : ['--import', 'tsx', 'src/cli.ts', 'serve'];
  const args = [...(flags['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(flags['cpu-prof'])] : []), ...entry];
  const child = spawn(process.execPath, args, {
    cwd: stratusDir,
    env: { ...process.env, ...env, STRATUS_HTTP_PORT: String(httpPort), STRATUS_HTTPS_PORT: String(httpsPort) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`stratus exited with ${child.exitCode}`);
    if (await fetch(`http://127.0.0.1:${httpPort}/_stratus/health`).then((r) => r.ok).catch(() => false)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('stratus did not become ready');
}

async function startBare(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'bare.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += String(d);
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (c) => reject(new Error(`bare server exited with ${c}`)));
  });
  child.stdout!.resume();
  return { child, url: `http://127.0.0.1:${port}/bare` };
}

interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** One autocannon run in its own process. */
async function load(urls: string[], method = 'GET', headers: Record<string, string> = {}, runSeconds = seconds): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'load.ts'), JSON.stringify({ urls, connections, seconds: runSeconds, method, headers })], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  await exited(child);
  return JSON.parse(out.trim().split('\n').pop()!) as LoadResult;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Runs every chosen scenario `rounds` times against `instances` Stratus processes; returns the markdown table. */
async function benchConfig(db: 'sqlite' | 'postgres', instances: number): Promise<string> {
  const dataDirs: string[] = [];
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const dbUrl = flags['database-url']!;
  const ports = await Promise.all(Array.from({ length: instances }, async () => ({ http: await freePort(), https: await freePort() })));
  // One public URL for every instance, so a token issued by one is valid on the other.
  const publicUrl = `https://localhost:${ports[0]!.https}`;
  const children: ChildProcess[] = [];
  const bare = await startBare();
  try {
    for (const p of ports) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-bench-'));
      dataDirs.push(dataDir);
      children.push(
        await startStratus(
          {
            STRATUS_DATA_DIR: dataDir,
            STRATUS_PUBLIC_URL: publicUrl,
            STRATUS_LOG_LEVEL: flags['log-level']!,
            // Benchmarks measure throughput, not throttling (budgets are still counted).
            STRATUS_ANALYTICS_REQUESTS_PER_WINDOW: '1000000000',
            STRATUS_MAIL_REQUESTS_PER_WINDOW: '1000000000',
            STRATUS_ARM_READS_PER_WINDOW: '1000000000',
            STRATUS_PLATFORM_REQUESTS_PER_WINDOW: '1000000000',
            ...(db === 'postgres' ? { STRATUS_DATABASE_URL: dbUrl, STRATUS_DATABASE_SCHEMA: schema } : {}),
          },
          p.http,
          p.https,
        ),
      );
    }
    const first = `http://127.0.0.1:${ports[0]!.http}`;
    const tokens = new Map<TokenKind, string>();
    const headersOf = async (s: Scenario) => {
      if (!s.token) return {} as Record<string, string>;
      if (!tokens.has(s.token)) tokens.set(s.token, await token(first, s.token));
      return { authorization: `Bearer ${tokens.get(s.token)}` };
    };
    const messageId = await inboxMessageId(first, (await headersOf({ id: '', name: '', path: '', token: 'mail' })).authorization!);

    const runs = new Map<string, { rps: number[]; p99: number[]; ratio: number[]; bare: number[]; bad: number; skipped?: string }>();
    for (let r = 0; r < rounds; r++) {
      for (const s of chosen) {
        const rec = runs.get(s.id) ?? { rps: [], p99: [], ratio: [], bare: [], bad: 0 };
        runs.set(s.id, rec);
        if (rec.skipped) continue;
        const headers = await headersOf(s);
        const p = s.path.replace('{messageId}', encodeURIComponent(messageId));
        const urls = ports.map((pt) => (s.https ? `https://localhost:${pt.https}${p}` : `http://127.0.0.1:${pt.http}${p}`));
        if (r === 0) {
          const probe = await fetch(`http://127.0.0.1:${ports[0]!.http}${p}`, { method: s.method ?? 'GET', headers });
          if (probe.status >= 300) {
            rec.skipped = `probe answered ${probe.status}`;
            continue;
          }
          // Uncounted warm-up of both sides (the JIT compiler, pools and caches), so that the
          // first round measures the same steady state as the others.
          if (warmupSeconds > 0) {
            await load([bare.url], 'GET', {}, warmupSeconds);
            await load(urls, s.method, headers, warmupSeconds);
          }
        }
        const b = await load([bare.url]);
        const x = await load(urls, s.method, headers);
        rec.bare.push(b.rps);
        rec.rps.push(x.rps);
        rec.p99.push(x.p99);
        rec.ratio.push(x.rps / b.rps);
        rec.bad += x.non2xx + x.errors;
        process.stderr.write(`[${db} ×${instances}] round ${r + 1} ${s.id}: ${Math.round(x.rps)} req/s vs bare ${Math.round(b.rps)} → ${(x.rps / b.rps).toFixed(3)}\n`);
      }
    }
    const lines = [
      `### ${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${instances} instance${instances > 1 ? 's (round-robin)' : ''}`,
      '',
      '| scenario | req/s (median) | bare req/s (median) | ratio (median) | ratio per round | p99 ms (median) | non-2xx + errors |',
      '|---|---|---|---|---|---|---|',
    ];
    for (const s of chosen) {
      const rec = runs.get(s.id)!;
      if (rec.skipped) {
        lines.push(`| ${s.name} | skipped (${rec.skipped}) | | | | | |`);
        continue;
      }
      lines.push(
        `| ${s.name} | ${Math.round(median(rec.rps))} | ${Math.round(median(rec.bare))} | **${median(rec.ratio).toFixed(3)}** | ${rec.ratio.map((x) => x.toFixed(3)).join(' / ')} | ${median(rec.p99)} | ${rec.bad} |`,
      );
    }
    return lines.join('\n');
  } finally {
    for (const c of children) await stop(c);
    await stop(bare.child);
    for (const d of dataDirs) fs.rmSync(d, { recursive: true, force: true });
    if (db === 'postgres') {
      const c = new pg.Client({ connectionString: dbUrl });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    }
  }
}

async function pgReachable(): Promise<boolean> {
  const c = new pg.Client({ connectionString: flags['database-url'] });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

const dbs = flags.db!.split(',') as ('sqlite' | 'postgres')[];
const counts = flags.instances!.split(',').map(Number);
const tables: string[] = [];
for (const db of dbs) {
  if (db === 'postgres' && !(await pgReachable())) {
    tables.push(`### PostgreSQL: skipped (${flags['database-url']} not reachable)`);
    continue;
  }
  for (const n of counts) {
    if (n > 1 && db === 'sqlite') continue; // several instances share a PostgreSQL database only
    tables.push(await benchConfig(db, n));
  }
}
process.stdout.write(
  `\nStratus benchmark — ${new Date().toISOString()}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, Node ${process.version}; ` +
    `${connections} connections, ${seconds} s per run, ${rounds} interleaved rounds after ${warmupSeconds} s of warm-up, Stratus log level ${flags['log-level']}\n\n` +
    tables.join('\n\n') +
    '\n',
);
