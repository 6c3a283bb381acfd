/**
 * The `stratus` command as a user runs it (issue 12 item 3): a server on non-default ports
 * (chosen by the OS), then `stratus token` — with nothing but the data folder — prints a
 * token that server accepts (the issuer comes from what the server recorded), `stratus
 * console` prints a link carrying the server's control key, and each subcommand's help
 * lists only its own flags. Child processes run asynchronously: the test's event loop
 * never blocks.
 */
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { dropSchemas } from './helpers/server.ts';
import { demoSubscription } from '../src/seed/demo.ts';
import { withDeadline } from './helpers/wait.ts';

const run = promisify(execFile);
const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const schema = dbUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-cli-'));
const tls = path.resolve('.stratus-test/tls');
const env = {
  ...process.env,
  STRATUS_DATA_DIR: dataDir,
  STRATUS_LOG_LEVEL: 'warn',
  STRATUS_TLS_CERT: path.join(tls, 'server.pem'),
  STRATUS_TLS_KEY: path.join(tls, 'server-key.pem'),
  ...(dbUrl ? { STRATUS_DATABASE_URL: dbUrl, STRATUS_DATABASE_SCHEMA: schema! } : {}),
};
let child: ChildProcess;
let origin = '';

async function cli(...args: string[]): Promise<string> {
  // No server ports in the CLI's environment: it must find the server through the data folder.
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env, timeout: 120_000 });
  return stdout.trim();
}

before(async () => {
  child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], { env: { ...env, STRATUS_HTTPS_PORT: '0', STRATUS_HTTP_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.resume();
  let out = '';
  const listening = new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /public URL:\s+(\S+)/.exec(out);
      if (m && /control key:/.test(out)) {
        origin = m[1]!;
        resolve();
      }
    });
  });
  await withDeadline(listening, 'stratus serve to print its banner (public URL and control key)', 120_000);
});

after(async () => {
  child?.kill('SIGINT');
  await new Promise((r) => child?.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
  await dropSchemas(dbUrl, schema);
});

test('`stratus token` signs for the running server on its OS-chosen port; the token works', async () => {
  assert.doesNotMatch(origin, /:8443$/);
  const token = await cli('token', '--audience', 'arm');
  const payload = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
  assert.equal(payload.iss, `${origin}/${payload.tid}/v2.0`);
  const r = await fetch(`${origin}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=location eq 'westus'`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200, await r.text());
});

test('`stratus console` prints the console link with the control key the server uses', async () => {
  const link = new URL(await cli('console'));
  assert.equal(link.origin, origin);
  assert.equal(link.pathname, '/_stratus/console');
  const key = link.searchParams.get('key')!;
  assert.equal(key, fs.readFileSync(path.join(dataDir, 'control.key'), 'utf8').trim());
  assert.equal((await fetch(`${origin}/_stratus/clock`, { headers: { authorization: `Bearer ${key}` } })).status, 200);
  if (process.platform !== 'win32') assert.equal(fs.statSync(path.join(dataDir, 'control.key')).mode & 0o777, 0o600);
});

/** Runs the CLI with `extra` environment (no server's data folder); resolves with its exit code and output. */
async function cliFails(extra: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const e: Record<string, string | undefined> = { ...process.env, STRATUS_LOG_LEVEL: 'warn', ...extra };
  try {
    const r = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { env: e, timeout: 120_000 });
    return { code: 0, ...r };
  } catch (err) {
    const x = err as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

test('`stratus --version` prints the package version', async () => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string };
  assert.equal(await cli('--version'), pkg.version);
});

