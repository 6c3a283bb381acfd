#!/usr/bin/env node
/**
 * Builds the server to one ES module, dist/stratus.mjs (esbuild: src/cli.ts and the
 * JavaScript it imports in one file, so start-up reads one file instead of some 400 modules),
 * the package's entry dist/api.mjs (src/api.ts, the programmatic start) with its type
 * declarations (dist/api.d.ts, by tsc), and copies the data files the code reads at run time
 * next to them. `npm pack` runs it (`prepack`), so the package ships the build. Native and optional
 * packages stay in node_modules (better-sqlite3, pg, node-forge, cli-progress).
 *
 * A file the code finds through `new URL('<relative path>', import.meta.url)` must be in
 * {@link assets} (source folder → folder under dist/); the build fails when the bundle names
 * one that is not there. Type checking is `npm run typecheck`'s job, not this one's.
 *
 *   node scripts/build.mjs              always build
 *   node scripts/build.mjs --if-needed  build only when a source is newer than dist/.build-stamp
 *
 * Plain JavaScript so that it runs without tsx. Exit code 1 on a failed build.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const stamp = path.join(dist, '.build-stamp');
/** Data folders read at run time: source → destination under dist/ (relative to the bundle). */
const assets = [['src/services/compute/data', 'data'], ['src/world/worlds', 'worlds']];
const external = ['better-sqlite3', 'pg', 'node-forge', 'cli-progress'];

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
  for (const f of ['package-lock.json', 'scripts/build.mjs']) if (fs.existsSync(path.join(root, f))) newest = Math.max(newest, fs.statSync(path.join(root, f)).mtimeMs);
  return newest;
}

/** Whether dist/ was built after the last change to the sources. */
export function buildIsFresh() {
  return fs.existsSync(stamp) && fs.existsSync(path.join(dist, 'stratus.mjs')) && fs.statSync(stamp).mtimeMs >= newestSource();
}

/** dist/api.d.ts and what it imports: tsc's declarations of src/api.ts, imports renamed to the .js the package has. */
function declarations() {
  const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
  const args = [tsc, '--ignoreConfig', '--declaration', '--emitDeclarationOnly', '--outDir', dist, '--rootDir', 'src', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--allowImportingTsExtensions', '--strict', '--skipLibCheck', '--types', 'node', 'src/api.ts'];
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`type declarations of src/api.ts: ${r.stdout}${r.stderr}`);
  for (const f of fs.readdirSync(dist).filter((n) => n.endsWith('.d.ts'))) {
    const p = path.join(dist, f);
    fs.writeFileSync(p, fs.readFileSync(p, 'utf8').replace(/(from '\.\/[^']+)\.ts'/g, "$1.js'"));
  }
}

async function build() {
  const esbuild = await import('esbuild');
  fs.rmSync(dist, { recursive: true, force: true });
  const out = path.join(dist, 'stratus.mjs');
  await esbuild.build({
    entryPoints: [path.join(root, 'src/cli.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external,
    // Bundled CommonJS packages call require(); give the ES module one.
    banner: { js: "import { createRequire as __stratusRequire } from 'node:module'; const require = __stratusRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  await esbuild.build({
    entryPoints: [path.join(root, 'src/api.ts')],
    outfile: path.join(dist, 'api.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
  declarations();
  for (const [from, to] of assets) fs.cpSync(path.join(root, from), path.join(dist, to), { recursive: true, filter: (f) => !f.endsWith('.md') });
  // The shipped worlds also as JSON (src/world/demo.ts): a fresh start reads the demo world with
  // JSON.parse instead of the YAML reader (a tenth of a fresh start's CPU).
  const { parse } = await import('yaml');
  const worlds = path.join(dist, 'worlds');
  for (const f of fs.readdirSync(worlds)) {
    if (f.endsWith('.yaml')) fs.writeFileSync(path.join(worlds, f.replace(/\.yaml$/, '.json')), JSON.stringify(parse(fs.readFileSync(path.join(worlds, f), 'utf8'))));
  }
  const code = fs.readFileSync(out, 'utf8') + fs.readFileSync(path.join(dist, 'api.mjs'), 'utf8');
  for (const m of code.matchAll(/new URL\(\s*["'](\.{1,2}\/[^"']+)["']\s*,\s*import\.meta\.url\s*\)/g)) {
    if (!fs.existsSync(path.join(dist, m[1]))) throw new Error(`the bundle reads ${m[1]} relative to itself, which is not in dist/: add its folder to the assets of scripts/build.mjs`);
  }
  fs.writeFileSync(stamp, new Date().toISOString() + '\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--if-needed') && buildIsFresh()) process.exit(0);
  const t0 = Date.now();
  try {
    await build();
  } catch (e) {
    process.stderr.write(`build failed: ${e.message ?? e}\n`);
    process.exit(1);
  }
  process.stderr.write(`build: dist/stratus.mjs ready in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
}
