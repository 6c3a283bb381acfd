/**
 * Two instances of one deployment share the clock, a reset and a snapshot restore (issue 28
 * item 6), PostgreSQL only. Instance A runs in this process; instance B is a separate
 * `stratus serve` process on the same schema (its own clock module, caches, fault rules), so
 * nothing is shared by the test process itself:
 * - a clock move on A is what B uses on its very next request: B's clock reads the new time and
 *   B accepts a token A issued after the move (its `iat`/`nbf` are in B's old future);
 * - a snapshot restore on B is what A serves next, clock included;
 * - a reset on A empties B's fault rules.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities, userToken } from './helpers/auth.ts';
import { demoSubscription } from '../src/seed/demo.ts';

const onPostgres = !!process.env.STRATUS_TEST_DATABASE_URL;
const skip = onPostgres ? false : 'several instances share one store on PostgreSQL only: set STRATUS_TEST_DATABASE_URL';
const json = { 'content-type': 'application/json' };
const accounts = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts`;

describe('two instances', { skip }, () => {
  let a: TestServer;
  let b: ChildProcess;
  let bUrl = '';
  const bDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-b-'));

  before(async () => {
    a = await startTestServer();
    b = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      env: {
        ...process.env,
        STRATUS_DATA_DIR: bDir,
        STRATUS_HTTP_PORT: '0',
        STRATUS_HTTPS_PORT: '-1',
        STRATUS_LOG_LEVEL: 'silent',
        STRATUS_DATABASE_URL: process.env.STRATUS_TEST_DATABASE_URL!,
        STRATUS_DATABASE_SCHEMA: a.config.databaseSchema!,
        STRATUS_PUBLIC_URL: a.url,
        STRATUS_CONTROL_KEY: a.controlKey,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    b.stderr!.resume();
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`instance B did not start within 60 s: ${out}`)), 60_000);
      b.once('exit', (code) => reject(new Error(`instance B exited ${code}: ${out}`)));
      b.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /(http:\/\/\S+:\d+)/.exec(out);
        if (m && /control key:/.test(out)) {
          bUrl = m[1]!;
          clearTimeout(deadline);
          resolve();
        }
      });
    });
  });

  after(async () => {
    if (b && b.exitCode === null) {
      b.kill('SIGINT');
      await new Promise((r) => b.once('exit', r));
    }
    fs.rmSync(bDir, { recursive: true, force: true });
    await a?.close();
  });

  const onB = (p: string, init: RequestInit = {}) => fetch(`${bUrl}${p}`, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${a.controlKey}` } });
  const arm = async (base: string, method: string, p: string, token: string, body?: unknown) => {
    const r = await fetch(`${base}${p}?api-version=2024-10-23`, { method, headers: { authorization: `Bearer ${token}`, ...(body ? json : {}) }, body: body ? JSON.stringify(body) : undefined });
    await r.arrayBuffer();
    return r.status;
  };

  test('a clock move on A is what B uses on its very next request (clock, token validation)', async () => {
    const moved = await a.control('/_stratus/clock', { method: 'POST', headers: json, body: JSON.stringify({ advanceSeconds: 7200 }) });
    assert.equal(moved.status, 200);
    const onA = (await moved.json()) as any;
    const bClock = (await (await onB('/_stratus/clock')).json()) as any;
    assert.equal(bClock.offsetMs, onA.offsetMs, 'B reads the offset A set');
    // A token A issues now is two hours ahead of the machine clock: B accepts it only on the shared clock.
    const token = await userToken(a.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    assert.equal(await arm(bUrl, 'GET', `${accounts}/stratus-automation`, token), 200, "B accepts A's token issued after the move");
    // And back: a time in the past on B is A's time at once.
    const past = await onB('/_stratus/clock', { method: 'POST', headers: json, body: JSON.stringify({ now: '2024-03-01T08:00:00Z' }) });
    assert.equal(past.status, 200);
    assert.match(((await (await a.control('/_stratus/clock')).json()) as any).now, /^2024-03-01T08:0/);
  });

  test('a snapshot restored on B is what A serves next; a reset on A empties B’s fault rules', async () => {
    const token = await userToken(a.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    const saved = await a.control('/_stratus/snapshots', { method: 'POST', headers: json, body: JSON.stringify({ name: 'shared' }) });
    assert.equal(saved.status, 201);
    const savedAt = Date.parse(((await saved.json()) as any).clock);
    assert.equal(await arm(a.url, 'PUT', `${accounts}/two-instances`, token, { location: 'westus', properties: { sku: { name: 'Basic' } } }), 201);
    assert.equal(await arm(a.url, 'GET', `${accounts}/two-instances`, token), 200, 'A caches the new account');
    await a.control('/_stratus/clock', { method: 'POST', headers: json, body: JSON.stringify({ advanceSeconds: 86400 }) });
    const listed = (await (await onB('/_stratus/snapshots')).json()) as any;
    assert.deepEqual(listed.value.map((s: any) => s.name), ['shared'], 'B lists the snapshot A saved');
    assert.equal((await onB('/_stratus/snapshots/shared/restore', { method: 'POST' })).status, 200);
    assert.equal(await arm(a.url, 'GET', `${accounts}/two-instances`, token), 404, 'A no longer serves the account');
    const aNow = Date.parse(((await (await a.control('/_stratus/clock')).json()) as any).now);
    assert.ok(aNow >= savedAt && aNow < savedAt + 60_000, `A's clock is back at the snapshot's time: ${new Date(aNow).toISOString()} vs ${new Date(savedAt).toISOString()}`);

    const rule = await onB('/_stratus/faults', { method: 'POST', headers: json, body: JSON.stringify({ match: { path: '/nowhere' }, effect: { status: 503 } }) });
    assert.equal(rule.status, 201);
    assert.equal(((await (await onB('/_stratus/faults')).json()) as any).value.length, 1);
    assert.equal((await a.control('/_stratus/reset', { method: 'POST' })).status, 200);
    assert.deepEqual(((await (await onB('/_stratus/faults')).json()) as any).value, [], "B's fault rules are gone after A's reset");
    assert.equal(((await (await onB('/_stratus/clock')).json()) as any).offsetMs, 0, "B's clock is the world's again");
  });
});
