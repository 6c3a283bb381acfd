/**
 * Invoice transactions (spec resource-manager §2.3, §4.4, §5, §7, §8, §9; reference §4):
 * paging to the last page through absolute next links, `filter` / `orderBy` / `search` /
 * `count` against answers computed from the deterministic demo data set, the `top` cap,
 * 400s naming the parameter (and the position in an expression), name patterns, 403 for a
 * caller without a billing role, 404s and tenant isolation — with a plain `fetch` client
 * over HTTPS (the official `@azure/arm-billing` speaks an older api-version).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { examplesDir, readExample } from './helpers/reference.ts';
import { demoBilling } from './helpers/demo-world.ts';
import type { Transaction } from '../src/services/billing/model.ts';

const api = '2024-04-01';
const account = '70000001';
const g1 = demoBilling()[0]!.transactions['G000000001']!;
const g2 = demoBilling()[0]!.transactions['G000000002']!;
const g3 = demoBilling()[1]!.transactions['G000000003']!;

let s: TestServer;
let adminToken: string;
let userTok: string;
let spToken: string;
let eveToken: string;
let miToken: string;

const listPath = (invoice: string, query: Record<string, string> = {}, acct = account) =>
  `/providers/Vendor.Billing/billingAccounts/${acct}/invoices/${invoice}/transactions?${new URLSearchParams({ 'api-version': api, ...query }).toString()}`;

const summaryPath = (invoice: string, query: Record<string, string> = {}) =>
  `/providers/Vendor.Billing/billingAccounts/${account}/invoices/${invoice}/transactionSummary?${new URLSearchParams({ 'api-version': api, ...query }).toString()}`;

async function get(pathOrUrl: string, token: string | null = adminToken) {
  const res = await fetch(pathOrUrl.startsWith('https://') ? pathOrUrl : `${s.url}${pathOrUrl}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

/** Follows next links to the end; returns every transaction, the page sizes and the first page's count. */
async function listAll(invoice: string, query: Record<string, string> = {}) {
  const items: Transaction[] = [];
  const sizes: number[] = [];
  const counts: number[] = [];
  let url: string | undefined = listPath(invoice, query);
  while (url) {
    const r = await get(url);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.headers.get('content-type'), 'application/json; charset=utf-8');
    items.push(...r.body.value);
    sizes.push(r.body.value.length);
    if (r.body.totalCount !== undefined) counts.push(r.body.totalCount);
    if (r.body.nextLink !== undefined) {
      assert.ok(r.body.nextLink.startsWith(`${s.url}/providers/Vendor.Billing/billingAccounts/${account}/invoices/${invoice}/transactions?`), r.body.nextLink);
      assert.ok(new URL(r.body.nextLink).searchParams.get('api-version') === api);
    }
    url = r.body.nextLink;
    assert.ok(sizes.length < 100, 'paging does not end');
  }
  return { items, names: items.map((t) => t.name), sizes, counts };
}

/** Names of the seed transactions matching `pred`, in the default (seq) order. */
const expectNames = (list: Transaction[], pred: (t: Transaction) => boolean) => list.filter(pred).map((t) => t.name);

/** The seed list sorted by `key` (nulls last ascending, first descending), ties by seq. */
function sortedNames(list: Transaction[], keys: [(t: Transaction) => string | number | undefined, 'asc' | 'desc'][]): string[] {
  const idx = new Map(list.map((t, i) => [t.name, i]));
  return [...list]
    .sort((a, b) => {
      for (const [key, dir] of keys) {
        const x = key(a);
        const y = key(b);
        const sign = dir === 'asc' ? 1 : -1;
        if (x === y) continue;
        if (x === undefined) return sign;
        if (y === undefined) return -sign;
        return (x < y ? -1 : 1) * sign;
      }
      return idx.get(a.name)! - idx.get(b.name)!;
    })
    .map((t) => t.name);
}

