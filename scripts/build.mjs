#!/usr/bin/env node
/**
 * Compiles src/ to dist/src/ (tsc with tsconfig.build.json: `.ts` import suffixes rewritten
 * to `.js`) and copies the data files the code reads at run time (everything under src/ that
 * is not TypeScript or Markdown, e.g. the SKU catalog). Writes dist/.build-stamp last.
 *
 *   node scripts/build.mjs              always build
 *   node scripts/build.mjs --if-needed  build only when a source file is newer than the stamp
 *
 * Plain JavaScript so that it runs without tsx. Exit code 1 when tsc reports an error.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.build-stamp');

/** Newest modification time (ms) of src/ and the files that shape the build. */
export function newestSource() {
  let newest = 0;
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, fs.statSync(p).mtimeMs);
    }
  };
  walk(path.join(root, 'src'));
  for (const f of ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json']) if (fs.existsSync(path.join(root, f))) newest = Math.max(newest, fs.statSync(path.join(root, f)).mtimeMs);
  return newest;
}

/** Whether dist/ was built after the last change to the sources. */
export function buildIsFresh() {
  return fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs >= newestSource();
}

function build() {
  fs.rmSync(path.join(dist, 'src'), { recursive: true, force: true });
  fs.rmSync(stamp, { force: true });
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
  if (r.status !== 0) {
    process.stderr.write('build: tsc failed\n');
    process.exit(1);
  }
  const copy = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) copy(p);
      else if (!/\.(ts|md)$/.test(e.name)) {
        const to = path.join(dist, path.relative(root, p));
        fs.mkdirSync(path.dirname(to), { recursive: true });
        fs.copyFileSync(p, to);
      }
    }
  };
  copy(path.join(root, 'src'));
  fs.writeFileSync(stamp, new Date().toISOString() + '\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--if-needed') && buildIsFresh()) process.exit(0);
  const t0 = Date.now();
  build();
  process.stderr.write(`build: dist/ ready in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}
