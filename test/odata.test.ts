/**
 * The OData core against a real database (SQLite, or PostgreSQL when
 * STRATUS_TEST_DATABASE_URL is set): filters and orderings over a small table whose right
 * answers are known, lambdas over a child table, and the errors with their positions.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { dropSchemas } from './helpers/server.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { parseFilter, parseOrderBy, compileFilter, compileOrderBy, filterProperties, ODataError, type FieldMap } from '../src/core/odata/index.ts';

/** The tables this file creates for itself. */
interface ODataTestTables {
  items: { id: number; name: string | null; kind: string | null; amount: number | null; at: string | null; flagged: number | null; owner_lower: string | null; note: string | null };
  item_tags: { item_id: number | null; value: string | null };
  counts: { id: number; n: number | null };
}

let store: Store<ODataTestTables>;
const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const schema = dbUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;

const rows = [
  { id: 1, name: 'Sales pipeline', kind: 'Purchase', amount: 120.5, at: '2024-01-05T10:00:00.000Z', flagged: 1, owner: 'A1B2C3D4-0000-4000-8000-000000000001', note: null },
  { id: 2, name: 'sales 100% done', kind: 'Refund', amount: -20, at: '2024-02-01T00:00:00.000Z', flagged: 0, owner: 'a1b2c3d4-0000-4000-8000-000000000002', note: "it's fine" },
  { id: 3, name: 'Marketing', kind: 'Purchase', amount: 75, at: '2024-03-15T12:30:00.000Z', flagged: 0, owner: 'a1b2c3d4-0000-4000-8000-000000000001', note: 'x_y' },
  { id: 4, name: 'Ops_daily', kind: 'UsageCharge', amount: 0, at: '2023-12-31T23:59:59.000Z', flagged: 1, owner: 'a1b2c3d4-0000-4000-8000-000000000003', note: 'Q4' },
];
const tags = [
  { item_id: 1, value: 'red' },
  { item_id: 1, value: 'blue' },
  { item_id: 2, value: 'red' },
  { item_id: 3, value: 'green' },
];

const fields: FieldMap = {
  name: { column: 'items.name', type: 'string' },
  kind: { column: 'items.kind', type: 'enum', values: ['Purchase', 'Refund', 'UsageCharge'] },
  'amount/value': { column: 'items.amount', type: 'number' },
  date: { column: 'items.at', type: 'datetime' },
  isFlagged: { column: 'items.flagged', type: 'boolean' },
  ownerId: { column: 'items.owner_lower', type: 'guid' },
  note: { column: 'items.note', type: 'string', caseInsensitive: true },
  secret: { column: 'items.name', type: 'string', filterable: false, sortable: false },
  tags: { type: 'collection', table: 'item_tags', parentKey: 'item_id', parentColumn: 'items.id', fields: { '': { column: 'value', type: 'string' } } },
};

before(async () => {
  store = dbUrl ? await openStore<ODataTestTables>({ databaseUrl: dbUrl, databaseSchema: schema }) : await openStore<ODataTestTables>({ sqliteFile: ':memory:' });
  await store.db.schema.createTable('items').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').addColumn('kind', 'text').addColumn('amount', 'double precision').addColumn('at', 'text').addColumn('flagged', 'integer').addColumn('owner_lower', 'text').addColumn('note', 'text').execute();
  await store.db.schema.createTable('item_tags').addColumn('item_id', 'integer').addColumn('value', 'text').execute();
  await store.db.insertInto('items').values(rows.map(({ owner, ...r }) => ({ ...r, owner_lower: owner.toLowerCase() }))).execute();
  await store.db.insertInto('item_tags').values(tags).execute();
});

after(async () => {
  await store.close();
  await dropSchemas(dbUrl, schema);
});

async function ids(filter: string, orderby = 'id'): Promise<number[]> {
  let q = store.db.selectFrom('items').select('items.id').where(compileFilter(parseFilter(filter), fields));
  if (orderby === 'id') q = q.orderBy('items.id');
  else for (const o of compileOrderBy(parseOrderBy(orderby), fields)) q = q.orderBy(o.column as `items.${keyof ODataTestTables['items']}`, o.direction); // a column of the field map
  return (await q.execute()).map((r: any) => Number(r.id));
}

