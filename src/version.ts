/**
 * The package's version, read from its `package.json` (one folder up from both `src/` and the
 * bundle's `dist/`), for `stratus --version`.
 */
import fs from 'node:fs';

/** The `version` field of the package's `package.json`, or `unknown` when it cannot be read. */
export function packageVersion(): string {
  try {
    return (JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
