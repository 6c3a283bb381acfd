#!/usr/bin/env node
// Entry point of the `stratus` command. An installed package (no src/ next to bin/) runs the
// bundle it ships, dist/stratus.mjs, with plain Node: no tsx, no dev packages. A checkout runs
// the bundle when it is there and not older than the sources (`npm run build`), otherwise
// src/cli.ts through tsx's loader (a checkout without a build, or sources edited since).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/stratus.mjs', import.meta.url));
const checkout = fs.existsSync(fileURLToPath(new URL('../src/cli.ts', import.meta.url)));
let fresh = false;
if (fs.existsSync(compiled)) {
  if (!checkout) fresh = true;
  else {
    const { buildIsFresh } = await import('../scripts/build.mjs');
    fresh = buildIsFresh();
  }
}
if (fresh) {
  await import(compiled);
} else if (!checkout) {
  process.stderr.write(`stratus: ${compiled} is missing: this package was packed without its build (run \`npm run build\` before \`npm pack\`)\n`);
  process.exit(1);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
