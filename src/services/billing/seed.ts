/**
 * The billing area's transaction generator (deterministic: a seeded PRNG), used by the demo
 * world's invoices (`generate` of an invoice in a world file, `src/world/billing.ts`: account
 * `70000001` of the demo tenant with invoices `G000000001` (USD, 256 transactions) and
 * `G000000002` (EUR, 126), account `70000002` of the second tenant with `G000000003`) and by
 * `stratus seed transactions` (`bulk.ts`). Transactions cover every kind: usage charges,
 * purchases, reservation purchases, third-party (marketplace) purchases, refunds with
 * `refundTransactionDetails`, credits of every `creditType`, and unbilled (`invoice: "pending"`)
 * cancellations; several pricing currencies converted with exchange rates.
 */
import { stableUuid } from '../../core/ids.ts';
import { creditTypes } from './fields.ts';
import type { BillingAccount, BillingProfile, BillingRole, Invoice, InvoiceSection, Transaction, TransactionProperties } from './model.ts';
import { seededRandom } from '../../core/random.ts';

/** A billing account with everything under it. */
export interface DemoBillingAccount {
  account: BillingAccount;
  profiles: BillingProfile[];
  sections: InvoiceSection[];
  invoices: Invoice[];
  /** Transactions by the invoice they are listed under, in generation (date) order. */
  transactions: Record<string, Transaction[]>;
  /** Role holders: principal object id → role. */
  roles: { principalId: string; role: BillingRole }[];
}

const prng = seededRandom;

const round2 = (n: number) => Math.round(n * 100) / 100 + 0; // + 0 turns -0 into 0
const round4 = (n: number) => Math.round(n * 10000) / 10000;
/** ISO 8601 UTC without milliseconds, as the contract example writes dates. */
const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** USD per one unit of each currency (fixed demo rates). */
const usdPer: Record<string, number> = { USD: 1, EUR: 1.08, GBP: 1.27, JPY: 0.0067, CAD: 0.73 };
/** Pricing currencies per billing currency, with weights. */
const pricingMix: Record<string, [string, number][]> = {
  USD: [['USD', 6], ['EUR', 2], ['GBP', 1], ['JPY', 1], ['CAD', 1]],
  EUR: [['EUR', 6], ['USD', 2], ['GBP', 1]],
};

type Product = [family: string, type: string, typeId: string, description: string, unitOfMeasure: string, unitType: string, usdPrice: number];

const usageProducts: Product[] = [
  ['Compute', 'Virtual Machines', 'DZH318Z0BQ4B', 'D4s v5 Linux, West US 2', '1 Hour', '1 Compute Hour', 0.192],
  ['Compute', 'Virtual Machines', 'DZH318Z0BQ4C', 'E8s v5 Windows, East US', '1 Hour', '1 Compute Hour', 0.872],
  ['Compute', 'Container Instances', 'DZH318Z0BQ9K', 'Standard vCPU Duration, North Europe', '1 Hour', '1 vCPU Hour', 0.0405],
  ['Compute', 'App Service', 'DZH318Z0BQ5F', 'Premium v3 P1v3 App, West Europe', '1 Hour', '1 Instance Hour', 0.169],
  ['Storage', 'Blob Storage', 'DZH318Z0BQ7M', 'Hot LRS Data Stored, East US', '1 GB/Month', '1 GB Month', 0.0184],
  ['Storage', 'Managed Disks', 'DZH318Z0BQ7N', 'P30 Premium SSD Disk, West Europe', '1/Month', '1 Disk Month', 135.17],
  ['Storage', 'Files', 'DZH318Z0BQ7P', 'Premium File Share Provisioned, East US 2', '1 GiB/Month', '1 GiB Month', 0.16],
  ['Networking', 'Bandwidth', 'DZH318Z0BQ3A', 'Data Transfer Out, Zone 1', '1 GB', '1 GB', 0.087],
  ['Networking', 'Load Balancer', 'DZH318Z0BQ3B', 'Standard Load Balancer Data Processed', '1 GB', '1 GB', 0.005],
  ['Networking', 'VPN Gateway', 'DZH318Z0BQ3C', 'VpnGw1 Gateway Hours', '1 Hour', '1 Gateway Hour', 0.19],
  ['Databases', 'SQL Database', 'DZH318Z0BQ2S', 'General Purpose vCore, Gen5, East US', '1 Hour', '1 vCore Hour', 0.5044],
  ['Databases', 'Document Database', 'DZH318Z0BQ2T', 'Provisioned Throughput, 100 RU/s', '100 RU/s/Hour', '100 Request Units Hour', 0.008],
  ['Databases', 'PostgreSQL Flexible Server', 'DZH318Z0BQ2U', 'General Purpose D2ds v4 vCore', '1 Hour', '1 vCore Hour', 0.178],
  ['Analytics', 'Data Warehouse', 'DZH318Z0BQ1W', 'DW100c Compute Optimized', '1 Hour', '1 Compute Hour', 1.2],
  ['Analytics', 'Event Streaming', 'DZH318Z0BQ1E', 'Standard Throughput Unit', '1 Hour', '1 Throughput Unit Hour', 0.03],
  ['AI + Machine Learning', 'Language Services', 'DZH318Z0BQ0T', 'Text Translation S1', '1M Characters', '1M Characters', 10],
  ['AI + Machine Learning', 'Speech Services', 'DZH318Z0BQ0S', 'Speech to Text Standard', '1 Hour', '1 Audio Hour', 1],
  ['Management and Governance', 'Log Analytics', 'DZH318Z0BQ6L', 'Pay-as-you-go Data Ingestion', '1 GB', '1 GB', 2.76],
  ['Management and Governance', 'Backup', 'DZH318Z0BQ6B', 'Protected Instance, Over 500 GB', '1/Month', '1 Instance Month', 10],
];

