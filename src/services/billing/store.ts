/**
 * Queries of the billing area. Every query is scoped by tenant; the transaction listing
 * filters, orders, searches, counts and pages in SQL (spec: resource-manager §4.4).
 */
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { fromJson, toJson } from '../../store/db.ts';
import type { CompiledOrderBy } from '../../core/odata/index.ts';
import { searchColumns, transactionColumnValues } from './fields.ts';
import type { DemoBillingAccount } from './seed.ts';
import type { BillingRole, Invoice, Transaction } from './model.ts';
import type { Database } from '../../store/database.ts';
import { param, prepared } from '../../store/prepared.ts';

/** The checks every transactions request runs, compiled once (issue 9). */
const accountByName = prepared((db: Kysely<Database>) => db.selectFrom('billing_accounts').select('name').where('tenant_id', '=', param(0)).where('name', '=', param(1)));
const rolesOnAccount = prepared((db: Kysely<Database>) =>
  db.selectFrom('billing_role_assignments').select('role').where('tenant_id', '=', param(0)).where('account_name', '=', param(1)).where('principal_id', '=', param(2)),
);
const invoiceByName = prepared((db: Kysely<Database>) =>
  db.selectFrom('billing_invoices').select('body').where('tenant_id', '=', param(0)).where('account_name', '=', param(1)).where('name', '=', param(2)),
);

/** What a transaction listing asks for. */
export interface TransactionQuery {
  tenantId: string;
  accountName: string;
  invoiceName: string;
  /** A compiled `filter`. */
  filter?: Expression<SqlBool>;
  /** Compiled `orderBy` terms; `seq` breaks ties. */
  orderBy: CompiledOrderBy[];
  /** `search`: a case-insensitive substring of any searchable string property. */
  search?: string;
  /** Rows to skip (≥ 0). */
  skip: number;
  /** Page size (1–50). */
  top: number;
  /** Whether to count every matching row. */
  count: boolean;
}

/** One page of transactions. */
export interface TransactionPage {
  /** The page's transactions as stored: JSON text of each {@link Transaction} (served without re-parsing). */
  value: string[];
  /** Whether rows follow this page. */
  more: boolean;
  /** Number of matching transactions (when counted). */
  totalCount?: number;
}

/** Totals of `transactionSummary` (billing currency, cents). */
export interface TransactionSummaryTotals {
  cloudCreditApplied: number;
  consumptionCommitmentDecremented: number;
  subTotal: number;
  tax: number;
  total: number;
}

