// Quick before/after bench (perf-cache helper): Stratus as a child process, autocannon here.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
const trees = process.argv.slice(2);
const tenant = '9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01';
const sub = '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25';
const secs = Number(process.env.SECS ?? 8);
const scen = {
  webhook: `/subscriptions/${sub}/resourceGroups/stratus-rg/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`,
  policiesFilter: `/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2020-10-01&$filter=${encodeURIComponent(`roleDefinitionId eq '/subscriptions/${sub}/providers/Vendor.Authorization/roleDefinitions/acdd72a7-3385-48ef-bd42-f606fba81ae7'`)}`,
};
async function run(tree, port) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pc-bench-'));
  const env = { ...process.env, STRATUS_DATA_DIR: dataDir, STRATUS_HTTP_PORT: String(port), STRATUS_HTTPS_PORT: '-1', STRATUS_LOG_LEVEL: 'warn', STRATUS_ARM_READS_PER_WINDOW: '100000000' };
  if (process.env.DBURL) { env.STRATUS_DATABASE_URL = process.env.DBURL; env.STRATUS_DATABASE_SCHEMA = `pcb_${port}_${Date.now() % 100000}`; }
  const child = spawn('node', ['--import', 'tsx', 'src/cli.ts', 'serve'], { cwd: tree, env, stdio: ['ignore', 'ignore', 'inherit'] });
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) { try { if ((await fetch(origin + '/_stratus/health')).ok) break; } catch {} await new Promise((r) => setTimeout(r, 100)); }
  const t = await (await fetch(`${origin}/${tenant}/oauth2/v2.0/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: '5a2f9c1e-8b3d-4f7a-9e6c-1d4b8a2f0c37', client_secret: 'stratus-dev-secret', scope: 'api://stratus/arm/.default' }) })).json();
  const out = {};
  for (const [k, p] of Object.entries(scen)) {
    const chk = await fetch(origin + p, { headers: { authorization: `Bearer ${t.access_token}` } });
    if (chk.status !== 200) throw new Error(`${k} ${chk.status} ${await chk.text()}`);
    const r = await autocannon({ url: origin + p, connections: 50, duration: secs, headers: { authorization: `Bearer ${t.access_token}` } });
    out[k] = Math.round(r.requests.average) + (r.non2xx ? ` (non2xx ${r.non2xx})` : '');
  }
  child.kill('SIGINT');
  await new Promise((r) => child.on('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
  return out;
}
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++) {
  for (const [i, tree] of trees.entries()) console.log(round, path.basename(tree), JSON.stringify(await run(tree, 47100 + i)));
}
