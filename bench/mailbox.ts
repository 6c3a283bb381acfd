/**
 * The 1M-message mailbox benchmark (issue 9): builds (or reuses) a large mailbox on SQLite
 * with `stratus seed mailbox`, starts the compiled server (`dist/`, built when needed) as a
 * process of its own, and reports for each query the single-request time (sequential,
 * median and max of 20) and latency p50/p99 at 10 and 50 connections (autocannon, in this
 * process), deep paging over 100 next links, and the server's RSS. Markdown on stdout.
 *
 *   npm run bench:mailbox
 *   STRATUS_BENCH_MESSAGES=1000000 STRATUS_BENCH_SECONDS=10 STRATUS_BENCH_MAILBOX_DIR=.stratus-bench/mailbox-1m npm run bench:mailbox
 *
 * The data folder is kept between runs (gitignored `.stratus-bench/`); the mailbox is
 * seeded again only when it holds fewer messages than asked for.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import SQLite from 'better-sqlite3';

const root = path.resolve(import.meta.dirname, '..');
const messages = Number(process.env.STRATUS_BENCH_MESSAGES ?? 1_000_000);
const seconds = Number(process.env.STRATUS_BENCH_SECONDS ?? 5);
const dataDir = path.resolve(root, process.env.STRATUS_BENCH_MAILBOX_DIR ?? `.stratus-bench/mailbox-${messages >= 1_000_000 ? `${messages / 1_000_000}m` : messages}`);
const port = Number(process.env.STRATUS_BENCH_PORT ?? 18790);
const tenant = '9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01';
const upn = 'admin@stratus.test';
const origin = `http://127.0.0.1:${port}`;
const cli = path.join(root, 'dist/stratus.mjs');

function run(args: string[]): void {
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed`);
}

/** Messages already in the administrator's mailbox (0 when there is no store yet). */
function mailboxSize(): number {
  const file = path.join(dataDir, 'stratus.db');
  if (!fs.existsSync(file)) return 0;
  const db = new SQLite(file, { readonly: true });
  try {
    const u = db.prepare('select id from directory_users where upn_lower = ?').get(upn) as { id: string } | undefined;
    if (!u) return 0;
    const r = db.prepare('select count(*) n from mail_messages where tenant_id = ? and mailbox_id = ?').get(tenant, u.id) as { n: number };
    return r.n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

run(['scripts/build.mjs', '--if-needed']);
let have = mailboxSize();
if (have < messages) {
  process.stderr.write(`seeding ${messages - have} messages into ${dataDir}\n`);
  const t0 = Date.now();
  run([cli, 'seed', 'mailbox', '--data-dir', dataDir, '--user', upn, '--messages', String(messages - have)]);
  process.stderr.write(`seeded in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
  have = mailboxSize();
}

const server = spawn(process.execPath, [cli, 'serve', '--data-dir', dataDir, '--http-port', String(port), '--https-port', '-1', '--log-level', 'warn'], {
  stdio: ['ignore', 'ignore', 'inherit'],
  // The mail budget (10,000 requests per 10 minutes) would answer 429 to the load runs.
  env: { ...process.env, STRATUS_MAIL_REQUESTS_PER_WINDOW: '1000000000' },
});
const exited = new Promise<void>((r) => server.once('exit', () => r()));
try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${origin}/_stratus/health`)).ok) break;
    } catch {
      /* not yet */
    }
    if (server.exitCode !== null || i > 2000) throw new Error('server did not start');
    await sleep(20);
  }
  const tokenRes = await fetch(`${origin}/${tenant}/oauth2/v2.0/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: 'b7e4c2a1-6d3f-4a8e-9c5b-2f1d0e7a3c94', username: upn, password: 'Admin-Pass-1', scope: 'api://stratus/mail/Mail.ReadWrite' }),
  });
  const token = ((await tokenRes.json()) as { access_token: string }).access_token;
  const headers = { authorization: `Bearer ${token}` };
  const get = async (url: string) => {
    const t0 = performance.now();
    const r = await fetch(url.startsWith('http') ? url : origin + url, { headers });
    const text = await r.text();
    const ms = performance.now() - t0;
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${text.slice(0, 300)}`);
    return { ms, text };
  };

  // A correspondent and a project word that occur in the mailbox, and a word that does not.
  const first = JSON.parse((await get('/v1.0/me/mailFolders/inbox/messages?$top=1&$select=from,subject')).text).value[0];
  const from: string = first.from.emailAddress.address;
  const word = 'onyxbeacon';
  const q = (s: string) => encodeURIComponent(s);
  const scenarios: [string, string][] = [
    ['list first page `$top=10&$select=subject`', '/v1.0/me/messages?$top=10&$select=subject'],
    ['inbox default page', '/v1.0/me/mailFolders/inbox/messages'],
    ['`$filter=isRead eq false`', `/v1.0/me/messages?$filter=${q('isRead eq false')}&$top=10&$select=subject`],
    ['`$filter=from/emailAddress/address eq …`', `/v1.0/me/messages?$filter=${q(`from/emailAddress/address eq '${from}'`)}&$top=10&$select=subject`],
    ['`$orderby=receivedDateTime desc`', `/v1.0/me/messages?$orderby=${q('receivedDateTime desc')}&$top=10&$select=subject`],
    [`\`$search="${word}"\` (matching)`, `/v1.0/me/messages?$search=${q(`"${word}"`)}&$top=10&$select=subject`],
    ['`$search="zyxwvut"` (no match)', `/v1.0/me/messages?$search=${q('"zyxwvut"')}&$top=10&$select=subject`],
    ['`messages/$count`', '/v1.0/me/messages/$count'],
    ['inbox `$count=true&$top=10`', '/v1.0/me/mailFolders/inbox/messages?$count=true&$top=10&$select=subject'],
    ['`$count=true` with `$filter=isRead eq false`', `/v1.0/me/mailFolders/inbox/messages?$count=true&$filter=${q('isRead eq false')}&$top=10&$select=subject`],
    [`\`$count=true\` with \`$search="${word}"\``, `/v1.0/me/messages?$count=true&$search=${q(`"${word}"`)}&$top=10&$select=subject`],
    ['inbox delta, first page', '/v1.0/me/mailFolders/inbox/messages/delta?$select=subject'],
  ];
  const matches = JSON.parse((await get(`/v1.0/me/messages?$count=true&$search=${q(`"${word}"`)}&$top=1&$select=subject`)).text)['@odata.count'];

  const rows: string[] = [];
  for (const [name, url] of scenarios) {
    const single: number[] = [];
    for (let i = 0; i < 20; i++) single.push((await get(url)).ms);
    single.sort((a, b) => a - b);
    const load: string[] = [];
    for (const connections of [10, 50]) {
      const r = await autocannon({ url: origin + url, connections, duration: seconds, headers });
      if (r.non2xx || r.errors) throw new Error(`${name}: ${r.non2xx} non-2xx, ${r.errors} errors under load`);
      load.push(`${r.latency.p50} / ${r.latency.p99}`, String(Math.round(r.requests.average)));
    }
    const line = `| ${name} | ${single[10]!.toFixed(1)} / ${single[19]!.toFixed(1)} | ${load.join(' | ')} |`;
    rows.push(line);
    process.stderr.write(line + '\n');
  }

  // Deep paging: follow 100 next links of the inbox, one after another.
  let next: string | undefined = '/v1.0/me/mailFolders/inbox/messages?$top=10&$select=subject';
  const pages: number[] = [];
  for (let i = 0; i < 101 && next; i++) {
    const r = await get(next);
    pages.push(r.ms);
    next = JSON.parse(r.text)['@odata.nextLink'];
  }
  const lastUrl = next ?? '';
  const sortedPages = [...pages].sort((a, b) => a - b);
  const deep = lastUrl ? await autocannon({ url: lastUrl, connections: 50, duration: seconds, headers }) : undefined;
  const rss = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;

  const out = [
    `Mailbox: ${have.toLocaleString('en')} messages (SQLite, ${(fs.statSync(path.join(dataDir, 'stratus.db')).size / 2 ** 30).toFixed(1)} GiB); \`$search\` word matches ${matches} messages; ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}; ${seconds} s per load run.`,
    '',
    '| query | single request ms (median / max of 20) | 10 conn. p50 / p99 ms | 10 conn. req/s | 50 conn. p50 / p99 ms | 50 conn. req/s |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `Deep paging, 101 inbox pages through \`@odata.nextLink\`: median ${sortedPages[50]!.toFixed(1)} ms, max ${sortedPages[sortedPages.length - 1]!.toFixed(1)} ms per page${deep ? `; the 101st link at 50 connections: p50 ${deep.latency.p50} ms, p99 ${deep.latency.p99} ms, ${Math.round(deep.requests.average)} req/s` : ''}.`,
    `Server RSS after the runs: ${rss.toFixed(0)} MiB.`,
  ];
  process.stdout.write(out.join('\n') + '\n');
} finally {
  server.kill('SIGTERM');
  await exited;
}