/** Escapes `%`, `_` and `\` for a `LIKE … ESCAPE '\'` pattern. */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Billing queries over one database handle. */
export class BillingStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Whether the billing account exists in the tenant. */
  async accountExists(tenantId: string, accountName: string): Promise<boolean> {
    return (await accountByName(this.db, tenantId, accountName)).length > 0;
  }

  /** The roles `principalId` holds on the billing account. */
  async rolesOf(tenantId: string, accountName: string, principalId: string): Promise<BillingRole[]> {
    const rows = await rolesOnAccount(this.db, tenantId, accountName, principalId);
    return rows.map((r) => r.role as BillingRole);
  }

  /** The invoice, or undefined. */
  async invoice(tenantId: string, accountName: string, invoiceName: string): Promise<Invoice | undefined> {
    const [r] = await invoiceByName(this.db, tenantId, accountName, invoiceName);
    return r ? fromJson<Invoice>(r.body) : undefined;
  }

  /**
   * One page of an invoice's transactions: filter and search in `WHERE`, the requested
   * ordering (nulls last ascending, first descending, on both dialects) then `seq`,
   * `OFFSET skip LIMIT top + 1` to learn whether more follow, and a `COUNT(*)` when asked.
   */
  async listTransactions(q: TransactionQuery): Promise<TransactionPage> {
    const base = this.matching(q);
    let page = base.select(['body', 'seq']);
    for (const o of q.orderBy) {
      page = page.orderBy(sql`case when ${sql.ref(o.column)} is null then 1 else 0 end`, o.direction).orderBy(sql.ref(o.column), o.direction);
    }
    const rows = await page.orderBy('seq', 'asc').limit(q.top + 1).offset(q.skip).execute();
    const out: TransactionPage = { value: rows.slice(0, q.top).map((r) => r.body as string), more: rows.length > q.top };
    if (q.count) {
      const c = await base.select((eb) => eb.fn.countAll().as('n')).executeTakeFirst();
      out.totalCount = Number(c?.n ?? 0);
    }
    return out;
  }

  /**
   * Totals of the matching transactions (reference §4.4 `transactionSummary`), in the
   * billing currency, rounded to cents; 0 when nothing matches.
   */
  async summarizeTransactions(q: Pick<TransactionQuery, 'tenantId' | 'accountName' | 'invoiceName' | 'filter' | 'search'>): Promise<TransactionSummaryTotals> {
    const r = await this.matching(q)
      .select((eb) => [
        eb.fn.sum<number>('cloud_credit_applied_value').as('credit'),
        eb.fn.sum<number>('consumption_commitment_decremented_value').as('commitment'),
        eb.fn.sum<number>('sub_total_value').as('sub'),
        eb.fn.sum<number>('tax_value').as('tax'),
        eb.fn.sum<number>('transaction_amount_value').as('total'),
      ])
      .executeTakeFirst();
    const cents = (v: unknown) => Math.round(Number(v ?? 0) * 100) / 100 + 0;
    return { cloudCreditApplied: cents(r?.credit), consumptionCommitmentDecremented: cents(r?.commitment), subTotal: cents(r?.sub), tax: cents(r?.tax), total: cents(r?.total) };
  }

  /** The invoice's transactions narrowed by `filter` and `search`. */
  private matching(q: Pick<TransactionQuery, 'tenantId' | 'accountName' | 'invoiceName' | 'filter' | 'search'>) {
    let base = this.db
      .selectFrom('billing_transactions')
      .where('tenant_id', '=', q.tenantId)
      .where('account_name', '=', q.accountName)
      .where('invoice_name', '=', q.invoiceName);
    if (q.filter) base = base.where(q.filter);
    if (q.search !== undefined && q.search !== '') {
      const pattern = `%${likeEscape(q.search.toLowerCase())}%`;
      base = base.where(({ or }) => or(searchColumns.map((c) => sql<SqlBool>`lower(${sql.ref(c)}) like ${pattern} escape ${sql.lit('\\')}`)));
    }
    return base;
  }

  /** Loads one demo billing account with everything under it (empty tables expected). */
  async seedAccount(d: DemoBillingAccount): Promise<void> {
    const tenant_id = d.account.tenantId;
    const account_name = d.account.name;
    await this.db.insertInto('billing_accounts').values({ tenant_id, name: account_name, display_name: d.account.displayName, agreement_type: d.account.agreementType }).execute();
    for (const r of d.roles) await this.db.insertInto('billing_role_assignments').values({ tenant_id, account_name, principal_id: r.principalId, role: r.role }).execute();
    for (const p of d.profiles) await this.db.insertInto('billing_profiles').values({ tenant_id, account_name, name: p.name, display_name: p.displayName, currency: p.currency }).execute();
    for (const s of d.sections)
      await this.db.insertInto('billing_invoice_sections').values({ tenant_id, account_name, profile_name: s.profileName, name: s.name, display_name: s.displayName }).execute();
    for (const i of d.invoices) await this.db.insertInto('billing_invoices').values({ tenant_id, account_name, name: i.name, profile_name: i.profileName, body: toJson(i) }).execute();
    for (const [invoice_name, list] of Object.entries(d.transactions)) {
      const rows = list.map((t, seq) => ({ tenant_id, account_name, invoice_name, seq, body: toJson(t), ...transactionColumnValues(t) }));
      // SQLite binds at most 32766 parameters per statement; ~50 columns × 100 rows stays well below.
      for (let i = 0; i < rows.length; i += 100) await this.db.insertInto('billing_transactions').values(rows.slice(i, i + 100)).execute();
    }
  }
}