test('comparison, logical operators and parentheses', async () => {
  assert.deepEqual(await ids("kind eq 'Purchase'"), [1, 3]);
  assert.deepEqual(await ids("kind eq 'purchase'"), [1, 3], 'enum literals match case-insensitively');
  assert.deepEqual(await ids('amount/value gt 0'), [1, 3]);
  assert.deepEqual(await ids('amount/value le 0 and isFlagged eq true'), [4]);
  assert.deepEqual(await ids("not (kind eq 'Purchase') or amount/value ge 100"), [1, 2, 4]);
  assert.deepEqual(await ids("kind ne 'Purchase'"), [2, 4]);
  assert.deepEqual(await ids('0 lt amount/value'), [1, 3], 'literal on the left flips the operator');
  assert.deepEqual(await ids('isFlagged'), [1, 4]);
  assert.deepEqual(await ids('not isFlagged'), [2, 3]);
  assert.deepEqual(await ids("kind in ('Refund', 'UsageCharge')"), [2, 4]);
});

test('dates, guids, null and case-insensitive fields', async () => {
  assert.deepEqual(await ids('date ge 2024-01-01'), [1, 2, 3]);
  assert.deepEqual(await ids('date lt 2024-02-01T00:00:00Z'), [1, 4]);
  assert.deepEqual(await ids("date gt '2024-03-01T00:00:00Z'"), [3]);
  assert.deepEqual(await ids('ownerId eq A1B2C3D4-0000-4000-8000-000000000001'), [1, 3]);
  assert.deepEqual(await ids('note eq null'), [1]);
  assert.deepEqual(await ids('note ne null'), [2, 3, 4]);
  assert.deepEqual(await ids("note eq 'q4'"), [4]);
  assert.deepEqual(await ids("note ne 'q4'"), [1, 2, 3], 'ne keeps nulls');
  assert.deepEqual(await ids("note eq 'it''s fine'"), [2]);
});

test('string functions are case-insensitive and escape LIKE wildcards', async () => {
  assert.deepEqual(await ids("contains(name, 'SALES')"), [1, 2]);
  assert.deepEqual(await ids("startswith(name, 'sales')"), [1, 2]);
  assert.deepEqual(await ids("endswith(name, 'ING')"), [3]);
  assert.deepEqual(await ids("contains(name, '100%')"), [2]);
  assert.deepEqual(await ids("contains(name, '%')"), [2], '% is literal');
  assert.deepEqual(await ids("contains(name, '_')"), [4], '_ is literal');
  assert.deepEqual(await ids("tolower(name) eq 'marketing'"), [3]);
  assert.deepEqual(await ids("not contains(name, 'a')"), []);
});

test('any and all over a child table', async () => {
  assert.deepEqual(await ids("tags/any(t: t eq 'red')"), [1, 2]);
  assert.deepEqual(await ids('tags/any()'), [1, 2, 3]);
  assert.deepEqual(await ids("tags/all(t: t eq 'red')"), [2, 4], 'all() is true for an empty collection');
  assert.deepEqual(await ids("tags/any(t: t eq 'red' and t ne 'blue') and isFlagged"), [1]);
});

test('orderby with several keys', async () => {
  assert.deepEqual(await ids('amount/value ge -1000', 'kind asc, amount/value desc'), [1, 3, 2, 4]);
  assert.deepEqual(await ids('amount/value ge -1000', 'date desc'), [3, 2, 1, 4]);
});

function odataError(fn: () => unknown): ODataError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ODataError, `expected ODataError, got ${e}`);
    return e;
  }
  assert.fail('expected an ODataError');
}

