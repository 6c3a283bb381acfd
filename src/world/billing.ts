/**
 * The billing part of a world file: a tenant's `billingAccounts` (`name`, `displayName`,
 * `agreementType`), each with its `roleAssignments` (a principal by UPN or display name and a
 * billing role), `billingProfiles` (`name`, `displayName`, `currency`) with their
 * `invoiceSections`, and `invoices` (the invoice's own fields, `billingProfile` naming a profile
 * of the account) listing their `transactions` (the transaction resource: `name`, `properties`,
 * `tags`, `systemData`) and optionally `generate`: `{billed, pending, seed, customer}`
 * deterministic transactions of the area's generator (the demo world uses it). Written with the
 * area's `BillingStore.seedAccount`.
 */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { stableUuid } from '../core/ids.ts';
import type { Database } from '../store/database.ts';
import { fromJson } from '../store/db.ts';
import { BillingStore } from '../services/billing/store.ts';
import { invoiceTransactions, type DemoBillingAccount } from '../services/billing/seed.ts';
import type { BillingRole, Invoice, Transaction } from '../services/billing/model.ts';
import type { WorldFileData } from './schema.ts';
import { byKey, type DataContext } from './data.ts';
import { jsonObject } from './resource.ts';

const strict = { additionalProperties: false } as const;
const time = Type.String({ format: 'date-time' });
const name = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^/?#]+$' });
const roles: BillingRole[] = ['Billing account owner', 'Billing account contributor', 'Billing account reader'];

/** A billing account with everything under it. */
export const WorldBillingAccount = Type.Object(
  {
    name,
    displayName: Type.String({ minLength: 1, maxLength: 256 }),
    agreementType: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Default CustomerAgreement.' })),
    roleAssignments: Type.Optional(Type.Array(Type.Object({ principal: Type.String({ minLength: 1, maxLength: 256 }), role: Type.Union(roles.map((r) => Type.Literal(r))) }, strict), { maxItems: 10_000 })),
    billingProfiles: Type.Optional(
      Type.Array(
        Type.Object({ name, displayName: Type.String({ minLength: 1, maxLength: 256 }), currency: Type.String({ pattern: '^[A-Z]{3}$' }), invoiceSections: Type.Optional(Type.Array(Type.Object({ name, displayName: Type.String({ minLength: 1, maxLength: 256 }) }, strict), { maxItems: 1000 })) }, strict),
        { maxItems: 1000 },
      ),
    ),
    invoices: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ pattern: '^(H[0-9]-[A-Z0-9]+)$|^(?:([GHT]|HT){1}[A-Z0-9]{9})$|^(?:[D]{1}[A-Z0-9]{9})$|^(?:E{1}[B-Z0-9]{1}[A-Z0-9]{8})$|^(?:EA[A-Z0-9]{8})$', description: "An invoice name as the API's path takes it (e.g. G000000001)." }),
            billingProfile: Type.String({ minLength: 1, maxLength: 128, description: 'The name of a billing profile of the account.' }),
            invoiceDate: time,
            dueDate: time,
            invoicePeriodStartDate: time,
            invoicePeriodEndDate: time,
            status: Type.Union([Type.Literal('Due'), Type.Literal('Paid'), Type.Literal('OverDue'), Type.Literal('Void')]),
            currency: Type.String({ pattern: '^[A-Z]{3}$' }),
            transactions: Type.Optional(Type.Array(Type.Object({ name: Type.Optional(name), properties: jsonObject, tags: Type.Optional(Type.Record(Type.String(), Type.String())), systemData: Type.Optional(jsonObject) }, strict), { maxItems: 1_000_000 })),
            generate: Type.Optional(Type.Object({ billed: Type.Integer({ minimum: 0, maximum: 1_000_000 }), pending: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })), seed: Type.Integer(), customer: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })) }, { ...strict, description: "Deterministic generated transactions (the billing area's generator)." })),
          },
          strict,
        ),
        { maxItems: 10_000 },
      ),
    ),
  },
  { ...strict, description: 'A billing account with its role assignments, billing profiles, invoice sections, invoices and transactions.' },
);

