/**
 * The house rules of issue 13 and design.md, checked on the source tree (no server needed):
 * errors come from the catalogue (`src/core/errors/`), the database is typed
 * (`Kysely<Database>`, never `Kysely<any>`), no source file passes 400 lines, no import goes
 * from `mail/` to `mailsync/`, `core/` never imports `services/`, and `docs/errors.md` is the
 * catalogue's current rendering.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { errorDocs } from '../src/core/errors/docs.ts';
import { registry } from '../src/core/errors/index.ts';

const root = path.resolve(import.meta.dirname, '..');

function sources(dir = path.join(root, 'src')): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.name.endsWith('.ts')) out.push(path.relative(root, p));
  }
  return out.sort();
}
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');


test('errors are built only in the catalogue (src/core/errors/)', () => {
  const offenders = sources().filter((f) => !f.startsWith('src/core/errors/') && /new ApiError\(/.test(read(f)));
  assert.deepEqual(offenders, [], 'raise errors through errors.<family>.<name>(…) instead of new ApiError(…)');
});

test('no error code is written outside the catalogue', () => {
  const codes = new Set<string>();
  for (const entries of registry.values()) for (const e of Object.values(entries)) codes.add(e.code);
  assert.ok(codes.size > 50, 'the catalogue declares the families\' codes');
  const offenders: string[] = [];
  for (const f of sources()) {
    if (f.startsWith('src/core/errors/')) continue;
    // Comments may name codes (docstrings say what a function raises); code may not.
    const code = read(f).replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
    for (const m of code.matchAll(/['"`]([A-Za-z_]+)['"`]/g)) if (codes.has(m[1]!)) offenders.push(`${f}: ${m[1]}`);
  }
  assert.deepEqual(offenders, [], 'raise errors.<family>.<name>(…); codes live in src/core/errors/');
});

test('the database is typed: no Kysely<any>', () => {
  const offenders = sources().filter((f) => /Kysely<any>/.test(read(f)));
  assert.deepEqual(offenders, []);
});

test('no source file over 400 lines', () => {
  const offenders = sources().filter((f) => read(f).split('\n').length > 401);
  assert.deepEqual(offenders, []);
});

test('no arrow from core/ to services/, nor from mail/ to mailsync/', () => {
  const imports = (f: string) => [...read(f).matchAll(/(?:from |import\()'([^']+)'/g)].map((m) => path.join(path.dirname(f), m[1]!));
  const coreUp = sources().filter((f) => f.startsWith('src/core/') && imports(f).some((i) => i.startsWith('src/services/')));
  assert.deepEqual(coreUp, [], 'core/ must not import services/');
  const mailUp = sources().filter((f) => f.startsWith('src/services/mail/') && imports(f).some((i) => i.startsWith('src/services/mailsync/')));
  assert.deepEqual(mailUp, [], 'mail/ must not import mailsync/');
});

test('docs/errors.md is generated from the catalogue and current', () => {
  const file = path.join(root, 'docs', 'errors.md');
  assert.equal(fs.existsSync(file) ? read('docs/errors.md') : '', errorDocs(), 'docs/errors.md is stale: run `npx tsx scripts/gen-error-docs.ts`');
});
