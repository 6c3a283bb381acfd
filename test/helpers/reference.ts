/**
 * The published examples the tests compare responses with, copied into the repository
 * (`test/fixtures/examples/<family>`; the folder's README names their source), so every clone
 * runs every comparison: nothing is skipped for a missing reference.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';

/** The fixtures folder of the published examples (this file is `test/helpers/reference.ts`). */
const fixtures = path.resolve(import.meta.dirname, '..', 'fixtures', 'examples');

/** Where the published examples of `family` are: `test/fixtures/examples/<family>`. */
export function examplesPath(family = 'arm'): string {
  return path.join(fixtures, family);
}

/**
 * The folder of the published examples of `family`.
 * @throws AssertionError when the folder is missing (a broken checkout: the examples are part of the repository).
 */
export function examplesDir(_t: TestContext, family = 'arm'): string {
  const dir = examplesPath(family);
  assert.ok(fs.existsSync(dir), `the published examples are not at ${dir}; they are part of the repository (test/fixtures/examples)`);
  return dir;
}

/** The parsed JSON of one published example file of `dir`. */
export function readExample(dir: string, name: string): any {
  return JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
}