before(async () => {
  s = await startTestServer();
  const scope = ['api://stratus/arm/user_impersonation'];
  adminToken = await userToken(s.url, identities.admin, scope);
  userTok = await userToken(s.url, identities.user, scope);
  eveToken = await userToken(s.url, identities.eve, scope);
  spToken = await appToken(s.url, 'arm', identities.sp);
  miToken = await appToken(s.url, 'arm', identities.mi);
});
after(async () => {
  await s?.close();
});


/** `{path: JSON type}` of every leaf of `v` (array items merged under `[]`). */
function shapeOf(v: unknown, at = '', out: Record<string, string> = {}): Record<string, string> {
  if (Array.isArray(v)) v.forEach((x) => shapeOf(x, `${at}[]`, out));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) shapeOf(x, `${at}/${k}`, out);
  else out[at] = v === null ? 'null' : typeof v;
  return out;
}

test('the published example (transactionsListByInvoice), field by field: every field it shows is served with the same type and form', async (t) => {
  const dir = examplesDir(t);
  const ex = readExample(dir, 'transactionsListByInvoice.json');
  assert.equal(ex.parameters['api-version'], api);
  const exBody = ex.responses['200'].body;
  const r = await listAll('G000000001');
  const ours = shapeOf({ value: r.items });
  const theirs = shapeOf({ value: exBody.value });
  for (const [k, type] of Object.entries(theirs)) {
    assert.ok(k in ours, `the example's field ${k} is never served`);
    assert.equal(ours[k], type, k);
  }
  // The billed and the unbilled item of the example: ids, names and invoice values in the same form.
  const billed = r.items.find((t) => t.properties.invoice !== 'pending')!;
  const unbilled = r.items.find((t) => t.properties.invoice === 'pending')!;
  const [exBilled, exUnbilled] = exBody.value;
  assert.equal(billed.type, exBilled.type);
  assert.equal(billed.id, exBilled.id.replace('{billingAccountName}', account).replace(exBilled.name, billed.name));
  assert.equal(billed.properties.invoiceId, exBilled.properties.invoiceId.replace('{billingAccountName}', account).replace(exBilled.properties.invoice, 'G000000001'));
  assert.equal(exUnbilled.properties.invoice, 'pending');
  assert.equal(unbilled.properties.invoiceId, undefined);
  assert.equal(exUnbilled.properties.invoiceId, undefined);
  assert.match(billed.properties.date!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
});

test('the demo invoices hold the documented data set', () => {
  assert.ok(g1.length >= 200);
  assert.ok(g2.length > 0);
  const types = new Set(g1.map((t) => t.properties.transactionType));
  for (const t of ['Usage Charge', 'Purchase', 'Refund', 'Credit', 'Cancel']) assert.ok(types.has(t), t);
  assert.ok(g1.some((t) => t.properties.isThirdParty));
  assert.ok(g1.some((t) => t.properties.refundTransactionDetails?.refundOperationId));
  assert.ok(new Set(g1.map((t) => t.properties.pricingCurrency)).size >= 4);
  // Every TransactionProperties field of spec §2.3 occurs in the demo set.
  const fields = new Set([...g1, ...g2].flatMap((t) => Object.keys(t.properties)));
  const spec = [
    'cloudCreditApplied', 'cloudPlan', 'billingCurrency', 'billingProfileDisplayName', 'billingProfileId', 'consumptionCommitmentDecremented', 'creditType',
    'customerDisplayName', 'customerId', 'date', 'discount', 'effectivePrice', 'exchangeRate', 'invoice', 'invoiceId', 'invoiceSectionDisplayName',
    'invoiceSectionId', 'isThirdParty', 'kind', 'marketPrice', 'partNumber', 'pricingCurrency', 'productDescription', 'productFamily', 'productType',
    'productTypeId', 'quantity', 'reasonCode', 'refundTransactionDetails', 'servicePeriodEndDate', 'servicePeriodStartDate', 'specialTaxationType',
    'subTotal', 'tax', 'transactionAmount', 'transactionType', 'unitOfMeasure', 'unitType', 'units',
  ];
  assert.deepEqual([...fields].sort(), [...spec].sort());
  for (const t of [...g1, ...g2]) {
    assert.ok(['Other', 'All', 'Reservation'].includes(t.properties.kind!));
    for (const [k, v] of Object.entries(t.tags ?? {})) assert.ok(k.length >= 1 && k.length <= 256 && v.length >= 1 && v.length <= 256 && !/[<>%&\\?/]/.test(k), k);
  }
});

test('paging walks the whole invoice in pages of 50 (the default and maximum) to a last page without nextLink', async () => {
  const r = await listAll('G000000001');
  assert.deepEqual(r.names, g1.map((t) => t.name));
  const full = Math.floor(g1.length / 50);
  assert.deepEqual(r.sizes, [...Array(full).fill(50), ...(g1.length % 50 ? [g1.length % 50] : [])]);
  // The full record of §2.3 comes back as stored: every field, Amounts, systemData, tags.
  assert.deepEqual(r.items, g1);
  const refund = r.items.find((t) => t.properties.transactionType === 'Refund')!;
  assert.equal(refund.properties.kind, 'Reservation');
  assert.ok(refund.properties.refundTransactionDetails!.amountRequested!.value > 0);
  assert.match(refund.id, new RegExp(`^/providers/Vendor.Billing/BillingAccounts/${account}/transactions/${refund.name}$`));
  assert.equal(refund.type, 'Vendor.Billing/billingAccounts/transactions');
  const pending = r.items.filter((t) => t.properties.invoice === 'pending');
  assert.ok(pending.length > 0);
  assert.ok(pending.every((t) => t.properties.invoiceId === undefined));
  assert.ok(r.items.filter((t) => t.properties.invoice === 'G000000001').every((t) => t.properties.invoiceId === `/providers/Vendor.Billing/billingAccounts/${account}/invoices/G000000001`));
});

test('top sets the page size, count=true adds totalCount on every page, skip starts later, and next links keep the query', async () => {
  const r = await listAll('G000000001', { top: '7', count: 'true', filter: "kind eq 'Reservation'" });
  const expected = expectNames(g1, (t) => t.properties.kind === 'Reservation');
  assert.deepEqual(r.names, expected);
  assert.ok(r.sizes.slice(0, -1).every((n) => n === 7));
  assert.ok(r.counts.length === r.sizes.length && r.counts.every((c) => c === expected.length));

  const skipped = await get(listPath('G000000001', { skip: '250', top: '50' }));
  assert.equal(skipped.status, 200);
  assert.deepEqual(skipped.body.value.map((t: Transaction) => t.name), g1.slice(250).map((t) => t.name));
  assert.equal(skipped.body.nextLink, undefined);
  assert.equal(skipped.body.totalCount, undefined);

  const beyond = await get(listPath('G000000001', { skip: '5000', count: 'true' }));
  assert.equal(beyond.status, 200);
  assert.deepEqual(beyond.body.value, []);
  assert.equal(beyond.body.totalCount, g1.length);
});

test('top above 50, top 0, non-integer top/skip and a non-boolean count are 400s naming the parameter', async () => {
  for (const [query, target] of [
    [{ top: '51' }, 'top'],
    [{ top: '0' }, 'top'],
    [{ top: 'ten' }, 'top'],
    [{ skip: '-1' }, 'skip'],
    [{ skip: '1.5' }, 'skip'],
    [{ count: 'maybe' }, 'count'],
  ] as const) {
    const r = await get(listPath('G000000001', query));
    assert.equal(r.status, 400, JSON.stringify(query));
    assert.equal(r.body.error.code, 'InvalidParameter');
    assert.equal(r.body.error.target, target);
    assert.ok(r.body.error.message.includes(`'${target}'`), r.body.error.message);
  }
  const r = await get(listPath('G000000001', { top: '51' }));
  assert.match(r.body.error.message, /maximum supported value for top is 50/);
});

test('filter compiles comparison, and/or/not, parentheses, contains/startswith, dates, booleans, enums and amounts to the right rows', async () => {
  const cases: [string, Transaction[], (t: Transaction) => boolean][] = [
    ["properties/kind eq 'Reservation'", g1, (t) => t.properties.kind === 'Reservation'],
    ["kind eq 'all'", g1, (t) => t.properties.kind === 'All'],
    ["transactionAmount/value gt 500 and (pricingCurrency eq 'GBP' or pricingCurrency eq 'JPY')", g1, (t) => t.properties.transactionAmount!.value > 500 && ['GBP', 'JPY'].includes(t.properties.pricingCurrency!)],
    ["not (transactionType eq 'Usage Charge')", g1, (t) => t.properties.transactionType !== 'Usage Charge'],
    ["contains(productDescription, 'reserved')", g1, (t) => t.properties.productDescription!.toLowerCase().includes('reserved')],
    ["startswith(properties/productFamily, 'Data')", g1, (t) => t.properties.productFamily!.startsWith('Data')],
    ['properties/date ge 2026-08-15T00:00:00Z and properties/date lt 2026-08-20T00:00:00Z', g1, (t) => t.properties.date! >= '2026-08-15T00:00:00Z' && t.properties.date! < '2026-08-20T00:00:00Z'],
    ['isThirdParty eq true', g1, (t) => t.properties.isThirdParty === true],
    ["invoice eq 'pending'", g1, (t) => t.properties.invoice === 'pending'],
    ["creditType eq 'ServiceInterruption' or creditType eq 'CloudFreeCredit'", g1, (t) => ['ServiceInterruption', 'CloudFreeCredit'].includes(t.properties.creditType!)],
    ['creditType ne null', g1, (t) => t.properties.creditType !== undefined],
    [
      'refundTransactionDetails/amountRefunded/value lt refundTransactionDetails/amountRequested/value',
      g1,
      (t) => t.properties.refundTransactionDetails !== undefined && t.properties.refundTransactionDetails.amountRefunded!.value < t.properties.refundTransactionDetails.amountRequested!.value,
    ],
    ["exchangeRate ne 1 and billingCurrency eq 'EUR'", g2, (t) => t.properties.exchangeRate !== 1],
    ["customerDisplayName eq 'northwind traders'", g2, () => true],
    ['cloudCreditApplied/value gt 0 and tax/value ge 10', g2, (t) => t.properties.cloudCreditApplied!.value > 0 && t.properties.tax!.value >= 10],
  ];
  for (const [filter, list, pred] of cases) {
    const invoice = list === g1 ? 'G000000001' : 'G000000002';
    const expected = expectNames(list, pred);
    assert.ok(expected.length > 0 && (expected.length < list.length || filter.startsWith('customer')), `case '${filter}' must select some rows`);
    const r = await listAll(invoice, { filter, count: 'true' });
    assert.deepEqual(r.names, expected, filter);
    assert.equal(r.counts[0], expected.length, filter);
  }
});

test('orderBy sorts by amounts, dates and strings (several keys, nulls last ascending), and pages keep the order', async () => {
  const cases: [string, [(t: Transaction) => string | number | undefined, 'asc' | 'desc'][]][] = [
    ['properties/transactionAmount/value desc', [[(t) => t.properties.transactionAmount!.value, 'desc']]],
    ['productDescription asc, date desc', [[(t) => t.properties.productDescription, 'asc'], [(t) => t.properties.date, 'desc']]],
    ['creditType', [[(t) => t.properties.creditType, 'asc']]],
    ['creditType desc', [[(t) => t.properties.creditType, 'desc']]],
    ['pricingCurrency asc, units desc', [[(t) => t.properties.pricingCurrency, 'asc'], [(t) => t.properties.units, 'desc']]],
  ];
  for (const [orderBy, keys] of cases) {
    const r = await listAll('G000000001', { orderBy, top: '40' });
    assert.deepEqual(r.names, sortedNames(g1, keys), orderBy);
  }
  const filtered = await listAll('G000000002', { filter: "transactionType eq 'Purchase'", orderBy: 'marketPrice/value desc' });
  assert.deepEqual(filtered.names, sortedNames(g2.filter((t) => t.properties.transactionType === 'Purchase'), [[(t) => t.properties.marketPrice!.value, 'desc']]));
});

test('search matches string fields case-insensitively, combines with filter, and treats % and _ literally', async () => {
  const text = (t: Transaction) =>
    [
      t.properties.invoice,
      t.properties.transactionType,
      t.properties.productFamily,
      t.properties.productType,
      t.properties.productTypeId,
      t.properties.productDescription,
      t.properties.billingProfileDisplayName,
      t.properties.invoiceSectionDisplayName,
      t.properties.customerDisplayName,
      t.properties.cloudPlan,
      t.properties.unitOfMeasure,
      t.properties.unitType,
      t.properties.partNumber,
      t.properties.reasonCode,
    ].map((x) => (x ?? '').toLowerCase());
  for (const term of ['NORTHWIND', 'reserved vm', 'data and analytics', 'ReservationReturn', 'devtest']) {
    const expected = expectNames(g1, (t) => text(t).some((x) => x.includes(term.toLowerCase())));
    assert.ok(expected.length > 0 && expected.length < g1.length, term);
    const r = await listAll('G000000001', { search: term, count: 'true' });
    assert.deepEqual(r.names, expected, term);
    assert.equal(r.counts[0], expected.length);
  }
  const both = await listAll('G000000001', { search: 'storage', filter: "transactionType eq 'Usage Charge'" });
  assert.deepEqual(both.names, expectNames(g1, (t) => t.properties.transactionType === 'Usage Charge' && text(t).some((x) => x.includes('storage'))));
  for (const term of ['%', '_1', 'no such product']) {
    const r = await get(listPath('G000000001', { search: term }));
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.value, [], term);
  }  // A control character (U+0000 is refused by PostgreSQL) is a 400 naming search.
  const nul = await get(listPath('G000000001', { search: 'stor\u0000age' }));
  assert.equal(nul.status, 400);
  assert.equal(nul.body.error.code, 'InvalidParameter');
  assert.equal(nul.body.error.target, 'search');
});

