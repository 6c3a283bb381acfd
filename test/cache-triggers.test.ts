/**
 * How a write keeps every cache right (issue 27; `src/core/cache-tables.ts`, docs/contributing.md):
 * every listed table has its triggers on this dialect; a write made OUTSIDE the app's code — by
 * another connection to the same database, as another process or a tool would — changes the
 * area's version in its transaction and so decides the next request (a role assignment granting
 * and then no longer granting access); on PostgreSQL a statement changing no row bumps nothing
 * and a statement changing many bumps once; the hub's reading of write statements.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { identities, userToken } from './helpers/auth.ts';
import { demoSubscription, demoTenant, demoUser } from '../src/seed/demo.ts';
import { areasWrittenBy, cachedAreasByTable, cachedTables, triggerName, type WriteEvent } from '../src/core/cache-tables.ts';

const pgUrl = process.env.STRATUS_TEST_DATABASE_URL;
const reader = 'acdd72a7-3385-48ef-bd42-f606fba81ae7';
const subScope = `/subscriptions/${demoSubscription.id}`;
const skus = `${subScope}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${encodeURIComponent("location eq 'westus'")}`;

let s: TestServer;
let user: string;
/** Runs one SQL text on a connection of its own (not the app's store), returns the rows. */
let outside: (text: string, values?: unknown[]) => Promise<any[]>;
let closeOutside: () => Promise<void>;

before(async () => {
  s = await startTestServer();
  user = await userToken(s.url, identities.user, ['api://stratus/arm/user_impersonation']);
  if (pgUrl) {
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: pgUrl, options: `-c search_path=${s.config.databaseSchema}` });
    await client.connect();
    // Each text with `$n` parameters.
    outside = async (text, values = []) => (await client.query(text.replace(/\?/g, (() => { let i = 0; return () => `$${++i}`; })()), values)).rows;
    closeOutside = () => client.end();
  } else {
    const db = new SQLite(path.join(s.config.dataDir, 'stratus.db'));
    db.pragma('busy_timeout = 5000');
    outside = async (text, values = []) => {
      const st = db.prepare(text);
      return st.reader ? st.all(...values) : (st.run(...values), []);
    };
    closeOutside = async () => {
      db.close();
    };
  }
});
after(async () => {
  await closeOutside?.();
  await s?.close();
});

/** PostgreSQL: an outside writer does not wait for the live instances; this does what the CLI's writers do after writing (a marker, waited for). */
async function appliedEverywhere(): Promise<void> {
  if (pgUrl) await s.server.ctx.cache.settle(3000, true);
}

test('every cached table has its triggers', async () => {
  const names = pgUrl
    ? (await outside("select t.tgname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = current_schema() and t.tgname like 'stratus_cv_%'")).map((r) => r.name)
    : (await outside("select name from sqlite_master where type = 'trigger' and name like 'stratus_cv_%'")).map((r) => r.name);
  const want: string[] = [];
  for (const [table, c] of Object.entries(cachedTables)) for (const e of c.events ?? (['insert', 'update', 'delete'] as WriteEvent[])) want.push(triggerName(table, e, c.areas, pgUrl ? 'postgres' : 'sqlite', c.keyed));
  assert.deepEqual([...names].sort(), want.sort());
  assert.ok(want.length >= 60, `${want.length} triggers`);
});

test('a role assignment written by another connection decides the next request, and so does its removal', async () => {
  assert.equal((await fetch(s.url + skus, { headers: { authorization: `Bearer ${user}` } })).status, 403);
  const id = crypto.randomUUID();
  await outside('insert into arm_role_assignments (id, tenant_id, scope_lower, scope, role_definition_id, principal_id, principal_type) values (?, ?, ?, ?, ?, ?, ?)', [id, demoTenant.id, subScope.toLowerCase(), subScope, reader, demoUser.id, 'User']);
  await appliedEverywhere();
  assert.equal((await fetch(s.url + skus, { headers: { authorization: `Bearer ${user}` } })).status, 200);
  await outside('delete from arm_role_assignments where id = ?', [id]);
  await appliedEverywhere();
  assert.equal((await fetch(s.url + skus, { headers: { authorization: `Bearer ${user}` } })).status, 403);
});

test('the version moves once per statement that changed rows (PostgreSQL), per row (SQLite), and not for a statement that changed none', async () => {
  const version = async () => Number((await outside("select version from stratus_cache_versions where area = 'arm'"))[0].version);
  const v0 = await version();
  await outside('delete from arm_role_assignments where id = ?', ['no-such-assignment']);
  const v1 = await version();
  await outside("update arm_management_groups set display_name = display_name where tenant_id = ?", [demoTenant.id]);
  const v2 = await version();
  const groups = Number((await outside('select count(*) as n from arm_management_groups where tenant_id = ?', [demoTenant.id]))[0].n);
  assert.ok(groups >= 2);
  if (pgUrl) {
    assert.equal(v1, v0, 'a delete of no row bumps nothing');
    assert.equal(v2, v1 + 1, 'one statement, one increment');
  } else {
    assert.equal(v1, v0, 'no row, no trigger');
    assert.equal(v2, v1 + groups, 'a row trigger per row');
  }
});

test('the hub reads which cached areas a statement writes', () => {
  const byTable = cachedAreasByTable();
  assert.deepEqual(areasWrittenBy('insert into "arm_role_assignments" ("id") values (?)', byTable), ['arm']);
  assert.deepEqual(areasWrittenBy('update "directory_group_members" set "member_type" = ?', byTable).sort(), ['arm', 'directory']);
  assert.deepEqual(areasWrittenBy('with d as (delete from "arm_resources" where id_lower = $1 returning 1) select count(*) from d', byTable), ['resources']);
  assert.deepEqual(areasWrittenBy('insert into "mail_messages" ("id") values (?) on conflict ("id") do update set "id" = excluded."id"', byTable), []);
  assert.deepEqual(areasWrittenBy('select "updated_at" from "arm_role_assignments" for update', byTable), []);
});