const purchaseProducts: Product[] = [
  ['Support', 'Support Plans', 'DZH318Z0BQ8S', 'Standard Support', '1/Month', '1 Month', 100],
  ['Support', 'Support Plans', 'DZH318Z0BQ8P', 'Professional Direct Support', '1/Month', '1 Month', 1000],
  ['Developer Tools', 'DevOps', 'DZH318Z0BQ8D', 'DevOps Basic Plan User', '1 User/Month', '1 User Month', 6],
  ['Security', 'Server Protection', 'DZH318Z0BQ8R', 'Server Protection Plan 2', '1/Month', '1 Server Month', 15],
  ['Developer Tools', 'Load Testing', 'DZH318Z0BQ8L', 'Load Testing Virtual User Hours Pack', '1/Month', '1 Pack', 50],
];

const reservationProducts: [Product, number][] = [
  [['Compute', 'Reserved VM Instances', 'DZH318Z0BQ4R', 'Reserved VM Instance, D4s v5, West US 2, 1 Year', '1 Reservation', '1 Reserved Instance', 1248], 1],
  [['Compute', 'Reserved VM Instances', 'DZH318Z0BQ4S', 'Reserved VM Instance, E8s v5, East US, 3 Years', '1 Reservation', '1 Reserved Instance', 7490], 3],
  [['Databases', 'Reserved Capacity', 'DZH318Z0BQ2R', 'SQL Database Reserved vCore, Gen5, 1 Year', '1 Reservation', '1 vCore Reservation', 1512], 1],
  [['Storage', 'Reserved Capacity', 'DZH318Z0BQ7R', 'Blob Storage Reserved Capacity, 100 TB, 1 Year', '1 Reservation', '100 TB Reservation', 19500], 1],
  [['Compute', 'Savings Plans', 'DZH318Z0BQ4P', 'Savings Plan for Compute, 1 Year', '1 Hour Commitment', '1 Commitment Hour', 876], 1],
];

const marketplaceProducts: Product[] = [
  ['Marketplace', 'SaaS', 'DZH318Z0BQ9T', 'Tailspin Next-Gen Firewall, Standard Plan', '1/Month', '1 Subscription Month', 590],
  ['Marketplace', 'SaaS', 'DZH318Z0BQ9L', 'Litware Observability Pro, Monthly', '1/Month', '1 Subscription Month', 240],
  ['Marketplace', 'Virtual Machine Image', 'DZH318Z0BQ9N', 'Northwind Backup Appliance, 1 TB Plan', '1 Hour', '1 Compute Hour', 0.35],
  ['Marketplace', 'SaaS', 'DZH318Z0BQ9W', 'Wingtip Identity Gateway, Enterprise', '1 User/Month', '1 User Month', 4.5],
  ['Marketplace', 'Container', 'DZH318Z0BQ9A', 'Adatum Vector Search Engine, Cluster Edition', '1 Hour', '1 Node Hour', 0.62],
];

const creditDescriptions: Record<string, string> = {
  CloudFreeCredit: 'Cloud free account credit',
  CloudCreditOffer: 'Cloud credit offer, startup program',
  ServiceInterruption: 'Service interruption credit, East US storage incident',
  Refund: 'Credit for refunded charges',
  Other: 'Goodwill credit',
};

const costCenters = ['CC-1001', 'CC-1002', 'CC-2040', 'CC-3300'];
const environments = ['production', 'staging', 'development'];

/** What the generator needs of an invoice. */
export interface InvoiceContext {
  accountName: string;
  invoice: Invoice;
  profile: BillingProfile;
  sections: InvoiceSection[];
  customer?: { id: string; displayName: string };
  billed: number;
  pending: number;
  seed: number;
  /** Number of the first generated transaction (names and refund ids derive from it; default 0). */
  first?: number;
}

