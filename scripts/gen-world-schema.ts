/**
 * Writes `schemas/world.schema.json` from `src/world/schema.ts` (the published JSON Schema of
 * world files, usable by editors). `--check` exits 1 when the file is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WorldFile } from '../src/world/schema.ts';

/** The schema document as published. */
export function worldSchemaText(): string {
  return JSON.stringify({ $schema: 'http://json-schema.org/draft-07/schema#', ...WorldFile }, null, 2) + '\n';
}

const file = path.resolve(import.meta.dirname, '../schemas/world.schema.json');
if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  if (process.argv.includes('--check')) {
    if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== worldSchemaText()) {
      process.stderr.write('schemas/world.schema.json is stale: npx tsx scripts/gen-world-schema.ts\n');
      process.exit(1);
    }
  } else fs.writeFileSync(file, worldSchemaText());
}
