/**
 * Shapes of the billing records (spec: resource-manager §2.3, §2.6; reference §4.2).
 */

/** An amount in a currency (spec §2.3 `Amount`). */
export interface Amount {
  /** ISO 4217 code. */
  currency: string;
  /** The amount, two decimals. */
  value: number;
}

/** `refundTransactionDetails` of a refund (spec §2.3). */
export interface RefundTransactionDetails {
  amountRefunded?: Amount;
  amountRequested?: Amount;
  refundOperationId?: string;
}

/** `TransactionProperties` (spec §2.3), every field optional as in the contract. */
export interface TransactionProperties {
  cloudCreditApplied?: Amount;
  cloudPlan?: string;
  billingCurrency?: string;
  billingProfileDisplayName?: string;
  billingProfileId?: string;
  consumptionCommitmentDecremented?: Amount;
  creditType?: 'Other' | 'CloudFreeCredit' | 'CloudCreditOffer' | 'ServiceInterruption' | 'Refund';
  customerDisplayName?: string;
  customerId?: string;
  /** ISO 8601 UTC date-time. */
  date?: string;
  /** Fraction, e.g. 0.1 for 10 %. */
  discount?: number;
  effectivePrice?: Amount;
  /** Pricing currency → billing currency. */
  exchangeRate?: number;
  /** Invoice name, or `pending` when unbilled. */
  invoice?: string;
  invoiceId?: string;
  invoiceSectionDisplayName?: string;
  invoiceSectionId?: string;
  isThirdParty?: boolean;
  kind?: 'Other' | 'All' | 'Reservation';
  marketPrice?: Amount;
  partNumber?: string;
  pricingCurrency?: string;
  productDescription?: string;
  productFamily?: string;
  productType?: string;
  productTypeId?: string;
  quantity?: number;
  reasonCode?: string;
  refundTransactionDetails?: RefundTransactionDetails;
  servicePeriodEndDate?: string;
  servicePeriodStartDate?: string;
  specialTaxationType?: 'SubtotalLevel' | 'InvoiceLevel';
  subTotal?: Amount;
  tax?: Amount;
  transactionAmount?: Amount;
  transactionType?: string;
  unitOfMeasure?: string;
  unitType?: string;
  units?: number;
}

/** `systemData` (spec §2.6). */
export interface SystemData {
  createdAt: string;
  createdBy: string;
  createdByType: 'User' | 'Application' | 'ManagedIdentity' | 'Key';
  lastModifiedAt: string;
  lastModifiedBy: string;
  lastModifiedByType: 'User' | 'Application' | 'ManagedIdentity' | 'Key';
}

/** A `Transaction` (spec §2.3) as the listing returns it. */
export interface Transaction {
  /** `/providers/Vendor.Billing/BillingAccounts/{account}/transactions/{name}` (reference §4.3). */
  id: string;
  /** A GUID. */
  name: string;
  /** `Vendor.Billing/billingAccounts/transactions`. */
  type: string;
  properties: TransactionProperties;
  systemData: SystemData;
  /** At most 256 characters per key and value, not empty (spec §2.3, §8). */
  tags?: Record<string, string>;
}

/** A billing account as stored (outside the spec's operations; parent of everything else). */
export interface BillingAccount {
  tenantId: string;
  name: string;
  displayName: string;
  agreementType: string;
}

/** A billing profile. */
export interface BillingProfile {
  name: string;
  displayName: string;
  /** ISO 4217 billing currency of its invoices. */
  currency: string;
}

/** An invoice section of a billing profile. */
export interface InvoiceSection {
  profileName: string;
  name: string;
  displayName: string;
}

/** An invoice of a billing profile. */
export interface Invoice {
  name: string;
  profileName: string;
  /** ISO 8601 UTC. */
  invoiceDate: string;
  dueDate: string;
  invoicePeriodStartDate: string;
  invoicePeriodEndDate: string;
  status: 'Due' | 'Paid' | 'OverDue' | 'Void';
  currency: string;
}

/** Roles a principal can hold on a billing account (all of them may read transactions). */
export type BillingRole = 'Billing account owner' | 'Billing account contributor' | 'Billing account reader';
