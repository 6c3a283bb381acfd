/**
 * The shipped demo world file (`worlds/demo.yaml` next to this module; the build copies the
 * folder next to the bundle): the demo data set's directory and resource-manager part, loaded
 * into a new store when no world file is given (`src/seed/index.ts`).
 */
import { fileURLToPath } from 'node:url';

/** Path of the demo world file. */
export const demoWorldFile = fileURLToPath(new URL('./worlds/demo.yaml', import.meta.url));
