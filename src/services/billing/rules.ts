/**
 * What the billing operations mean: the transactions of an invoice
 * (spec: resource-manager §2.3, §4.4, §5, §7, §8, §9; reference §4) and their summary
 * (`…/invoices/{invoiceName}/transactionSummary`, reference §4.4, outside the spec).
 *
 * Order of checks: api-version and bearer token (the gateway) → path name patterns → query
 * options (`top` 1–50, `skip` ≥ 0, `count` boolean) → billing account exists in the caller's
 * tenant (404) → the caller holds a billing role on it (403) → invoice exists (404) →
 * `filter` / `orderBy` parse and compile (400 with the position) → one page in SQL.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Expression, SqlBool } from 'kysely';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { absoluteUrl } from '../../core/paging.ts';
import { compileFilter, compileOrderBy, ODataError, parseFilter, parseOrderBy, type CompiledOrderBy } from '../../core/odata/index.ts';
import { authorizationFailed, type ArmCall } from '../arm/gateway.ts';
import type { Invoice, Transaction } from './model.ts';
import { transactionFieldMap } from './fields.ts';
import { BillingStore, type TransactionPage } from './store.ts';
import { fromJson } from '../../store/db.ts';
import { cacheKey } from '../../core/cache.ts';

/** The api-versions answered in the 2020-05-01 shape. */
const legacyVersions = new Set(['2020-05-01']);

/**
 * A transaction in the 2020-05-01 shape: `kind` in lower case (`all` / `reservation`), an
 * integral `quantity`, no `systemData` or `tags`, and none of the properties added later
 * (credit type, consumption commitment, third-party flag, part number, reason code, refund
 * details, special taxation). The two properties whose published names carry the brand keep
 * their neutral names (`cloudPlan`, `cloudCreditApplied`; docs/deviations/billing.md).
 */
export function legacyTransaction(t: Transaction): Record<string, unknown> {
  const {
    consumptionCommitmentDecremented: _c,
    creditType: _ct,
    isThirdParty: _t,
    partNumber: _p,
    reasonCode: _r,
    refundTransactionDetails: _rd,
    specialTaxationType: _s,
    kind,
    quantity,
    ...rest
  } = t.properties;
  const properties: Record<string, unknown> = { ...rest };
  if (kind !== undefined) properties.kind = kind === 'Reservation' ? 'reservation' : 'all';
  if (quantity !== undefined) properties.quantity = Math.round(quantity);
  return { id: t.id, name: t.name, type: t.type, properties };
}
/** Maximum (and default) page size (spec §8: `top` at most 50). */
export const maxTop = 50;

/** `billingAccountName` pattern (spec §4.4). */
export const billingAccountNamePattern =
  /^([0-9]+|([Pp][Cc][Nn]\.[A-Za-z0-9]+)|[0-9A-Fa-f]{8}-([0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}(:[0-9A-Fa-f]{8}-([0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}_[0-9]{4}(-[0-9]{2}){2})?)$/;
/** `invoiceName` pattern (spec §4.4). */
export const invoiceNamePattern = /^(H[0-9]-[A-Z0-9]+)$|^(?:([GHT]|HT){1}[A-Z0-9]{9})$|^(?:[D]{1}[A-Z0-9]{9})$|^(?:E{1}[B-Z0-9]{1}[A-Z0-9]{8})$|^(?:EA[A-Z0-9]{8})$/;

/** The billing errors (codes chosen where the spec says "not shown", spec §7 rule 3). */
export const billingErrors = {
  invalidName: (param: string, value: string, pattern: RegExp) =>
    errors.arm.invalidParameter({ message: `The value '${value}' of the path parameter '${param}' is invalid. It must match the pattern '${pattern.source}'.` }, { target: param }),
  invalidQuery: (param: string, value: string, rule: string) => errors.arm.invalidParameter({ message: `The value '${value}' of the query parameter '${param}' is invalid. ${rule}` }, { target: param }),
  invalidExpression: (param: 'filter' | 'orderBy', text: string, e: ODataError) => {
    const message = `The '${param}' expression '${text.length > 200 ? `${text.slice(0, 200)}…` : text}' is invalid${e.position !== undefined ? ` at position ${e.position}` : ''}: ${e.message}`;
    return param === 'filter' ? errors.arm.invalidFilter({ message }, { target: param }) : errors.arm.invalidOrderBy({ message }, { target: param });
  },
  accountNotFound: (name: string) => errors.arm.billingAccountNotFound({ name }, { target: 'billingAccountName' }),
  invoiceNotFound: (account: string, name: string) => errors.arm.invoiceNotFound({ name, account }, { target: 'invoiceName' }),
};

/** The action a caller needs on the billing account to list transactions. */
export const readTransactionsAction = 'Vendor.Billing/billingAccounts/invoices/transactions/read';

/**
 * The query options of a request, names matched case-insensitively and with or without a
 * leading `$` (the contract's names carry none). A repeated option keeps its first value.
 */
export function billingQuery(req: FastifyRequest): Record<'filter' | 'orderby' | 'search' | 'skip' | 'top' | 'count', string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.query as Record<string, string | string[] | undefined>)) {
    const key = k.replace(/^\$/, '').toLowerCase();
    if (out[key] === undefined && v !== undefined) out[key] = Array.isArray(v) ? v[0] : v;
  }
  return out as ReturnType<typeof billingQuery>;
}

