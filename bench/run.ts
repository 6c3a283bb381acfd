/**
 * Benchmarks: a load generator (autocannon) against a running Stratus, compared in the same
 * run with a bare Fastify endpoint on the same machine, so the numbers say what Stratus adds
 * over the framework floor. Memory is the server process's RSS before and after the load.
 *
 *   npm run bench                          # starts Stratus in-process on a temp SQLite store
 *   STRATUS_BENCH_DATABASE_URL=postgres://… npm run bench   # same on PostgreSQL
 *   STRATUS_BENCH_SECONDS=10 STRATUS_BENCH_CONNECTIONS=50 npm run bench
 *
 * Scenarios whose first request does not answer 200 (an area not served yet) are reported
 * as skipped, never timed. Results go to stdout as a markdown table.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Fastify from 'fastify';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { start } from '../src/server.ts';

const seconds = Number(process.env.STRATUS_BENCH_SECONDS ?? 5);
const connections = Number(process.env.STRATUS_BENCH_CONNECTIONS ?? 20);
const tenant = '9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01';
const sub = '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25';

interface Scenario {
  name: string;
  path: string;
  method?: 'GET' | 'POST';
  token?: 'arm' | 'armUser' | 'analytics' | 'mail' | 'platform';
  body?: string;
}

const scenarios: Scenario[] = [
  { name: 'Stratus health (framework + store ping)', path: '/_stratus/health' },
  { name: 'compute SKUs, one location', path: `/subscriptions/${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=location%20eq%20'westus'`, token: 'arm' },
  { name: 'compute SKUs, first page of all', path: `/subscriptions/${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01`, token: 'arm' },
  { name: 'role management policies, subscription', path: `/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2020-10-01`, token: 'arm' },
  { name: 'invoice transactions, filtered and ordered', path: `/providers/Vendor.Billing/billingAccounts/70000001/invoices/G000000001/transactions?api-version=2024-04-01&filter=${encodeURIComponent("properties/transactionType eq 'Purchase' or properties/transactionAmount/value gt 100")}&orderBy=${encodeURIComponent('properties/date desc')}&top=50`, token: 'armUser' },
  { name: 'admin dataflows, filtered', path: `/v1.0/myorg/admin/dataflows?$filter=${encodeURIComponent("contains(name,'sales')")}&$top=50`, token: 'analytics' },
  { name: 'mail: list inbox messages', path: `/v1.0/me/mailFolders/inbox/messages?$top=25&$select=subject,from,receivedDateTime`, token: 'mail' },
  { name: 'mail: $search', path: `/v1.0/me/messages?$search=${encodeURIComponent('"report"')}&$top=25`, token: 'mail' },
];

async function token(origin: string, family: string): Promise<string> {
  const form: Record<string, string> =
    family === 'arm'
      ? { grant_type: 'client_credentials', client_id: '5a2f9c1e-8b3d-4f7a-9e6c-1d4b8a2f0c37', client_secret: 'stratus-dev-secret', scope: 'api://stratus/arm/.default' }
      : {
          grant_type: 'password',
          client_id: 'b7e4c2a1-6d3f-4a8e-9c5b-2f1d0e7a3c94',
          username: 'admin@stratus.test',
          password: 'Admin-Pass-1',
          scope:
            family === 'armUser'
              ? 'api://stratus/arm/user_impersonation'
              : family === 'analytics'
                ? 'api://stratus/analytics/Tenant.Read.All'
                : family === 'mail'
                  ? 'api://stratus/mail/Mail.ReadWrite'
                  : 'api://stratus/platform/Item.ReadWrite.All',
        };
  const res = await fetch(`${origin}/${tenant}/oauth2/v2.0/token`, { method: 'POST', body: new URLSearchParams(form) });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token for ${family}: ${JSON.stringify(body)}`);
  return body.access_token;
}

async function load(url: string, headers: Record<string, string>, method = 'GET', body?: string) {
  const result = await autocannon({ url, connections, duration: seconds, headers, method, body });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

const mb = (n: number) => `${Math.round(n / 1024 / 1024)} MB`;

async function main() {
  // The framework floor: a bare Fastify endpoint returning a small JSON document.
  const bare = Fastify({ logger: false });
  bare.get('/bare', async () => ({ status: 'ok' }));
  const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' });

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-bench-'));
  const dbUrl = process.env.STRATUS_BENCH_DATABASE_URL;
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const config = loadConfig({}, {
    STRATUS_DATA_DIR: dataDir,
    STRATUS_HTTP_PORT: '0',
    STRATUS_HTTPS_PORT: '-1',
    STRATUS_LOG_LEVEL: 'warn',
    // Benchmarks measure throughput, not throttling.
    STRATUS_ANALYTICS_REQUESTS_PER_WINDOW: '100000000',
    STRATUS_MAIL_REQUESTS_PER_WINDOW: '100000000',
    STRATUS_ARM_READS_PER_WINDOW: '100000000',
    STRATUS_PLATFORM_REQUESTS_PER_WINDOW: '100000000',
    ...(dbUrl ? { STRATUS_DATABASE_URL: dbUrl, STRATUS_DATABASE_SCHEMA: schema } : {}),
  });
  const server = await start(config);
  const origin = server.httpUrl;
  const rows: string[] = [];
  const row = (name: string, r: Awaited<ReturnType<typeof load>>, rssBefore: number) =>
    rows.push(`| ${name} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.non2xx + r.errors} | ${mb(process.memoryUsage().rss)} (${mb(process.memoryUsage().rss - rssBefore)}) |`);

  try {
    let rss = process.memoryUsage().rss;
    row('bare Fastify endpoint (floor)', await load(`${bareUrl}/bare`, {}), rss);
    const tokens = new Map<string, string>();
    for (const s of scenarios) {
      const headers: Record<string, string> = {};
      if (s.token) {
        if (!tokens.has(s.token)) tokens.set(s.token, await token(origin, s.token));
        headers.authorization = `Bearer ${tokens.get(s.token)}`;
      }
      const probe = await fetch(`${origin}${s.path}`, { method: s.method ?? 'GET', headers, body: s.body });
      if (probe.status !== 200) {
        rows.push(`| ${s.name} | skipped (probe answered ${probe.status}) | | | | |`);
        continue;
      }
      rss = process.memoryUsage().rss;
      row(s.name, await load(`${origin}${s.path}`, headers, s.method, s.body), rss);
    }
  } finally {
    await server.close();
    await bare.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    if (dbUrl) {
      const c = new pg.Client({ connectionString: dbUrl });
      await c.connect();
      await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await c.end();
    }
  }
  process.stdout.write(
    `\nStratus benchmark — ${connections} connections, ${seconds} s per scenario, ${dbUrl ? 'PostgreSQL' : 'SQLite'}, Node ${process.version}, ${os.cpus().length} CPUs\n\n` +
      '| scenario | req/s | p50 ms | p99 ms | non-2xx + errors | RSS after (Δ) |\n|---|---|---|---|---|---|\n' +
      rows.join('\n') +
      '\n',
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
