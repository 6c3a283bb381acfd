/**
 * The published examples of the reference (`shared/reference/examples/<family>`), which live
 * beside the repository (as in CI: a fresh clone with `shared/` next to it), not in it.
 *
 * Tests that compare responses with them call {@link examplesDir} first: when the folder is
 * missing, the test FAILS under CI (`process.env.CI` set: the comparison must run there) and is
 * otherwise skipped with a message saying why (a developer's checkout without `shared/`).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';

/** The repository's root (this file is `test/helpers/reference.ts`). */
const repoRoot = path.resolve(import.meta.dirname, '..', '..');

/** Where the published examples of `family` are expected: `<repo>/../shared/reference/examples/<family>`. */
export function examplesPath(family = 'arm'): string {
  return path.resolve(repoRoot, '..', 'shared', 'reference', 'examples', family);
}

/**
 * The folder of the published examples of `family`, or undefined after marking `t` skipped
 * when it is missing outside CI (the caller then returns).
 * @throws AssertionError when the folder is missing and `process.env.CI` is set.
 */
export function examplesDir(t: TestContext, family = 'arm'): string | undefined {
  const dir = examplesPath(family);
  if (fs.existsSync(dir)) return dir;
  const why = `the published examples are not at ${dir} (they live beside the repository, in shared/reference/examples/${family})`;
  if (process.env.CI) assert.fail(`${why}; under CI they must be there, so this comparison cannot be skipped`);
  t.skip(`${why}; skipped outside CI`);
  return undefined;
}

/** The parsed JSON of one published example file of `dir`. */
export function readExample(dir: string, name: string): any {
  return JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
}
