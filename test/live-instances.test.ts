/**
 * Live instances on PostgreSQL (`src/core/cache-presence.ts`, issue 9 items 3 and 9): an instance
 * whose lease runs serves from its caches without reading the cache versions or the mailbox
 * versions (`src/core/kept-versions.ts`); a write is
 * answered only after every live instance applied it; an instance that stops acknowledging is
 * waited for at most until its lease ends, and by then it no longer trusts its caches.
 *
 * PostgreSQL only (skipped on SQLite with a message; CI runs it on PostgreSQL).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { mailScopes } from './helpers/mail.ts';
import { demoSubscription, demoTenant, demoUser } from '../src/seed/demo.ts';
import { waitFor } from './helpers/wait.ts';

const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const skipReason = dbUrl ? false : 'live instances are a PostgreSQL feature: set STRATUS_TEST_DATABASE_URL (CI runs the suite on PostgreSQL too)';
const hook = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`;

async function description(base: string, token: string): Promise<string> {
  const r = await fetch(base + hook, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  return ((await r.json()) as any).properties.description;
}

async function patchDescription(base: string, token: string, text: string): Promise<void> {
  const r = await fetch(base + hook, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ properties: { description: text } }) });
  assert.equal(r.status, 200, await r.text());
}

/** The kept-versions key of the demo user's mailbox (`tenant NUL mailbox`). */
const mailboxKey = `${demoTenant.id}\u0000${demoUser.id}`;

