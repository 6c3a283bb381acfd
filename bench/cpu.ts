/**
 * `npm run bench:cpu -- <scenario,...> [requests]`: Stratus CPU per request, the steadier
 * figure to compare two versions of a request path with (req/s swings with the machine's
 * load; CPU time per request much less). Starts the built server (`dist/stratus.mjs`; the
 * checkout in `STRATUS_DIR`, default this one) as its own process with raised budgets, warms
 * each scenario (`bench/scenarios.ts`, plain HTTP) up with 20,000 requests, then sends
 * `[requests]` (default 150,000) at 50 connections with autocannon from this process and
 * prints the server's user + system CPU time (from `/proc`, so Linux only; it includes V8's
 * helper threads) divided by the count.
 *
 * Environment: `INSTANCES` (default 1: more serve one PostgreSQL schema, `STRATUS_DATABASE_URL`
 * and `STRATUS_DATABASE_SCHEMA` must be set, with one public URL; autocannon spreads its
 * connections over them and the CPU time is their sum), `DATA` (a data folder to reuse;
 * default a fresh one, removed afterwards),
 * `PROF` (a folder: the server runs under `--cpu-prof`), `NODE_FLAGS` (more Node flags for the
 * server, e.g. `--trace-gc`), `SERVER_OUT=1` (the server's stdout is shown), plus any Stratus
 * setting (e.g. `STRATUS_DATABASE_URL`: then the CPU time of every `postgres` process on the
 * machine per request is printed too).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { inboxMessageId, scenarios, token, type TokenKind } from './scenarios.ts';

const [which = 'webhook', requestsText = '150000'] = process.argv.slice(2);
const requests = Number(requestsText);
const dir = path.resolve(process.env.STRATUS_DIR ?? path.join(import.meta.dirname, '..'));
const instances = Number(process.env.INSTANCES ?? 1);
if (instances > 1 && !process.env.STRATUS_DATABASE_URL) throw new Error('INSTANCES > 1 needs STRATUS_DATABASE_URL (and STRATUS_DATABASE_SCHEMA)');
const datas = Array.from({ length: instances }, (_, i) => (i === 0 && process.env.DATA) || fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-cpu-')));
const base = 20000 + Math.floor(Math.random() * 10000);
const ports = datas.map((_, i) => base + i);
const budgets = { STRATUS_ANALYTICS_REQUESTS_PER_WINDOW: '1000000000', STRATUS_MAIL_REQUESTS_PER_WINDOW: '1000000000', STRATUS_ARM_READS_PER_WINDOW: '1000000000', STRATUS_PLATFORM_REQUESTS_PER_WINDOW: '1000000000' };
const start = (data: string, i: number) =>
  spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF] : []), ...(process.env.NODE_FLAGS ? process.env.NODE_FLAGS.split(' ') : []), 'dist/stratus.mjs', 'serve', '--data-dir', data, '--http-port', String(ports[i]), '--https-port', '-1'], {
    cwd: dir,
    stdio: ['ignore', process.env.SERVER_OUT ? 'inherit' : 'ignore', 'inherit'],
    // One public URL, so that a token issued by the first instance is valid on every one.
    env: { ...process.env, ...budgets, ...(instances > 1 ? { STRATUS_PUBLIC_URL: `http://127.0.0.1:${ports[0]}` } : {}) },
  });
const origins = ports.map((p) => `http://127.0.0.1:${p}`);
const origin = origins[0]!;
// One after the other: the first one migrates and seeds the schema.
const children: ReturnType<typeof spawn>[] = [];
for (const [i, data] of datas.entries()) {
  children.push(start(data, i));
  for (let t = 0; t < 300 && !(await fetch(`${origins[i]}/_stratus/health`).then((r) => r.ok).catch(() => false)); t++) await new Promise((r) => setTimeout(r, 100));
}

/** The servers' user + system CPU time so far, in µs (`/proc/<pid>/stat`, clock ticks of 10 ms), summed over the instances. */
const cpuMicros = () => {
  let user = 0;
  let system = 0;
  for (const child of children) {
    const f = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    user += (Number(f[11]) * 1e6) / 100;
    system += (Number(f[12]) * 1e6) / 100;
  }
  return { user, system };
};
/** The user + system CPU time so far of every `postgres` process on the machine, in clock ticks by pid (the database server's share when `STRATUS_DATABASE_URL` is set). */
const databaseMicros = () => {
  const now = new Map<string, number>();
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const [head, rest] = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ');
      if (!head!.endsWith('(postgres')) continue;
      const f = rest!.split(' ');
      now.set(pid, Number(f[11]) + Number(f[12]));
    } catch {
      // The process ended meanwhile.
    }
  }
  return now;
};
/** CPU µs the `postgres` processes used between two {@link databaseMicros} readings (a process that ended meanwhile is left out). */
const databaseSpent = (before: Map<string, number>, after: Map<string, number>) => {
  let ticks = 0;
  for (const [pid, t] of after) ticks += t - (before.get(pid) ?? 0);
  return (ticks * 1e6) / 100;
};
try {
  const tokens = new Map<TokenKind, string>();
  const bearer = async (kind: TokenKind) => {
    if (!tokens.has(kind)) tokens.set(kind, `Bearer ${await token(origin, kind)}`);
    return tokens.get(kind)!;
  };
  for (const id of which.split(',')) {
    const s = scenarios.find((x) => x.id === id && !x.https);
    if (!s) throw new Error(`unknown scenario ${id} (known: ${scenarios.filter((x) => !x.https).map((x) => x.id).join(', ')})`);
    const headers: Record<string, string> = s.token ? { authorization: await bearer(s.token) } : {};
    const p = s.path.includes('{messageId}') ? s.path.replace('{messageId}', encodeURIComponent(await inboxMessageId(origin, await bearer('mail')))) : s.path;
    const run = (amount: number) => autocannon({ url: origins.length === 1 ? origin + p : origins.map((o) => o + p), connections: 50, amount, method: s.method ?? 'GET', headers });
    await run(20000);
    const before = cpuMicros();
    const dbBefore = process.env.STRATUS_DATABASE_URL ? databaseMicros() : new Map<string, number>();
    const r = await run(requests);
    const db = process.env.STRATUS_DATABASE_URL ? `, database server ${(databaseSpent(dbBefore, databaseMicros()) / requests).toFixed(1)} µs CPU/req` : '';
    const after = cpuMicros();
    const per = (a: number, b: number) => ((a - b) / requests).toFixed(1);
    console.log(`${id}: ${per(after.user + after.system, before.user + before.system)} µs CPU/req (user ${per(after.user, before.user)}, system ${per(after.system, before.system)})${db}, ${Math.round(r.requests.average)} req/s, non2xx ${r.non2xx}`);
  }
} finally {
  await Promise.all(
    children.map((child) => {
      child.kill('SIGINT');
      return new Promise((r) => child.once('exit', r));
    }),
  );
  for (const [i, data] of datas.entries()) if (i > 0 || !process.env.DATA) fs.rmSync(data, { recursive: true, force: true });
}
