/**
 * The house rules of issue 13 and design.md, checked on the source tree (no server needed):
 * errors come from the catalogue (`src/core/errors/`), the database is typed
 * (`Kysely<Database>`, never `Kysely<any>`), no source file passes 400 lines, no import goes
 * from `mail/` to `mailsync/`, `core/` never imports `services/`, and `docs/errors.md` is the
 * catalogue's current rendering.
 *
 * The lists below are ratchets while the areas move to the catalogue and the typed
 * database: a file may leave a list, never join it; when a list is empty the rule holds
 * everywhere.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { errorDocs } from '../src/core/errors/docs.ts';

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

/** Files that still build errors inline (ratchet: may only shrink). */
const inlineErrorsAllowed = new Set<string>([
]);
/** Files that still use an untyped database (ratchet: may only shrink). */
const untypedAllowed = new Set<string>([]);
/** Files still over 400 lines (ratchet: may only shrink). */
const longAllowed = new Set<string>([
  'src/app.ts',
]);

test('errors are built only in the catalogue (src/core/errors/)', () => {
  const offenders = sources().filter((f) => !f.startsWith('src/core/errors/') && /new ApiError\(/.test(read(f)) && !inlineErrorsAllowed.has(f));
  assert.deepEqual(offenders, [], 'raise errors through errors.<family>.<name>(…) instead of new ApiError(…)');
});

test('the database is typed: no Kysely<any>', () => {
  const offenders = sources().filter((f) => /Kysely<any>/.test(read(f)) && !untypedAllowed.has(f));
  assert.deepEqual(offenders, []);
});

test('no source file over 400 lines', () => {
  const offenders = sources().filter((f) => read(f).split('\n').length > 401 && !longAllowed.has(f));
  assert.deepEqual(offenders, []);
});

test('no arrow from core/ to services/, nor from mail/ to mailsync/', () => {
  const imports = (f: string) => [...read(f).matchAll(/(?:from |import\()'([^']+)'/g)].map((m) => path.join(path.dirname(f), m[1]!));
  const coreUp = sources().filter((f) => f.startsWith('src/core/') && imports(f).some((i) => i.startsWith('src/services/')));
  assert.deepEqual(coreUp, [], 'core/ must not import services/');
  const mailUp = sources().filter((f) => f.startsWith('src/services/mail/') && imports(f).some((i) => i.startsWith('src/services/mailsync/')));
  assert.deepEqual(mailUp, mailToMailsyncAllowed, 'mail/ must not import mailsync/');
});

/** Files of mail/ that still import mailsync/ (ratchet: may only shrink). */
const mailToMailsyncAllowed: string[] = [];

test('docs/errors.md is generated from the catalogue and current', () => {
  const file = path.join(root, 'docs', 'errors.md');
  assert.equal(fs.existsSync(file) ? read('docs/errors.md') : '', errorDocs(), 'docs/errors.md is stale: run `npx tsx scripts/gen-error-docs.ts`');
});
