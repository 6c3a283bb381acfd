/**
 * Runs a Python compatibility script of `test/python/` with Debian's Python (`/usr/bin/python3`,
 * or `STRATUS_TEST_PYTHON`): checks first that the modules it needs import (`python3-azure`,
 * `python3-msal`; `.ci/run` installs them), then runs the script with the test CA trusted and the
 * given environment, and returns the JSON object the script prints on its last line
 * (operation name → result).
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** The Python the compatibility tests run. */
export const python = process.env.STRATUS_TEST_PYTHON ?? (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/**
 * Runs `test/python/<script>` after checking `modules` import (an assertion naming the missing
 * Debian package otherwise); `env` is added to the process environment with `REQUESTS_CA_BUNDLE`
 * set to the test CA. Fails when the script exits non-zero or its last line is not JSON.
 * @returns the parsed last line of the script's standard output.
 */
export async function runPythonScript(script: string, modules: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  const probe = spawnSync(python, ['-c', `import ${modules.join(', ')}`], { encoding: 'utf8' });
  assert.equal(probe.status, 0, `python3-azure is needed (apt-get install python3-azure python3-msal): ${probe.stderr}`);
  const r = await promisify(execFile)(python, [path.resolve('test/python', script)], {
    encoding: 'utf8',
    timeout: 240_000,
    env: { ...process.env, REQUESTS_CA_BUNDLE: path.resolve('.stratus-test/tls/ca.pem'), ...env },
  });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    assert.fail(`${script} printed no JSON result on its last line: ${last.slice(0, 500)}\nstderr: ${r.stderr.slice(-2000)}`);
  }
}

/** Asserts that every operation of `ops` is in the script's `results`. */
export function assertOperations(results: Record<string, unknown>, ops: string[]): void {
  for (const op of ops) assert.ok(op in results, `${op} missing from ${JSON.stringify(results)}`);
}