test('the query names also work with a $ prefix, percent-encoded, and in any case', async () => {
  const expected = sortedNames(
    g1.filter((t) => t.properties.kind === 'Reservation'),
    [[(t) => t.properties.date, 'desc']],
  ).slice(0, 5);
  const variants = [
    `&$filter=${encodeURIComponent("kind eq 'Reservation'")}&$orderby=${encodeURIComponent('date desc')}&$top=5`,
    `&%24filter=${encodeURIComponent("kind eq 'Reservation'")}&%24orderBy=${encodeURIComponent('date desc')}&%24top=5`,
    `&Filter=${encodeURIComponent("kind eq 'Reservation'")}&ORDERBY=${encodeURIComponent('date desc')}&Top=5`,
  ];
  for (const v of variants) {
    const r = await get(`/providers/Vendor.Billing/billingAccounts/${account}/invoices/G000000001/transactions?api-version=${api}${v}`);
    assert.equal(r.status, 200, v);
    assert.deepEqual(r.body.value.map((t: Transaction) => t.name), expected, v);
    assert.match(r.body.nextLink, /[?&]filter=kind%20eq%20%27Reservation%27/);
    assert.match(r.body.nextLink, /[?&]orderBy=date%20desc/);
  }
});

test('transactionSummary totals the matching transactions in the billing currency', async () => {
  const cents = (n: number) => Math.round(n * 100) / 100 + 0;
  const sum = (list: Transaction[], f: (t: Transaction) => number) => cents(list.reduce((a, t) => a + f(t), 0));
  for (const [invoice, list, query, pred] of [
    ['G000000001', g1, {}, () => true],
    ['G000000001', g1, { filter: "transactionType eq 'Usage Charge'" }, (t: Transaction) => t.properties.transactionType === 'Usage Charge'],
    ['G000000002', g2, { search: 'reserved' }, (t: Transaction) => /reserved/i.test(t.properties.productDescription!)],
  ] as const) {
    const sel = list.filter(pred);
    const r = await get(summaryPath(invoice, query));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, {
      billingCurrency: list === g1 ? 'USD' : 'EUR',
      cloudCreditApplied: sum(sel, (t) => t.properties.cloudCreditApplied!.value),
      consumptionCommitmentDecremented: sum(sel, (t) => t.properties.consumptionCommitmentDecremented!.value),
      subTotal: sum(sel, (t) => t.properties.subTotal!.value),
      tax: sum(sel, (t) => t.properties.tax!.value),
      total: sum(sel, (t) => t.properties.transactionAmount!.value),
    });
  }
  const none = await get(summaryPath('G000000001', { filter: "invoice eq 'G000000002'" }));
  assert.equal(none.body.total, 0);
  const bad = await get(summaryPath('G000000001', { filter: 'kind eq' }));
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, 'InvalidFilter');
  const denied = await get(summaryPath('G000000001'), userTok);
  assert.equal(denied.status, 403);
});

