/**
 * Says once, at the start of the suite (the file sorts first), what the machine lacks and which
 * tests that skips or fails: the suite needs, beyond `npm ci`, Debian's `chromium`,
 * `python3-azure`, `python3-msal` and `python3-pytest` (.ci/run installs them), and PostgreSQL for
 * the live-instance tests. Under CI (`CI` set) a missing package fails here, with the same message.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const python = process.env.STRATUS_TEST_PYTHON ?? '/usr/bin/python3';
const imports = (modules: string) => spawnSync(python, ['-c', `import ${modules}`], { encoding: 'utf8' }).status === 0;

/** One requirement: whether it is met, and what is skipped or fails without it. */
const checks: { what: string; ok: boolean; effect: string }[] = [
  { what: 'chromium (/usr/bin/chromium)', ok: fs.existsSync('/usr/bin/chromium'), effect: "test/console.test.ts 'console in a headless browser' is SKIPPED" },
  {
    what: 'python3-azure (azure-identity, azure-mgmt-*)',
    ok: imports('azure.identity, azure.mgmt.resource, azure.mgmt.authorization, azure.mgmt.compute'),
    effect: 'test/compat-arm.test.ts, test/resources-sdk.test.ts, test/role-assignments-python.test.ts and test/compat-identity-python.test.ts FAIL (their Python half)',
  },
  { what: 'python3-msal', ok: imports('msal'), effect: 'test/compat-identity-python.test.ts FAILS' },
  { what: 'python3-pytest', ok: imports('pytest'), effect: 'test/recipes.test.ts pytest step is SKIPPED' },
];

test('environment: Debian packages the suite needs beyond npm ci (apt-get install chromium python3-azure python3-msal python3-pytest)', (t) => {
  const missing = checks.filter((c) => !c.ok);
  for (const c of checks) t.diagnostic(`${c.ok ? 'present' : 'MISSING'}: ${c.what}${c.ok ? '' : ` → ${c.effect}`}`);
  if (!process.env.STRATUS_TEST_DATABASE_URL) t.diagnostic('SQLite run: test/live-instances.test.ts is SKIPPED (a PostgreSQL feature; set STRATUS_TEST_DATABASE_URL)');
  if (missing.length) {
    const message = `missing: ${missing.map((c) => c.what).join(', ')} (bash .ci/run installs them)`;
    process.stderr.write(`\n== Stratus test environment: ${message}\n${missing.map((c) => `   ${c.effect}`).join('\n')}\n\n`);
    if (process.env.CI) assert.fail(`${message}; under CI every one must be there`);
  }
  assert.ok(checks.length >= 4);
});
