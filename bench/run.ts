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
 * - The process and round machinery is `bench/harness.ts` (shared with `bench/real.ts`).
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
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { fleet, interleavedRounds, pgReachable, roundsTable, startBare, stop, type RoundScenario } from './harness.ts';
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

/** Runs every chosen scenario `rounds` times against `instances` Stratus processes; returns the markdown table. */
async function benchConfig(db: 'sqlite' | 'postgres', instances: number): Promise<string> {
  const f = await fleet({ db, slots: instances, stratusDir, logLevel: flags['log-level']!, databaseUrl: flags['database-url']!, cpuProf: flags['cpu-prof'] });
  const bare = await startBare();
  try {
    for (let i = 0; i < instances; i++) await f.start(i);
    const first = f.origins[0]!;
    const tokens = new Map<TokenKind, string>();
    const headersOf = async (s: Scenario) => {
      if (!s.token) return {} as Record<string, string>;
      if (!tokens.has(s.token)) tokens.set(s.token, await token(first, s.token));
      return { authorization: `Bearer ${tokens.get(s.token)}` };
    };
    const messageId = await inboxMessageId(first, (await headersOf({ id: '', name: '', path: '', token: 'mail' })).authorization!);
    const list: RoundScenario[] = [];
    for (const s of chosen) {
      const headers = await headersOf(s);
      const p = s.path.replace('{messageId}', encodeURIComponent(messageId));
      const urls = f.ports.map((pt) => (s.https ? `https://localhost:${pt.https}${p}` : `http://127.0.0.1:${pt.http}${p}`));
      list.push({
        id: s.id,
        name: s.name,
        stratus: { urls, method: s.method, headers },
        bare: { urls: [bare.url] },
        probe: async () => {
          const probe = await fetch(`${first}${p}`, { method: s.method ?? 'GET', headers });
          return probe.status >= 300 ? `probe answered ${probe.status}` : undefined;
        },
        pids: () => f.pids(),
        barePid: () => bare.child.pid,
      });
    }
    const runs = await interleavedRounds(list, { rounds, seconds, connections, warmup: warmupSeconds, label: `${db} ×${instances}` });
    return roundsTable(`${db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${instances} instance${instances > 1 ? 's (round-robin)' : ''}`, chosen, runs);
  } finally {
    await stop(bare.child);
    await f.close();
  }
}

const dbs = flags.db!.split(',') as ('sqlite' | 'postgres')[];
const counts = flags.instances!.split(',').map(Number);
const tables: string[] = [];
for (const db of dbs) {
  if (db === 'postgres' && !(await pgReachable(flags['database-url']!))) {
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