test('a malformed or unknown filter / orderBy is a 400 with the position', async () => {
  const bad: [string, string, string, number][] = [
    ['filter', "kind eq 'All' and", 'InvalidFilter', 17],
    ['filter', 'foo eq 1', 'InvalidFilter', 0],
    ['filter', "kind eq 'All' and properties/nope gt 3", 'InvalidFilter', 18],
    ['filter', "transactionAmount/value eq 'x'", 'InvalidFilter', 27],
    ['filter', "(kind eq 'All'", 'InvalidFilter', 14],
    ['orderBy', 'date sideways', 'InvalidOrderBy', 5],
    ['orderBy', 'date, bogus desc', 'InvalidOrderBy', 6],
  ];
  for (const [param, expr, code, position] of bad) {
    const r = await get(listPath('G000000001', { [param]: expr }));
    assert.equal(r.status, 400, expr);
    assert.equal(r.body.error.code, code, expr);
    assert.equal(r.body.error.target, param);
    assert.ok(r.body.error.message.includes(`position ${position}`), `${expr}: ${r.body.error.message}`);
  }
  const unknown = await get(listPath('G000000001', { filter: 'foo eq 1' }));
  assert.match(unknown.body.error.message, /'foo'/);
});

test('an expression nested too deeply for the parser is a 400, not a 500 (filter, orderBy, transactionSummary)', async () => {
  // Unencoded parentheses keep the URL under the server's header size limit.
  const deep = `${'('.repeat(6000)}kind`;
  for (const [path, param, code] of [
    [`${listPath('G000000001')}&filter=${deep}`, 'filter', 'InvalidFilter'],
    [`${listPath('G000000001')}&orderBy=${deep}`, 'orderBy', 'InvalidOrderBy'],
    [`${summaryPath('G000000001')}&filter=${deep}`, 'filter', 'InvalidFilter'],
  ] as const) {
    const r = await get(path);
    assert.equal(r.status, 400, JSON.stringify(r.body).slice(0, 300));
    assert.equal(r.body.error.code, code);
    assert.equal(r.body.error.target, param);
    assert.ok(r.body.error.message.length < 600, 'the message quotes the expression cut short');
  }
  // A moderately nested expression still works.
  const ok = await get(listPath('G000000001', { filter: `${'('.repeat(50)}kind eq 'All'${')'.repeat(50)}`, top: '1' }));
  assert.equal(ok.status, 200);
});