/** Tenant-level properties of the billing kinds. */
export const billingTenantProperties = { billingAccounts: Type.Optional(Type.Array(WorldBillingAccount, { maxItems: 1000 })) };

/** Checks the tenant entry's billing accounts and queues their writes. */
export function resolveBilling(c: DataContext): void {
  (c.data.billingAccounts ?? []).forEach((a, i) => {
    const rel = `/billingAccounts/${i}`;
    if (!c.unique('billing account', a.name, rel)) return;
    const d: DemoBillingAccount = { account: { tenantId: c.tenant.id, name: a.name, displayName: a.displayName, agreementType: a.agreementType ?? 'CustomerAgreement' }, profiles: [], sections: [], invoices: [], transactions: {}, roles: [] };
    const seenPrincipals = new Set<string>();
    (a.roleAssignments ?? []).forEach((r, j) => {
      const p = c.principal(r.principal);
      if (!p) return void c.problems.push(`${c.at(`${rel}/roleAssignments/${j}/principal`)}: no user or application '${r.principal}' in tenant ${c.tenant.domain}`);
      if (seenPrincipals.has(p.id)) return void c.problems.push(`${c.at(`${rel}/roleAssignments/${j}`)}: '${r.principal}' already has a role on billing account ${a.name}`);
      seenPrincipals.add(p.id);
      d.roles.push({ principalId: p.id, role: r.role });
    });
    (a.billingProfiles ?? []).forEach((p, j) => {
      if (d.profiles.some((x) => x.name.toLowerCase() === p.name.toLowerCase())) return void c.problems.push(`${c.at(`${rel}/billingProfiles/${j}/name`)}: duplicate billing profile ${p.name}`);
      d.profiles.push({ name: p.name, displayName: p.displayName, currency: p.currency });
      (p.invoiceSections ?? []).forEach((s, k) => {
        if (d.sections.some((x) => x.name.toLowerCase() === s.name.toLowerCase())) return void c.problems.push(`${c.at(`${rel}/billingProfiles/${j}/invoiceSections/${k}/name`)}: duplicate invoice section ${s.name}`);
        d.sections.push({ profileName: p.name, name: s.name, displayName: s.displayName });
      });
    });
    const txNames = new Set<string>();
    (a.invoices ?? []).forEach((inv, j) => {
      const at = (p: string) => c.at(`${rel}/invoices/${j}${p}`);
      if (d.invoices.some((x) => x.name.toLowerCase() === inv.name.toLowerCase())) return void c.problems.push(`${at('/name')}: duplicate invoice ${inv.name}`);
      const profile = d.profiles.find((p) => p.name.toLowerCase() === inv.billingProfile.toLowerCase());
      if (!profile) return void c.problems.push(`${at('/billingProfile')}: no billing profile '${inv.billingProfile}' in billing account ${a.name}`);
      const iso = (s: string) => new Date(s).toISOString().replace(/\.000Z$/, 'Z');
      const invoice: Invoice = { name: inv.name, profileName: profile.name, invoiceDate: iso(inv.invoiceDate), dueDate: iso(inv.dueDate), invoicePeriodStartDate: iso(inv.invoicePeriodStartDate), invoicePeriodEndDate: iso(inv.invoicePeriodEndDate), status: inv.status, currency: inv.currency };
      d.invoices.push(invoice);
      const list: Transaction[] = (inv.transactions ?? []).map((t, k) => {
        const tname = (t.name ?? stableUuid('billing-transaction', a.name, inv.name, String(k))).toLowerCase();
        return {
          id: `/providers/Vendor.Billing/BillingAccounts/${a.name}/transactions/${tname}`,
          name: tname,
          type: 'Vendor.Billing/billingAccounts/transactions',
          properties: t.properties as Transaction['properties'],
          systemData: (t.systemData ?? { createdAt: c.now, createdBy: 'Vendor.Billing', createdByType: 'Application', lastModifiedAt: c.now, lastModifiedBy: 'Vendor.Billing', lastModifiedByType: 'Application' }) as unknown as Transaction['systemData'],
          ...(t.tags ? { tags: t.tags } : {}),
        };
      });
      if (inv.generate) list.push(...invoiceTransactions(a.name, invoice, profile, d.sections, { ...inv.generate, pending: inv.generate.pending ?? 0, first: list.length }));
      list.forEach((t, k) => {
        if (txNames.has(t.name)) c.problems.push(`${at(`/transactions/${k}`)}: duplicate transaction ${t.name} in billing account ${a.name}`);
        txNames.add(t.name);
      });
      d.transactions[inv.name] = list;
    });
    c.writes.push(async (_ctx, db) => new BillingStore(db).seedAccount(d));
  });
}

