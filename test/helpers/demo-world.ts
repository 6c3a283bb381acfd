/**
 * The demo data set as the shipped demo world file declares it (`src/world/worlds/demo.yaml`):
 * tests compute expected answers from the same document the server loads.
 */
import fs from 'node:fs';
import { parse } from 'yaml';
import { demoWorldFile } from '../../src/world/demo.ts';
import type { WorldFileData } from '../../src/world/schema.ts';
import type { ShareSynchronization } from '../../src/services/datashare/store.ts';
import type { Transaction } from '../../src/services/billing/model.ts';
import { invoiceTransactions } from '../../src/services/billing/seed.ts';

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

/**
 * The demo billing accounts' transactions by invoice, in listing order, made by the billing
 * generator from the demo world's invoices (`generate`), as the server loads them.
 */
export function demoBilling(): { name: string; transactions: Record<string, Transaction[]> }[] {
  const out: { name: string; transactions: Record<string, Transaction[]> }[] = [];
  for (const t of demoWorld().tenants ?? [])
    for (const a of t.billingAccounts ?? []) {
      const sections = (a.billingProfiles ?? []).flatMap((p) => (p.invoiceSections ?? []).map((s) => ({ profileName: p.name, name: s.name, displayName: s.displayName })));
      const transactions: Record<string, Transaction[]> = {};
      for (const inv of a.invoices ?? []) {
        const p = a.billingProfiles!.find((x) => x.name === inv.billingProfile)!;
        const iso = (s: string) => new Date(s).toISOString().replace(/\.000Z$/, 'Z');
        const invoice = { name: inv.name, profileName: p.name, invoiceDate: iso(inv.invoiceDate), dueDate: iso(inv.dueDate), invoicePeriodStartDate: iso(inv.invoicePeriodStartDate), invoicePeriodEndDate: iso(inv.invoicePeriodEndDate), status: inv.status, currency: inv.currency };
        transactions[inv.name] = inv.generate ? invoiceTransactions(a.name, invoice, { name: p.name, displayName: p.displayName, currency: p.currency }, sections, { ...inv.generate, pending: inv.generate.pending ?? 0 }) : [];
      }
      out.push({ name: a.name, transactions });
    }
  return out;
}

/** One demo dataflow: the admin dataflow's fields plus its tenant and last modification time. */
export interface DemoDataflow {
  tenantId: string;
  objectId: string;
  name: string;
  description: string;
  modelUrl: string;
  configuredBy: string;
  workspaceId: string;
  /** ISO 8601 UTC. */
  modifiedDateTime: string;
}

/** The demo dataflows of both tenants, as the demo world lists them. */
export function demoDataflows(): DemoDataflow[] {
  return (demoWorld().tenants ?? []).flatMap((t) =>
    (t.dataflows ?? []).map((d) => ({ tenantId: t.id!, objectId: d.objectId!, name: d.name, description: d.description ?? '', modelUrl: d.modelUrl!, configuredBy: d.configuredBy, workspaceId: d.workspaceId, modifiedDateTime: new Date(d.modifiedDateTime!).toISOString() })),
  );
}
