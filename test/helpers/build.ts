/**
 * `node scripts/build.mjs --if-needed` for the test files that start the built bundle
 * (test/api.test.ts, test/recipes.test.ts), one at a time: a build replaces dist/, so two test
 * files building at once (the suite runs two files in parallel) must not interleave. The lock is a
 * folder (`.stratus-test/build.lock`, made atomically); one older than two minutes is stale.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..', '..');
const lock = path.join(root, '.stratus-test', 'build.lock');

/** Builds dist/ when a source is newer; waits (at most 3 minutes) for a build another file runs. */
export async function ensureBuilt(): Promise<void> {
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`waited 180 s for ${lock} (another test file's build) to go`);
      else await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    await promisify(execFile)(process.execPath, ['scripts/build.mjs', '--if-needed'], { cwd: root, timeout: 120_000 });
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}
