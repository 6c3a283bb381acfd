/**
 * Loading a large world file (issue 28 item 7: "a world of 10,000 messages and 1,000 resources
 * loads in ≤ 2 s"): builds a world of one tenant with a mailbox of 10 folders × 1,000 messages
 * and 100 resource groups × 5 automation accounts with a runbook each (1,000 resources), then
 * times, against an app in this process (SQLite in a fresh folder or, with `--database-url`,
 * PostgreSQL in a fresh schema, dropped afterwards): reading and validating the file
 * (`readWorld`), resolving it (`resolveWorld`), and `PUT /_stratus/world` to its answer (read,
 * check, empty the store, write everything, keep it as the world snapshot). Prints the median of
 * `--rounds` (default 3).
 *
 *   npx tsx bench/world-load.ts [--rounds 3] [--messages 10000] [--database-url postgres://postgres@127.0.0.1:5432/test]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { start } from '../src/server.ts';
import { loadConfig } from '../src/config.ts';
import { readWorld } from '../src/world/file.ts';
import { resolveWorld } from '../src/world/load.ts';

const arg = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const rounds = Number(arg('--rounds') ?? 3) || 3;
const messageCount = Number(arg('--messages') ?? 10_000) || 10_000;
const databaseUrl = arg('--database-url');
const schema = databaseUrl ? `bench_world_${process.pid}` : undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-bench-world-'));

/** The world document: 10 folders of messages, 100 groups × 5 accounts × (account + runbook). */
function world(): unknown {
  const perFolder = Math.ceil(messageCount / 10);
  const folders = Array.from({ length: 10 }, (_, f) => ({
    displayName: `Folder ${f}`,
    messages: Array.from({ length: Math.min(perFolder, messageCount - f * perFolder) }, (_, i) => ({
      subject: `Report ${f}-${i}: quarterly figures`,
      body: { contentType: 'text', content: `Hello Ann, here are the figures for item ${i} of folder ${f}. Regards, Ben.`.repeat(3) },
      from: { emailAddress: { name: 'Ben', address: 'ben@bench.test' } },
      toRecipients: [{ emailAddress: { name: 'Ann', address: 'ann@bench.test' } }],
      receivedDateTime: new Date(Date.UTC(2026, 0, 1) - (f * perFolder + i) * 60_000).toISOString(),
      isRead: i % 3 === 0,
      ...(i % 10 === 0 ? { categories: ['Blue category'] } : {}),
    })),
  }));
  const groups = Array.from({ length: 100 }, (_, g) => ({
    name: `rg-${g}`,
    location: 'westus',
    automationAccounts: Array.from({ length: 5 }, (_, a) => ({ name: `auto-${g}-${a}`, runbooks: [{ name: 'cleanup', properties: { description: 'Cleans up.' } }] })),
  }));
  return {
    clock: '2026-01-01T09:00:00Z',
    tenants: [
      {
        domain: 'bench.test',
        users: [
          { userPrincipalName: 'ann@bench.test', displayName: 'Ann', passwordHash: 'scrypt$hNb7qwPmuL6IMqfeNOsyjQ==$OD4oyHPuFkindQSy9ZLAXEMmhUXMor4azUYwslirAkQ=' },
          { userPrincipalName: 'ben@bench.test', displayName: 'Ben', passwordHash: 'scrypt$Zl8qyZ+WT5bUQ1NJITGhSg==$lGiyu+JQsdoH7ATAvGalLPL5OKPnMO9Ov5OHMNMkme4=' },
        ],
        subscriptions: [{ displayName: 'Bench', resourceGroups: groups }],
        mailboxes: [{ user: 'ann@bench.test', folders }],
      },
    ],
  };
}

const text = JSON.stringify(world());
const file = path.join(dataDir, 'bench-world.json');
fs.writeFileSync(file, text);
const config = loadConfig({}, { STRATUS_DATA_DIR: dataDir, STRATUS_HTTP_PORT: '0', STRATUS_HTTPS_PORT: '-1', STRATUS_LOG_LEVEL: 'silent', ...(databaseUrl ? { STRATUS_DATABASE_URL: databaseUrl, STRATUS_DATABASE_SCHEMA: schema! } : {}) });
const server = await start(config);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const read: number[] = [];
const resolve: number[] = [];
const put: number[] = [];
try {
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    const w = readWorld([file]);
    read.push(performance.now() - t);
    t = performance.now();
    resolveWorld(w);
    resolve.push(performance.now() - t);
    t = performance.now();
    const res = await fetch(`${server.httpUrl}/_stratus/world`, { method: 'PUT', headers: { authorization: `Bearer ${server.ctx.controlKey}`, 'content-type': 'application/json' }, body: text });
    await res.arrayBuffer();
    put.push(performance.now() - t);
    if (res.status !== 200) throw new Error(`PUT /_stratus/world answered ${res.status}`);
  }
  const db = server.ctx.store.db;
  const messages = Number((await sql<{ n: number }>`select count(*) as n from mail_messages`.execute(db)).rows[0]!.n);
  const resources = Number((await sql<{ n: number }>`select count(*) as n from arm_resources`.execute(db)).rows[0]!.n);
  console.log(`world-load (${databaseUrl ? 'PostgreSQL' : 'SQLite'}): ${(text.length / 1e6).toFixed(1)} MB JSON, ${messages} messages, ${resources} resources; median of ${rounds}: read+validate ${median(read).toFixed(0)} ms, resolve ${median(resolve).toFixed(0)} ms, PUT /_stratus/world ${median(put).toFixed(0)} ms (all rounds: ${put.map((x) => x.toFixed(0)).join(', ')})`);
} finally {
  await server.close();
  if (databaseUrl) {
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query(`drop schema if exists "${schema}" cascade`);
    await c.end();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
