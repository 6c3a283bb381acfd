/**
 * Finer invalidation (issue 31 item 4; `src/core/cache-tables.ts` `keyed`): on PostgreSQL a
 * webhook write notifies the keys of the rows it wrote, and every live instance — the writer
 * included — drops only those entries of its webhook row cache; the other webhooks stay cached.
 * The write is still read at once on every instance, and a write of many rows (or one by another
 * connection) still empties the whole area. Observed through the cache's entries, no timing.
 *
 * On SQLite the keyed triggers log the written keys (`stratus_cache_keys`, `src/core/cache-keys.ts`)
 * and the next request drops only those entries; a reader that missed log entries (more than
 * the 1,000 kept) empties the whole area. Each block runs on its own database.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import SQLite from 'better-sqlite3';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken } from './helpers/auth.ts';
import { demoAutomation, demoSubscription } from '../src/seed/demo.ts';
import { keptAnswersServed } from '../src/services/arm/kept-answers.ts';

const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const skipReason = dbUrl ? false : 'the PostgreSQL half (live instances): set STRATUS_TEST_DATABASE_URL';
const account = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/${demoAutomation.account}`;
const url = (name: string) => `${account}/webhooks/${name}?api-version=2024-10-23`;
const keyOf = (name: string) => `${account}/webhooks/${name}`.toLowerCase();

describe('a webhook write drops only its own cached row', { skip: skipReason }, () => {
  let a: TestServer;
  let b: TestServer;
  let token: string;
  let db: pg.Client;
  const other = `keyed-${randomUUID().slice(0, 8)}`;
  const rows = (s: TestServer) => s.server.ctx.cache.shared<unknown>('automation.webhooks', 'resources');

  async function get(s: TestServer, name: string): Promise<any> {
    const r = await fetch(s.url + url(name), { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    return r.json();
  }
  async function put(s: TestServer, name: string, description: string, uri?: string): Promise<void> {
    const r = await fetch(s.url + url(name), {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ properties: { runbook: { name: demoAutomation.runbook }, isEnabled: true, description, ...(uri ? { uri } : {}) } }),
    });
    assert.ok(r.status === 200 || r.status === 201, await r.text());
  }

  before(async () => {
    a = await startTestServer();
    b = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    token = await appToken(a.url, 'arm');
    const gen = await fetch(`${a.url}${account}/webhooks/generateUri?api-version=2024-10-23`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    assert.equal(gen.status, 200);
    await put(a, other, 'the other webhook', (await gen.json()) as string);
    db = new pg.Client({ connectionString: dbUrl, options: `-c search_path=${a.config.databaseSchema}` });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await b?.close();
    await a?.close();
  });

  test('a PUT on one instance drops that webhook on both, the other stays cached on both', async () => {
    for (const s of [a, b]) {
      await get(s, demoAutomation.webhook);
      await get(s, other);
      assert.notEqual(rows(s).peek(keyOf(demoAutomation.webhook)), undefined);
      assert.notEqual(rows(s).peek(keyOf(other)), undefined);
    }
    const text = `keyed ${randomUUID()}`;
    await put(a, demoAutomation.webhook, text);
    for (const s of [a, b]) {
      assert.equal(rows(s).peek(keyOf(demoAutomation.webhook)), undefined, 'the written row was dropped before the answer');
      assert.notEqual(rows(s).peek(keyOf(other)), undefined, 'the other row is still cached');
      assert.equal((await get(s, demoAutomation.webhook)).properties.description, text);
    }
  });

  test("a webhook's kept answer outlives a PUT of another webhook on either instance; a PUT of its own on the other instance ends it at once", async () => {
    const answer = async (s: TestServer, name: string) => {
      const r = await fetch(s.url + url(name), { headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 200);
      return r.text();
    };
    const first = await answer(a, other);
    assert.equal(await answer(a, other), first);
    const before = keptAnswersServed(a.server.ctx);
    await put(b, demoAutomation.webhook, `another ${randomUUID()}`);
    await put(a, demoAutomation.webhook, `another ${randomUUID()}`);
    assert.equal(await answer(a, other), first);
    assert.equal(keptAnswersServed(a.server.ctx).acrossKeyedWrites, before.acrossKeyedWrites + 1, "served across the other webhook's writes");
    const text = `own ${randomUUID()}`;
    await put(b, other, text);
    assert.equal(JSON.parse(await answer(a, other)).properties.description, text);
  });

  test('a write of the table by another connection is read at once on both (the area empties for instances that read versions; live ones drop the key)', async () => {
    await get(b, demoAutomation.webhook);
    const text = `outside ${randomUUID()}`;
    await db.query(`update automation_webhooks set body = jsonb_set(body::jsonb, '{properties,description}', to_jsonb($1::text))::text where id_lower = $2`, [text, keyOf(demoAutomation.webhook)]).catch(async () => {
      // A body column of type json(b): set it directly.
      await db.query(`update automation_webhooks set body = jsonb_set(body::jsonb, '{properties,description}', to_jsonb($1::text)) where id_lower = $2`, [text, keyOf(demoAutomation.webhook)]);
    });
    // An outside writer waits as the CLI's writers do (a polled marker every live instance acknowledged).
    await a.server.ctx.cache.settle(3000, true);
    for (const s of [a, b]) assert.equal((await get(s, demoAutomation.webhook)).properties.description, text);
  });

  test('a statement writing many rows empties the whole area', async () => {
    await get(b, other);
    assert.notEqual(rows(b).peek(keyOf(other)), undefined);
    const { rows: n } = await db.query('select count(*)::int as n from automation_webhooks');
    await db.query('update automation_webhooks set is_enabled = is_enabled');
    await a.server.ctx.cache.settle(3000, true);
    if (n[0].n > 20) assert.equal(rows(b).peek(keyOf(other)), undefined, 'more than 20 rows: the whole area');
    else assert.equal(rows(b).peek(keyOf(other)), undefined, 'every row written was dropped');
  });
});

describe('SQLite: a webhook write drops only its own cached row (the key log)', { skip: dbUrl ? 'the SQLite half runs without STRATUS_TEST_DATABASE_URL' : false }, () => {
  let s: TestServer;
  let token: string;
  let raw: SQLite.Database;
  const other = `keyed-${randomUUID().slice(0, 8)}`;
  const rows = () => s.server.ctx.cache.shared<unknown>('automation.webhooks', 'resources');
  const description = async (name: string): Promise<string> => {
    const r = await fetch(s.url + url(name), { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    return ((await r.json()) as any).properties.description;
  };
  async function put(name: string, text: string, uri?: string): Promise<void> {
    const r = await fetch(s.url + url(name), {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ properties: { runbook: { name: demoAutomation.runbook }, isEnabled: true, description: text, ...(uri ? { uri } : {}) } }),
    });
    assert.ok(r.status === 200 || r.status === 201, await r.text());
  }
  const outsideWrite = (text: string) =>
    raw.prepare(`update automation_webhooks set body = json_set(body, '$.properties.description', ?) where id_lower = ?`).run(text, keyOf(demoAutomation.webhook));

  before(async () => {
    s = await startTestServer();
    token = await appToken(s.url, 'arm');
    const gen = await fetch(`${s.url}${account}/webhooks/generateUri?api-version=2024-10-23`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    assert.equal(gen.status, 200);
    await put(other, 'the other webhook', (await gen.json()) as string);
    raw = new SQLite(path.join(s.config.dataDir, 'stratus.db'));
    raw.pragma('busy_timeout = 5000');
  });
  after(async () => {
    raw?.close();
    await s?.close();
  });

  test('a PUT drops that webhook only: the next read sees it, the other row stays cached', async () => {
    await description(other);
    await description(demoAutomation.webhook);
    const kept = rows().peek(keyOf(other));
    assert.notEqual(kept, undefined);
    const text = `keyed ${randomUUID()}`;
    await put(demoAutomation.webhook, text);
    assert.equal(await description(demoAutomation.webhook), text);
    assert.equal(rows().peek(keyOf(other)), kept, 'the other row is the same cached object');
  });

  test('a write by another connection on the file is read at once, and drops only its row', async () => {
    await description(demoAutomation.webhook);
    const kept = rows().peek(keyOf(other));
    assert.notEqual(kept, undefined);
    const text = `outside ${randomUUID()}`;
    outsideWrite(text);
    assert.equal(await description(demoAutomation.webhook), text);
    assert.equal(rows().peek(keyOf(other)), kept);
  });

  test("a webhook's kept answer outlives a PUT of another webhook, and a PUT of its own or an outside write ends it", async () => {
    const served = () => keptAnswersServed(s.server.ctx);
    const answer = async (name: string) => {
      const r = await fetch(s.url + url(name), { headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 200);
      return r.text();
    };
    const first = await answer(other);
    assert.equal(await answer(other), first);
    const before = served();
    assert.equal(before.all > 0, true, 'the second read was a kept answer');
    await put(demoAutomation.webhook, `another ${randomUUID()}`);
    assert.equal(await answer(other), first);
    assert.equal(served().acrossKeyedWrites, before.acrossKeyedWrites + 1, 'served across the other webhook\'s write');
    const text = `own ${randomUUID()}`;
    await put(other, text);
    assert.equal(JSON.parse(await answer(other)).properties.description, text);
    const kept = await answer(other);
    const outside = `outside ${randomUUID()}`;
    raw.prepare(`update automation_webhooks set body = json_set(body, '$.properties.description', ?) where id_lower = ?`).run(outside, keyOf(other));
    assert.equal(JSON.parse(await answer(other)).properties.description, outside);
    assert.notEqual(await answer(other), kept);
  });

  test('more writes than the log keeps between two reads empty the whole area', async () => {
    await description(other);
    assert.notEqual(rows().peek(keyOf(other)), undefined);
    let last = '';
    raw.transaction(() => {
      for (let i = 0; i <= 1000; i++) outsideWrite((last = `burst ${i}`));
    })();
    assert.equal(await description(demoAutomation.webhook), last);
    assert.equal(rows().peek(keyOf(other)), undefined, 'entries were missed: every keyed row was dropped');
    assert.equal((raw.prepare('select count(*) as n from stratus_cache_keys').get() as { n: number }).n <= 1000, true, 'the log keeps its last 1,000 entries');
  });
});
