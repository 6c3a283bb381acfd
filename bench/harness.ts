/**
 * The process and round machinery of the load benchmarks (`bench/run.ts`, `bench/real.ts`):
 * Stratus as `stratus serve` child processes of the built bundle, the bare Fastify floor
 * (`bench/bare.ts`) in another process, autocannon in a third (`bench/load.ts`, one process per
 * run), and the interleaved rounds: in every round each scenario runs right after a bare run
 * of the same length, connections and requests, and its ratio is taken against that run.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Throttling budgets raised for the benchmarks (they measure throughput; budgets are still counted). */
export const benchBudgets: Record<string, string> = {
  STRATUS_ANALYTICS_REQUESTS_PER_WINDOW: '1000000000',
  STRATUS_MAIL_REQUESTS_PER_WINDOW: '1000000000',
  STRATUS_ARM_READS_PER_WINDOW: '1000000000',
  STRATUS_PLATFORM_REQUESTS_PER_WINDOW: '1000000000',
};

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Resolves when `child` has exited. */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Stops `child` with SIGINT (Stratus's clean shutdown) and waits for it. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  await exited(child);
}

/** Where and how {@link startStratus} runs Stratus. */
export interface StratusOptions {
  /** The checkout whose bundle (or `src/cli.ts`) is served. */
  stratusDir: string;
  /** Stratus settings (`STRATUS_*`) on top of this process's environment. */
  env: Record<string, string>;
  httpPort: number;
  httpsPort: number;
  /** A folder: Stratus runs under `node --cpu-prof` into it. */
  cpuProf?: string;
}

/**
 * Starts one `stratus serve` of the compiled bundle (built when missing or stale; a checkout
 * without the build script is served through tsx); resolves when `/_stratus/health` answers.
 * @throws Error when it exits or is not ready within 60 s.
 */
export async function startStratus(o: StratusOptions): Promise<ChildProcess> {
  const bundle = fs.existsSync(path.join(o.stratusDir, 'scripts/build.mjs'));
  if (bundle) execFileSync(process.execPath, ['scripts/build.mjs', '--if-needed'], { cwd: o.stratusDir, stdio: 'ignore' });
  const entry = bundle ? ['dist/stratus.mjs', 'serve'] : ['--import', 'tsx', 'src/cli.ts', 'serve'];
  const nodeArgs = (process.env.STRATUS_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [...nodeArgs, ...(o.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(o.cpuProf)] : []), ...entry];
  const child = spawn(process.execPath, args, {
    cwd: o.stratusDir,
    env: { ...process.env, ...o.env, STRATUS_HTTP_PORT: String(o.httpPort), STRATUS_HTTPS_PORT: String(o.httpsPort) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`stratus exited with ${child.exitCode}`);
    if (await fetch(`http://127.0.0.1:${o.httpPort}/_stratus/health`).then((r) => r.ok).catch(() => false)) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGINT');
  throw new Error('stratus did not become ready in 60 s');
}

/**
 * Starts the bare Fastify floor (`bench/bare.ts`): `url` is its `/bare` endpoint, `origin` its
 * origin (every other path and method answers the same small document, for request pools).
 */
export async function startBare(): Promise<{ child: ChildProcess; url: string; origin: string }> {
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
  return { child, url: `http://127.0.0.1:${port}/bare`, origin: `http://127.0.0.1:${port}` };
}

/** One load run's figures (req/s average, latency in ms). */
export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** The load generator's own CPU time (user + system), µs an answer (absent from an older `load.ts`). */
  loadCpu?: number;
  /** Bytes the load generator received an answer, headers included. */
  bytes?: number;
}

/**
 * What one load run sends: one request repeated (`urls` with `method`, `headers`), or a pool
 * of requests (`pool`: a JSON file of `bench/load.ts`'s pool format) cycled through, one per
 * request, on the origins of `urls` (several are spread round-robin over the connections).
 */
export interface LoadSpec {
  urls: string[];
  method?: string;
  headers?: Record<string, string>;
  pool?: string;
}

/** One autocannon run in its own process. @throws Error when the load generator prints no result. */
export async function load(spec: LoadSpec, seconds: number, connections: number): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'load.ts'), JSON.stringify({ ...spec, connections, seconds })], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  await exited(child);
  const last = out.trim().split('\n').pop();
  if (!last) throw new Error(`the load generator exited with ${child.exitCode} and no result`);
  return JSON.parse(last) as LoadResult;
}