/** Parses a non-negative int64 query value; undefined when absent; throws the parameter's 400. */
function integer(param: string, v: string | undefined, rule: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v.trim())) throw billingErrors.invalidQuery(param, v, rule);
  return Number(v.trim());
}

/**
 * Parses and compiles a `filter` or `orderBy` expression with `compile`; undefined when the
 * expression is absent or blank.
 * @throws ApiError 400 `InvalidFilter` / `InvalidOrderBy` (target = the parameter) for a
 *   syntax error (with its 0-based position), an unknown property, a type mismatch, or an
 *   expression nested deeper than the OData core allows.
 */
export function compileExpression<T>(param: 'filter' | 'orderBy', text: string | undefined, compile: (text: string) => T): T | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return compile(text);
  } catch (e) {
    if (e instanceof ODataError) throw billingErrors.invalidExpression(param, text, e);
    throw e;
  }
}

/** What the checks common to the invoice operations establish. */
interface InvoiceCall {
  tenantId: string;
  account: string;
  invoice: Invoice;
}

/** The look-ups of {@link invoiceCall} for one caller, kept in the `seeded` cache area (only seeding writes billing data). */
interface InvoiceAccess {
  accountExists: boolean;
  hasRole: boolean;
  /** Frozen; undefined when there is no such invoice. */
  invoice?: Invoice;
}

/**
 * The checks every invoice operation shares, after the gateway's: name patterns (400),
 * account in the caller's tenant (404), a billing role (403), the invoice (404). The three
 * look-ups are kept per tenant, account, invoice and caller in the `seeded` area.
 */
async function invoiceCall(ctx: AppContext, store: BillingStore, req: FastifyRequest, call: ArmCall, action: string, beforeLookup: () => void = () => {}): Promise<InvoiceCall> {
  const { billingAccountName: account, invoiceName: invoiceName } = req.params as Record<string, string>;
  if (!billingAccountNamePattern.test(account!)) throw billingErrors.invalidName('billingAccountName', account!, billingAccountNamePattern);
  if (!invoiceNamePattern.test(invoiceName!)) throw billingErrors.invalidName('invoiceName', invoiceName!, invoiceNamePattern);
  beforeLookup();
  const tenantId = call.principal.tenantId;
  const access = await ctx.cache
    .shared<InvoiceAccess>('billing.invoiceAccess', 'seeded', 1000)
    .get(cacheKey(tenantId, account, invoiceName, call.principal.objectId), async () => {
      if (!(await store.accountExists(tenantId, account!))) return { accountExists: false, hasRole: false };
      if ((await store.rolesOf(tenantId, account!, call.principal.objectId)).length === 0) return { accountExists: true, hasRole: false };
      const invoice = await store.invoice(tenantId, account!, invoiceName!);
      return { accountExists: true, hasRole: true, invoice: invoice && Object.freeze(invoice) };
    });
  if (!access.accountExists) throw billingErrors.accountNotFound(account!);
  if (!access.hasRole) throw authorizationFailed(call.principal, action, call.scope);
  if (!access.invoice) throw billingErrors.invoiceNotFound(account!, invoiceName!);
  return { tenantId, account: account!, invoice: access.invoice };
}

/**
 * The compiled `filter` (400 with the position) and the checked `search` (400 for control characters).
 * @throws ApiError as {@link compileExpression}, or `InvalidQuery` for the search text.
 */
function filterAndSearch(q: ReturnType<typeof billingQuery>): { filter?: Expression<SqlBool>; search?: string } {
  const filter = compileExpression('filter', q.filter, (text) => compileFilter(parseFilter(text), transactionFieldMap));
  if (q.search !== undefined && /[\u0000-\u001f\u007f]/.test(q.search)) throw billingErrors.invalidQuery('search', q.search.replace(/[\u0000-\u001f\u007f]/g, '?'), 'It must not contain control characters.');
  return { filter, search: q.search };
}

