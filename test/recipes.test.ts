/**
 * The test-runner recipes (issue 29 item 4), run as a user runs them: the CI workflow of
 * docs/testing.md is read, and each of its `run:` steps after `npm ci` (except the `apt-get` one,
 * which .ci/run does for this machine) runs with `sh -c` in a project folder laid out as the
 * workflow assumes — the recipes as `node-test/`, `vitest/`, `jest/`, `python/`, and a
 * `node_modules` where `stratus-cloud` is this checkout (built) and the runners are the
 * checkout's (links, as `npm ci` would install them). Each recipe's two tests pass only when a
 * resource group made by the first is gone in the second (the per-test reset works).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { exec, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureBuilt } from './helpers/build.ts';

const run = promisify(execFile);
const sh = promisify(exec);
const root = path.resolve(import.meta.dirname, '..');
const project = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-recipes-'));
const python = process.env.STRATUS_TEST_PYTHON ?? '/usr/bin/python3';

/** The `run:` steps of the workflow in docs/testing.md, in order. */
function workflowSteps(): string[] {
  const doc = fs.readFileSync(path.join(root, 'docs/testing.md'), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(doc);
  assert.ok(block, 'docs/testing.md has no ```yaml workflow block');
  return [...block[1]!.matchAll(/^\s*- run: (.+)$/gm)].map((m) => m[1]!.trim());
}

const steps = workflowSteps();

before(async () => {
  await ensureBuilt();
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'my-service', private: true, devDependencies: { 'stratus-cloud': '*', vitest: '*', jest: '*' } }));
  for (const [from, to] of [['node-test', 'node-test'], ['vitest', 'vitest'], ['jest', 'jest'], ['python', 'python']]) fs.cpSync(path.join(root, 'recipes', from!), path.join(project, to!), { recursive: true });
  // node_modules: every package of the checkout linked, stratus-cloud = this checkout, .bin with `stratus`.
  const nm = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(nm, '.bin'), { recursive: true });
  for (const name of fs.readdirSync(path.join(root, 'node_modules'))) {
    if (name === '.bin' || name.startsWith('.')) continue;
    fs.symlinkSync(path.join(root, 'node_modules', name), path.join(nm, name));
  }
  for (const name of fs.readdirSync(path.join(root, 'node_modules/.bin'))) fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules/.bin', name)), path.join(nm, '.bin', name));
  fs.symlinkSync(root, path.join(nm, 'stratus-cloud'));
  fs.symlinkSync(path.join(root, 'bin/stratus.mjs'), path.join(nm, '.bin', 'stratus'));
});

after(() => fs.rmSync(project, { recursive: true, force: true }));

/** Runs one workflow step in the project; resolves with its output. */
async function step(command: string): Promise<string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('STRATUS_') && k !== 'NODE_EXTRA_CA_CERTS' && !k.startsWith('NODE_TEST')) env[k] = v;
  env.PATH = `${path.join(project, 'node_modules/.bin')}:${env.PATH}`;
  env.npm_config_update_notifier = 'false';
  try {
    const { stdout, stderr } = await sh(command, { cwd: project, env, timeout: 180_000, maxBuffer: 16 << 20, shell: '/bin/sh' });
    return stdout + stderr;
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    assert.fail(`workflow step \`${command}\` failed: ${x.message}\n${x.stdout ?? ''}\n${x.stderr ?? ''}`);
  }
}

test('the workflow of docs/testing.md has the four runner steps after npm ci', () => {
  assert.equal(steps[0], 'npm ci');
  for (const runner of ['node --test node-test/', 'npx vitest run', 'npx jest', 'python3 -m pytest']) assert.ok(steps.some((s) => s.includes(runner)), `no step runs ${runner}: ${steps.join(' | ')}`);
});

const runnerSteps = steps.filter((s) => s !== 'npm ci' && !s.includes('apt-get'));
for (const command of runnerSteps) {
  const isPython = command.startsWith('python3 ');
  test(`recipe step: ${command}`, { timeout: 240_000 }, async (t) => {
    if (isPython) {
      const probe = await run(python, ['-m', 'pytest', '--version']).catch(() => undefined);
      if (!probe) {
        const why = `${python} has no pytest (Debian package python3-pytest; .ci/run installs it)`;
        if (process.env.CI) assert.fail(`${why}: under CI it must be there`);
        return t.skip(why);
      }
    }
    // eslint-disable-next-line no-control-regex
    const out = (await step(isPython && python !== 'python3' ? command.replace(/^python3 /, `${python} `) : command)).replace(/\x1b\[[0-9;]*m/g, '');
    if (command.includes('node --test')) assert.match(out, /# pass 2\n[\s\S]*# fail 0/);
    else if (command.includes('vitest')) assert.match(out, /Tests\s+2 passed \(2\)/);
    else if (command.includes('jest')) assert.match(out, /Tests:\s+2 passed, 2 total/);
    else assert.match(out, /2 passed/);
    if (!isPython && !command.includes('vitest')) {
      assert.match(out, /creates a resource group/);
      assert.match(out, /starts from a clean store/);
    }
  });
}