/** The median of `xs` (mean of the middle two for an even count). */
export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Whether the PostgreSQL server at `url` accepts a connection. */
export async function pgReachable(url: string): Promise<boolean> {
  const c = new pg.Client({ connectionString: url });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

/** Drops a benchmark's schema. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await c.end();
  }
}

/** Settings of {@link fleet}. */
export interface FleetOptions {
  db: 'sqlite' | 'postgres';
  /** How many instances may be started (one data folder and port pair each). */
  slots: number;
  stratusDir: string;
  /** Stratus's log level. */
  logLevel: string;
  /** The PostgreSQL server (a fresh schema is made on it, and dropped by `close`). */
  databaseUrl: string;
  cpuProf?: string;
  /** More settings for every instance. */
  env?: Record<string, string>;
}

/** Stratus instances on one fresh store (a SQLite data folder, or a PostgreSQL schema shared by every instance). */
export interface Fleet {
  /** Ports of every slot (started or not). */
  ports: { http: number; https: number }[];
  /** `http://127.0.0.1:<port>` of every slot. */
  origins: string[];
  /** The environment of slot `i` (its store settings too: the same store a seeding process may write first). */
  env(i: number): Record<string, string>;
  /** Starts slot `i`; resolves when it is healthy. */
  start(i: number): Promise<void>;
  /** Process ids of the started instances, in start order (for CPU time from `/proc`). */
  pids(): number[];
  /** Stops every started instance, removes the data folders and drops the schema. */
  close(): Promise<void>;
}

/**
 * Prepares `slots` Stratus instances on one fresh store: one public URL for every instance (so
 * a token issued by one is valid on the other), raised throttling budgets, one data folder each.
 */
export async function fleet(o: FleetOptions): Promise<Fleet> {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const ports = await Promise.all(Array.from({ length: o.slots }, async () => ({ http: await freePort(), https: await freePort() })));
  const publicUrl = `https://localhost:${ports[0]!.https}`;
  const dataDirs = ports.map(() => fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-bench-')));
  const children: ChildProcess[] = [];
  const env = (i: number): Record<string, string> => ({
    ...benchBudgets,
    STRATUS_DATA_DIR: dataDirs[i]!,
    STRATUS_PUBLIC_URL: publicUrl,
    STRATUS_LOG_LEVEL: o.logLevel,
    ...(o.db === 'postgres' ? { STRATUS_DATABASE_URL: o.databaseUrl, STRATUS_DATABASE_SCHEMA: schema } : {}),
    ...o.env,
  });
  return {
    ports,
    origins: ports.map((p) => `http://127.0.0.1:${p.http}`),
    env,
    async start(i) {
      children.push(await startStratus({ stratusDir: o.stratusDir, env: env(i), httpPort: ports[i]!.http, httpsPort: ports[i]!.https, cpuProf: o.cpuProf }));
    },
    pids: () => children.map((c) => c.pid!),
    async close() {
      for (const c of children) await stop(c);
      for (const d of dataDirs) fs.rmSync(d, { recursive: true, force: true });
      if (o.db === 'postgres') await dropSchema(o.databaseUrl, schema);
    },
  };
}

/** One scenario of {@link interleavedRounds}: what it loads on Stratus and on the floor. */
export interface RoundScenario {
  id: string;
  name: string;
  /** The Stratus run. */
  stratus: LoadSpec;
  /** The bare run right before it. */
  bare: LoadSpec;
  /** Checked before the first round: a reason to skip the scenario, or undefined. */
  probe?: () => Promise<string | undefined>;
  /** Process ids of the Stratus instances serving the run: their CPU time a request is reported. */
  pids?: () => number[];
  /** Process id of the floor's server: its CPU time a request is reported beside Stratus's. */
  barePid?: () => number | undefined;
}

/** CPU time (user + system, µs) the processes `pids` have used so far (`/proc/<pid>/stat`, clock ticks of 10 ms). */
export function cpuMicros(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10_000;
}

/** A scenario's figures over the rounds. */
export interface RoundRecord {
  rps: number[];
  p99: number[];
  ratio: number[];
  bare: number[];
  /** Stratus CPU µs a request, per round (when the scenario names its {@link RoundScenario.pids}). */
  cpu: number[];
  /** The floor's server CPU µs a request, per round (when the scenario names its {@link RoundScenario.barePid}). */
  bareCpu: number[];
  /** The load generator's CPU µs an answer on the floor and on Stratus, and Stratus's bytes an answer, per round. */
  loadBare: number[];
  loadStratus: number[];
  bytes: number[];
  bad: number;
  skipped?: string;
}

/** Settings of {@link interleavedRounds}. */
export interface RoundOptions {
  rounds: number;
  seconds: number;
  connections: number;
  /** Seconds of uncounted load on the floor and then on Stratus before a scenario's first round (0: none). */
  warmup: number;
  /** Prefix of the progress lines on standard error. */
  label: string;
}

/**
 * Runs the scenarios `rounds` times, interleaved: each run on Stratus right after a bare run
 * of the same length, connections and requests; before a scenario's first round its probe and
 * an uncounted warm-up of both sides (the JIT compiler, pools and caches), so that the first
 * round measures the same steady state as the others.
 * @returns the figures by scenario id
 */
export async function interleavedRounds(list: RoundScenario[], o: RoundOptions): Promise<Map<string, RoundRecord>> {
  const runs = new Map<string, RoundRecord>();
  for (let r = 0; r < o.rounds; r++) {
    for (const s of list) {
      const rec = runs.get(s.id) ?? { rps: [], p99: [], ratio: [], bare: [], cpu: [], bareCpu: [], loadBare: [], loadStratus: [], bytes: [], bad: 0 };
      runs.set(s.id, rec);
      if (rec.skipped) continue;
      if (r === 0) {
        rec.skipped = await s.probe?.();
        if (rec.skipped) continue;
        if (o.warmup > 0) {
          await load(s.bare, o.warmup, o.connections);
          await load(s.stratus, o.warmup, o.connections);
        }
      }
      const barePid = s.barePid?.();
      const bare0 = barePid !== undefined ? cpuMicros([barePid]) : 0;
      const b = await load(s.bare, o.seconds, o.connections);
      if (barePid !== undefined) rec.bareCpu.push((cpuMicros([barePid]) - bare0) / Math.max(1, b.rps * o.seconds));
      const cpu0 = s.pids ? cpuMicros(s.pids()) : 0;
      const x = await load(s.stratus, o.seconds, o.connections);
      if (s.pids) rec.cpu.push((cpuMicros(s.pids()) - cpu0) / Math.max(1, x.rps * o.seconds));
      if (b.loadCpu !== undefined && x.loadCpu !== undefined) {
        rec.loadBare.push(b.loadCpu);
        rec.loadStratus.push(x.loadCpu);
      }
      if (x.bytes !== undefined) rec.bytes.push(x.bytes);
      rec.bare.push(b.rps);
      rec.rps.push(x.rps);
      rec.p99.push(x.p99);
      rec.ratio.push(x.rps / b.rps);
      rec.bad += x.non2xx + x.errors;
      process.stderr.write(`[${o.label}] round ${r + 1} ${s.id}: ${Math.round(x.rps)} req/s (p99 ${x.p99} ms) vs bare ${Math.round(b.rps)} (p99 ${b.p99} ms) → ${(x.rps / b.rps).toFixed(3)}\n`);
    }
  }
  return runs;
}

/** The markdown table of {@link interleavedRounds}'s figures under a `### title`. */
export function roundsTable(title: string, list: { id: string; name: string }[], runs: Map<string, RoundRecord>): string {
  const lines = [
    `### ${title}`,
    '',
    '| scenario | req/s (median) | bare req/s (median) | ratio (median) | ratio per round | p99 ms (median) | server CPU µs a request, bare / Stratus (median) | load generator CPU µs an answer, bare / Stratus (median) | bytes an answer (median) | non-2xx + errors |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const s of list) {
    const rec = runs.get(s.id)!;
    if (rec.skipped) {
      lines.push(`| ${s.name} | skipped (${rec.skipped}) | | | | | | | | |`);
      continue;
    }
    lines.push(
      `| ${s.name} | ${Math.round(median(rec.rps))} | ${Math.round(median(rec.bare))} | **${median(rec.ratio).toFixed(3)}** | ${rec.ratio.map((x) => x.toFixed(3)).join(' / ')} | ${median(rec.p99)} | ${rec.bareCpu.length ? `${Math.round(median(rec.bareCpu))} / ` : ''}${rec.cpu.length ? Math.round(median(rec.cpu)) : '–'} | ${rec.loadBare.length ? `${Math.round(median(rec.loadBare))} / ${Math.round(median(rec.loadStratus))}` : '–'} | ${rec.bytes.length ? Math.round(median(rec.bytes)) : '–'} | ${rec.bad} |`,
    );
  }
  return lines.join('\n');
}