test('errors carry a position or the property', () => {
  let e = odataError(() => parseFilter("name eq 'x' and"));
  assert.equal(e.kind, 'syntax');
  assert.equal(e.position, 15);
  e = odataError(() => parseFilter("name eq 'x"));
  assert.equal(e.position, 8);
  e = odataError(() => parseFilter('name eq 1 )'));
  assert.equal(e.position, 10);
  e = odataError(() => parseFilter('name # 1'));
  assert.equal(e.position, 5);
  e = odataError(() => parseFilter("substringof('a', name)"));
  assert.equal(e.kind, 'unsupported');
  e = odataError(() => compileFilter(parseFilter("colour eq 'red'"), fields));
  assert.equal(e.kind, 'unknown_property');
  assert.equal(e.property, 'colour');
  assert.equal(e.position, 0);
  e = odataError(() => compileFilter(parseFilter("amount/value eq 'ten'"), fields));
  assert.equal(e.kind, 'type');
  e = odataError(() => compileFilter(parseFilter("kind eq 'Gift'"), fields));
  assert.match(e.message, /Purchase, Refund, UsageCharge/);
  e = odataError(() => compileFilter(parseFilter("secret eq 'x'"), fields));
  assert.equal(e.kind, 'unsupported');
  e = odataError(() => compileOrderBy(parseOrderBy('name asc, nope desc'), fields));
  assert.equal(e.position, 10);
  e = odataError(() => parseOrderBy('name sideways'));
  assert.equal(e.position, 5);
  e = odataError(() => parseFilter(''));
  assert.equal(e.kind, 'syntax');
});

test('filterProperties lists paths in order of appearance', () => {
  assert.deepEqual(filterProperties(parseFilter("kind eq 'Refund' and (contains(name,'a') or tags/any(t: t eq 'x'))")), ['kind', 'name', 'tags']);
});

test('limits: nesting depth, number of terms, control characters → ODataError, never a database error', async () => {
  let e = odataError(() => parseFilter(`${'not '.repeat(150)}isFlagged`));
  assert.equal(e.kind, 'unsupported');
  e = odataError(() => parseFilter(`${'('.repeat(150)}isFlagged${')'.repeat(150)}`));
  assert.equal(e.kind, 'unsupported');
  e = odataError(() => parseFilter(`${'tolower('.repeat(5000)}name${')'.repeat(5000)} eq 'a'`));
  assert.equal(e.kind, 'unsupported', 'nested function calls count as nesting (no stack overflow)');
  e = odataError(() => parseFilter(Array.from({ length: 400 }, (_, i) => `amount/value eq ${i}`).join(' or ')));
  assert.equal(e.kind, 'unsupported');
  e = odataError(() => parseFilter("name eq 'a\u0000b'"));
  assert.equal(e.kind, 'syntax');
  assert.equal(e.position, 10);
  e = odataError(() => parseOrderBy('name\u0001'));
  assert.equal(e.position, 4);
  // Just under the limits still runs on the database.
  assert.deepEqual(await ids(`${'not '.repeat(98)}isFlagged`), [1, 4]);
  assert.deepEqual(await ids(Array.from({ length: 250 }, (_, i) => `amount/value eq ${i}`).join(' or ')), [3, 4]);
});

test('numbers of any size or fraction compare with integer columns without a database error', async () => {
  await store.db.schema.createTable('counts').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('n', 'integer').execute();
  await store.db.insertInto('counts').values([{ id: 1, n: 1 }, { id: 2, n: 2 }, { id: 3, n: 2147483647 }]).execute();
  const fm: FieldMap = { n: { column: 'counts.n', type: 'number' } };
  const q = async (f: string) => (await store.db.selectFrom('counts').select('id').where(compileFilter(parseFilter(f), fm)).orderBy('id').execute()).map((r: any) => Number(r.id));
  assert.deepEqual(await q('n gt 1.5'), [2, 3]);
  assert.deepEqual(await q('n lt 99999999999'), [1, 2, 3]);
  assert.deepEqual(await q('n eq 1e300'), []);
  assert.deepEqual(await q('n in (1, 2.5, 2147483647)'), [1, 3]);
});
