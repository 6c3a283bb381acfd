/**
 * The tables of the billing area, declared once: the columns its migrations create, in
 * migration order (`nullable` where the column may hold NULL, `withDefault`/`autoKey` where
 * the database fills the value in). BillingDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema on both
 * dialects.
 */
import { defineTables, integer, nullable, real, text, type Tables } from '../../store/columns.ts';

/** The columns of the billing tables, by table (see the file comment). */
export const billingColumns = defineTables({
  /** Created by `billing_0001_accounts`. */
  billing_accounts: {
    tenant_id: text(),
    name: text(),
    display_name: text(),
    agreement_type: text(),
  },
  /** Created by `billing_0001_accounts`. */
  billing_invoice_sections: {
    tenant_id: text(),
    account_name: text(),
    profile_name: text(),
    name: text(),
    display_name: text(),
  },
  /** Created by `billing_0001_accounts`. */
  billing_invoices: {
    tenant_id: text(),
    account_name: text(),
    name: text(),
    profile_name: text(),
    body: text(),
  },
  /** Created by `billing_0001_accounts`. */
  billing_profiles: {
    tenant_id: text(),
    account_name: text(),
    name: text(),
    display_name: text(),
    currency: text(),
  },
  /** Created by `billing_0001_accounts`. */
  billing_role_assignments: {
    tenant_id: text(),
    account_name: text(),
    principal_id: text(),
    role: text(),
  },
  /** Created by `billing_0002_transactions`. */
  billing_transactions: {
    tenant_id: text(),
    account_name: text(),
    invoice_name: text(),
    seq: integer(),
    body: text(),
    name: nullable(text()),
    kind: nullable(text()),
    date: nullable(text()),
    invoice: nullable(text()),
    invoice_id: nullable(text()),
    transaction_type: nullable(text()),
    product_family: nullable(text()),
    product_type: nullable(text()),
    product_type_id: nullable(text()),
    product_description: nullable(text()),
    billing_currency: nullable(text()),
    pricing_currency: nullable(text()),
    billing_profile_id: nullable(text()),
    billing_profile_display_name: nullable(text()),
    invoice_section_id: nullable(text()),
    invoice_section_display_name: nullable(text()),
    customer_id: nullable(text()),
    customer_display_name: nullable(text()),
    cloud_plan: nullable(text()),
    credit_type: nullable(text()),
    special_taxation_type: nullable(text()),
    is_third_party: nullable(integer()),
    discount: nullable(real()),
    exchange_rate: nullable(real()),
    quantity: nullable(real()),
    units: nullable(real()),
    unit_of_measure: nullable(text()),
    unit_type: nullable(text()),
    part_number: nullable(text()),
    reason_code: nullable(text()),
    service_period_start_date: nullable(text()),
    service_period_end_date: nullable(text()),
    transaction_amount_value: nullable(real()),
    transaction_amount_currency: nullable(text()),
    sub_total_value: nullable(real()),
    sub_total_currency: nullable(text()),
    tax_value: nullable(real()),
    tax_currency: nullable(text()),
    effective_price_value: nullable(real()),
    effective_price_currency: nullable(text()),
    market_price_value: nullable(real()),
    market_price_currency: nullable(text()),
    cloud_credit_applied_value: nullable(real()),
    cloud_credit_applied_currency: nullable(text()),
    consumption_commitment_decremented_value: nullable(real()),
    consumption_commitment_decremented_currency: nullable(text()),
    refund_amount_requested_value: nullable(real()),
    refund_amount_refunded_value: nullable(real()),
    refund_operation_id: nullable(text()),
  },
});

/** The billing tables as Kysely sees them. */
export type BillingDatabase = Tables<typeof billingColumns>;