test('billingAccountName and invoiceName must match the spec patterns (400 naming the parameter)', async () => {
  for (const [acct, invoice, target] of [
    ['billing-1', 'G000000001', 'billingAccountName'],
    ['12ab', 'G000000001', 'billingAccountName'],
    [account, 'g000000001', 'invoiceName'],
    [account, 'G00000001', 'invoiceName'],
    [account, 'X000000001', 'invoiceName'],
  ]) {
    const r = await get(listPath(invoice!, {}, acct));
    assert.equal(r.status, 400, `${acct}/${invoice}`);
    assert.equal(r.body.error.code, 'InvalidParameter');
    assert.equal(r.body.error.target, target);
    assert.ok(r.body.error.message.includes(target!));
  }
  // Every name shape the patterns allow reaches the lookup (404, not 400).
  for (const [acct, invoice] of [
    ['PCN.abc123', 'G000000001'],
    ['00000000-0000-0000-0000-000000000000:00000000-0000-0000-0000-000000000000_2019-05-31', 'G000000001'],
  ]) {
    const r = await get(listPath(invoice!, {}, encodeURIComponent(acct!)));
    assert.equal(r.status, 404, acct);
  }
  for (const invoice of ['H1-ABC', 'HT123456789', 'D123456789', 'EB12345678', 'EA12345678', 'T123456789']) {
    const r = await get(listPath(invoice));
    assert.equal(r.status, 404, invoice);
    assert.equal(r.body.error.code, 'InvoiceNotFound');
  }
});

