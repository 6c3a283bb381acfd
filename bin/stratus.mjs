#!/usr/bin/env node
// Entry point of the `stratus` command: runs the compiled CLI (dist/stratus.mjs, made by
// `npm run build`) when it is there and not older than the sources; otherwise runs
// src/cli.ts through tsx's loader (a checkout without a build, or sources edited since).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/stratus.mjs', import.meta.url));
let fresh = false;
if (fs.existsSync(compiled)) {
  const { buildIsFresh } = await import('../scripts/build.mjs');
  fresh = buildIsFresh();
}
if (fresh) {
  await import(compiled);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
