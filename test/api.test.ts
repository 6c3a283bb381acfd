/**
 * The programmatic start (issue 29 items 2 and 3): `start()` from src/api.ts (the package's entry)
 * runs `stratus serve` as a child process on free ports and an ephemeral store, and hands back the
 * origin, CA, control key and identities; tokens it fetches work over HTTPS with that CA; reset,
 * snapshot/restore, the clock and fault rules go through the control plane; stop removes the store;
 * and a test process that dies (SIGKILL) takes the server with it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { start, type Stratus } from '../src/api.ts';
import { dropSchemas } from './helpers/server.ts';
import { demoSubscription } from '../src/seed/demo.ts';
import { ensureBuilt } from './helpers/build.ts';

const root = path.resolve(import.meta.dirname, '..');
const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const schema = dbUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
let s: Stratus;

before(async () => {
  // The child runs the bundle when it is fresh (else src/ through tsx, slower).
  await ensureBuilt();
  s = await start(dbUrl ? { database: dbUrl, databaseSchema: schema } : {});
});
after(async () => {
  await s?.stop();
  await dropSchemas(dbUrl, schema);
});

/** A request over HTTPS trusting only the CA `start()` named. */
function request(method: string, url: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method, ca: s.caPem, headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const rgUrl = () => `${s.origin}/subscriptions/${demoSubscription.id}/resourcegroups/api-rg?api-version=2021-04-01`;

test('start(): HTTPS origin on a free port, the CA that signs it, the control key, the demo identities', async () => {
  assert.match(s.origin, /^https:\/\/localhost:\d+$/);
  assert.match(s.httpOrigin, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal(s.caPem, fs.readFileSync(s.caPath, 'utf8'));
  assert.match(s.caPem, /^-----BEGIN CERTIFICATE-----/);
  assert.equal(s.identities.subscription.id, demoSubscription.id);
  assert.equal(s.tenants.length, 2);
  assert.equal((await s.control('/_stratus/requests?limit=1')).status, 200, 'the control key opens the control plane');
  assert.equal((await fetch(`${s.httpOrigin}/_stratus/requests?limit=1`)).status, 401, 'without the key it is closed');
  assert.equal(s.env.NODE_EXTRA_CA_CERTS, s.caPath);
});

test('token(): delegated and application tokens the APIs accept over HTTPS; a wrong password names the error', async () => {
  const user = await s.token({ family: 'arm' });
  assert.equal((await request('PUT', rgUrl(), user, { location: 'eastus' })).status, 201);
  const app = await s.token({ family: 'arm', app: s.identities.app.clientId });
  assert.equal((await request('GET', rgUrl(), app)).status, 200);
  const mail = await s.token({ family: 'mail', user: s.identities.user.userPrincipalName, scopes: ['Mail.Read'] });
  const me = await request('GET', `${s.origin}/v1.0/me/messages?$top=1`, mail);
  assert.equal(me.status, 200);
  await assert.rejects(s.token({ user: s.identities.admin.userPrincipalName, password: 'wrong' }), /token: 400 invalid_grant/);
});

test('reset(): the store is back to the demo world', async () => {
  const token = await s.token({ family: 'arm' });
  assert.equal((await request('PUT', rgUrl(), token, { location: 'eastus' })).status < 300, true);
  await s.reset();
  assert.equal((await request('GET', rgUrl(), await s.token({ family: 'arm' }))).status, 404);
});

test('clock: now, advance and set (also into the past) move the server clock', async () => {
  const t0 = await s.clock.now();
  const later = await s.clock.advance(3600);
  assert.ok(later.getTime() - t0.getTime() >= 3600_000 && later.getTime() - t0.getTime() < 3700_000, `advance(3600) moved ${later.getTime() - t0.getTime()} ms`);
  const past = await s.clock.set('2021-02-03T04:05:06Z');
  assert.ok(Math.abs(past.getTime() - Date.parse('2021-02-03T04:05:06Z')) < 5000, `set answered ${past.toISOString()}`);
  assert.ok(Math.abs((await s.clock.now()).getTime() - Date.parse('2021-02-03T04:05:06Z')) < 5000);
  await s.clock.set(new Date());
});

test('faults: add answers the rule with its id, list shows it, clear removes it, and the rule applies meanwhile', async () => {
  const rule = await s.faults.add({ match: { family: 'arm' }, effect: { status: 503 } });
  assert.equal(typeof rule.id, 'string');
  assert.ok((await s.faults.list()).some((r) => r.id === rule.id));
  assert.equal((await request('GET', rgUrl(), await s.token({ family: 'arm' }))).status, 503);
  await s.faults.clear();
  assert.deepEqual(await s.faults.list(), []);
});

test('snapshot() and restore(): a group made after the snapshot is gone after restore; deleteSnapshot removes it', async () => {
  await s.reset();
  await s.snapshot('api-test');
  const token = await s.token({ family: 'arm' });
  assert.equal((await request('PUT', rgUrl(), token, { location: 'eastus' })).status, 201);
  await s.restore('api-test');
  assert.equal((await request('GET', rgUrl(), await s.token({ family: 'arm' }))).status, 404);
  await s.deleteSnapshot('api-test');
  await assert.rejects(s.restore('api-test'), /restore: POST \/_stratus\/snapshots\/api-test\/restore answered 404/);
});

test('two ephemeral servers (the second from the seeded template of the first) are independent and hold the demo world', async () => {
  const [a, b] = [await start(), await start()];
  try {
    assert.notEqual(a.dataDir, b.dataDir);
    assert.equal(a.caPem, s.caPem, 'every ephemeral server uses the machine CA');
    const token = async (x: Stratus) => x.token({ family: 'arm' });
    const at = (x: Stratus) => `${x.origin}/subscriptions/${demoSubscription.id}/resourcegroups/only-on-a?api-version=2021-04-01`;
    assert.equal((await request('PUT', at(a), await token(a), { location: 'eastus' })).status, 201);
    assert.equal((await request('GET', at(b), await token(b))).status, 404, 'a write on one is not on the other');
    const demo = await request('GET', `${b.origin}/subscriptions/${demoSubscription.id}/resourcegroups/${demoSubscription.resourceGroup}?api-version=2021-04-01`, await token(b));
    assert.equal(demo.status, 200, 'the demo world is there');
    const third = await start();
    try {
      assert.equal((await request('GET', at(third), await token(third))).status, 404, 'the template does not take later writes');
    } finally {
      await third.stop();
    }
  } finally {
    await a.stop();
    await b.stop();
  }
});

test('stop() removes the ephemeral store; a parent killed with SIGKILL takes its server with it', async () => {
  const other = await start();
  assert.ok(fs.existsSync(other.dataDir));
  await other.stop();
  assert.ok(!fs.existsSync(other.dataDir), `${other.dataDir} still there after stop()`);

  // A parent process that starts Stratus, prints the server's pid and data folder, and is then killed.
  // Plain Node on the built entry (dist/api.mjs, built in before()), as an installed package runs.
  const script = `import { start } from ${JSON.stringify(path.join(root, 'dist/api.mjs'))};
const s = await start();
console.log(JSON.stringify({ pid: s.pid, dataDir: s.dataDir }));
setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const started = await new Promise<{ pid: number; dataDir: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the parent printed nothing within 60 s: ${out}`)), 60_000);
    parent.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{"pid"'));
      if (line) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    });
  });
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  assert.ok(alive(started.pid), 'the server runs');
  parent.kill('SIGKILL');
  const deadline = Date.now() + 15_000;
  while (alive(started.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(!alive(started.pid), `the server ${started.pid} still runs 15 s after its parent was killed`);
  assert.ok(!fs.existsSync(started.dataDir), `the ephemeral store ${started.dataDir} is left after the parent was killed`);
});
