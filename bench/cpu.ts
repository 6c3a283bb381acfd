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
 * Environment: `DATA` (a data folder to reuse; default a fresh one, removed afterwards),
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
const data = process.env.DATA ?? fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-cpu-'));
const port = 20000 + Math.floor(Math.random() * 10000);
const budgets = { STRATUS_ANALYTICS_REQUESTS_PER_WINDOW: '1000000000', STRATUS_MAIL_REQUESTS_PER_WINDOW: '1000000000', STRATUS_ARM_READS_PER_WINDOW: '1000000000', STRATUS_PLATFORM_REQUESTS_PER_WINDOW: '1000000000' };
const child = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROF] : []), ...(process.env.NODE_FLAGS ? process.env.NODE_FLAGS.split(' ') : []), 'dist/stratus.mjs', 'serve', '--data-dir', data, '--http-port', String(port), '--https-port', '-1'], {
  cwd: dir,
  stdio: ['ignore', process.env.SERVER_OUT ? 'inherit' : 'ignore', 'inherit'],
  env: { ...process.env, ...budgets },
});
const origin = `http://127.0.0.1:${port}`;
for (let i = 0; i < 300 && !(await fetch(`${origin}/_stratus/health`).then((r) => r.ok).catch(() => false)); i++) await new Promise((r) => setTimeout(r, 100));

/** The server's user + system CPU time so far, in µs (`/proc/<pid>/stat`, clock ticks of 10 ms). */
const cpuMicros = () => {
  const f = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: (Number(f[11]) * 1e6) / 100, system: (Number(f[12]) * 1e6) / 100 };
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
    const run = (amount: number) => autocannon({ url: origin + p, connections: 50, amount, method: s.method ?? 'GET', headers });
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
  child.kill('SIGINT');
  await new Promise((r) => child.once('exit', r));
  if (!process.env.DATA) fs.rmSync(data, { recursive: true, force: true });
}
