/**
 * `node bench/cpu.mjs <checkout> <scenario,...> [requests]`: Stratus CPU per request, the
 * steadier figure to compare two versions of a request path with (req/s swings with the
 * machine's load; CPU time per request much less). Starts the built server of `<checkout>`
 * (`dist/stratus.mjs`, build it first) as its own process with raised budgets, warms each
 * scenario up with 20,000 requests, then sends `[requests]` (default 150,000) at 50
 * connections with autocannon from this process and prints the server process's user + system
 * CPU time (from `/proc`, so Linux only; it includes V8's helper threads) divided by the count.
 * Scenarios: the ids of `bench/run.ts` without `webhook-https`.
 *
 * Environment: `DATA` (a data folder to reuse; default a fresh one under /tmp, removed first),
 * `PROF` (a folder: the server runs under `--cpu-prof`), `HPROF` (likewise `--heap-prof`),
 * plus any Stratus setting (e.g. `STRATUS_DATABASE_URL`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import autocannon from 'autocannon';
const [dir, which, amountS = '150000'] = process.argv.slice(2);
const amount = Number(amountS);
const tenant = '9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01', sub = '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25', rg = `/subscriptions/${sub}/resourceGroups/stratus-rg`, ownerRole = '8e3af657-a8ff-443c-a75c-2fe8c4bcb635';
const q = encodeURIComponent;
const S = {
  health: ['/_stratus/health'],
  webhook: [`${rg}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`, 'arm'],
  'mail-get': ['/v1.0/me/messages/{messageId}', 'mail'],
  inbox: ['/v1.0/me/mailFolders/inbox/messages?$top=10&$select=subject', 'mail'],
  policies: [`/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2020-10-01&$filter=${q(`roleDefinitionId eq '/subscriptions/${sub}/providers/Vendor.Authorization/roleDefinitions/${ownerRole}'`)}`, 'arm'],
  dataflows: ['/v1.0/myorg/admin/dataflows?$top=10', 'analytics'],
  syncs: [`${rg}/providers/Vendor.DataShare/accounts/stratus-share/shares/sales/listSynchronizations?api-version=2021-08-01`, 'arm', 'POST'],
  invoice: [`/providers/Vendor.Billing/billingAccounts/70000001/invoices/G000000001/transactions?api-version=2024-04-01&filter=${q("properties/transactionType eq 'Purchase'")}&orderBy=${q('properties/date desc')}&top=10`, 'armUser'],
  skus: [`/subscriptions/${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${q("location eq 'westus'")}`, 'arm'],
};
const port = 20000 + Math.floor(Math.random() * 10000);
const data = process.env.DATA ?? `/tmp/cpq-${port}`;
if (!process.env.DATA) fs.rmSync(data, { recursive: true, force: true });
const child = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof','--cpu-prof-dir',process.env.PROF] : []), ...(process.env.HPROF ? ['--heap-prof','--heap-prof-interval','16384','--heap-prof-dir',process.env.HPROF] : []), 'dist/stratus.mjs', 'serve', '--data-dir', data, '--http-port', String(port), '--https-port', '-1'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, STRATUS_ANALYTICS_REQUESTS_PER_WINDOW: '1000000000', STRATUS_MAIL_REQUESTS_PER_WINDOW: '1000000000', STRATUS_ARM_READS_PER_WINDOW: '1000000000', STRATUS_PLATFORM_REQUESTS_PER_WINDOW: '1000000000' } });
const origin = `http://127.0.0.1:${port}`;
for (let i = 0; i < 100; i++) { try { if ((await fetch(origin + '/_stratus/health')).ok) break; } catch {} await new Promise((r) => setTimeout(r, 100)); }
async function token(kind) {
  const form = kind === 'arm' ? { grant_type: 'client_credentials', client_id: '5a2f9c1e-8b3d-4f7a-9e6c-1d4b8a2f0c37', client_secret: 'stratus-dev-secret', scope: 'api://stratus/arm/.default' }
    : { grant_type: 'password', client_id: 'b7e4c2a1-6d3f-4a8e-9c5b-2f1d0e7a3c94', username: 'admin@stratus.test', password: 'Admin-Pass-1', scope: kind === 'armUser' ? 'api://stratus/arm/user_impersonation' : kind === 'analytics' ? 'api://stratus/analytics/Tenant.Read.All' : 'api://stratus/mail/Mail.ReadWrite' };
  const res = await fetch(`${origin}/${tenant}/oauth2/v2.0/token`, { method: 'POST', body: new URLSearchParams(form) });
  return (await res.json()).access_token;
}
const cpu = () => { const f = fs.readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 1e6 / 100; };
for (const id of which.split(',')) {
  let [path, kind, method = 'GET'] = S[id];
  const headers = kind ? { authorization: `Bearer ${await token(kind)}` } : {};
  if (path.includes('{messageId}')) {
    const r = await (await fetch(`${origin}/v1.0/me/mailFolders/inbox/messages?$top=1&$select=subject`, { headers })).json();
    path = path.replace('{messageId}', r.value[0].id);
  }
  const run = (n) => autocannon({ url: origin + path, connections: 50, amount: n, method, headers });
  await run(20000);
  const c0 = cpu();
  const r = await run(amount);
  const c1 = cpu();
  console.log(`${id}: ${((c1 - c0) / amount).toFixed(1)} µs CPU/req, ${Math.round(r.requests.average)} req/s, non2xx ${r.non2xx}`);
}
child.kill('SIGINT'); await new Promise((r) => child.once('exit', r));
