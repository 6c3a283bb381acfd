/**
 * The declared tables (src/store/database.ts: the store's, the core's and each area's
 * tables.ts) against the schema every migration makes on a fresh database (SQLite, or
 * PostgreSQL when STRATUS_TEST_DATABASE_URL is set, in a fresh schema dropped after): the
 * same tables, the same columns, and for each column the declared type family, nullability
 * and default. The Kysely types are derived from those declarations, so a migration and a
 * type that diverge fail here rather than at run time.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { dropSchemas } from './helpers/server.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { allMigrations } from '../src/app.ts';
import { databaseColumns } from '../src/store/database.ts';
import type { ColumnKind, TableColumns } from '../src/store/columns.ts';

const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const schema = `t_${randomBytes(6).toString('hex')}`;
let store: Store | undefined;

after(async () => {
  await store?.close();
  await dropSchemas(dbUrl, schema);
});

/**
 * What the migrations make on one dialect only and the code reaches through raw SQL only:
 * not declared. SQLite's full-text table (with the shadow tables FTS5 keeps beside it) and
 * PostgreSQL's full-text table of the messages (`mail_search`, kept by triggers).
 */
const rawOnlyTables = [/^mail_fts(_(config|data|docsize|idx|content))?$/, /^mail_search$/];
const rawOnlyColumns: string[] = [];

/** One column as the database reports it. */
interface Found {
  /** A {@link ColumnKind}, or the dialect's own type name when it is none of them. */
  kind: string;
  nullable: boolean;
  /** Has a default or is an auto-increment. */
  generated: boolean;
}

/** Columns by table by column, as the migrated database reports them. */
type Schema = Map<string, Map<string, Found>>;

const pgKinds: Record<string, ColumnKind> = { varchar: 'text', text: 'text', int4: 'integer', int8: 'bigint', float8: 'real' };

function sqliteKind(type: string): string {
  const t = type.toLowerCase();
  if (t === 'text' || t.startsWith('varchar')) return 'text';
  if (t === 'double precision') return 'real';
  return t;
}

/** Reads the store's own schema (PostgreSQL: the current schema only, never catalog-wide). */
async function introspect(s: Store): Promise<Schema> {
  const out: Schema = new Map();
  const put = (table: string, column: string, f: Found) => {
    if (rawOnlyTables.some((re) => re.test(table)) || rawOnlyColumns.includes(`${table}.${column}`)) return;
    if (!out.has(table)) out.set(table, new Map());
    out.get(table)!.set(column, f);
  };
  if (s.dialect === 'postgres') {
    const { rows } = await sql<{ table_name: string; column_name: string; udt_name: string; is_nullable: string; column_default: string | null }>`
      select table_name, column_name, udt_name, is_nullable, column_default
      from information_schema.columns where table_schema = current_schema() order by table_name, ordinal_position`.execute(s.db);
    for (const r of rows) put(r.table_name, r.column_name, { kind: pgKinds[r.udt_name] ?? r.udt_name, nullable: r.is_nullable === 'YES', generated: r.column_default !== null });
  } else {
    const { rows } = await sql<{ table_name: string; sql: string; column_name: string; type: string; notnull: number; dflt_value: string | null; pk: number }>`
      select m.name as table_name, m.sql as sql, p.name as column_name, p.type as type, p."notnull" as "notnull", p.dflt_value as dflt_value, p.pk as pk
      from sqlite_master m join pragma_table_info(m.name) p
      where m.type = 'table' and m.name not like 'sqlite_%' order by m.name, p.cid`.execute(s.db);
    for (const r of rows) {
      // `integer primary key autoincrement` is SQLite's spelling of `bigserial` (autoIncrementKey).
      const auto = r.pk === 1 && r.type.toLowerCase() === 'integer' && /autoincrement/i.test(r.sql);
      put(r.table_name, r.column_name, { kind: auto ? 'bigint' : sqliteKind(r.type), nullable: r.notnull === 0 && r.pk === 0, generated: auto || r.dflt_value !== null });
    }
  }
  return out;
}

/** The differences between declared tables and a migrated schema, one sentence each (none when they agree). */
function compare(declared: TableColumns, found: Schema): string[] {
  const problems: string[] = [];
  const tables = [...new Set([...Object.keys(declared), ...found.keys()])].sort();
  for (const table of tables) {
    const d = declared[table];
    const f = found.get(table);
    if (!d) { problems.push(`table ${table}: made by the migrations, not declared`); continue; }
    if (!f) { problems.push(`table ${table}: declared, not made by the migrations`); continue; }
    for (const column of [...new Set([...Object.keys(d), ...f.keys()])]) {
      const dc = d[column];
      const fc = f.get(column);
      const at = `${table}.${column}`;
      if (!dc) { problems.push(`${at}: made by the migrations, not declared`); continue; }
      if (!fc) { problems.push(`${at}: declared, not made by the migrations`); continue; }
      if (dc.kind !== fc.kind) problems.push(`${at}: declared ${dc.kind}, the database has ${fc.kind}`);
      if (dc.nullable !== fc.nullable) problems.push(`${at}: declared ${dc.nullable ? 'nullable' : 'not null'}, the database has ${fc.nullable ? 'nullable' : 'not null'}`);
      if (dc.generated !== fc.generated) problems.push(`${at}: declared ${dc.generated ? 'with' : 'without'} a default, the database has ${fc.generated ? 'one' : 'none'}`);
    }
  }
  return problems;
}

let migrated: Schema | undefined;
async function migratedSchema(): Promise<Schema> {
  if (migrated) return migrated;
  store = dbUrl ? await openStore({ databaseUrl: dbUrl, databaseSchema: schema }) : await openStore({ sqliteFile: ':memory:' });
  await store.migrate(allMigrations());
  migrated = await introspect(store);
  return migrated;
}

test('every table the migrations make is declared, column for column, with its type family, nullability and default', async () => {
  assert.deepEqual(compare(databaseColumns, await migratedSchema()), []);
});

test('a declaration that drifts from the migrations is reported', async () => {
  const found = await migratedSchema();
  const { parent_id, ...folders } = databaseColumns.mail_folders;
  const drifted: TableColumns = {
    ...databaseColumns,
    mail_folders: { ...folders, parent: parent_id, is_hidden: { ...folders.is_hidden, nullable: true } },
    rate_limits: { ...databaseColumns.rate_limits, count: { ...databaseColumns.rate_limits.count, kind: 'bigint' } },
  };
  delete drifted.tenants;
  assert.deepEqual(compare(drifted, found), [
    'mail_folders.is_hidden: declared nullable, the database has not null',
    'mail_folders.parent: declared, not made by the migrations',
    'mail_folders.parent_id: made by the migrations, not declared',
    'rate_limits.count: declared bigint, the database has integer',
    'table tenants: made by the migrations, not declared',
  ]);
});
