/**
 * The package works where it is installed (issue 29 item 1): `npm pack` (its `prepack` builds
 * dist/), `npm install <tarball>` into an empty folder, then as a user would: `npx stratus
 * --version`, `npx stratus serve` on free ports answering `/_stratus/health` over HTTPS with the
 * CA it names, and `import { start } from 'stratus-cloud'` from the installed package.
 *
 * better-sqlite3 compiles natively on install (about 90 s here: its prebuilt downloads are
 * unreachable). The installed dependencies of one better-sqlite3 version are kept in the per-user
 * cache (`~/.cache/stratus/package-test/`) and copied into the next empty folder first, so a second
 * run installs only the tarball (a few seconds); the first run on a machine pays the compile.
 * The test prints the install time.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { name: string; version: string; dependencies: Record<string, string> };
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-package-'));
const app = path.join(work, 'app');
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8'));
const sqliteVersion = lock.packages['node_modules/better-sqlite3'].version as string;
const depsCache = path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'stratus', 'package-test', `deps-${process.versions.modules}-${sqliteVersion}`);
const npmEnv = { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false', npm_config_loglevel: 'error' };
for (const k of Object.keys(npmEnv)) if (k.startsWith('STRATUS_')) delete (npmEnv as Record<string, string | undefined>)[k];

after(() => fs.rmSync(work, { recursive: true, force: true }));

/** GET over HTTPS trusting only `ca`; resolves with the status and body. */
function httpsGet(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      })
      .on('error', reject);
  });
}

test('npm pack → npm install <tarball> into an empty folder → npx stratus --version, serve answers health, start() from the package', { timeout: 600_000 }, async (t) => {
  // 1. Pack (prepack builds dist/) — from a copy of the checkout, so that its build never replaces
  //    the dist/ other test files are starting servers from.
  const source = path.join(work, 'source');
  fs.mkdirSync(source);
  for (const entry of ['package.json', 'package-lock.json', 'tsconfig.json', 'README.md', 'bin', 'scripts', 'src', 'recipes', 'docs', 'schemas']) {
    if (fs.existsSync(path.join(root, entry))) fs.cpSync(path.join(root, entry), path.join(source, entry), { recursive: true, filter: (f) => !f.includes('__pycache__') });
  }
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(source, 'node_modules'));
  const packDir = path.join(work, 'pack');
  fs.mkdirSync(packDir);
  const packed = await run('npm', ['pack', '--json', '--pack-destination', packDir], { cwd: source, env: npmEnv, timeout: 120_000, maxBuffer: 16 << 20 });
  const info = JSON.parse(packed.stdout)[0] as { filename: string; files: { path: string }[] };
  const files = info.files.map((f) => f.path);
  for (const f of ['bin/stratus.mjs', 'dist/stratus.mjs', 'dist/api.mjs', 'dist/api.d.ts', 'recipes/python/stratus_fixture.py', 'package.json']) assert.ok(files.includes(f), `the tarball lacks ${f}; it has ${files.join(', ')}`);
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'the tarball ships sources or tests');

  // 2. Install into an empty folder (with the cached dependencies of an earlier run, when there).
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'stratus-user', private: true, type: 'module' }));
  const cached = fs.existsSync(path.join(depsCache, 'node_modules', 'better-sqlite3'));
  if (cached) fs.cpSync(path.join(depsCache, 'node_modules'), path.join(app, 'node_modules'), { recursive: true });
  const t0 = Date.now();
  await run('npm', ['install', '--prefer-offline', path.join(packDir, info.filename)], { cwd: app, env: npmEnv, timeout: 480_000, maxBuffer: 16 << 20 });
  const seconds = (Date.now() - t0) / 1000;
  t.diagnostic(`npm install of the tarball: ${seconds.toFixed(1)} s (${cached ? 'dependencies from the cache of an earlier run' : 'fresh: better-sqlite3 compiled'})`);
  const installed = fs.readdirSync(path.join(app, 'node_modules'));
  for (const dev of ['tsx', 'typescript', 'esbuild', 'fastify', '@azure', 'vitest', 'jest']) assert.ok(!installed.includes(dev), `the installed package pulled in ${dev}, a dev package`);
  for (const dep of Object.keys(pkg.dependencies)) assert.ok(installed.includes(dep), `run-time dependency ${dep} not installed`);
  if (!cached) {
    fs.rmSync(depsCache, { recursive: true, force: true });
    fs.mkdirSync(depsCache, { recursive: true });
    fs.cpSync(path.join(app, 'node_modules'), path.join(depsCache, 'node_modules'), { recursive: true, filter: (src) => !src.includes(`${path.sep}${pkg.name}`) && !src.endsWith(`${path.sep}.bin`) });
  }

  // 3. npx stratus --version.
  const version = await run('npx', ['--no-install', 'stratus', '--version'], { cwd: app, env: npmEnv, timeout: 60_000 });
  assert.equal(version.stdout.trim(), pkg.version);

  // 4. npx stratus serve on free ports: the ready line, then health over HTTPS with the CA it names.
  const serve = spawn('npx', ['--no-install', 'stratus', 'serve', '--ephemeral', '--json', '--exit-with-stdin', '--https-port', '0', '--http-port', '0', '--log-level', 'warn'], { cwd: app, env: npmEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  serve.stderr.on('data', (d: Buffer) => (err += d.toString()));
  try {
    const ready = await new Promise<{ httpsUrl: string; httpUrl: string; caFile: string; dataDir: string }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npx stratus serve printed no ready line within 60 s; stdout: ${out}; stderr: ${err}`)), 60_000);
      serve.once('exit', (code) => reject(new Error(`npx stratus serve exited ${code}; stdout: ${out}; stderr: ${err}`)));
      serve.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('{"stratus":"ready"'));
        if (line) {
          clearTimeout(timer);
          resolve(JSON.parse(line));
        }
      });
    });
    const health = await httpsGet(`${ready.httpsUrl}/_stratus/health`, fs.readFileSync(ready.caFile, 'utf8'));
    assert.equal(health.status, 200, health.body);
    assert.equal(JSON.parse(health.body).status, 'ok');
    assert.ok(fs.existsSync(ready.dataDir), 'the ephemeral data folder exists while the server runs');
    const exited = new Promise((r) => serve.once('exit', r));
    serve.stdin.end();
    await exited;
    assert.ok(!fs.existsSync(ready.dataDir), `the ephemeral data folder ${ready.dataDir} is still there after stop`);
  } finally {
    serve.kill('SIGKILL');
  }

  // 5. The programmatic start from the installed package (its exports and types).
  fs.writeFileSync(
    path.join(app, 'use.mjs'),
    `import { start } from '${pkg.name}';
const s = await start();
const r = await fetch(s.httpOrigin + '/_stratus/health');
const token = await s.token({ family: 'mail', scopes: ['Mail.Read'] });
console.log(JSON.stringify({ status: r.status, origin: s.origin, ca: s.caPem.startsWith('-----BEGIN CERTIFICATE-----'), tokenParts: token.split('.').length }));
await s.stop();
`,
  );
  const used = await run(process.execPath, ['use.mjs'], { cwd: app, env: npmEnv, timeout: 60_000 });
  const result = JSON.parse(used.stdout.trim().split('\n').pop()!);
  assert.deepEqual({ ...result, origin: /^https:\/\/localhost:\d+$/.test(result.origin) }, { status: 200, origin: true, ca: true, tokenParts: 3 });
  assert.ok(fs.existsSync(path.join(app, 'node_modules', pkg.name, 'dist', 'api.d.ts')), 'the package ships its type declarations');
});
