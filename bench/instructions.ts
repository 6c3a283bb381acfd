/**
 * `npm run bench:instructions -- <scenario> [requests] [name:checkout[:ENV=V,…]]…`: user-space
 * instructions per request, counted by valgrind's callgrind — the same count for the same code
 * whatever else the shared machine does, so a change of a few percent shows (req/s and CPU time
 * swing by ±20 % here). Each variant (default `this:.`, the built `dist/stratus.mjs` of a
 * checkout; a name starting with `bare` runs that file with tsx instead, e.g.
 * `bare:bench/bare.ts`) is started under callgrind with one thread per file, warmed up with
 * `WARM` requests (default 8,000; 10 connections), its counters zeroed, sent `[requests]`
 * (default 3,000), and dumped. Printed: the main thread's instructions per request (what bounds
 * req/s: the event loop runs there), all threads' (GC helpers and the compiler too) and each
 * thread's. Kernel time (the socket writes) is not counted: compare variants, not to req/s.
 *
 * A figure whose `all` threads are far above `main` was taken while the compiler still worked
 * (raise `WARM`, e.g. 25,000; always with `PERFMAP`); a process can also settle in a worse JIT
 * state now and then (bench/README.md): compare repeated runs.
 *
 * Environment: `PERFMAP=1` (Node writes /tmp/perf-<pid>.map, to name the JIT code of the dump),
 * `KEEP=1` (the callgrind files are kept and their folder printed), any Stratus setting.
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { inboxMessageId, scenarios, token } from './scenarios.ts';
const [which = 'webhook', nS = '3000', ...given] = process.argv.slice(2);
const vs = given.length ? given : ['this:.'];
const n = Number(nS);
const budgets = { STRATUS_ANALYTICS_REQUESTS_PER_WINDOW: '1000000000', STRATUS_MAIL_REQUESTS_PER_WINDOW: '1000000000', STRATUS_ARM_READS_PER_WINDOW: '1000000000', STRATUS_PLATFORM_REQUESTS_PER_WINDOW: '1000000000' };
const s = scenarios.find((x) => x.id === which && !x.https)!;
const total = (f: string) => { const m = /^(?:summary|totals): (\d+)/m.exec(fs.readFileSync(f, 'utf8')); return Number(m![1]); };
for (const v of vs) {
  const [name, dir, envs] = v.split(':');
  const env: Record<string, string> = {};
  for (const kv of (envs ?? '').split(',').filter(Boolean)) { const i = kv.indexOf('='); env[kv.slice(0, i)] = kv.slice(i + 1); }
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-cg-'));
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'cg-out-'));
  const port = 20000 + Math.floor(Math.random() * 10000);
  const bare = name!.startsWith('bare');
  const args = bare ? ['--import', 'tsx', path.resolve(dir!)] : ['dist/stratus.mjs', 'serve', '--data-dir', data, '--http-port', String(port), '--https-port', '-1'];
  const child = spawn('valgrind', ['--tool=callgrind', '--separate-threads=yes', `--callgrind-out-file=${out}/cg.%p`, process.execPath, ...(process.env.PERFMAP ? ['--perf-basic-prof'] : []), ...args], { cwd: bare ? process.cwd() : path.resolve(dir!), stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, ...budgets, ...env, PORT: String(port) } });
  // A bare floor (bench/bare.ts) prints `listening <port>`; Stratus listens on the port given.
  const listening = new Promise<string>((resolve) => {
    let o = '';
    child.stdout!.on('data', (d) => {
      o += d;
      const m = /listening (\d+)/.exec(o);
      if (m) resolve(m[1]!);
    });
  });
  const origin = `http://127.0.0.1:${bare ? await listening : port}`;
  let url = origin + (bare ? '/bare' : '');
  let headers: Record<string, string> = {};
  for (let i = 0; i < 1200 && !(await fetch(bare ? url : `${origin}/_stratus/health`).then((r) => r.ok).catch(() => false)); i++) await new Promise((r) => setTimeout(r, 250));
  if (!bare) {
    const auth = s.token ? `Bearer ${await token(origin, s.token)}` : undefined;
    headers = auth ? { authorization: auth } : {};
    url = origin + (s.path.includes('{messageId}') ? s.path.replace('{messageId}', encodeURIComponent(await inboxMessageId(origin, auth!))) : s.path);
  } else if (s.token) headers = { authorization: 'Bearer ' + 'x'.repeat(1300) };
  const run = (amount: number) => autocannon({ url, connections: 10, amount, method: bare ? 'GET' : s.method ?? 'GET', headers });
  const w = await run(Number(process.env.WARM ?? 8000)); if (w.non2xx) console.log(name, 'non2xx', w.non2xx);
  execFileSync('callgrind_control', ['-z', String(child.pid)]);
  await run(n);
  execFileSync('callgrind_control', ['-d', String(child.pid)]);
  await new Promise((r) => setTimeout(r, 1000));
  const files = fs.readdirSync(out).filter((f) => f.includes('.'));
  const per = files.filter((f) => /\.1-\d+$/.test(f)).map((f) => [f.split('-').pop(), total(path.join(out, f))] as const).sort((a, b) => b[1] - a[1]);
  console.log(`${name!.padEnd(10)} main ${(per.find(([t]) => t === '01')?.[1] ?? 0) / n / 1000 | 0}k  all ${per.reduce((a, [, v]) => a + v, 0) / n / 1000 | 0}k  threads ${per.map(([t, v]) => `${t}:${(v / n / 1000) | 0}k`).join(' ')}`);
  child.kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 300));
  fs.rmSync(data, { recursive: true, force: true });
  if (!process.env.KEEP) fs.rmSync(out, { recursive: true, force: true }); else console.log(out);
}
