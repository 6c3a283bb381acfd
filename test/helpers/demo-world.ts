/**
 * The demo data set as the shipped demo world file declares it (`src/world/worlds/demo.yaml`):
 * tests compute expected answers from the same document the server loads.
 */
import fs from 'node:fs';
import { parse } from 'yaml';
import { demoWorldFile } from '../../src/world/demo.ts';
import type { WorldFileData } from '../../src/world/schema.ts';
import type { ShareSynchronization } from '../../src/services/datashare/store.ts';

let doc: WorldFileData | undefined;
/** The parsed demo world file. */
export function demoWorld(): WorldFileData {
  return (doc ??= parse(fs.readFileSync(demoWorldFile, 'utf8')) as WorldFileData);
}

/** The demo runs of the share `sales` (account `stratus-share` in `stratus-rg`), in start order. */
export function demoSynchronizations(): ShareSynchronization[] {
  for (const t of demoWorld().tenants ?? [])
    for (const s of t.subscriptions ?? [])
      for (const g of s.resourceGroups ?? [])
        for (const a of g.dataShareAccounts ?? []) for (const sh of a.shares ?? []) if (a.name === 'stratus-share' && sh.name === 'sales') return (sh.synchronizations ?? []) as ShareSynchronization[];
  throw new Error('the demo world has no share stratus-share/sales');
}
