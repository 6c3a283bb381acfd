/**
 * Reset and snapshot restore of the demo world (issue 28 item 7): over HTTP against an app in
 * this process, on SQLite (a fresh data folder) and, with `--database-url`, on PostgreSQL (a
 * fresh schema, dropped afterwards). Each round first writes something of several kinds (a
 * resource-manager resource, a mail message, a fault rule, a clock move), then times
 * `POST /_stratus/reset` or `POST /_stratus/snapshots/{name}/restore` until its answer.
 * Prints the median, p90 and the store's size (rows of the world, SQLite file bytes).
 *
 *   npm run bench:reset [-- --rounds 30] [--database-url postgres://postgres@127.0.0.1:5432/test]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { start } from '../src/server.ts';
import { loadConfig } from '../src/config.ts';
import { demoSubscription, demoUser, demoTenant } from '../src/seed/demo.ts';

const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const rounds = Number(arg('--rounds') ?? 30) || 30;
const databaseUrl = arg('--database-url');
const schema = databaseUrl ? `bench_reset_${process.pid}` : undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-bench-reset-'));
const config = loadConfig(
  {},
  {
    STRATUS_DATA_DIR: dataDir,
    STRATUS_HTTP_PORT: '0',
    STRATUS_HTTPS_PORT: '-1',
    STRATUS_LOG_LEVEL: 'silent',
    ...(databaseUrl ? { STRATUS_DATABASE_URL: databaseUrl, STRATUS_DATABASE_SCHEMA: schema! } : {}),
  },
);
const server = await start(config);
const base = server.httpUrl;
const key = { authorization: `Bearer ${server.ctx.controlKey}`, 'content-type': 'application/json' };

async function control(p: string, body?: unknown): Promise<number> {
  const r = await fetch(`${base}${p}`, { method: 'POST', headers: key, body: JSON.stringify(body ?? {}) });
  await r.arrayBuffer();
  if (r.status >= 300) throw new Error(`${p} answered ${r.status}`);
  return r.status;
}

const token = await (async () => {
  const form = new URLSearchParams({ grant_type: 'password', username: demoUser.userPrincipalName, password: demoUser.password, scope: 'api://stratus/arm/user_impersonation api://stratus/mail/Mail.ReadWrite' });
  const r = await fetch(`${base}/${demoTenant.id}/oauth2/v2.0/token`, { method: 'POST', body: form });
  return ((await r.json()) as { access_token: string }).access_token;
})();

/** Writes of several kinds, so a round has something to put back. */
async function write(i: number): Promise<void> {
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const acct = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/bench-${i}?api-version=2024-10-23`;
  await (await fetch(`${base}${acct}`, { method: 'PUT', headers: auth, body: JSON.stringify({ location: 'westus', properties: { sku: { name: 'Basic' } } }) })).arrayBuffer();
  await (await fetch(`${base}/v1.0/me/messages`, { method: 'POST', headers: auth, body: JSON.stringify({ subject: `bench ${i}` }) })).arrayBuffer();
  await control('/_stratus/faults', { match: { path: '/nowhere' }, effect: { status: 503 } });
  await control('/_stratus/clock', { advanceSeconds: 60 });
}

async function measure(label: string, p: string): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    await write(i);
    const t0 = performance.now();
    await control(p);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(1);
  process.stdout.write(`${label.padEnd(18)} ${server.ctx.store.dialect.padEnd(9)} median ${at(0.5)} ms   p90 ${at(0.9)} ms   min ${ms[0]!.toFixed(1)} ms   (${rounds} rounds)\n`);
}

try {
  await control('/_stratus/reset');
  await control('/_stratus/snapshots', { name: 'bench' });
  await measure('reset', '/_stratus/reset');
  await measure('snapshot restore', '/_stratus/snapshots/bench/restore');
  const rows = (await server.ctx.store.db.selectFrom('stratus_snapshots').select('row_count').where('name', '=', 'bench').executeTakeFirst())?.row_count;
  const file = path.join(dataDir, 'stratus.db');
  const bytes = fs.existsSync(file) ? fs.statSync(file).size + (fs.existsSync(file + '-wal') ? fs.statSync(file + '-wal').size : 0) : undefined;
  process.stdout.write(`store: ${rows} rows in the world's tables${bytes ? `, SQLite file + WAL ${(bytes / 1048576).toFixed(1)} MiB` : ''}\n`);
} finally {
  await server.close();
  if (databaseUrl) {
    const pg = (await import('pg')).default;
    const c = new pg.Client(databaseUrl);
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
