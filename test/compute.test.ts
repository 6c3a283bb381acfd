/**
 * Compute SKU catalog (spec resource-manager §2.2, §4.3; reference §3, §7): the official
 * `@azure/arm-compute` client (classic 23.x) pointed at Stratus over HTTPS with a
 * client-credentials token from Stratus's own token endpoint, plus raw HTTPS for the wire
 * shape (next links, `%24filter`, exact records).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { ComputeManagementClient, type ResourceSku as SdkSku } from '@azure/arm-compute';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, staticCredential, userToken } from './helpers/auth.ts';
import { examplesDir, readExample } from './helpers/reference.ts';
import { demoSubscription } from '../src/seed/demo.ts';
import { catalogRows, loadCatalog, shapeSku, shippedCatalogRows, skuPageSize, type ResourceSku } from '../src/services/compute/index.ts';

const catalog = loadCatalog();
const plain = catalog.map((s) => shapeSku(s, false)).filter((s): s is ResourceSku => s !== undefined);
const key = (s: { resourceType?: string; name?: string; size?: string; locations?: string[] }) => `${s.resourceType}|${s.name}|${s.size ?? ''}|${(s.locations ?? []).join(',')}`;
const skuPath = `/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus`;
const isEdge = (l: { type?: string }) => l.type === 'EdgeZone';

describe('compute SKUs', () => {
  let s: TestServer;
  let client: ComputeManagementClient;
  let token: string;

  async function get(pathAndQuery: string, bearer: string | undefined = token): Promise<{ status: number; body: any; headers: Headers }> {
    const url = pathAndQuery.startsWith('https://') ? pathAndQuery : `${s.url}${pathAndQuery}`;
    const res = await fetch(url, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  }
  /** Every record of a listing, following next links over raw HTTPS; returns the links too. */
  async function listAll(query: string): Promise<{ records: any[]; links: (string | null)[] }> {
    const records: any[] = [];
    const links: (string | null)[] = [];
    let next: string | null = `${skuPath}?api-version=2021-07-01${query}`;
    while (next) {
      const r = await get(next);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual(Object.keys(r.body).sort(), ['nextLink', 'value']);
      records.push(...r.body.value);
      links.push(r.body.nextLink);
      next = r.body.nextLink;
    }
    return { records, links };
  }

  before(async () => {
    s = await startTestServer({ env: { STRATUS_PROVIDER_NAMESPACE_ALIASES: 'Microsoft.' } });
    token = await appToken(s.url, 'arm');
    client = new ComputeManagementClient(staticCredential(() => appToken(s.url, 'arm')), demoSubscription.id, { endpoint: s.url });
  });
  after(async () => {
    await s?.close();
  });

  test('the shipped catalog: >= 300 SKU names, >= 20 locations with zones, all resource types, several thousand records', () => {
    assert.ok(new Set(catalog.map((x) => x.name)).size >= 300);
    const locations = new Set(catalog.flatMap((x) => x.locations));
    assert.ok(locations.size >= 20);
    const zoned = new Set(catalog.filter((x) => x.locationInfo.some((l) => (l.zones ?? []).length === 3)).flatMap((x) => x.locations));
    assert.ok(zoned.size >= 15);
    assert.deepEqual([...new Set(catalog.map((x) => x.resourceType))].sort(), ['availabilitySets', 'disks', 'hostGroups', 'hostGroups/hosts', 'snapshots', 'virtualMachines']);
    assert.ok(catalog.length > 3000);
    assert.ok(plain.length < catalog.length, 'some records exist only in edge zones');
  });

  test('the served catalog keeps each record as its own JSON text, and the shape without extended locations only where it differs', () => {
    // Most columns are read from each line's head instead of parsing it: the rows must be
    // exactly those of the parsed records.
    const rows = shippedCatalogRows();
    assert.equal(rows.length, catalog.length);
    let differing = 0;
    catalog.forEach((sku, i) => {
      const shaped = shapeSku(sku, false);
      const expected = {
        seq: i + 1,
        location: sku.locations[0]!.toLowerCase(),
        extendedOnly: !shaped,
        body: JSON.stringify(sku),
        bodyPlain: shaped && shaped !== sku ? JSON.stringify(shaped) : null,
      };
      if (expected.bodyPlain !== null || expected.extendedOnly) differing++;
      assert.deepEqual(rows[i], expected, `record ${i + 1}`);
    });
    assert.ok(differing > 0, 'some records have extended locations');
    // A line in another key order, or with an extended location, is parsed rather than read by its head.
    const odd = { name: 'X', resourceType: 'disks', locations: ['WestUS'], locationInfo: [{ location: 'WestUS', extendedLocations: ['e1'], type: 'EdgeZone' }] };
    const [row] = catalogRows(`[\n${JSON.stringify(odd)}\n]\n`);
    // CRLF line ends (a checkout that converts them) give the same rows.
    const crlf = `[\r\n${JSON.stringify(odd)},\r\n${JSON.stringify(catalog[0])}\r\n]\r\n`;
    assert.deepEqual(catalogRows(crlf).map((r) => r.body), [JSON.stringify(odd), JSON.stringify(catalog[0])]);
    assert.deepEqual(row, { seq: 1, location: 'westus', extendedOnly: true, body: JSON.stringify(odd), bodyPlain: null });
  });

  test('the client lists every SKU across all pages; extended locations are absent unless asked for', async () => {
    const seen: SdkSku[] = [];
    for await (const sku of client.resourceSkus.list()) seen.push(sku);
    assert.equal(seen.length, plain.length);
    assert.ok(seen.length > skuPageSize * 2, 'the listing spans several pages');
    assert.deepEqual(seen.map(key), plain.map(key));
    assert.equal(seen.filter((x) => (x.locationInfo ?? []).some(isEdge)).length, 0);
  });

  test('the client pages by nextLink: page sizes, and pages equal the catalog in order', async () => {
    const pages: SdkSku[][] = [];
    for await (const page of client.resourceSkus.list().byPage()) pages.push(page);
    assert.equal(pages.length, Math.ceil(plain.length / skuPageSize));
    for (const p of pages.slice(0, -1)) assert.equal(p.length, skuPageSize);
    assert.equal(pages.flat().length, plain.length);
  });

  test('next links are absolute on the public URL, keep api-version and the query, and the last one is null', async () => {
    const { records, links } = await listAll('&includeExtendedLocations=true');
    assert.equal(records.length, catalog.length);
    assert.equal(links.at(-1), null);
    for (const l of links.slice(0, -1)) {
      const u = new URL(l!);
      assert.equal(u.origin, s.url);
      assert.equal(u.pathname, skuPath);
      assert.equal(u.searchParams.get('api-version'), '2021-07-01');
      assert.equal(u.searchParams.get('includeExtendedLocations'), 'true');
      assert.ok(u.searchParams.get('$skiptoken'));
    }
  });

  test('records on the wire are the catalog records exactly (every §2.2 field the catalog has), EdgeZone entries only when asked', async () => {
    const withExt = await listAll('&includeExtendedLocations=true');
    assert.deepEqual(withExt.records, catalog);
    const without = await listAll('');
    assert.deepEqual(without.records, plain);
  });

  test('a location filter narrows the list to that location (client and wire; display-name spelling too)', async () => {
    for (const loc of ['westeurope', 'japanwest', 'eastus']) {
      const expected = plain.filter((x) => x.locations[0] === loc);
      const seen: SdkSku[] = [];
      for await (const sku of client.resourceSkus.list({ filter: `location eq '${loc}'` })) seen.push(sku);
      assert.ok(expected.length > 100);
      assert.deepEqual(seen.map(key), expected.map(key));
      for (const sku of seen) {
        assert.deepEqual(sku.locations, [loc]);
        for (const li of sku.locationInfo ?? []) assert.equal(li.location, loc);
      }
    }
    const spaced = await listAll(`&$filter=${encodeURIComponent("Location eq 'West Europe'")}`);
    assert.equal(spaced.records.length, plain.filter((x) => x.locations[0] === 'westeurope').length);
  });

  test('$filter arrives percent-encoded as %24filter (the modular client does that) and still filters', async () => {
    const r = await listAll(`&%24filter=location%20eq%20%27southcentralus%27&includeExtendedLocations=true`);
    assert.deepEqual(r.records, catalog.filter((x) => x.locations[0] === 'southcentralus'));
  });

  test('extended locations: with includeExtendedLocations "true" the client sees EdgeZone entries (no zones) and edge-only SKUs', async () => {
    const withExt: SdkSku[] = [];
    for await (const sku of client.resourceSkus.list({ filter: "location eq 'westus'", includeExtendedLocations: 'true' })) withExt.push(sku);
    const expected = catalog.filter((x) => x.locations[0] === 'westus');
    assert.deepEqual(withExt.map(key), expected.map(key));
    const edge = withExt.filter((x) => (x.locationInfo ?? []).some(isEdge));
    assert.ok(edge.length > 10);
    for (const sku of edge) {
      const e = sku.locationInfo!.find(isEdge)!;
      assert.deepEqual(e.extendedLocations, ['Las Vegas', 'Seattle', 'Portland']);
      assert.equal(e.location, 'westus');
      assert.equal(e.zones, undefined);
    }
    const edgeOnly = withExt.filter((x) => (x.locationInfo ?? []).every(isEdge));
    assert.ok(edgeOnly.length > 0, 'westus has SKUs offered only in its edge zones');

    const withoutExt: SdkSku[] = [];
    for await (const sku of client.resourceSkus.list({ filter: "location eq 'westus'" })) withoutExt.push(sku);
    assert.equal(withoutExt.length, withExt.length - edgeOnly.length);
    assert.equal(withoutExt.filter((x) => (x.locationInfo ?? []).some(isEdge)).length, 0);
    // A value other than true (case-insensitively) is the same as leaving it out.
    const no = await listAll(`&$filter=${encodeURIComponent("location eq 'westus'")}&includeExtendedLocations=false`);
    assert.equal(no.records.length, withoutExt.length);
    const upper = await listAll(`&$filter=${encodeURIComponent("location eq 'westus'")}&includeExtendedLocations=TRUE`);
    assert.equal(upper.records.length, withExt.length);
    // Regions without edge zones gain nothing.
    const eu = await listAll(`&$filter=${encodeURIComponent("location eq 'northeurope'")}&includeExtendedLocations=true`);
    assert.equal(eu.records.filter((x) => x.locationInfo.some(isEdge)).length, 0);
  });

  test('record shape through the client: capability values are strings, booleans True/False, the spec capability names all occur', async () => {
    const seen: SdkSku[] = [];
    for await (const sku of client.resourceSkus.list({ includeExtendedLocations: 'true' })) seen.push(sku);
    const specNames = ['MaxResourceVolumeMB', 'OSVhdSizeMB', 'vCPUs', 'HyperVGenerations', 'MemoryGB', 'MaxDataDiskCount', 'LowPriorityCapable', 'PremiumIO', 'vCPUsAvailable', 'ACUs', 'vCPUsPerCore', 'EphemeralOSDiskSupported', 'AcceleratedNetworkingEnabled', 'RdmaEnabled', 'MaxNetworkInterfaces'];
    const vmCaps = new Set(seen.filter((x) => x.resourceType === 'virtualMachines').flatMap((x) => (x.capabilities ?? []).map((c) => c.name)));
    for (const n of specNames) assert.ok(vmCaps.has(n), `capability ${n}`);
    // The client's deserialized records carry every field the catalog has, nothing lost or added.
    assert.deepEqual(JSON.parse(JSON.stringify(seen)), catalog);
    const boolNames = new Set(['LowPriorityCapable', 'PremiumIO', 'EphemeralOSDiskSupported', 'AcceleratedNetworkingEnabled', 'RdmaEnabled', 'UltraSSDAvailable', 'EncryptionAtHostSupported']);
    for (const sku of seen) {
      assert.ok(sku.name && sku.resourceType && sku.locations?.length === 1 && sku.locationInfo?.length, key(sku));
      assert.ok(Array.isArray(sku.restrictions));
      const caps = [...(sku.capabilities ?? []), ...(sku.locationInfo ?? []).flatMap((l) => (l.zoneDetails ?? []).flatMap((z) => z.capabilities ?? []))];
      for (const c of caps) {
        assert.equal(typeof c.value, 'string', `${key(sku)} ${c.name}`);
        if (boolNames.has(c.name!)) assert.match(c.value!, /^(True|False)$/);
      }
    }
    // UltraSSDAvailable inside zoneDetails, for VMs in zoned regions.
    const ultra = seen.filter((x) => (x.locationInfo ?? []).some((l) => (l.zoneDetails ?? []).some((z) => z.capabilities?.some((c) => c.name === 'UltraSSDAvailable' && c.value === 'True'))));
    assert.ok(ultra.length > 100);
    for (const sku of ultra) for (const l of sku.locationInfo!) for (const z of l.zoneDetails ?? []) for (const n of z.name ?? []) assert.ok(l.zones!.includes(n));
    // Every field of §2.2 occurs somewhere, typed as the spec says.
    const has = (f: keyof SdkSku) => seen.filter((x) => x[f] !== undefined);
    for (const f of ['name', 'tier', 'size', 'family', 'kind', 'resourceType', 'locations', 'locationInfo', 'apiVersions', 'capabilities', 'capacity', 'costs', 'restrictions'] as const) assert.ok(has(f).length > 0, `field ${f}`);
    for (const x of has('capacity')) {
      assert.ok(['Automatic', 'Manual', 'None'].includes(x.capacity!.scaleType!));
      assert.ok(Number.isInteger(x.capacity!.minimum) && x.capacity!.minimum! <= x.capacity!.default! && x.capacity!.default! <= x.capacity!.maximum!);
    }
    for (const x of has('costs')) for (const c of x.costs!) assert.ok(typeof c.meterID === 'string' && Number.isInteger(c.quantity) && typeof c.extendedUnit === 'string');
    for (const x of seen.filter((y) => y.tier !== undefined && y.resourceType === 'virtualMachines')) assert.equal(x.tier, 'Standard');
    // Disk SKUs of every storage type the real catalog has.
    const diskNames = new Set(seen.filter((x) => x.resourceType === 'disks').map((x) => x.name));
    for (const n of ['Standard_LRS', 'Premium_LRS', 'StandardSSD_LRS', 'UltraSSD_LRS', 'Premium_ZRS', 'StandardSSD_ZRS', 'PremiumV2_LRS']) assert.ok(diskNames.has(n), n);
    assert.deepEqual([...new Set(seen.filter((x) => x.resourceType === 'availabilitySets').map((x) => x.name))].sort(), ['Aligned', 'Classic']);
  });

  test('restrictions: both types with both reason codes and the restrictionInfo shape', async () => {
    const { records } = await listAll('');
    const all = records.flatMap((x: ResourceSku) => x.restrictions.map((r) => ({ sku: x, r })));
    for (const type of ['Location', 'Zone']) {
      for (const reasonCode of ['QuotaId', 'NotAvailableForSubscription']) assert.ok(all.some(({ r }) => r.type === type && r.reasonCode === reasonCode), `${type}/${reasonCode}`);
    }
    for (const { sku, r } of all) {
      assert.deepEqual(Object.keys(r).sort(), ['reasonCode', 'restrictionInfo', 'type', 'values']);
      assert.deepEqual(r.values, sku.locations);
      assert.deepEqual(r.restrictionInfo.locations, sku.locations);
      if (r.type === 'Zone') {
        assert.ok(r.restrictionInfo.zones!.length >= 1);
        for (const z of r.restrictionInfo.zones!) assert.ok(sku.locationInfo[0]!.zones!.includes(z));
      } else assert.equal(r.restrictionInfo.zones, undefined);
    }
  });

  test('a filter other than location eq is ignored and every SKU is listed (reference §3.3)', async () => {
    const r = await get(`${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("resourceType eq 'disks'")}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.value.slice(0, 5), plain.slice(0, 5));
    assert.equal(typeof r.body.nextLink, 'string');
  });

  test('the published examples, field by field: every field they show is served with the same type; the extended-location entry has the same form', async (t) => {
    const dir = examplesDir(t);
    const shapeOf = (v: unknown, at = '', out: Record<string, string> = {}): Record<string, string> => {
      if (Array.isArray(v)) v.forEach((x) => shapeOf(x, `${at}[]`, out));
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) shapeOf(x, `${at}/${k}`, out);
      else out[at] = v === null ? 'null' : typeof v;
      return out;
    };
    const westus = await listAll(`&includeExtendedLocations=true&$filter=${encodeURIComponent("location eq 'westus'")}`);
    const all = await listAll('&includeExtendedLocations=true');
    const ours = shapeOf({ value: all.records, nextLink: 'x' });
    for (const file of ['ListAvailableResourceSkus.json', 'ListAvailableResourceSkusForARegion.json', 'ListAvailableResourceSkusWithExtendedLocations.json']) {
      const ex = readExample(dir, file);
      assert.equal(ex.parameters['api-version'], '2021-07-01', file);
      const body = ex.responses['200'].body;
      assert.deepEqual(Object.keys(body).sort(), ['nextLink', 'value'], file);
      for (const [k, type] of Object.entries(shapeOf({ value: body.value }))) {
        assert.ok(k in ours, `${file}: the example's field ${k} is never served`);
        assert.equal(ours[k], type, `${file}: ${k}`);
      }
      // The example's capability names of a VM all occur on our VM records in westus.
      const names = new Set(westus.records.filter((r) => r.resourceType === 'virtualMachines').flatMap((r) => r.capabilities.map((c: any) => c.name)));
      for (const c of body.value[0].capabilities) assert.ok(names.has(c.name), `${file}: ${c.name}`);
    }
    // The extended-location entry: location, extendedLocations and type only (no zones), as in the example.
    const ex = readExample(dir, 'ListAvailableResourceSkusWithExtendedLocations.json');
    const exEdge = ex.responses['200'].body.value.flatMap((r: any) => r.locationInfo).find((l: any) => l.type === 'EdgeZone');
    const edge = westus.records.flatMap((r) => r.locationInfo).find((l: any) => l.type === 'EdgeZone');
    assert.deepEqual(Object.keys(edge).sort(), Object.keys(exEdge).sort());
    assert.equal(edge.location, 'westus');
    assert.equal(westus.links.at(-1), null);
  });

  test('an unknown location gives an empty page with nextLink null', async () => {
    const r = await get(`${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'atlantis'")}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { value: [], nextLink: null });
    // A control character (U+0000 is refused by PostgreSQL) names no location either.
    const nul = await get(`${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'west\u0000us'")}`);
    assert.equal(nul.status, 200);
    assert.deepEqual(nul.body, { value: [], nextLink: null });
  });

  test('a $skiptoken that does not decode is 400 InvalidParameter in the ErrorResponse envelope', async () => {
    for (const bad of ['not-a-token', Buffer.from('{"s":"x"}').toString('base64url'), Buffer.from('[1]').toString('base64url')]) {
      const r = await get(`${skuPath}?api-version=2021-07-01&$skiptoken=${bad}`);
      assert.equal(r.status, 400);
      assert.equal(r.body.error.code, 'InvalidParameter');
      assert.equal(r.body.error.target, '$skiptoken');
      assert.match(r.body.error.message, /\$skiptoken/);
    }
  });

  test('a delegated token of the administrator (Owner) lists SKUs too', async () => {
    const t = await userToken(s.url, identities.admin, ['api://stratus/arm/user_impersonation']);
    const r = await get(`${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'uksouth'")}`, t);
    assert.equal(r.status, 200);
    assert.equal(r.body.value.length, plain.filter((x) => x.locations[0] === 'uksouth').length);
  });

  test('a Reader (the demo managed identity) lists SKUs', async () => {
    const t = await appToken(s.url, 'arm', identities.mi);
    const r = await get(`${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'japanwest'")}`, t);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.value, plain.filter((x) => x.locations[0] === 'japanwest'));
  });

  test('POST /_stratus/reset reloads the catalog (same records, no duplicates)', async () => {
    const reset = await s.control(`/_stratus/reset`, { method: 'POST' });
    assert.ok(reset.status < 300, String(reset.status));
    const t = await appToken(s.url, 'arm');
    token = t;
    const r = await get(`${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'koreacentral'")}&includeExtendedLocations=true`, t);
    assert.deepEqual(r.body.value, catalog.filter((x) => x.locations[0] === 'koreacentral'));
  });

  test('the catalog is not in the store: the table earlier versions loaded it into is dropped at start, and SKUs are still listed', async () => {
    const catalogTable = async () => {
      const db = s.server.ctx.store.db;
      const r = s.server.ctx.store.dialect === 'sqlite'
        ? await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name = 'compute_skus'`.execute(db)
        : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_name = 'compute_skus'`.execute(db);
      return r.rows.length;
    };
    assert.equal(await catalogTable(), 0, 'a new store has no catalog table');
    // A data folder of an earlier version: the table is there and the dropping migration not yet applied.
    await sql`create table compute_skus (seq integer primary key, body text not null)`.execute(s.server.ctx.store.db);
    await sql`delete from stratus_migrations where name = 'compute_0003_skus_in_memory'`.execute(s.server.ctx.store.db);
    assert.equal(await catalogTable(), 1);
    await s.restart();
    assert.equal(await catalogTable(), 0, 'the migration dropped it');
    const t = await appToken(s.url, 'arm');
    const r = await get(`${skuPath}?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'westus'")}&includeExtendedLocations=true`, t);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.value, catalog.filter((x) => x.locations[0] === 'westus'));
  });
});
