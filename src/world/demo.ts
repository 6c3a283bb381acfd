/**
 * The shipped demo world file (`worlds/demo.yaml` next to this module; the build copies the
 * folder next to the bundle): the demo data set's directory and resource-manager part, loaded
 * into a new store when no world file is given (`src/seed/index.ts`).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Path of the demo world file. */
export const demoWorldFile = fileURLToPath(new URL('./worlds/demo.yaml', import.meta.url));

/**
 * The demo world file a fresh start loads: the JSON copy the build writes next to the bundle's
 * YAML (`scripts/build.mjs`; the same data, read with `JSON.parse` instead of the YAML reader),
 * else {@link demoWorldFile} (running from source).
 */
export function demoWorldToLoad(): string {
  const json = demoWorldFile.replace(/\.yaml$/, '.json');
  return fs.existsSync(json) ? json : demoWorldFile;
}