/** Generates the transactions listed under one invoice (billed first, then the pending ones), sorted by date. */
export function generateTransactions(c: InvoiceContext): Transaction[] {
  const rnd = prng(c.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const weighted = <T>(xs: [T, number][]): T => {
    const total = xs.reduce((s, [, w]) => s + w, 0);
    let r = rnd() * total;
    for (const [x, w] of xs) if ((r -= w) < 0) return x;
    return xs[xs.length - 1]![0];
  };
  const base = `/providers/Vendor.Billing/billingAccounts/${c.accountName}`;
  const profileId = `${base}/billingProfiles/${c.profile.name}`;
  const billing = c.profile.currency;
  const periodStart = Date.parse(c.invoice.invoicePeriodStartDate);
  const periodEnd = Date.parse(c.invoice.invoicePeriodEndDate);
  const day = 86_400_000;
  const out: Transaction[] = [];

  for (let i = 0; i < c.billed + c.pending; i++) {
    const pending = i >= c.billed;
    const category = pending ? 'cancel' : weighted<string>([['usage', 50], ['purchase', 12], ['reservation', 10], ['marketplace', 10], ['refund', 8], ['credit', 10]]);
    const section = pick(c.sections);
    const pricing = category === 'credit' || category === 'refund' ? billing : weighted(pricingMix[billing]!);
    const exchangeRate = round4(usdPer[pricing]! / usdPer[billing]!);
    // Billed transactions fall inside the invoice period; pending ones in the month after it.
    const dayOffset = Math.floor(rnd() * ((periodEnd - periodStart) / day + 1));
    const dateMs = (pending ? periodEnd + day : periodStart) + dayOffset * day + (category === 'usage' ? 0 : Math.floor(rnd() * 86_400) * 1000);
    const discount = pick([0, 0, 0, 0.05, 0.1, 0.15]);
    const p: TransactionProperties = {
      kind: 'All',
      date: isoSeconds(dateMs),
      invoice: pending ? 'pending' : c.invoice.name,
      ...(pending ? {} : { invoiceId: `${base}/invoices/${c.invoice.name}` }),
      billingCurrency: billing,
      pricingCurrency: pricing,
      exchangeRate,
      discount,
      billingProfileId: profileId,
      billingProfileDisplayName: c.profile.displayName,
      invoiceSectionId: `${profileId}/invoiceSections/${section.name}`,
      invoiceSectionDisplayName: section.displayName,
      ...(c.customer ? { customerId: c.customer.id, customerDisplayName: c.customer.displayName } : {}),
      cloudPlan: rnd() < 0.2 ? 'Vendor Cloud Plan for DevTest' : 'Vendor Cloud Plan',
      isThirdParty: false,
    };
    let product: Product;
    let quantity = 1;
    let units = 1;
    let sign = 1;
    let termYears = 0;
    switch (category) {
      case 'usage':
        product = pick(usageProducts);
        p.transactionType = 'Usage Charge';
        units = round2(1 + rnd() * (product[4].includes('Hour') ? 744 : 500));
        break;
      case 'purchase':
        product = pick(purchaseProducts);
        p.transactionType = 'Purchase';
        quantity = 1 + Math.floor(rnd() * 5);
        units = quantity;
        p.partNumber = `${product[2].slice(-4)}-${String(1000 + Math.floor(rnd() * 9000))}`;
        break;
      case 'reservation': {
        const [prod, years] = pick(reservationProducts);
        product = prod;
        termYears = years;
        p.kind = 'Reservation';
        p.transactionType = 'Purchase';
        quantity = 1 + Math.floor(rnd() * 3);
        units = quantity;
        p.partNumber = `${product[2].slice(-4)}-${String(1000 + Math.floor(rnd() * 9000))}`;
        break;
      }
      case 'marketplace':
        product = pick(marketplaceProducts);
        p.transactionType = 'Purchase';
        p.isThirdParty = true;
        quantity = 1 + Math.floor(rnd() * 10);
        units = product[4].includes('Hour') ? round2(1 + rnd() * 744) : quantity;
        break;
      case 'refund': {
        const [prod, years] = pick(reservationProducts);
        product = prod;
        termYears = years;
        p.kind = 'Reservation';
        p.transactionType = 'Refund';
        p.reasonCode = pick(['ReservationReturn', 'ReservationExchange', 'CustomerRequest']);
        sign = -1;
        quantity = 1;
        units = 1;
        break;
      }
      case 'credit': {
        const creditType = pick(creditTypes);
        product = ['Credits', 'Credit', 'DZH318Z0BQCR', creditDescriptions[creditType]!, '1/Month', '1 Credit', 25 + Math.floor(rnd() * 40) * 25];
        p.kind = 'Other';
        p.transactionType = 'Credit';
        p.creditType = creditType;
        p.reasonCode = creditType === 'ServiceInterruption' ? 'ServiceLevelAgreement' : 'CreditApplied';
        sign = -1;
        p.discount = 0;
        break;
      }
      default: {
        // Unbilled cancellations: the reservation or plan is cancelled after the invoice
        // closed, and the adjustment is billed on the next one (as in the contract example).
        product = rnd() < 0.5 ? pick(purchaseProducts) : pick(reservationProducts)[0];
        p.transactionType = 'Cancel';
        p.reasonCode = 'CustomerCancellation';
        quantity = 1;
        units = 1;
      }
    }
    const [family, type, typeId, description, unitOfMeasure, unitType, usdPrice] = product;
    Object.assign(p, { productFamily: family, productType: type, productTypeId: typeId, productDescription: description, unitOfMeasure, unitType, quantity, units });
    const market = round4(usdPrice / usdPer[pricing]!);
    const effective = round4(market * (1 - (p.discount ?? 0)));
    const charge = round2(effective * units * exchangeRate);
    const credit = sign > 0 && rnd() < 0.25 ? round2(charge * pick([0.1, 0.25, 0.5, 1])) : 0;
    const subTotal = round2(charge - credit);
    const taxRate = category === 'credit' ? 0 : billing === 'EUR' ? 0.19 : 0.08;
    const tax = round2(subTotal * taxRate);
    const amt = (v: number, currency = billing) => ({ currency, value: round2(v) });
    p.marketPrice = amt(market, pricing);
    p.effectivePrice = amt(effective, pricing);
    p.cloudCreditApplied = amt(credit);
    p.consumptionCommitmentDecremented = amt(sign > 0 && category === 'usage' && rnd() < 0.3 ? round2(subTotal * 0.5) : 0);
    p.subTotal = amt(sign * subTotal);
    p.tax = amt(sign * tax);
    p.transactionAmount = amt(sign * round2(subTotal + tax));
    if (rnd() < 0.04) p.specialTaxationType = pick(['SubtotalLevel', 'InvoiceLevel'] as const);
    if (category === 'refund') {
      const requested = round2(subTotal + tax);
      p.refundTransactionDetails = {
        amountRequested: amt(requested),
        amountRefunded: amt(rnd() < 0.8 ? requested : round2(requested * 0.5)),
        refundOperationId: stableUuid('billing-refund', c.accountName, c.invoice.name, String((c.first ?? 0) + i)),
      };
    }
    const end = termYears
      ? dateMs + termYears * 365 * day
      : category === 'usage'
        ? periodEnd
        : Math.min(dateMs + 30 * day, pending ? periodEnd + 31 * day : periodEnd + 30 * day);
    p.servicePeriodStartDate = isoSeconds(category === 'usage' ? periodStart : dateMs);
    p.servicePeriodEndDate = isoSeconds(end);

    const name = stableUuid('billing-transaction', c.accountName, c.invoice.name, String((c.first ?? 0) + i));
    const t: Transaction = {
      id: `/providers/Vendor.Billing/BillingAccounts/${c.accountName}/transactions/${name}`,
      name,
      type: 'Vendor.Billing/billingAccounts/transactions',
      properties: p,
      systemData: {
        createdAt: p.date!,
        createdBy: 'Vendor.Billing',
        createdByType: 'Application',
        lastModifiedAt: p.date!,
        lastModifiedBy: 'Vendor.Billing',
        lastModifiedByType: 'Application',
      },
    };
    if (rnd() < 0.35) t.tags = { costCenter: pick(costCenters), environment: pick(environments) };
    out.push(t);
  }
  return out.sort((a, b) => a.properties.date!.localeCompare(b.properties.date!) || a.name.localeCompare(b.name));
}

/**
 * The generated transactions of one invoice (a world file's `generate` of an invoice): its
 * profile's `sections`, the `customer` by display name (its id made from the name), `billed` +
 * `pending` transactions from `seed`, numbered from `first`.
 */
export function invoiceTransactions(
  accountName: string,
  invoice: Invoice,
  profile: BillingProfile,
  sections: InvoiceSection[],
  g: { billed: number; pending: number; seed: number; customer?: string; first?: number },
): Transaction[] {
  return generateTransactions({
    accountName,
    invoice,
    profile,
    sections: sections.filter((s) => s.profileName === profile.name),
    customer: g.customer ? { id: `/providers/Vendor.Billing/billingAccounts/${accountName}/customers/${stableUuid('billing-customer', g.customer)}`, displayName: g.customer } : undefined,
    billed: g.billed,
    pending: g.pending,
    seed: g.seed,
    first: g.first,
  });
}