async function subject(base: string, token: string, id: string): Promise<string> {
  const r = await fetch(`${base}/v1.0/me/messages/${id}?$select=subject`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  return ((await r.json()) as any).subject;
}

/** The subject of the newest inbox message (a page: kept per mailbox version, `kept.ts`). */
async function pageSubject(base: string, token: string): Promise<string> {
  const r = await fetch(`${base}/v1.0/me/mailFolders/drafts/messages?$select=subject&$top=1`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  return ((await r.json()) as any).value[0].subject;
}

async function isRead(base: string, token: string, id: string): Promise<boolean> {
  const r = await fetch(`${base}/v1.0/me/messages/${id}?$select=isRead`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  return ((await r.json()) as any).isRead;
}

async function patchSubject(base: string, token: string, id: string, text: string): Promise<void> {
  const r = await fetch(`${base}/v1.0/me/messages/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: text }) });
  assert.equal(r.status, 200, await r.text());
}

describe('live instances on one PostgreSQL schema', { skip: skipReason }, () => {
  let a: TestServer;
  let b: TestServer;
  let polled: TestServer;
  /** Closed by the signals test (its bus listens on its own connection and would deliver instead). */
  let polledClosed = false;
  let token: string;
  let mail: string;
  let message: string;
  let db: pg.Client;

  before(async () => {
    a = await startTestServer();
    b = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    polled = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url }, settings: { instanceLeaseMs: 0 } });
    token = await appToken(a.url, 'arm');
    mail = await userToken(a.url, identities.user, mailScopes);
    const created = await fetch(`${a.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'live mail' }) });
    assert.equal(created.status, 201);
    message = ((await created.json()) as any).id;
    db = new pg.Client({ connectionString: dbUrl, options: `-c search_path=${a.config.databaseSchema}` });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    if (!polledClosed) await polled?.close();
    await b?.close();
    await a?.close();
  });

  test('each instance registers and is live; an instance with a lease of 0 is not', async () => {
    assert.equal(a.server.ctx.cache.live, true);
    assert.equal(b.server.ctx.cache.live, true);
    assert.equal(polled.server.ctx.cache.live, false);
    const { rows } = await db.query('select count(*)::int as n from stratus_instances where lease_until > (extract(epoch from clock_timestamp()) * 1000)::bigint');
    assert.equal(rows[0].n, 2);
  });

  test('a write on one instance is applied by every live instance before it is answered', async () => {
    await description(b.url, token);
    const before = b.server.ctx.cache.epoch;
    const text = `live ${crypto.randomUUID()}`;
    await patchDescription(a.url, token, text);
    // No wait of any kind here: B emptied its caches before A answered.
    assert.ok(b.server.ctx.cache.epoch > before, 'B applied the write before A answered');
    assert.equal(await description(b.url, token), text);
    assert.equal(await description(polled.url, token), text);
  });

  test('a live instance reads no version row; an instance that is not live reads it every turn', async () => {
    await description(b.url, token);
    await description(polled.url, token);
    const live = b.server.ctx.cache.epoch;
    const pulled = polled.server.ctx.cache.epoch;
    // A version bump that bypasses the protocol (no notification): only a version read can see it.
    await db.query("update stratus_cache_versions set version = version + 1 where area = 'resources'");
    await description(b.url, token);
    await description(polled.url, token);
    assert.equal(b.server.ctx.cache.epoch, live, 'the live instance did not read the versions');
    assert.ok(polled.server.ctx.cache.epoch > pulled, 'the instance that is not live read them');
  });

  test('a mail write is applied by every live instance, the writer included, before it is answered', async () => {
    const keptA = a.server.ctx.cache.keptVersions('mail');
    const keptB = b.server.ctx.cache.keptVersions('mail');
    // Asked twice on each: a page's text (and its mailbox version) is kept from its second sighting on (`kept.ts`).
    const was = await pageSubject(b.url, mail);
    assert.equal(await pageSubject(b.url, mail), was);
    assert.equal(await pageSubject(a.url, mail), was);
    assert.equal(await pageSubject(a.url, mail), was);
    assert.notEqual(keptA.get(mailboxKey), undefined, 'A keeps the mailbox version');
    assert.notEqual(keptB.get(mailboxKey), undefined, 'B keeps the mailbox version');
    const text = `mail ${crypto.randomUUID()}`;
    await patchSubject(a.url, mail, message, text);
    // No wait of any kind here: both dropped the mailbox's version before A answered.
    assert.equal(keptB.get(mailboxKey), undefined, 'B dropped it');
    assert.equal(keptA.get(mailboxKey), undefined, 'A dropped it');
    assert.equal(await pageSubject(b.url, mail), text);
    assert.equal(await pageSubject(a.url, mail), text);
    assert.equal(await subject(b.url, mail, message), text);
    assert.equal(await subject(a.url, mail, message), text);
    assert.equal(await subject(polled.url, mail, message), text);
  });

  test('only a request that may write sends a marker (a POST read does not); a write takes no sequence row', async () => {
    const seq = async () => Number((await db.query("select version from stratus_cache_versions where area = '*'")).rows[0].version);
    const before = await seq();
    const markers = a.server.ctx.cache.requests.markersSent;
    const list = await fetch(`${a.url}/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.DataShare/accounts/stratus-share/shares/sales/listSynchronizations?api-version=2021-08-01`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    assert.equal(list.status, 200, await list.text());
    assert.equal(await subject(a.url, mail, message), await subject(b.url, mail, message));
    assert.equal(a.server.ctx.cache.requests.markersSent, markers, 'no marker for a read, also not for a POST read');
    await patchSubject(a.url, mail, message, `marked ${crypto.randomUUID()}`);
    assert.equal(a.server.ctx.cache.requests.markersSent, markers + 1, 'the mail write sent one');
    // Pushed acknowledgements (`cache-presence.ts`): the marker rides the listening connection, not the `*` row.
    assert.equal(await seq(), before, 'no sequence number taken');
  });

  test('a live instance reads no mailbox version; an instance that is not live reads it every turn', async () => {
    const texts = (s: TestServer) => s.server.ctx.cache.shared<string>('mail.keptTexts', 'directory', 1000);
    // Twice each: kept from the second sighting on.
    for (const url of [b.url, b.url, polled.url, polled.url]) await pageSubject(url, mail);
    const keptOnB = texts(b).size;
    const keptOnPolled = texts(polled).size;
    // A version bump that bypasses the triggers (no notification): only a read of the version can see it.
    await db.query('update mail_mailbox_versions set version = version + 1 where tenant_id = $1 and mailbox_id = $2', [demoTenant.id, demoUser.id]);
    await pageSubject(b.url, mail);
    await pageSubject(polled.url, mail);
    assert.equal(texts(b).size, keptOnB, 'the live instance answered the text kept for the version it keeps');
    assert.equal(texts(polled).size, keptOnPolled + 1, 'the instance that is not live read the new version and kept a new text');
  });

  test("a live instance reads a message by id from memory until that message is written; other messages' writes leave it", async () => {
    const other = await fetch(`${a.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'another live mail' }) });
    assert.equal(other.status, 201);
    const otherId = ((await other.json()) as any).id;
    const setRead = async (id: string, value: boolean) => {
      const r = await fetch(`${a.url}/v1.0/me/messages/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ isRead: value }) });
      assert.equal(r.status, 200, await r.text());
    };
    await setRead(message, false);
    assert.equal(await isRead(b.url, mail, message), false);
    assert.equal(await isRead(polled.url, mail, message), false);
    // Another message of the same mailbox written through the API: its notification names that message only.
    await setRead(otherId, true);
    assert.equal(await isRead(b.url, mail, otherId), true);
    // A change of the message that bypasses the triggers (no notification; its mailbox version
    // moved by hand): only a read of the mailbox version and the row can see it.
    await db.query('begin');
    await db.query('set local session_replication_role = replica');
    // (a new change key, as every write of a message makes: answers are kept per change key)
    await db.query("update mail_messages set is_read = 1, change_key = 'CQAAAB' || substr(md5(random()::text), 1, 20) where id = $1", [message]);
    await db.query('update mail_mailbox_versions set version = version + 1 where tenant_id = $1 and mailbox_id = $2', [demoTenant.id, demoUser.id]);
    await db.query('commit');
    assert.equal(await isRead(b.url, mail, message), false, 'the live instance answered from the version it keeps: the other write did not drop it');
    assert.equal(await isRead(polled.url, mail, message), true, 'the instance that is not live read the row');
    // Written through the API (its own notification): every live instance answers the new state at once.
    await setRead(message, false);
    assert.equal(await isRead(b.url, mail, message), false);
    await setRead(message, true);
    assert.equal(await isRead(b.url, mail, message), true);
    assert.equal(await isRead(a.url, mail, message), true);
    // A move gives the message a new REST id: the old id is not found on either live instance.
    const moved = await fetch(`${a.url}/v1.0/me/messages/${otherId}/move`, { method: 'POST', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ destinationId: 'archive' }) });
    assert.equal(moved.status, 201, await moved.text());
    for (const s of [a, b]) {
      const r = await fetch(`${s.url}/v1.0/me/messages/${otherId}`, { headers: { authorization: `Bearer ${mail}` } });
      assert.equal(r.status, 404, 'the id from before the move');
    }
  });

  test("a PATCH on a live instance starts from the row it read while that row's version is kept, and from the database once another instance wrote it", async () => {
    const subjectWas = `kept row ${crypto.randomUUID()}`;
    const created = await fetch(`${a.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: subjectWas }) });
    assert.equal(created.status, 201);
    const id = ((await created.json()) as any).id as string;
    const patch = async (base: string, body: object) => {
      const r = await fetch(`${base}/v1.0/me/messages/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await r.text();
      assert.equal(r.status, 200, text);
      return JSON.parse(text);
    };
    // B reads the message whole (its row is kept under its version).
    assert.equal(await subject(b.url, mail, id), subjectWas);
    // A change that bypasses the triggers (no notification): B's kept version still names the
    // row B read, so B's PATCH starts from that row, not from the database (no read of it).
    await db.query('begin');
    await db.query('set local session_replication_role = replica');
    await db.query("update mail_messages set doc = replace(doc, $2, 'bypassed'), subject = 'bypassed', change_key = 'CQAAAB' || substr(md5(random()::text), 1, 20) where id = $1", [id, subjectWas]);
    await db.query('commit');
    const fromKept = await patch(b.url, { isRead: true });
    assert.equal(fromKept.subject, subjectWas, 'B answered from the row it kept');
    assert.equal(fromKept.isRead, true);
    // Written through the API on A (its notification drops B's version before A answers): B's
    // next PATCH reads the row again, and answers A's subject with its own read state.
    const subjectNow = `written on A ${crypto.randomUUID()}`;
    assert.equal((await patch(a.url, { subject: subjectNow })).subject, subjectNow);
    const afterWrite = await patch(b.url, { isRead: false });
    assert.equal(afterWrite.subject, subjectNow, "B's PATCH starts from A's write");
    assert.equal(afterWrite.isRead, false);
    assert.notEqual(afterWrite.changeKey, fromKept.changeKey);
    // B's own write dropped the version it kept too: a read on either instance sees both writes.
    for (const s of [a, b]) {
      assert.equal(await subject(s.url, mail, id), subjectNow);
      assert.equal(await isRead(s.url, mail, id), false);
    }
    // And a PATCH on B after a read there starts from that read (the version B keeps again).
    assert.equal(await subject(b.url, mail, id), subjectNow);
    assert.equal((await patch(b.url, { isRead: true })).subject, subjectNow);
  });

  test('an instance whose connection is cut reads the versions until it is live again', async () => {
    // Both instances' listening connections (which also carry the signal bus's notifications).
    const { rowCount } = await db.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and (query like '%stratus_instances%' or query like '%stratus_cache_%')", [`stratus listener ${a.config.databaseSchema}`]);
    assert.ok(rowCount! >= 2);
    // Terminated: each instance learns it from its connection; wait for that event, not a time.
    await waitFor(() => !a.server.ctx.cache.live && !b.server.ctx.cache.live, 'both instances to learn their presence connection was terminated', 30_000, 1);
    const text = `cut ${crypto.randomUUID()}`;
    await patchDescription(a.url, token, text);
    assert.equal(await description(b.url, token), text, 'not live: the version read sees the write');
    // Each reconnects after a second and registers again.
    await waitFor(() => a.server.ctx.cache.live && b.server.ctx.cache.live, 'both instances to reconnect and register again', 30_000, 50);
    const again = `again ${crypto.randomUUID()}`;
    await patchDescription(b.url, token, again);
    assert.equal(await description(a.url, token), again);
  });

  test("one listening connection a live instance carries the workers' signals too, also after it was cut", async () => {
    // a and b: the live instances' connection each; the instance with a lease of 0: its signal bus's own.
    const listeners = await db.query('select count(*)::int as n from pg_stat_activity where application_name = $1', [`stratus listener ${a.config.databaseSchema}`]);
    assert.equal(listeners.rows[0].n, 3);
    // Only a and b deliver from here on: the instance with a lease of 0 would hear the signals on its own connection.
    polledClosed = true;
    await polled.close();
    // A receiver of change notifications on 127.0.0.1 (validation handshake echoed).
    const got: { id: string }[] = [];
    const receiver = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const token = new URL(req.url!, 'http://x').searchParams.get('validationToken');
        if (token !== null) {
          res.writeHead(200, { 'content-type': 'text/plain' });
          return res.end(token);
        }
        for (const n of (JSON.parse(Buffer.concat(chunks).toString('utf8')) as any).value) got.push(n.resourceData);
        res.writeHead(202);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/n`;
      const sub = await fetch(`${a.url}/v1.0/subscriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' },
        body: JSON.stringify({ changeType: 'created', notificationUrl: url, resource: 'me/mailFolders/drafts/messages', expirationDateTime: new Date(Date.now() + 3_600_000).toISOString() }),
      });
      const subText = await sub.text();
      assert.equal(sub.status, 201, subText);
      const subscriptionId = JSON.parse(subText).id;
      await db.query("select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and (query like '%stratus_instances%' or query like '%stratus_cache_%')", [`stratus listener ${a.config.databaseSchema}`]);
      await waitFor(() => !a.server.ctx.cache.live && !b.server.ctx.cache.live, 'both instances to learn their connection was terminated', 30_000, 1);
      await waitFor(() => a.server.ctx.cache.live && b.server.ctx.cache.live, 'both instances to reconnect and register again', 30_000, 50);
      // Nothing is due before the subscription expires in an hour: only a relayed signal wakes a worker now.
      const written = await fetch(`${b.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject: 'signalled through the live connection' }) });
      assert.equal(written.status, 201);
      const id = ((await written.json()) as any).id;
      await waitFor(() => got.some((n) => n.id === id), 'the created notification after the reconnect', 30_000, 20);
      const del = await fetch(`${a.url}/v1.0/subscriptions/${subscriptionId}`, { method: 'DELETE', headers: { authorization: `Bearer ${mail}` } });
      assert.equal(del.status, 204);
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });

  test('an instance that stops answering is waited for only until its lease ends, and then distrusts its caches', { timeout: 120_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-live-'));
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve'], {
      env: {
        ...process.env,
        STRATUS_DATA_DIR: dataDir,
        STRATUS_HTTP_PORT: '0',
        STRATUS_HTTPS_PORT: '-1',
        STRATUS_LOG_LEVEL: 'warn',
        STRATUS_DATABASE_URL: dbUrl,
        STRATUS_DATABASE_SCHEMA: a.config.databaseSchema,
        STRATUS_PUBLIC_URL: a.url,
        STRATUS_INSTANCE_LEASE_MS: '1500',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.resume();
    try {
      // The CLI prints its plain HTTP origin once it listens.
      const origin = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout!.on('data', (d) => {
          out += d;
          const m = /HTTP:\s+(http:\/\/\S+)/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${out}`)));
      });
      child.stdout!.resume();
      const { rows } = await db.query('select count(*)::int as n from stratus_instances where lease_until > (extract(epoch from clock_timestamp()) * 1000)::bigint');
      assert.equal(rows[0].n, 3, 'the third instance registered');
      const first = await description(origin, token);
      assert.equal(await description(origin, token), first, 'kept by the third instance');
      const firstSubject = await subject(origin, mail, message);
      assert.equal(await subject(origin, mail, message), firstSubject, 'kept by the third instance');
      child.kill('SIGSTOP');
      const text = `while stopped ${crypto.randomUUID()}`;
      // Each answered once the stopped instance's lease ran out (it cannot acknowledge).
      await patchDescription(a.url, token, text);
      await patchSubject(a.url, mail, message, text);
      child.kill('SIGCONT');
      assert.equal(await description(origin, token), text, 'the resumed instance does not answer from its old cache');
      assert.equal(await subject(origin, mail, message), text, 'nor from its kept mailbox version');
    } finally {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