/** The RBAC scope of a billing request: its billing account. */
export const accountScope = (req: FastifyRequest) => `/providers/Vendor.Billing/billingAccounts/${(req.params as Record<string, string>).billingAccountName}`;
const topRule = `It must be an integer from 1 to ${maxTop}; the maximum supported value for top is ${maxTop}.`;

/** The billing operations (handlers of `routes.ts`). */
export function billingRules(ctx: AppContext) {
  const store = new BillingStore(ctx.store.db);
  return {
    /** One page of an invoice's transactions (`top` ≤ 50, `skip`, `count`, `filter`, `orderBy`, `search`); the 2020-05-01 shape for the legacy api-version. */
    async listTransactions(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const q = billingQuery(req);
      let top = maxTop;
      let skip = 0;
      let count = false;
      const c = await invoiceCall(ctx, store, req, call, readTransactionsAction, () => {
        top = integer('top', q.top, topRule) ?? maxTop;
        if (top < 1 || top > maxTop) throw billingErrors.invalidQuery('top', q.top!, topRule);
        skip = integer('skip', q.skip, 'It must be an integer of 0 or more.') ?? 0;
        if (q.count !== undefined) {
          const v = q.count.trim().toLowerCase();
          if (v !== 'true' && v !== 'false') throw billingErrors.invalidQuery('count', q.count, "It must be 'true' or 'false'.");
          count = v === 'true';
        }
      });
      const legacy = legacyVersions.has(call.apiVersion);
      const origin = ctx.origin();
      // Billing records change only by seeding (the demo data, `stratus seed transactions`), which
      // changes the `seeded` cache area: a page is kept per invoice and query (the gateway synced
      // the caches), and its answer text per origin and api-version too. A kept query compiled
      // once already, so its filter and orderBy are not compiled again.
      const pages = ctx.cache.shared<TransactionPage>('billing.transactionPages', 'seeded', 1000);
      const key = cacheKey(c.tenantId, c.account, c.invoice.name, q.filter, q.orderby, q.search, skip, top, count);
      const load = async (): Promise<{ page: TransactionPage; nextLink?: string }> => {
        const { filter, search } = filterAndSearch(q);
        const orderBy: CompiledOrderBy[] = compileExpression('orderBy', q.orderby, (text) => compileOrderBy(parseOrderBy(text), transactionFieldMap)) ?? [];
        const page = await pages.get(key, () => store.listTransactions({ tenantId: c.tenantId, accountName: c.account, invoiceName: c.invoice.name, filter, orderBy, search, skip, top, count }));
        if (!page.more) return { page };
        const nextLink = absoluteUrl(origin, `/providers/Vendor.Billing/billingAccounts/${encodeURIComponent(c.account)}/invoices/${encodeURIComponent(c.invoice.name)}/transactions`, {
          'api-version': call.apiVersion,
          filter: q.filter,
          orderBy: q.orderby,
          search: q.search,
          count: q.count,
          top: q.top,
          skip: skip + top,
        });
        return { page, nextLink };
      };
      if (legacy) {
        const { page, nextLink } = await load();
        const body: Record<string, unknown> = { value: page.value.map((t) => legacyTransaction(fromJson<Transaction>(t))) };
        if (nextLink !== undefined) body.nextLink = nextLink;
        return body;
      }
      const texts = ctx.cache.shared<string>('billing.transactionTexts', 'seeded', 1000);
      const text = await texts.get(cacheKey(key, origin, call.apiVersion, q.top, q.count), async () => {
        const { page, nextLink } = await load();
        // The stored documents are the transactions' JSON already: spliced into the answer, not parsed and serialized again.
        let t = `{"value":[${page.value.join(',')}]`;
        if (page.totalCount !== undefined) t += `,"totalCount":${page.totalCount}`;
        if (nextLink !== undefined) t += `,"nextLink":${JSON.stringify(nextLink)}`;
        return `${t}}`;
      });
      reply.type('application/json; charset=utf-8');
      return text;
    },

    /** Totals of an invoice's transactions, with the same `filter` and `search` (reference §4.4, outside the spec). */
    async transactionSummary(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const q = billingQuery(req);
      const c = await invoiceCall(ctx, store, req, call, readTransactionsAction);
      const { filter, search } = filterAndSearch(q);
      const t = await store.summarizeTransactions({ tenantId: c.tenantId, accountName: c.account, invoiceName: c.invoice.name, filter, search });
      return { billingCurrency: c.invoice.currency, ...t };
    },
  };
}
