/**
 * Reads do not wait for other requests' writes (issue 31, `src/core/cache-requests.ts`): on
 * PostgreSQL a request that wrote nothing is answered without sending a marker or waiting for
 * the acknowledgements of a write of this instance that is not yet confirmed everywhere; the next
 * request that writes still sends the marker and waits (its answer follows every live
 * instance's acknowledgement, `test/live-instances.test.ts`). Observed through the counters the
 * cache hub exposes (`cache.requests`), no timing.
 *
 * PostgreSQL only (skipped on SQLite with a message: SQLite never waits).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken } from './helpers/auth.ts';
import { demoSubscription } from '../src/seed/demo.ts';

const skipReason = process.env.STRATUS_TEST_DATABASE_URL ? false : 'acknowledgement waits are a PostgreSQL feature: set STRATUS_TEST_DATABASE_URL';
const hook = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`;

describe('a read does not wait for writes it did not make', { skip: skipReason }, () => {
  let a: TestServer;
  let b: TestServer;
  let token: string;
  before(async () => {
    a = await startTestServer();
    b = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    token = await appToken(a.url, 'arm');
  });
  after(async () => {
    await b?.close();
    await a?.close();
  });

  test('a GET sends no marker while another write is unconfirmed; the next PATCH sends it and confirms', async () => {
    const cache = a.server.ctx.cache;
    // A write of a cached table outside any request (as a background worker's): the hub must confirm it.
    await sql`update automation_webhooks set name = name where name = 'no such webhook'`.execute(a.server.ctx.store.db);
    assert.equal(cache.unsettled(), true, 'the raw write is not yet confirmed by every live instance');
    const markers = cache.requests.markersSent;
    const notWaited = cache.requests.readsNotWaited;
    const r = await fetch(a.url + hook, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    assert.equal(cache.requests.markersSent, markers, 'the read sent no marker');
    assert.equal(cache.requests.readsNotWaited, notWaited + 1, 'the read was answered without waiting');
    assert.equal(cache.unsettled(), true, 'the read confirmed nothing');

    const text = `no-wait ${crypto.randomUUID()}`;
    const p = await fetch(a.url + hook, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ properties: { description: text } }) });
    assert.equal(p.status, 200, await p.text());
    assert.ok(cache.requests.markersSent > markers, 'the write sent a marker');
    assert.equal(cache.unsettled(), false, 'the write waited until every live instance acknowledged');
    // The other instance applied it before the write was answered.
    const g = await fetch(b.url + hook, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(((await g.json()) as any).properties.description, text);
  });
});
