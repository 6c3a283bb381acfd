/**
 * The tables of the billing area as Kysely sees them: one interface per table its migrations
 * create (columns in migration order; `Generated<>` where the database fills a value in,
 * `| null` where the column is nullable). test/database-types.test.ts checks them against
 * the migrated schema on both dialects.
 */

/** A row of `billing_accounts` (created by migration `billing_0001_accounts`). */
export interface BillingAccountsTable {
  tenant_id: string;
  name: string;
  display_name: string;
  agreement_type: string;
}

/** A row of `billing_invoice_sections` (created by migration `billing_0001_accounts`). */
export interface BillingInvoiceSectionsTable {
  tenant_id: string;
  account_name: string;
  profile_name: string;
  name: string;
  display_name: string;
}

/** A row of `billing_invoices` (created by migration `billing_0001_accounts`). */
export interface BillingInvoicesTable {
  tenant_id: string;
  account_name: string;
  name: string;
  profile_name: string;
  body: string;
}

/** A row of `billing_profiles` (created by migration `billing_0001_accounts`). */
export interface BillingProfilesTable {
  tenant_id: string;
  account_name: string;
  name: string;
  display_name: string;
  currency: string;
}

/** A row of `billing_role_assignments` (created by migration `billing_0001_accounts`). */
export interface BillingRoleAssignmentsTable {
  tenant_id: string;
  account_name: string;
  principal_id: string;
  role: string;
}

/** A row of `billing_transactions` (created by migration `billing_0002_transactions`). */
export interface BillingTransactionsTable {
  tenant_id: string;
  account_name: string;
  invoice_name: string;
  seq: number;
  body: string;
  name: string | null;
  kind: string | null;
  date: string | null;
  invoice: string | null;
  invoice_id: string | null;
  transaction_type: string | null;
  product_family: string | null;
  product_type: string | null;
  product_type_id: string | null;
  product_description: string | null;
  billing_currency: string | null;
  pricing_currency: string | null;
  billing_profile_id: string | null;
  billing_profile_display_name: string | null;
  invoice_section_id: string | null;
  invoice_section_display_name: string | null;
  customer_id: string | null;
  customer_display_name: string | null;
  cloud_plan: string | null;
  credit_type: string | null;
  special_taxation_type: string | null;
  is_third_party: number | null;
  discount: number | null;
  exchange_rate: number | null;
  quantity: number | null;
  units: number | null;
  unit_of_measure: string | null;
  unit_type: string | null;
  part_number: string | null;
  reason_code: string | null;
  service_period_start_date: string | null;
  service_period_end_date: string | null;
  transaction_amount_value: number | null;
  transaction_amount_currency: string | null;
  sub_total_value: number | null;
  sub_total_currency: string | null;
  tax_value: number | null;
  tax_currency: string | null;
  effective_price_value: number | null;
  effective_price_currency: string | null;
  market_price_value: number | null;
  market_price_currency: string | null;
  cloud_credit_applied_value: number | null;
  cloud_credit_applied_currency: string | null;
  consumption_commitment_decremented_value: number | null;
  consumption_commitment_decremented_currency: string | null;
  refund_amount_requested_value: number | null;
  refund_amount_refunded_value: number | null;
  refund_operation_id: string | null;
}

export interface BillingDatabase {
  billing_accounts: BillingAccountsTable;
  billing_invoice_sections: BillingInvoiceSectionsTable;
  billing_invoices: BillingInvoicesTable;
  billing_profiles: BillingProfilesTable;
  billing_role_assignments: BillingRoleAssignmentsTable;
  billing_transactions: BillingTransactionsTable;
}
