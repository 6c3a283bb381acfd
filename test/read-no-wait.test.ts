/**
 * Reads do not wait for other requests' writes (issue 31, `src/core/cache-requests.ts`): on
 * PostgreSQL a request that wrote nothing is answered without sending a marker or waiting for
 * the acknowledgements of a write of this instance that is not yet confirmed everywhere; the next
 * request that writes still sends the marker and waits (its answer follows every live
 * instance's acknowledgement, `test/live-instances.test.ts`). Observed through the counters the
 * cache hub exposes (`cache.requests`), no timing.
 *
 * A read that writes — here the poll that completes a platform operation whose time has come — is
 * marked as a writer and waits like a write; the suite's servers check that every read that wrote
 * was marked (`STRATUS_VERIFY_READ_WRITES`, set by `helpers/server.ts`).
 *
 * PostgreSQL only (skipped on SQLite with a message: SQLite never waits).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken } from './helpers/auth.ts';
import { demoSubscription, platformDemoWorkspace } from '../src/seed/demo.ts';
import { advance, call, definition, uniqueName } from './helpers/platform.ts';

const skipReason = process.env.STRATUS_TEST_DATABASE_URL ? false : 'acknowledgement waits are a PostgreSQL feature: set STRATUS_TEST_DATABASE_URL';
const hook = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`;

describe('a read does not wait for writes it did not make', { skip: skipReason }, () => {
  let a: TestServer;
  let b: TestServer;
  let token: string;
  before(async () => {
    const settings = { platformProvisioningDelaySeconds: 30 };
    a = await startTestServer({ settings });
    b = await startTestServer({ settings, shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
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

  test('a read that completes an operation is a writer: it waits, and the other instance then lists the item', async () => {
    const cache = a.server.ctx.cache;
    assert.equal(cache.requests.verifying, true, 'the suite checks that reads which write are marked');
    const sp = await appToken(a.url, 'platform');
    const name = uniqueName('no-wait');
    const esPath = `/v1/workspaces/${platformDemoWorkspace.id}/eventstreams`;
    const created = await call(a.url, 'POST', esPath, sp, { displayName: name, definition: definition() });
    assert.equal(created.status, 202, created.text);
    const location = created.headers.get('location')!;
    // While it runs, polling it writes nothing: no marker.
    let markers = cache.requests.markersSent;
    const running = await call(a.url, 'GET', location, sp);
    assert.equal(running.body.status, 'Running');
    assert.equal(cache.requests.markersSent, markers, 'a poll that writes nothing sends no marker');
    // A raw write left unconfirmed, so that a read that did not write would not wait for it.
    await sql`update automation_webhooks set name = name where name = 'no such webhook'`.execute(a.server.ctx.store.db);
    await advance(a, 31);
    await sql`update automation_webhooks set name = name where name = 'no such webhook'`.execute(a.server.ctx.store.db);
    assert.equal(cache.unsettled(), true);
    markers = cache.requests.markersSent;
    const done = await call(a.url, 'GET', location, sp);
    assert.equal(done.body.status, 'Succeeded');
    assert.ok(cache.requests.markersSent > markers, 'the poll that completed the operation waited like a write');
    assert.equal(cache.unsettled(), false, 'every live instance acknowledged the completion before the poll was answered');
    const listed = await call(b.url, 'GET', esPath, sp);
    assert.equal(listed.status, 200);
    assert.equal(listed.body.value.some((x: any) => x.displayName === name), true, 'the other instance lists the item the poll completed');
  });
});
