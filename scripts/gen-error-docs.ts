/**
 * Writes `docs/errors.md` from the error catalogue (`src/core/errors/`): one table per family
 * with each error's name, HTTP status, code, message template and when it is raised.
 * Run: `npx tsx scripts/gen-error-docs.ts` (`--check` exits 1 when the file is stale).
 */
import fs from 'node:fs';
import path from 'node:path';
import { errorDocs } from '../src/core/errors/docs.ts';

const file = path.resolve(import.meta.dirname, '..', 'docs', 'errors.md');
const text = errorDocs();
if (process.argv.includes('--check')) {
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (current !== text) {
    process.stderr.write('docs/errors.md is stale: run `npx tsx scripts/gen-error-docs.ts`\n');
    process.exit(1);
  }
} else fs.writeFileSync(file, text);