/** Adds the billing accounts of the store to the exported tenants (transactions in their listing order). */
export async function exportBilling(db: Kysely<Database>, out: WorldFileData, names: Map<string, string>): Promise<void> {
  const [accounts, ras, profiles, sections, invoices, txs] = await Promise.all([
    db.selectFrom('billing_accounts').selectAll().orderBy('name').execute(),
    db.selectFrom('billing_role_assignments').selectAll().orderBy('account_name').orderBy('principal_id').execute(),
    db.selectFrom('billing_profiles').selectAll().orderBy('account_name').orderBy('name').execute(),
    db.selectFrom('billing_invoice_sections').selectAll().orderBy('account_name').orderBy('name').execute(),
    db.selectFrom('billing_invoices').selectAll().orderBy('account_name').orderBy('name').execute(),
    db.selectFrom('billing_transactions').select(['account_name', 'invoice_name', 'seq', 'body']).orderBy('account_name').orderBy('invoice_name').orderBy('seq').execute(),
  ]);
  const txOf = new Map<string, Record<string, unknown>[]>();
  for (const t of txs) {
    const { id: _i, type: _t, ...rest } = fromJson<Transaction>(t.body)!;
    const k = `${t.account_name}\u0000${t.invoice_name}`;
    const list = txOf.get(k);
    if (list) list.push(rest);
    else txOf.set(k, [rest]);
  }
  for (const t of out.tenants ?? []) {
    const mine = accounts.filter((a) => a.tenant_id === t.id);
    if (!mine.length) continue;
    t.billingAccounts = mine.map((a) => {
      const r = ras.filter((x) => x.tenant_id === t.id && x.account_name === a.name).map((x) => ({ principal: names.get(x.principal_id.toLowerCase()) ?? x.principal_id, role: x.role as BillingRole })).sort(byKey((x) => x.principal));
      const inv = invoices.filter((x) => x.tenant_id === t.id && x.account_name === a.name).map((x) => {
        const { profileName, name: n, ...fields } = fromJson<Invoice>(x.body)!;
        const list = txOf.get(`${a.name}\u0000${x.name}`);
        return { name: n, billingProfile: profileName, ...fields, ...(list?.length ? { transactions: list as never } : {}) };
      });
      return {
        name: a.name,
        displayName: a.display_name,
        agreementType: a.agreement_type,
        ...(r.length ? { roleAssignments: r } : {}),
        billingProfiles: profiles
          .filter((p) => p.tenant_id === t.id && p.account_name === a.name)
          .map((p) => {
            const s = sections.filter((x) => x.tenant_id === t.id && x.account_name === a.name && x.profile_name === p.name).map((x) => ({ name: x.name, displayName: x.display_name }));
            return { name: p.name, displayName: p.display_name, currency: p.currency, ...(s.length ? { invoiceSections: s } : {}) };
          }),
        ...(inv.length ? { invoices: inv } : {}),
      };
    });
  }
}
