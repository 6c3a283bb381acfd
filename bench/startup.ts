/**
 * Start-up and memory of the compiled server (issue 9 item 10): cold start to a healthy
 * `GET /_stratus/health` with a fresh data folder and with an existing one, and the idle
 * resident set size (VmRSS) a few seconds after start. Runs `node dist/stratus.mjs serve`
 * (build first: `npm run build`) with plain HTTP only, and with `--https` also with the HTTPS
 * listener on (as `npm start` runs it: a fresh folder gets its certificates made first).
 * Prints one line per round and the medians.
 *
 * With `--ephemeral`: `serve --ephemeral` (a throwaway store, HTTPS on with the machine's cached
 * TLS material, as the programmatic `start()` runs it), start to healthy, per round.
 *
 *   npm run bench:startup [-- --rounds 5] [--https] [--ephemeral]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const root = path.resolve(import.meta.dirname, '..');
const cli = path.join(root, 'dist/stratus.mjs');
if (!fs.existsSync(cli)) {
  process.stderr.write('dist/stratus.mjs is missing: run `npm run build` first\n');
  process.exit(1);
}
const rounds = Number(process.argv[process.argv.indexOf('--rounds') + 1] || 3) || 3;
const https = process.argv.includes('--https');
const ephemeral = process.argv.includes('--ephemeral');

/** Starts the server on `port` with `dataDir`; resolves with ms to healthy, the process and its pid. */
async function startOnce(dataDir: string | undefined, port: number, httpsPort: number): Promise<{ ms: number; stop: () => Promise<void>; pid: number }> {
  const t0 = performance.now();
  const store = dataDir === undefined ? ['--ephemeral'] : ['--data-dir', dataDir];
  const child = spawn(process.execPath, [cli, 'serve', ...store, '--http-port', String(port), '--https-port', String(httpsPort), '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (;;) {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/_stratus/health`);
      if (r.ok) break;
    } catch {
      /* not listening yet */
    }
    if (child.exitCode !== null) throw new Error('server exited during start-up');
    await sleep(5);
  }
  const ms = performance.now() - t0;
  return { ms, pid: child.pid!, stop: async () => { child.kill('SIGTERM'); await exited; } };
}

function rssMiB(pid: number): number {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(s)![1]) / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
if (ephemeral) {
  const times: number[] = [];
  // The first start of a machine makes the cached TLS material; it is not a round.
  await (await startOnce(undefined, 19099, 19199)).stop();
  for (let i = 0; i < rounds; i++) {
    const a = await startOnce(undefined, 19100 + i, 19200 + i);
    await a.stop();
    times.push(a.ms);
    process.stdout.write(`round ${i + 1}: ephemeral start to healthy ${a.ms.toFixed(0)} ms\n`);
  }
  process.stdout.write(`median (ephemeral, HTTPS on): ${median(times).toFixed(0)} ms\n`);
  process.exit(0);
}
const fresh: number[] = [];
const existing: number[] = [];
const rss: number[] = [];
for (let i = 0; i < rounds; i++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-startup-'));
  const port = 19100 + i;
  const httpsPort = https ? 19200 + i : -1;
  const a = await startOnce(dir, port, httpsPort);
  await a.stop();
  const b = await startOnce(dir, port, httpsPort);
  await sleep(3000);
  const m = rssMiB(b.pid);
  await b.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  fresh.push(a.ms);
  existing.push(b.ms);
  rss.push(m);
  process.stdout.write(`round ${i + 1}: fresh ${a.ms.toFixed(0)} ms, existing ${b.ms.toFixed(0)} ms, idle RSS ${m.toFixed(0)} MiB\n`);
}
process.stdout.write(`median${https ? ' (HTTPS listener on)' : ''}: fresh ${median(fresh).toFixed(0)} ms, existing ${median(existing).toFixed(0)} ms, idle RSS ${median(rss).toFixed(0)} MiB\n`);