test('`stratus token` and `stratus console` in a folder without a data folder refuse, naming it, and create nothing', async () => {
  const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-cli-empty-'));
  try {
    const missing = path.join(empty, '.stratus');
    for (const cmd of ['token', 'console']) {
      const r = await cliFails({ STRATUS_DATA_DIR: missing }, cmd);
      assert.equal(r.code, 2, `${cmd}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, new RegExp(`no Stratus data folder at ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} .*stratus serve --data-dir`));
      assert.ok(!fs.existsSync(missing), `${cmd} created ${missing}`);
    }
  } finally {
    fs.rmSync(empty, { recursive: true, force: true });
  }
});

test('`stratus requests` with no server says which data folder and origin it looked for and how to start one', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-cli-gone-'));
  try {
    // No control key at all: it names the folder.
    const none = await cliFails({ STRATUS_DATA_DIR: dir }, 'requests');
    assert.equal(none.code, 2, none.stderr);
    assert.match(none.stderr, new RegExp(`no control key: .*${path.basename(dir)}/control\\.key.*stratus serve --data-dir`));
    // A folder a server used once, now stopped (a closed port recorded).
    fs.writeFileSync(path.join(dir, 'control.key'), 'k\n');
    const closed = await new Promise<number>((resolve) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const port = (srv.address() as net.AddressInfo).port;
        srv.close(() => resolve(port));
      });
    });
    fs.writeFileSync(path.join(dir, 'server.json'), JSON.stringify({ origin: `https://localhost:${closed}`, httpUrl: `http://127.0.0.1:${closed}`, pid: 1, startedAt: '2026-01-01T00:00:00Z' }));
    const gone = await cliFails({ STRATUS_DATA_DIR: dir }, 'requests');
    assert.equal(gone.code, 1, gone.stderr);
    assert.match(gone.stderr, new RegExp(`no Stratus server answered at http://127\\.0\\.0\\.1:${closed} \\(ECONNREFUSED\\)`));
    assert.match(gone.stderr, new RegExp(`data folder ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, origin from .*server\\.json: start one with \`stratus serve --data-dir`));
    assert.doesNotMatch(gone.stderr, /^stratus: fetch failed$/m);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("each subcommand's --help lists only its own flags", async () => {
  const token = await cli('token', '--help');
  assert.match(token, /--audience/);
  assert.match(token, /--data-dir/);
  for (const f of ['--http-port', '--https-port', '--host', '--tls-cert', '--log-level']) assert.doesNotMatch(token, new RegExp(f));
  const reset = await cli('reset', '--help');
  assert.match(reset, /--database-url/);
  for (const f of ['--http-port', '--audience', '--public-url']) assert.doesNotMatch(reset, new RegExp(f));
  const serve = await cli('serve', '--help');
  for (const f of ['--http-port', '--https-port', '--tls-cert']) assert.match(serve, new RegExp(f));
  assert.doesNotMatch(serve, /--audience/);
});

test('`stratus requests` prints the recent requests; --follow prints new ones as they arrive', async () => {
  const marker = `cli-marker-${randomBytes(4).toString('hex')}`;
  assert.equal((await fetch(`${origin}/v1.0/me/messages?$search=${marker}`)).status, 401);
  const printed = await cli('requests', '--family', 'mail', '--limit', '20');
  assert.match(printed, new RegExp(`GET +401 .*${marker}.*  InvalidAuthenticationToken: \\S`));
  const follow = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'requests', '--follow', '--limit', '0', '--q', `${marker}-live`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    const seen = new Promise<void>((resolve, reject) => {
      follow.once('exit', (code) => reject(new Error(`requests --follow exited ${code}: ${out}`)));
      follow.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes(`${marker}-live`)) resolve();
      });
    });
    // Keep calling until the follower (which connects asynchronously) has printed one.
    let done = false;
    seen.then(() => (done = true), () => (done = true));
    for (let i = 0; i < 600 && !done; i++) {
      await fetch(`${origin}/v1.0/me/messages?$search=${marker}-live`);
      await Promise.race([seen.catch(() => undefined), new Promise((r) => setTimeout(r, 100))]);
    }
    await withDeadline(seen, `requests --follow to print the ${marker}-live request`, 10_000);
    // The error answer's code and message are on its line.
    assert.match(out, new RegExp(`mail +GET +401 .*${marker}-live.*  InvalidAuthenticationToken: \\S`));
  } finally {
    follow.kill('SIGINT');
  }
});

test('`stratus seed transactions` while the server runs: its next list counts the new transactions (kept pages follow the bulk seeder)', async () => {
  const token = await cli('token', '--audience', 'arm');
  const list = async () => {
    const r = await fetch(`${origin}/providers/Vendor.Billing/billingAccounts/70000001/invoices/G000000001/transactions?api-version=2024-04-01&count=true&top=5`, { headers: { authorization: `Bearer ${token}` } });
    const text = await r.text();
    assert.equal(r.status, 200, text);
    return JSON.parse(text) as { totalCount: number; value: unknown[] };
  };
  const first = await list();
  assert.deepEqual(await list(), first);
  await cli('seed', 'transactions', '--billing-account', '70000001', '--invoice', 'G000000001', '--count', '7');
  const after = await list();
  assert.equal(after.totalCount, first.totalCount + 7);
});