test('a billing reader (the managed identity) may list; a caller without a billing role gets 403 AuthorizationFailed', async () => {
  const reader = await get(listPath('G000000002', { top: '3' }), miToken);
  assert.equal(reader.status, 200);
  assert.deepEqual(reader.body.value.map((t: Transaction) => t.name), g2.slice(0, 3).map((t) => t.name));
  for (const token of [userTok, spToken]) {
    const r = await get(listPath('G000000001'), token);
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'AuthorizationFailed');
    assert.match(r.body.error.message, new RegExp(`over scope '/providers/Vendor.Billing/billingAccounts/${account}'`));
  }
});

test('billing accounts are per tenant: another tenant sees only its own account', async () => {
  const other = await get(listPath('G000000003', {}, '70000002'), eveToken);
  assert.equal(other.status, 200);
  assert.deepEqual(other.body.value.map((t: Transaction) => t.name), g3.map((t) => t.name));
  const cross = await get(listPath('G000000001'), eveToken);
  assert.equal(cross.status, 404);
  assert.equal(cross.body.error.code, 'BillingAccountNotFound');
  const back = await get(listPath('G000000003', {}, '70000002'), adminToken);
  assert.equal(back.status, 404);
  const missing = await get(listPath('G000000001', {}, '70000009'));
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.target, 'billingAccountName');
  const noInvoice = await get(listPath('G000000009'));
  assert.equal(noInvoice.status, 404);
  assert.equal(noInvoice.body.error.code, 'InvoiceNotFound');
});

test('api-version and the bearer token are checked first, in the ARM envelope', async () => {
  const base = `/providers/Vendor.Billing/billingAccounts/${account}/invoices/G000000001/transactions`;
  const none = await get(base);
  assert.equal(none.status, 400);
  assert.equal(none.body.error.code, 'MissingApiVersionParameter');
  const old = await get(`${base}?api-version=2018-11-01-preview`);
  assert.equal(old.status, 400);
  assert.equal(old.body.error.code, 'InvalidApiVersionParameter');
  assert.match(old.body.error.message, /'2024-04-01,2020-05-01'/);
  const anon = await get(listPath('G000000001'), null);
  assert.equal(anon.status, 401);
  assert.equal(anon.body.error.code, 'AuthenticationFailed');
  const ok = await get(listPath('G000000001', { top: '1' }));
  assert.equal(ok.status, 200);
  assert.ok(ok.headers.get('x-vendor-request-id'));
});

test('the data survives a restart', async () => {
  await s.restart();
  const r = await get(listPath('G000000002', { count: 'true', top: '1' }));
  assert.equal(r.status, 200);
  assert.equal(r.body.totalCount, g2.length);
  assert.deepEqual(r.body.value[0], g2[0]);
});
