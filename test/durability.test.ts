/**
 * Durability (issue: "a write the API reports as done is durable"): the `stratus serve`
 * command runs as a child process, a PATCH answers 200, the process is killed with SIGKILL
 * (no shutdown hook runs), and a new process on the same store still has the write and still
 * accepts the token issued before (its signing key lives in the store). On SQLite by default,
 * on PostgreSQL when STRATUS_TEST_DATABASE_URL is set. Also checks that Ctrl-C (SIGINT)
 * shuts down cleanly with exit code 0.
 *
 * Robust under load (issue 11, item 7): child processes (the server, the CLI) run asynchronously,
 * never blocking this test's event loop, and every phase (a server start, a CLI run) talks over a
 * fresh connection pool (an undici Agent), so no request reuses a socket a server closed while the
 * test was waiting.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { dropSchemas } from './helpers/server.ts';
import { Agent, fetch as undiciFetch } from 'undici';
import { identities } from './helpers/auth.ts';
import { demoTenant } from '../src/seed/demo.ts';

const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const schema = dbUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-durability-'));
const tls = path.resolve('.stratus-test/tls');
const sub = '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25';
const ownerRole = '8e3af657-a8ff-443c-a75c-2fe8c4bcb635';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

const ports = { https: await freePort(), http: await freePort() };

/** The connection pool of the current phase; {@link freshConnections} replaces it. */
let agent = new Agent();
/** Starts a new phase: the old pool's sockets are dropped, the next request opens a new connection. */
async function freshConnections(): Promise<void> {
  const old = agent;
  agent = new Agent();
  await old.destroy().catch(() => undefined);
}
/** `fetch` over the current phase's pool. */
function fetch(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  return undiciFetch(url, { ...init, dispatcher: agent });
}
/** A delegated token from the server's token endpoint, over the current pool. */
async function userToken(base: string, user: { username: string; password: string }, scopes: string[]): Promise<string> {
  const res = await fetch(`${base}/${demoTenant.id}/oauth2/v2.0/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: user.username, password: user.password, scope: scopes.join(' ') }).toString(),
  });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
  return body.access_token as string;
}
const origin = `https://localhost:${ports.https}`;

function serve(): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
    env: {
      ...process.env,
      STRATUS_DATA_DIR: dataDir,
      STRATUS_HTTPS_PORT: String(ports.https),
      STRATUS_HTTP_PORT: String(ports.http),
      STRATUS_LOG_LEVEL: 'warn',
      STRATUS_TLS_CERT: path.join(tls, 'server.pem'),
      STRATUS_TLS_KEY: path.join(tls, 'server-key.pem'),
      ...(dbUrl ? { STRATUS_DATABASE_URL: dbUrl, STRATUS_DATABASE_SCHEMA: schema! } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return child;
}

async function ready(child: ChildProcess): Promise<void> {
  await freshConnections();
  for (let i = 0; i < 900; i++) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    const ok = await fetch(`${origin}/_stratus/health`).then((r) => r.ok).catch(() => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the server did not answer ${origin}/_stratus/health within 90 s`);
}

function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

let current: ChildProcess | undefined;
after(async () => {
  await agent.destroy().catch(() => undefined);
  if (current && current.exitCode === null && current.signalCode === null) {
    current.kill('SIGKILL');
    await exited(current);
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
  await dropSchemas(dbUrl, schema);
});

test('a PATCH answered 200 survives kill -9; a token issued before verifies after', async () => {
  current = serve();
  await ready(current);
  const token = await userToken(origin, identities.admin, ['api://stratus/arm/user_impersonation']);
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const roleId = `/subscriptions/${sub}/providers/Vendor.Authorization/roleDefinitions/${ownerRole}`;
  const list = await fetch(`${origin}/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2020-10-01&$filter=${encodeURIComponent(`roleDefinitionId eq '${roleId}'`)}`, { headers: auth });
  assert.equal(list.status, 200);
  const policy = ((await list.json()) as any).value[0];
  assert.ok(policy?.id, 'the Owner policy of the subscription is listed');
  const patch = await fetch(`${origin}${policy.id}?api-version=2020-10-01`, {
    method: 'PATCH',
    headers: auth,
    body: JSON.stringify({ properties: { rules: [{ id: 'Expiration_Admin_Eligibility', ruleType: 'RoleManagementPolicyExpirationRule', isExpirationRequired: true, maximumDuration: 'P42D', target: { caller: 'Admin', operations: ['All'], level: 'Eligibility' } }] } }),
  });
  assert.equal(patch.status, 200);

  current.kill('SIGKILL');
  const killed = await exited(current);
  assert.equal(killed.signal, 'SIGKILL');

  current = serve();
  await ready(current);
  const read = await fetch(`${origin}${policy.id}?api-version=2020-10-01`, { headers: auth });
  assert.equal(read.status, 200, 'the token issued before the kill still verifies');
  const rule = ((await read.json()) as any).properties.rules.find((r: any) => r.id === 'Expiration_Admin_Eligibility');
  assert.equal(rule.maximumDuration, 'P42D');
});

test('SIGINT shuts down cleanly with exit code 0, and the data stays', async () => {
  if (!current || current.exitCode !== null) {
    current = serve();
    await ready(current);
  }
  // A write answered just before the signal.
  const token = await userToken(origin, identities.admin, ['api://stratus/arm/user_impersonation']);
  const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const group = `${origin}/subscriptions/${sub}/resourcegroups/sigint-${randomBytes(4).toString('hex')}?api-version=2021-04-01`;
  const made = await fetch(group, { method: 'PUT', headers: auth, body: JSON.stringify({ location: 'westeurope', tags: { kept: 'yes' } }) });
  assert.equal(made.status, 201);
  current.kill('SIGINT');
  const { code } = await exited(current);
  assert.equal(code, 0);
  current = serve();
  await ready(current);
  const health = await fetch(`${origin}/_stratus/health`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as any).status, 'ok');
  // The data stays: the group and its tag, read with the token issued before the restart.
  const read = await fetch(group, { headers: auth });
  assert.equal(read.status, 200, 'the group written before SIGINT is there after the restart');
  assert.deepEqual(((await read.json()) as any).tags, { kept: 'yes' });
  current.kill('SIGINT');
  assert.equal((await exited(current)).code, 0);
});

test('`stratus token` prints a token the running server accepts; `stratus reset` restores the demo data', async () => {
  const env = {
    ...process.env,
    STRATUS_DATA_DIR: dataDir,
    STRATUS_HTTPS_PORT: String(ports.https),
    STRATUS_HTTP_PORT: String(ports.http),
    STRATUS_LOG_LEVEL: 'silent',
    ...(dbUrl ? { STRATUS_DATABASE_URL: dbUrl, STRATUS_DATABASE_SCHEMA: schema! } : {}),
  };
  // Asynchronous: the test's event loop keeps running while the CLI works; a fresh pool afterwards.
  const cli = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env, encoding: 'utf8', timeout: 120_000 });
    await freshConnections();
    return stdout.trim();
  };
  current = serve();
  await ready(current);
  const token = await cli('token', '--user', 'admin@stratus.test', '--audience', 'arm');
  assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const roleId = `/subscriptions/${sub}/providers/Vendor.Authorization/roleDefinitions/${ownerRole}`;
  const url = `${origin}/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2020-10-01&$filter=${encodeURIComponent(`roleDefinitionId eq '${roleId}'`)}`;
  const list = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(list.status, 200);
  const policy = ((await list.json()) as any).value[0];
  const before = policy.properties.rules.find((r: any) => r.id === 'Expiration_Admin_Eligibility').maximumDuration;
  assert.equal(before, 'P42D', 'the PATCH of the first test is still there');
  assert.match(await cli('reset'), /reset/);
  const after = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const rule = ((await after.json()) as any).value[0].properties.rules.find((r: any) => r.id === 'Expiration_Admin_Eligibility');
  assert.equal(rule.maximumDuration, 'P90D', 'back to the default rule set (reference §2.5)');
  const appToken = await cli('token', '--app', '5a2f9c1e-8b3d-4f7a-9e6c-1d4b8a2f0c37', '--audience', 'arm');
  const payload = JSON.parse(Buffer.from(appToken.split('.')[1]!, 'base64url').toString());
  assert.equal(payload.appid, '5a2f9c1e-8b3d-4f7a-9e6c-1d4b8a2f0c37');
  assert.equal(payload.aud, 'api://stratus/arm');
});
