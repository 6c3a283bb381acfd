/**
 * The queryable properties of a billing transaction (spec: resource-manager §2.3, §4.4): one
 * list that names, for each property a `filter` / `orderBy` / `search` may use, its OData
 * path, its column in `billing_transactions`, its type and how to read it from a record. The
 * migration, the seeder's row builder, the OData {@link FieldMap} and the `search` columns
 * all come from this list, so they cannot drift apart.
 */
import type { FieldMap, FieldType } from '../../core/odata/index.ts';
import type { Transaction, TransactionProperties, Amount } from './model.ts';

/** One queryable property of a transaction. */
export interface TransactionColumn {
  /** OData path below `properties/` (`transactionAmount/value`), or `name` for the top-level name. */
  path: string;
  /** Column in `billing_transactions`. */
  column: string;
  type: FieldType;
  /** Allowed values of an enum property. */
  values?: readonly string[];
  /** Whether `search` looks into it (string properties only). */
  searchable?: boolean;
  /** Reads the column value from a transaction (undefined → NULL); date-times as ISO 8601 UTC with milliseconds, booleans 0/1. */
  get(t: Transaction): string | number | null;
}

/** `CreditType` values (spec §2.3). */
export const creditTypes = ['Other', 'CloudFreeCredit', 'CloudCreditOffer', 'ServiceInterruption', 'Refund'] as const;
/** `TransactionKind` values (spec §2.3). */
export const transactionKinds = ['Other', 'All', 'Reservation'] as const;
/** `SpecialTaxationType` values (spec §2.3). */
export const specialTaxationTypes = ['SubtotalLevel', 'InvoiceLevel'] as const;

const iso = (v: string | undefined): string | null => (v === undefined ? null : new Date(v).toISOString());
const str = (k: keyof TransactionProperties, searchable = true): TransactionColumn => ({
  path: k,
  column: snake(k),
  type: 'string',
  searchable,
  get: (t) => (t.properties[k] as string | undefined) ?? null,
});
const num = (k: keyof TransactionProperties): TransactionColumn => ({ path: k, column: snake(k), type: 'number', get: (t) => (t.properties[k] as number | undefined) ?? null });
const date = (k: keyof TransactionProperties): TransactionColumn => ({ path: k, column: snake(k), type: 'datetime', get: (t) => iso(t.properties[k] as string | undefined) });
const amount = (k: keyof TransactionProperties): TransactionColumn[] => [
  { path: `${k}/value`, column: `${snake(k)}_value`, type: 'number', get: (t) => (t.properties[k] as Amount | undefined)?.value ?? null },
  { path: `${k}/currency`, column: `${snake(k)}_currency`, type: 'string', get: (t) => (t.properties[k] as Amount | undefined)?.currency ?? null },
];

function snake(s: string): string {
  return s.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

/**
 * Every queryable transaction property (the first version of the table; a new property
 * needs a new migration as well as an entry here).
 */
export const transactionColumns: readonly TransactionColumn[] = [
  { path: 'name', column: 'name', type: 'string', searchable: false, get: (t) => t.name },
  { path: 'kind', column: 'kind', type: 'enum', values: transactionKinds, get: (t) => t.properties.kind ?? null },
  date('date'),
  str('invoice'),
  str('invoiceId', false),
  str('transactionType'),
  str('productFamily'),
  str('productType'),
  str('productTypeId'),
  str('productDescription'),
  str('billingCurrency', false),
  str('pricingCurrency', false),
  str('billingProfileId', false),
  str('billingProfileDisplayName'),
  str('invoiceSectionId', false),
  str('invoiceSectionDisplayName'),
  str('customerId', false),
  str('customerDisplayName'),
  str('cloudPlan'),
  { path: 'creditType', column: 'credit_type', type: 'enum', values: creditTypes, get: (t) => t.properties.creditType ?? null },
  { path: 'specialTaxationType', column: 'special_taxation_type', type: 'enum', values: specialTaxationTypes, get: (t) => t.properties.specialTaxationType ?? null },
  { path: 'isThirdParty', column: 'is_third_party', type: 'boolean', get: (t) => (t.properties.isThirdParty === undefined ? null : t.properties.isThirdParty ? 1 : 0) },
  num('discount'),
  num('exchangeRate'),
  num('quantity'),
  num('units'),
  str('unitOfMeasure'),
  str('unitType'),
  str('partNumber'),
  str('reasonCode'),
  date('servicePeriodStartDate'),
  date('servicePeriodEndDate'),
  ...amount('transactionAmount'),
  ...amount('subTotal'),
  ...amount('tax'),
  ...amount('effectivePrice'),
  ...amount('marketPrice'),
  ...amount('cloudCreditApplied'),
  ...amount('consumptionCommitmentDecremented'),
  { path: 'refundTransactionDetails/amountRequested/value', column: 'refund_amount_requested_value', type: 'number', get: (t) => t.properties.refundTransactionDetails?.amountRequested?.value ?? null },
  { path: 'refundTransactionDetails/amountRefunded/value', column: 'refund_amount_refunded_value', type: 'number', get: (t) => t.properties.refundTransactionDetails?.amountRefunded?.value ?? null },
  { path: 'refundTransactionDetails/refundOperationId', column: 'refund_operation_id', type: 'string', searchable: false, get: (t) => t.properties.refundTransactionDetails?.refundOperationId ?? null },
];

/**
 * The OData field map of a transaction: every property under its `properties/…` path and,
 * as a shorthand, under its bare path (`date`, `transactionAmount/value`); `name` at the top
 * level. String and enum comparisons are case-insensitive.
 */
export const transactionFieldMap: FieldMap = Object.fromEntries(
  transactionColumns.flatMap((c) => {
    const field = { column: c.column, type: c.type, caseInsensitive: c.type === 'string' || c.type === 'enum', ...(c.values ? { values: c.values } : {}) };
    return c.path === 'name' ? [[c.path, field]] : [[`properties/${c.path}`, field], [c.path, field]];
  }),
);

/** Columns `search` matches (case-insensitive substring) — the string properties meant for people. */
export const searchColumns: readonly string[] = transactionColumns.filter((c) => c.type === 'string' && c.searchable !== false).map((c) => c.column);

/** The column values of one transaction row (keyed by column name). */
export function transactionColumnValues(t: Transaction): Record<string, string | number | null> {
  return Object.fromEntries(transactionColumns.map((c) => [c.column, c.get(t)]));
}
