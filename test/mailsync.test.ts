/**
 * Mail change notifications (reference mail.md §7): subscriptions created with the official
 * client, the validation handshake answered by a small HTTP receiver on 127.0.0.1, then
 * notifications for messages created, updated and deleted through the mail API; retries with
 * backoff across a restart; refusals (handshake timeout or failure, plain http off loopback,
 * renewal beyond the maximum lifetime, another user's mailbox); DELETE stopping delivery;
 * lifecycle notifications. On SQLite and PostgreSQL (STRATUS_TEST_DATABASE_URL).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { userToken, appToken, identities } from './helpers/auth.ts';
import { graphClient } from './helpers/mail.ts';
import { demoAdmin, demoTenant, demoUser } from '../src/seed/demo.ts';
import { waitFor } from './helpers/wait.ts';
import { sql } from 'kysely';
import { isPostgres } from '../src/store/db.ts';

const scopes = ['api://stratus/mail/Mail.ReadWrite', 'api://stratus/mail/Mail.Send'];

interface Received {
  path: string;
  query: URLSearchParams;
  contentType: string;
  body: string;
  json?: any;
}

/**
 * A webhook receiver on 127.0.0.1. Per path: answers validation requests with the token
 * (unless `noValidation` / `wrongToken`), fails the first `failures[path]` notification
 * POSTs with 500, and never answers notification POSTs to paths in `hang`.
 */
class Receiver {
  server: http.Server | https.Server;
  constructor(tls = false) {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => this.handle(req, res);
    this.server = tls ? https.createServer({ cert: fs.readFileSync('.stratus-test/tls/server.pem'), key: fs.readFileSync('.stratus-test/tls/server-key.pem') }, handler) : http.createServer(handler);
  }
  received: Received[] = [];
  failures = new Map<string, number>();
  hang = new Set<string>();
  noValidation = new Set<string>();
  wrongToken = new Set<string>();
  /** Paths whose validation answer is the token followed by 50 MB. */
  huge = new Set<string>();
  private waiters: { pred: (r: Received[]) => boolean; resolve: () => void }[] = [];
  private open = new Set<http.ServerResponse>();
  /** Notification requests to a `hang` path still waiting for an answer. */
  hanging = new Map<string, number>();
  base = '';

  async start(): Promise<void> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.base = `${this.server instanceof https.Server ? 'https' : 'http'}://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const r of this.open) r.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const u = new URL(req.url!, 'http://x');
      const body = Buffer.concat(chunks).toString('utf8');
      const rec: Received = { path: u.pathname, query: u.searchParams, contentType: String(req.headers['content-type'] ?? ''), body };
      try {
        rec.json = body ? JSON.parse(body) : undefined;
      } catch {
        /* text */
      }
      this.received.push(rec);
      this.notify();
      const token = u.searchParams.get('validationToken');
      if (token !== null) {
        if (this.noValidation.has(u.pathname)) {
          this.open.add(res);
          return;
        }
        if (this.huge.has(u.pathname)) {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const block = 'x'.repeat(1 << 20);
          let left = 50;
          const more = () => {
            while (left > 0) {
              left--;
              if (!res.write(block)) return void res.once('drain', more);
            }
            res.end();
          };
          res.on('error', () => undefined);
          res.write(token);
          more();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain' }).end(this.wrongToken.has(u.pathname) ? 'nope' : token);
        return;
      }
      if (this.hang.has(u.pathname)) {
        this.open.add(res);
        this.hanging.set(u.pathname, (this.hanging.get(u.pathname) ?? 0) + 1);
        res.on('close', () => this.hanging.set(u.pathname, (this.hanging.get(u.pathname) ?? 1) - 1));
        return;
      }
      const left = this.failures.get(u.pathname) ?? 0;
      if (left > 0) {
        this.failures.set(u.pathname, left - 1);
        res.writeHead(500).end();
        return;
      }
      res.writeHead(202).end();
    });
  }

  private notify(): void {
    this.waiters = this.waiters.filter((w) => {
      if (w.pred(this.received)) {
        w.resolve();
        return false;
      }
      return true;
    });
  }

  /** Notification POSTs (not validation requests) to `path`. */
  posts(path: string): Received[] {
    return this.received.filter((r) => r.path === path && !r.query.has('validationToken'));
  }

  /** Notifications (the `value` items) delivered to `path`. */
  notifications(path: string): any[] {
    return this.posts(path).flatMap((r) => r.json?.value ?? []);
  }

  /**
   * Resolves once `pred` holds over everything received (event-driven, no polling); rejects after
   * `ms` with a message naming `what` and what the receiver got meanwhile.
   */
  until(pred: (r: Received[]) => boolean, what = 'the receiver condition', ms = 30_000): Promise<void> {
    if (pred(this.received)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        const got = this.received.map((r) => `${r.path}${r.query.has('validationToken') ? ' (validation)' : ''}`).join(', ');
        reject(new Error(`waited ${ms / 1000} s for ${what}; the receiver got ${this.received.length} requests: ${got || 'none'}`));
      }, ms);
      const waiter = {
        pred,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }

  untilPosts(path: string, n: number): Promise<void> {
    return this.until(() => this.posts(path).length >= n, `${n} notification POSTs to ${path}`);
  }

  untilNotification(path: string, pred: (n: any) => boolean): Promise<any> {
    return this.until(() => this.notifications(path).some(pred), `a notification on ${path} matching ${pred.toString().slice(0, 160)}`).then(() => this.notifications(path).find(pred));
  }
}

async function call(base: string, token: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

const inMinutes = (m: number) => new Date(Date.now() + m * 60_000).toISOString();

async function advance(s: TestServer, seconds: number): Promise<void> {
  const r = await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: seconds }) });
  assert.equal(r.status, 200);
}

async function serverNow(s: TestServer): Promise<number> {
  return Date.parse(((await (await s.control(`/_stratus/clock`)).json()) as any).now);
}

describe('mail subscriptions: handshake, notifications, refusals', () => {
  let s: TestServer;
  const rx = new Receiver();
  let user: string;
  let admin: string;
  before(async () => {
    await rx.start();
    s = await startTestServer({ settings: { mailNotificationPollMs: 50, mailSubscriptionValidationTimeoutMs: 1500, mailSubscriptionMaxMinutes: 4230 } });
    user = await userToken(s.url, identities.user, scopes);
    admin = await userToken(s.url, identities.admin, scopes);
  });
  after(async () => {
    await s?.close();
    await rx.stop();
  });

  test('creation runs the handshake and echoes the subscription; created, updated and deleted notifications follow mail API writes', async () => {
    const client = graphClient(s.url, user);
    const expiration = inMinutes(600);
    const sub = await client.api('/subscriptions').post({
      changeType: 'created,updated,deleted',
      notificationUrl: `${rx.base}/all?tenant=a%20b`,
      resource: 'me/messages',
      expirationDateTime: expiration,
      clientState: 'secretClientValue',
      latestSupportedTlsVersion: 'v1_2',
    });
    assert.match(sub.id, /^[0-9a-f-]{36}$/);
    assert.equal(sub['@odata.context'], `${s.url}/v1.0/$metadata#subscriptions/$entity`);
    assert.equal(sub.resource, 'me/messages');
    assert.equal(sub.changeType, 'created,updated,deleted');
    assert.equal(sub.clientState, 'secretClientValue');
    assert.equal(sub.notificationUrl, `${rx.base}/all?tenant=a%20b`);
    assert.equal(sub.expirationDateTime, expiration);
    assert.equal(sub.creatorId, demoUser.id);
    assert.equal(sub.latestSupportedTlsVersion, 'v1_2');
    assert.equal(sub.notificationContentType, 'application/json');
    assert.equal(sub.includeResourceData, false);
    assert.equal(sub.lifecycleNotificationUrl, null);
    assert.equal(typeof sub.applicationId, 'string');

    // The handshake: a POST with the token in the query (URL-decoded by the receiver), text/plain, the client's own query kept.
    const v = rx.received.find((r) => r.path === '/all' && r.query.has('validationToken'))!;
    assert.ok(v, 'validation request received');
    assert.match(v.query.get('validationToken')!, /^Validation: Testing client application reachability for subscription Request-Id: [0-9a-f-]{36}$/);
    assert.equal(v.query.get('tenant'), 'a b');
    assert.match(v.contentType, /^text\/plain; charset=utf-8$/);

    const got = await client.api(`/subscriptions/${sub.id}`).get();
    assert.equal(got.id, sub.id);
    const listed = await client.api('/subscriptions').get();
    assert.ok(listed.value.some((x: any) => x.id === sub.id));
    // Another user of the same app does not see it.
    const others = await graphClient(s.url, admin).api('/subscriptions').get();
    assert.ok(!others.value.some((x: any) => x.id === sub.id));

    // created: a draft through the mail API.
    const draft = await client.api('/me/messages').post({ subject: 'Hello', toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] });
    const created = await rx.untilNotification('/all', (n) => n.changeType === 'created' && n.resourceData.id === draft.id);
    assert.equal(created.subscriptionId, sub.id);
    assert.equal(created.subscriptionExpirationDateTime, expiration);
    assert.equal(created.clientState, 'secretClientValue');
    assert.equal(created.tenantId, demoTenant.id);
    assert.equal(created.resource, `Users/${demoUser.id}/Messages/${draft.id}`);
    assert.deepEqual(created.resourceData, { '@odata.type': '#Vendor.Graph.Message', '@odata.id': `Users/${demoUser.id}/Messages/${draft.id}`, '@odata.etag': `W/"${draft.changeKey}"`, id: draft.id });
    // Field by field against the reference's examples (notification-basic-message-created.json, subscription-create.json).
    assert.deepEqual(Object.keys(created).sort(), ['changeType', 'clientState', 'id', 'resource', 'resourceData', 'subscriptionExpirationDateTime', 'subscriptionId', 'tenantId']);
    assert.deepEqual(
      Object.keys(sub).sort(),
      ['@odata.context', 'applicationId', 'changeType', 'clientState', 'creatorId', 'encryptionCertificate', 'encryptionCertificateId', 'expirationDateTime', 'id', 'includeResourceData', 'latestSupportedTlsVersion', 'lifecycleNotificationUrl', 'notificationContentType', 'notificationQueryOptions', 'notificationUrl', 'notificationUrlAppId', 'resource'],
    );
    const post = rx.posts('/all').find((p) => p.json.value.includes(created))!;
    assert.equal(post.contentType, 'application/json');
    assert.equal(post.query.get('tenant'), 'a b', 'the query string of notificationUrl is kept on delivery');

    // updated
    const edited = await client.api(`/me/messages/${draft.id}`).patch({ subject: 'Hello again' });
    const updated = await rx.untilNotification('/all', (n) => n.changeType === 'updated' && n.resourceData.id === draft.id && n.resourceData['@odata.etag'] === `W/"${edited.changeKey}"`);
    assert.equal(updated.clientState, 'secretClientValue');

    // deleted
    await client.api(`/me/messages/${draft.id}`).delete();
    const deleted = await rx.untilNotification('/all', (n) => n.changeType === 'deleted' && n.resourceData.id === draft.id);
    assert.equal(deleted.resource, `Users/${demoUser.id}/Messages/${draft.id}`);
  });

  test('a mailbox-wide subscription does not see the recoverable-items folders', async () => {
    const client = graphClient(s.url, user);
    await client.api('/subscriptions').post({ changeType: 'created,updated,deleted', notificationUrl: `${rx.base}/wide`, resource: `users/${demoUser.id}/messages`, expirationDateTime: inMinutes(600) });
    const draft = await client.api('/me/messages').post({ subject: 'to be purged' });
    await rx.untilNotification('/wide', (x) => x.resourceData.id === draft.id);
    await client.api(`/me/messages/${draft.id}/permanentDelete`).post({});
    const sentinel = await client.api('/me/messages').post({ subject: 'sentinel' });
    await rx.untilNotification('/wide', (x) => x.resourceData.id === sentinel.id);
    // In log order: created (draft), deleted (draft), created (sentinel); the copy in the purges folder is not announced.
    assert.deepEqual(
      rx.notifications('/wide').map((x) => [x.changeType, x.resourceData.id]),
      [['created', draft.id], ['deleted', draft.id], ['created', sentinel.id]],
    );
  });

  test('an https receiver (trusted certificate) gets the handshake and the notifications', async () => {
    const tls = new Receiver(true);
    await tls.start();
    try {
      const client = graphClient(s.url, user);
      const sub = await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${tls.base}/secure`, resource: 'me/mailFolders/drafts/messages', expirationDateTime: inMinutes(600), clientState: 'tls' });
      assert.ok(sub.notificationUrl.startsWith('https://'));
      assert.ok(tls.received.some((r) => r.path === '/secure' && r.query.has('validationToken')));
      const draft = await client.api('/me/messages').post({ subject: 'over tls' });
      const n = await tls.untilNotification('/secure', (x) => x.resourceData.id === draft.id);
      assert.equal(n.clientState, 'tls');
    } finally {
      await tls.stop();
    }
  });

  test('an Inbox subscription of the colleague gets the delivered message, and nothing from other folders or mailboxes', async () => {
    const adminClient = graphClient(s.url, admin);
    const sub = await adminClient.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/inbox`, resource: "me/mailFolders('Inbox')/messages", expirationDateTime: inMinutes(600), clientState: 'inbox-state' });
    const userClient = graphClient(s.url, user);
    // A draft of the admin (Drafts folder) and the user's own writes must not reach this subscription.
    await adminClient.api('/me/messages').post({ subject: 'admin draft' });
    await userClient.api('/me/sendMail').post({ message: { subject: 'For your inbox', body: { contentType: 'Text', content: 'hi' }, toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] } });
    const n = await rx.untilNotification('/inbox', (x) => x.changeType === 'created');
    const inbox = await adminClient.api('/me/mailFolders/inbox/messages').filter("subject eq 'For your inbox'").get();
    assert.equal(inbox.value.length, 1);
    assert.equal(n.resourceData.id, inbox.value[0].id);
    assert.equal(n.resource, `Users/${demoAdmin.id}/Messages/${inbox.value[0].id}`);
    assert.equal(n.subscriptionId, sub.id);
    assert.equal(n.clientState, 'inbox-state');
    // Changes are matched in log order: anything earlier from Drafts or the sender's mailbox would already be here.
    assert.equal(rx.notifications('/inbox').length, 1);
  });

  test('Prefer: IdType="ImmutableId" at creation makes notifications carry immutable ids (beta path too)', async () => {
    const sub = await call(s.url, user, 'POST', '/beta/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/immutable`, resource: 'me/mailFolders/drafts/messages', expirationDateTime: inMinutes(600) }, { prefer: 'IdType="ImmutableId"' });
    assert.equal(sub.status, 201);
    assert.equal(sub.body['@odata.context'], `${s.url}/beta/$metadata#subscriptions/$entity`);
    const draft = await graphClient(s.url, user).api('/me/messages').post({ subject: 'immutable' });
    const immutable = await call(s.url, user, 'GET', `/v1.0/me/messages/${draft.id}?$select=id`, undefined, { prefer: 'IdType="ImmutableId"' });
    assert.equal(immutable.status, 200);
    assert.notEqual(immutable.body.id, draft.id);
    const n = await rx.untilNotification('/immutable', (x) => x.resourceData.id === immutable.body.id);
    assert.equal(n.resource, `Users/${demoUser.id}/Messages/${immutable.body.id}`);
  });

  test('a $filter in the resource: entering gives created, leaving deleted, changes inside updated', async () => {
    const adminClient = graphClient(s.url, admin);
    const sub = await adminClient.api('/subscriptions').post({ changeType: 'created,updated,deleted', notificationUrl: `${rx.base}/unread`, resource: "me/mailFolders('Inbox')/messages?$filter=isRead eq false", expirationDateTime: inMinutes(600) });
    assert.equal(sub.resource, "me/mailFolders('Inbox')/messages?$filter=isRead eq false");
    // Every update of the folder, unfiltered: tells when a change has been matched (both subscriptions in one pass, in log order).
    await adminClient.api('/subscriptions').post({ changeType: 'updated', notificationUrl: `${rx.base}/unread-all`, resource: "me/mailFolders('Inbox')/messages", expirationDateTime: inMinutes(600) });
    await graphClient(s.url, user).api('/me/sendMail').post({ message: { subject: 'Filter me', toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] } });
    const arrived = await rx.untilNotification('/unread', (x) => x.changeType === 'created');
    const id = arrived.resourceData.id;
    const seen = () => rx.notifications('/unread').filter((x) => x.resourceData.id === id).map((x) => x.changeType);
    await adminClient.api(`/me/messages/${id}`).patch({ isRead: true });
    await rx.until(() => seen().length >= 2);
    await adminClient.api(`/me/messages/${id}`).patch({ categories: ['Blue category'] });
    // Changes are judged by the message's state when they are matched: the categories change must
    // be matched before the message re-enters the filter, or it is judged inside (a busy machine).
    await rx.until(() => rx.notifications('/unread-all').filter((x) => x.resourceData.id === id).length >= 2);
    await adminClient.api(`/me/messages/${id}`).patch({ isRead: false });
    await rx.until(() => seen().length >= 3);
    await adminClient.api(`/me/messages/${id}`).patch({ importance: 'high' });
    await rx.until(() => seen().length >= 4);
    await adminClient.api(`/me/messages/${id}`).delete();
    await rx.until(() => seen().length >= 5);
    // The change made while outside the filter (categories) gave nothing; changes are judged by the message's current state.
    assert.deepEqual(seen(), ['created', 'deleted', 'created', 'updated', 'deleted']);
  });

  test('a failing receiver is retried with backoff, across a restart, until it succeeds', async () => {
    rx.failures.set('/flaky', 2);
    const client = graphClient(s.url, user);
    const flaky = await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/flaky`, resource: 'me/mailFolders/drafts/messages', expirationDateTime: inMinutes(600), clientState: 'flaky' });
    const draft = await client.api('/me/messages').post({ subject: 'retry me' });
    await rx.untilPosts('/flaky', 1);
    // The retry waits for its backoff: move the clock past it.
    await advance(s, 120);
    await rx.untilPosts('/flaky', 2);
    // A restart keeps the queued notification (the outbox lives in the store).
    await s.restart();
    await advance(s, 240);
    await rx.untilPosts('/flaky', 3);
    const posts = rx.posts('/flaky');
    const ids = posts.map((p) => p.json.value[0].id);
    assert.equal(new Set(ids).size, 1, 'the same notification is retried');
    assert.equal(posts[2]!.json.value[0].resourceData.id, draft.id);
    assert.equal(posts[2]!.json.value[0].clientState, 'flaky');
    assert.equal(posts[2]!.json.value[0].subscriptionId, flaky.id);
    // Delivered: the next notification to the same receiver (deliveries to one URL are in order)
    // finds the first one gone from the outbox.
    const next = await client.api('/me/messages').post({ subject: 'after retry' });
    await rx.untilNotification('/flaky', (x) => x.resourceData.id === next.id);
    const rows = await s.server.ctx.store.db.selectFrom('mail_notifications').select('payload').execute();
    assert.ok(!rows.some((r: any) => r.payload.includes(ids[0])), 'the delivered notification left the outbox');
    assert.equal(rx.posts('/flaky').length, 4);
  });

  test('a mail write whose transaction stays open is still notified, in order, after later writes (PostgreSQL holes in the change log)', { skip: !process.env.STRATUS_TEST_DATABASE_URL && 'SQLite serialises writers' }, async () => {
    const client = graphClient(s.url, user);
    await client.api('/subscriptions').post({ changeType: 'created,updated', notificationUrl: `${rx.base}/long`, resource: 'me/mailFolders/drafts/messages', expirationDateTime: inMinutes(600) });
    const early = await client.api('/me/messages').post({ subject: 'written by a long transaction' });
    await rx.untilNotification('/long', (x) => x.resourceData.id === early.id);
    // A writer draws its seq, then keeps its transaction open while another write commits after it.
    const { recordMailChanges } = await import('../src/services/mail/changes.ts');
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let recorded!: () => void;
    const drawn = new Promise<void>((r) => (recorded = r));
    const ctx = s.server.ctx;
    const drafts = (await client.api('/me/mailFolders/drafts').get()).id;
    const long = ctx.store.transaction(async (trx) => {
      await recordMailChanges(trx, [{ tenantId: demoTenant.id, mailboxId: demoUser.id, folderId: drafts, messageId: early.id, changeType: 'updated', at: new Date().toISOString() }]);
      recorded();
      await held;
    });
    await drawn;
    const later = await client.api('/me/messages').post({ subject: 'committed first' });
    // The hole must be waited out by its writer, never by time: move the clock 20 minutes while the
    // writer is open, and see a tick after the move (a lifecycle notice it queues and delivers) that
    // still holds back the later change.
    const witnessExpiry = new Date((await serverNow(s)) + 30 * 60_000).toISOString();
    await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/witness`, lifecycleNotificationUrl: `${rx.base}/witness-lc`, resource: 'me/mailFolders/inbox/messages', expirationDateTime: witnessExpiry });
    await advance(s, 20 * 60);
    await rx.until(() => rx.notifications('/witness-lc').some((n) => n.lifecycleEvent === 'reauthorizationRequired'), 'the lifecycle notice of a worker tick after the clock move');
    assert.ok(!rx.notifications('/long').some((x) => x.resourceData.id === later.id), 'a change after the hole is not delivered while the hole\'s writer is open');
    release();
    await long;
    await rx.untilNotification('/long', (x) => x.resourceData.id === later.id);
    const seen = rx.notifications('/long').map((x) => `${x.changeType} ${x.resourceData.id}`);
    const u = seen.indexOf(`updated ${early.id}`);
    assert.ok(u >= 0, `the long writer's change is notified: ${seen.join(', ')}`);
    assert.ok(u < seen.indexOf(`created ${later.id}`), 'in log order');
  });

  test('a rolled-back mail write leaves a hole that an unrelated open transaction does not hold up', { skip: !process.env.STRATUS_TEST_DATABASE_URL && 'SQLite serialises writers', timeout: 30_000 }, async () => {
    const client = graphClient(s.url, user);
    await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/hole`, resource: 'me/mailFolders/drafts/messages', expirationDateTime: inMinutes(600) });
    const ctx = s.server.ctx;
    const { recordMailChanges } = await import('../src/services/mail/changes.ts');
    // Another table's writer stays open for the whole test.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let began!: () => void;
    const open = new Promise<void>((r) => (began = r));
    const other = ctx.store.transaction(async (trx) => {
      await trx.insertInto('mail_sync_state').values({ name: 'unrelated', seq: 0 }).execute();
      began();
      await held;
      throw new Error('rolled back on purpose');
    }).then(
      () => assert.fail('the unrelated transaction was to roll back'),
      (e: Error) => assert.equal(e.message, 'rolled back on purpose'),
    );
    await open;
    // A mail write draws a seq and rolls back: a hole that never fills.
    await assert.rejects(
      ctx.store.transaction(async (trx) => {
        await recordMailChanges(trx, [{ tenantId: demoTenant.id, mailboxId: demoUser.id, folderId: 'x', messageId: 'AAMkRolledBackxxxxxxxxxxxxxx', changeType: 'created', at: new Date().toISOString() }]);
        throw new Error('rolled back on purpose');
      }),
      /rolled back on purpose/,
    );
    const after = await client.api('/me/messages').post({ subject: 'after a rolled-back write' });
    // Delivered while the unrelated transaction is still open (it is released only below).
    const n = await rx.untilNotification('/hole', (x) => x.resourceData.id === after.id);
    assert.equal(n.changeType, 'created');
    assert.ok(!rx.notifications('/hole').some((x) => x.resourceData.id === 'AAMkRolledBackxxxxxxxxxxxxxx'), 'the rolled-back change is never notified');
    release();
    await other;
  });

  test('a delta link does not pass over a change whose writer is still in progress (PostgreSQL)', { skip: !process.env.STRATUS_TEST_DATABASE_URL && 'SQLite serialises writers', timeout: 30_000 }, async () => {
    const client = graphClient(s.url, user);
    const early = await client.api('/me/messages').post({ subject: 'delta: written by a long transaction' });
    // A full delta round of Drafts, to its delta link.
    let link = '/v1.0/me/mailFolders/drafts/messages/delta';
    for (;;) {
      const page = await call(s.url, user, 'GET', link.replace(s.url, ''), undefined, { Prefer: 'odata.maxpagesize=1000' });
      assert.equal(page.status, 200);
      if (page.body['@odata.deltaLink']) {
        link = page.body['@odata.deltaLink'];
        break;
      }
      link = page.body['@odata.nextLink'];
    }
    const { recordMailChanges } = await import('../src/services/mail/changes.ts');
    const ctx = s.server.ctx;
    const drafts = (await client.api('/me/mailFolders/drafts').get()).id;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let recorded!: () => void;
    const drawn = new Promise<void>((r) => (recorded = r));
    const long = ctx.store.transaction(async (trx) => {
      await recordMailChanges(trx, [{ tenantId: demoTenant.id, mailboxId: demoUser.id, folderId: drafts, messageId: early.id, changeType: 'updated', at: new Date().toISOString() }]);
      recorded();
      await held;
    });
    await drawn;
    const later = await client.api('/me/messages').post({ subject: 'delta: committed first' });
    // While the long writer is open, the delta link may report nothing yet, but must not move past its change.
    const during = await call(s.url, user, 'GET', link.replace(s.url, ''));
    assert.equal(during.status, 200);
    release();
    await long;
    const seen = new Set<string>((during.body.value ?? []).map((m: any) => m.id));
    let next = during.body['@odata.deltaLink'] ?? during.body['@odata.nextLink'];
    while (next) {
      const page = await call(s.url, user, 'GET', next.replace(s.url, ''));
      for (const m of page.body.value) seen.add(m.id);
      next = page.body['@odata.nextLink'];
      if (page.body['@odata.deltaLink']) break;
    }
    assert.ok(seen.has(later.id), 'the committed write is reported');
    assert.ok(seen.has(early.id), "the long writer's change is reported too");
  });

  test('a receiver that never answers does not hold back another subscription', async () => {
    rx.hang.add('/slow');
    const client = graphClient(s.url, user);
    await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/slow`, resource: 'me/messages', expirationDateTime: inMinutes(600) });
    await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/fast`, resource: 'me/messages', expirationDateTime: inMinutes(600) });
    const draft = await client.api('/me/messages').post({ subject: 'slow and fast' });
    await rx.untilPosts('/slow', 1);
    const n = await rx.untilNotification('/fast', (x) => x.resourceData.id === draft.id);
    assert.equal(rx.hanging.get('/slow'), 1, 'the slow receiver still holds its request while the other one is served');
    assert.equal(n.changeType, 'created');
    assert.equal(n.clientState, null);
    rx.hang.delete('/slow');
  });

  test('DELETE stops delivery; the subscription is gone', async () => {
    const client = graphClient(s.url, user);
    const a = await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/deleted-sub`, resource: 'me/messages', expirationDateTime: inMinutes(600) });
    await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/kept-sub`, resource: 'me/messages', expirationDateTime: inMinutes(600) });
    const del = await call(s.url, user, 'DELETE', `/v1.0/subscriptions/${a.id}`);
    assert.equal(del.status, 204);
    const draft = await client.api('/me/messages').post({ subject: 'after delete' });
    await rx.untilNotification('/kept-sub', (x) => x.resourceData.id === draft.id);
    assert.equal(rx.posts('/deleted-sub').length, 0);
    const get = await call(s.url, user, 'GET', `/v1.0/subscriptions/${a.id}`);
    assert.equal(get.status, 404);
    assert.equal(get.body.error.code, 'ErrorSubscriptionNotFound');
    assert.ok(get.body.error.innerError['request-id']);
  });

  test('renewal by PATCH within the maximum lifetime; beyond it refused', async () => {
    const client = graphClient(s.url, user);
    const sub = await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/renew`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    const later = inMinutes(3000);
    const renewed = await client.api(`/subscriptions/${sub.id}`).patch({ expirationDateTime: later });
    assert.equal(renewed.expirationDateTime, later);
    assert.equal((await client.api(`/subscriptions/${sub.id}`).get()).expirationDateTime, later);
    const tooFar = await call(s.url, user, 'PATCH', `/v1.0/subscriptions/${sub.id}`, { expirationDateTime: inMinutes(4300) });
    assert.equal(tooFar.status, 400);
    assert.equal(tooFar.body.error.code, 'ExtensionError');
    assert.equal(tooFar.body.error.message, 'Subscription expiration can only be 4230 minutes in the future.');
    assert.equal((await client.api(`/subscriptions/${sub.id}`).get()).expirationDateTime, later, 'a refused renewal changes nothing');
    // A new notificationUrl gets its own handshake, then the notifications.
    const moved = await client.api(`/subscriptions/${sub.id}`).patch({ notificationUrl: `${rx.base}/renew-moved` });
    assert.equal(moved.notificationUrl, `${rx.base}/renew-moved`);
    assert.ok(rx.received.some((r) => r.path === '/renew-moved' && r.query.has('validationToken')));
    const draft = await client.api('/me/messages').post({ subject: 'to the new url' });
    await rx.untilNotification('/renew-moved', (x) => x.resourceData.id === draft.id && x.subscriptionId === sub.id);
    rx.wrongToken.add('/renew-refused');
    const refused = await call(s.url, user, 'PATCH', `/v1.0/subscriptions/${sub.id}`, { notificationUrl: `${rx.base}/renew-refused` });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error.code, 'ValidationError');
    assert.equal((await client.api(`/subscriptions/${sub.id}`).get()).notificationUrl, `${rx.base}/renew-moved`);
    const reauth = await call(s.url, user, 'POST', `/v1.0/subscriptions/${sub.id}/reauthorize`);
    assert.equal(reauth.status, 204);
    const unknown = await call(s.url, user, 'POST', `/v1.0/subscriptions/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/reauthorize`);
    assert.equal(unknown.status, 404);
    const lifecycle = await call(s.url, user, 'PATCH', `/v1.0/subscriptions/${sub.id}`, { lifecycleNotificationUrl: `${rx.base}/x` });
    assert.equal(lifecycle.status, 400);
    const create = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/renew`, resource: 'me/messages', expirationDateTime: inMinutes(5000) });
    assert.equal(create.status, 400);
    assert.equal(create.body.error.code, 'ExtensionError');
    const past = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/renew`, resource: 'me/messages', expirationDateTime: inMinutes(-5) });
    assert.equal(past.status, 400);
    assert.equal(past.body.error.code, 'InvalidRequest');
  });

  test('renewal needs the read access creation needed', async () => {
    const created = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/ok`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(created.status, 201);
    const sendOnly = await userToken(s.url, identities.user, ['api://stratus/mail/Mail.Send']);
    const r = await call(s.url, sendOnly, 'PATCH', `/v1.0/subscriptions/${created.body.id}`, { expirationDateTime: inMinutes(120) });
    assert.equal(r.status, 403);
    assert.equal(r.body.error.code, 'ErrorAccessDenied');
    const still = await call(s.url, user, 'GET', `/v1.0/subscriptions/${created.body.id}`);
    assert.equal(still.body.expirationDateTime, created.body.expirationDateTime);
    const renewed = await call(s.url, user, 'PATCH', `/v1.0/subscriptions/${created.body.id}`, { expirationDateTime: inMinutes(120) });
    assert.equal(renewed.status, 200);
    // Without read access, whether a user exists is not revealed.
    const probe = await call(s.url, sendOnly, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/ok`, resource: 'users/00000000-0000-4000-8000-00000000abcd/messages', expirationDateTime: inMinutes(60) });
    assert.equal(probe.status, 403);
    assert.equal(probe.body.error.code, 'ErrorAccessDenied');
  });

  test('a new notificationUrl takes over the notifications still queued for a failing receiver', async () => {
    rx.failures.set('/mv-old', 1000);
    const client = graphClient(s.url, user);
    const sub = await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/mv-old`, resource: 'me/mailFolders/drafts/messages', expirationDateTime: inMinutes(600) });
    const first = await client.api('/me/messages').post({ subject: 'queued for the old receiver' });
    await rx.untilPosts('/mv-old', 1);
    // Wait until the failure is recorded (the row is back in the queue with its backoff).
    const db = s.server.ctx.store.db;
    await waitFor(async () => {
      const row = await db.selectFrom('mail_notifications').select(['attempts', 'claim']).where('subscription_id', '=', sub.id).executeTakeFirst();
      return !!row && Number(row.attempts) >= 1 && row.claim === null;
    }, 'the failed delivery to the old receiver to be back in the queue with its backoff');
    await client.api(`/subscriptions/${sub.id}`).patch({ notificationUrl: `${rx.base}/mv-new` });
    const second = await client.api('/me/messages').post({ subject: 'for the new receiver' });
    await rx.untilNotification('/mv-new', (x) => x.resourceData.id === second.id);
    assert.ok(rx.notifications('/mv-new').some((x) => x.resourceData.id === first.id), 'the queued notification moved to the new receiver');
    assert.equal(rx.posts('/mv-old').length, 1);
  });

  test('the handshake must succeed in time', async () => {
    rx.noValidation.add('/silent');
    const timedOut = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/silent`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(timedOut.status, 400);
    assert.equal(timedOut.body.error.code, 'InvalidRequest');
    assert.equal(timedOut.body.error.message, 'Subscription validation request timed out.');
    rx.wrongToken.add('/wrong');
    const wrong = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/wrong`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.error.code, 'ValidationError');
    assert.equal(wrong.body.error.message, 'Subscription validation request failed. Notification endpoint must respond with 200 OK to validation request.');
    // An answer far longer than the token is refused without being read whole.
    rx.huge.add('/huge');
    const huge = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/huge`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(huge.status, 400);
    assert.equal(huge.body.error.code, 'ValidationError');
    // The lifecycle URL is validated too.
    const badLifecycle = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/ok`, lifecycleNotificationUrl: `${rx.base}/wrong`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
    assert.equal(badLifecycle.status, 400);
    assert.equal(badLifecycle.body.error.code, 'ValidationError');
    // Loopback receivers that are not listening: accepted as URLs, refused by the handshake.
    for (const url of ['http://127.0.0.1:1/closed', 'http://[::1]:1/closed']) {
      const nothing = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: url, resource: 'me/messages', expirationDateTime: inMinutes(60) });
      assert.equal(nothing.status, 400, url);
      assert.equal(nothing.body.error.code, 'ValidationError', url);
    }
  });

  test('plain http only for loopback receivers; bad bodies refused in the mail envelope', async () => {
    const base = { changeType: 'created', resource: 'me/messages', expirationDateTime: inMinutes(60) };
    /** A 400 in the mail envelope: only `error`, with code, message and innerError (request id, date). */
    const refused = (r: { status: number; body: any }, what: string, code = 'InvalidRequest') => {
      assert.equal(r.status, 400, what);
      assert.deepEqual(Object.keys(r.body), ['error'], what);
      assert.equal(r.body.error.code, code, what);
      assert.equal(typeof r.body.error.message, 'string', what);
      assert.ok(r.body.error.message.length > 0, what);
      assert.equal(typeof r.body.error.innerError?.['request-id'], 'string', `${what}: innerError.request-id`);
      assert.equal(typeof r.body.error.innerError?.date, 'string', `${what}: innerError.date`);
    };
    for (const url of ['http://example.com/hook', 'http://10.1.2.3/hook', 'ftp://127.0.0.1/hook', 'not a url']) {
      refused(await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, notificationUrl: url }), url);
    }
    const lc = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, notificationUrl: `${rx.base}/ok`, lifecycleNotificationUrl: 'http://example.com/lc' });
    refused(lc, 'lc');
    const ok = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, notificationUrl: `http://localhost:${new URL(rx.base).port}/ok` });
    assert.equal(ok.status, 201);
    const typo = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, notificationUrl: `${rx.base}/ok`, clientstate: 'x' });
    refused(typo, 'typo');
    assert.equal(typo.body.error.message, 'Could not process subscription creation payload. Are all property names spelled and camelCased properly?');
    const badType = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, changeType: 'created,moved', notificationUrl: `${rx.base}/ok` });
    refused(badType, 'badType');
    const badResource = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/events', notificationUrl: `${rx.base}/ok` });
    refused(badResource, 'badResource');
    const rich = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, includeResourceData: true, notificationUrl: `${rx.base}/ok` });
    refused(rich, 'rich');
    const badFilter = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/messages?$filter=isRead eq', notificationUrl: `${rx.base}/ok` });
    refused(badFilter, 'badFilter', 'BadRequest');
    const selectOption = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/messages?$select=subject', notificationUrl: `${rx.base}/ok` });
    refused(selectOption, 'selectOption');
    const longState = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, clientState: 'x'.repeat(129), notificationUrl: `${rx.base}/ok` });
    refused(longState, 'longState');
    const missing = await call(s.url, user, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/ok` });
    refused(missing, 'missing');
    const noFolder = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/mailFolders/nosuchfolder/messages', notificationUrl: `${rx.base}/ok` });
    assert.ok(noFolder.status === 400 || noFolder.status === 404);
    const noToken = await call(s.url, undefined, 'POST', '/v1.0/subscriptions', { ...base, notificationUrl: `${rx.base}/ok` });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.error.code, 'InvalidAuthenticationToken');
  });

  test('malformed input never gives a 500: NUL characters, oversized values, wrong types, forged tokens, other media types', async () => {
    const base = { changeType: 'created', resource: 'me/messages', expirationDateTime: inMinutes(60), notificationUrl: `${rx.base}/ok` };
    const cases: [string, Record<string, unknown>][] = [
      ['NUL in clientState', { ...base, clientState: 'a\u0000b' }],
      ['NUL in notificationUrl', { ...base, notificationUrl: `${rx.base}/ok\u0000` }],
      ['NUL in lifecycleNotificationUrl', { ...base, lifecycleNotificationUrl: `${rx.base}/ok\u0000` }],
      ['NUL in notificationUrlAppId', { ...base, notificationUrlAppId: 'a\u0000' }],
      ['NUL in the resource filter', { ...base, resource: "me/messages?$filter=subject eq 'a\u0000'" }],
      ['encoded NUL in the resource filter', { ...base, resource: "me/messages?$filter=subject eq 'a%00'" }],
      ['encoded NUL in the resource user', { ...base, resource: 'users/%00/messages' }],
      ['encoded NUL in the resource folder', { ...base, resource: 'me/mailFolders/%00/messages' }],
      ['oversized resource', { ...base, resource: `me/messages?$filter=subject eq '${'x'.repeat(3000)}'` }],
      ['oversized notificationUrlAppId', { ...base, notificationUrlAppId: 'x'.repeat(100) }],
      ['number changeType', { ...base, changeType: 5 }],
      ['array resource', { ...base, resource: ['me/messages'] }],
      ['object expiration', { ...base, expirationDateTime: { a: 1 } }],
      ['empty resource', { ...base, resource: '' }],
      ['empty changeType', { ...base, changeType: '' }],
      ['huge year', { ...base, expirationDateTime: '275760-09-13T00:00:00Z' }],
      ['unicode resource', { ...base, resource: 'users/\u{1F600}/messages' }],
    ];
    for (const [name, body] of cases) {
      const r = await call(s.url, user, 'POST', '/v1.0/subscriptions', body);
      assert.ok(r.status >= 400 && r.status < 500, `${name}: ${r.status}`);
      assert.equal(typeof r.body?.error?.code, 'string', name);
      assert.equal(typeof r.body.error.innerError?.['request-id'], 'string', name);
    }
    const twice = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/messages?$filter=isRead eq true&$filter=isRead eq false' });
    assert.equal(twice.status, 400);
    assert.equal(twice.body.error.message, 'The query option $filter of the subscription resource is given more than once.');
    const malformed = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/mailFolders/nosuchfolder/messages' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'ErrorInvalidIdMalformed');
    const folder = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: `me/mailFolders/${'AAMkNoSuchFolder'.padEnd(40, 'x')}/messages` });
    assert.equal(folder.status, 404);
    assert.equal(folder.body.error.code, 'ErrorFolderNotFound');
    const sub = await call(s.url, user, 'POST', '/v1.0/subscriptions', base);
    assert.equal(sub.status, 201);
    for (const body of [{ notificationUrl: `${rx.base}/ok\u0000` }, { expirationDateTime: 12 }, { notificationUrl: '' }, [], 'text']) {
      const r = await call(s.url, user, 'PATCH', `/v1.0/subscriptions/${sub.body.id}`, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(typeof r.body.error.code, 'string');
    }
    // Forged $skiptoken values (NUL, wrong type, not base64).
    const { encodeToken } = await import('../src/core/paging.ts');
    for (const t of [encodeToken({ a: '\u0000' }), encodeToken({ a: 5 }), '%%%', encodeToken({ a: 'x'.repeat(5000) })]) {
      const r = await call(s.url, user, 'GET', `/v1.0/subscriptions?$skiptoken=${encodeURIComponent(t)}`);
      assert.equal(r.status, 400, t);
      assert.equal(typeof r.body.error.code, 'string');
    }
    // Ids: NUL, unicode, oversized.
    for (const id of ['%00', '%F0%9F%98%80', 'x'.repeat(500)]) {
      const r = await call(s.url, user, 'GET', `/v1.0/subscriptions/${id}`);
      assert.equal(r.status, 404, id);
      assert.equal(r.body.error.code, 'ErrorSubscriptionNotFound');
    }
    // Bodies that are not JSON.
    for (const [type, text] of [['application/json', '{"changeType":'], ['text/plain', 'hello'], ['application/x-www-form-urlencoded', 'a=b']]) {
      const res = await fetch(`${s.url}/v1.0/subscriptions`, { method: 'POST', headers: { authorization: `Bearer ${user}`, 'content-type': type! }, body: text });
      assert.ok(res.status === 400 || res.status === 415, `${type}: ${res.status}`);
      const j = (await res.json()) as any;
      assert.equal(typeof j.error.code, 'string', type);
    }
  });

  test("one user never subscribes to another's mailbox; an app token does, but not to /me", async () => {
    const base = { changeType: 'created', expirationDateTime: inMinutes(60), notificationUrl: `${rx.base}/ok` };
    const other = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: `users/${demoAdmin.id}/messages` });
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'ErrorAccessDenied');
    const byUpn = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: `users/${demoAdmin.userPrincipalName}/mailFolders('Inbox')/messages` });
    assert.equal(byUpn.status, 403);
    const own = await call(s.url, user, 'POST', '/v1.0/subscriptions', { ...base, resource: `users/${demoUser.userPrincipalName}/messages` });
    assert.equal(own.status, 201);
    // A user of another tenant neither reaches this tenant's mailboxes nor its subscriptions.
    const otherTenant = await userToken(s.url, identities.eve, ['api://stratus/mail/Mail.Read']);
    const cross = await call(s.url, otherTenant, 'POST', '/v1.0/subscriptions', { ...base, resource: `users/${demoUser.id}/messages` });
    assert.equal(cross.status, 404);
    const peek = await call(s.url, otherTenant, 'GET', `/v1.0/subscriptions/${own.body.id}`);
    assert.equal(peek.status, 404);
    const theirs = await call(s.url, otherTenant, 'GET', '/v1.0/subscriptions');
    assert.equal(theirs.status, 200);
    assert.ok(!theirs.body.value.some((x: any) => x.id === own.body.id));
    const app = await appToken(s.url, 'mail');
    const meApp = await call(s.url, app, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/messages' });
    assert.equal(meApp.status, 400);
    assert.equal(meApp.body.error.message, '/me request is only valid with delegated authentication flow.');
    const appSub = await call(s.url, app, 'POST', '/v1.0/subscriptions', { ...base, resource: `users/${demoAdmin.id}/messages` });
    assert.equal(appSub.status, 201);
    // The user's token does not see the app's subscription.
    const peekUser = await call(s.url, user, 'GET', `/v1.0/subscriptions/${appSub.body.id}`);
    assert.equal(peekUser.status, 404);
    const noScope = await userToken(s.url, identities.user, ['api://stratus/mail/Mail.Send']);
    const denied = await call(s.url, noScope, 'POST', '/v1.0/subscriptions', { ...base, resource: 'me/messages' });
    assert.equal(denied.status, 403);
  });
});

describe('mail subscriptions: a store without any', () => {
  let s: TestServer;
  const rx = new Receiver();
  let user: string;
  before(async () => {
    await rx.start();
    s = await startTestServer({ settings: { mailNotificationPollMs: 50 } });
    user = await userToken(s.url, identities.user, scopes);
  });
  after(async () => {
    await s?.close();
    await rx.stop();
  });

  test('after a spell with no subscription, the next one gets exactly the changes after its creation, in order, and the cursor is at or past its start', async () => {
    const client = graphClient(s.url, user);
    const db = s.server.ctx.store.db;
    const cursor = async () => {
      const row = await db.selectFrom('mail_sync_state').select('seq').where('name', '=', 'cursor').executeTakeFirst();
      return row === undefined ? undefined : Number(row.seq);
    };
    // A first subscription: the cursor exists and has matched its change.
    const first = await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/first`, resource: 'me/messages', expirationDateTime: inMinutes(600) });
    const m0 = await client.api('/me/messages').post({ subject: 'while subscribed' });
    await rx.untilNotification('/first', (x) => x.resourceData.id === m0.id);
    assert.notEqual(await cursor(), undefined);
    await client.api(`/subscriptions/${first.id}`).delete();
    // Nothing subscribed: mail writes the worker has nothing to match for.
    const quiet: string[] = [];
    for (let i = 0; i < 12; i++) quiet.push((await client.api('/me/messages').post({ subject: `nobody listens ${i}` })).id);
    const second = await client.api('/subscriptions').post({ changeType: 'created,updated', notificationUrl: `${rx.base}/second`, resource: 'me/messages', expirationDateTime: inMinutes(600) });
    const start = Number((await db.selectFrom('mail_subscriptions').select('start_seq').where('id', '=', second.id).executeTakeFirstOrThrow()).start_seq);
    const a = await client.api('/me/messages').post({ subject: 'after the second subscription' });
    await client.api(`/me/messages/${quiet[0]}`).patch({ isRead: true });
    const n = await rx.untilNotification('/second', (x) => x.resourceData.id === quiet[0]);
    assert.equal(n.changeType, 'updated');
    const got = rx.notifications('/second');
    assert.deepEqual(got.map((x) => [x.changeType, x.resourceData.id]), [['created', a.id], ['updated', quiet[0]]], 'the changes after the subscription, in order, and nothing from before it');
    assert.ok((await cursor())! >= start, 'the cursor is at or past the subscription\'s start');
    assert.equal(rx.notifications('/first').length, 1, 'the deleted subscription got nothing more');
  });

  test('the worker reads the oldest subscription’s start from an index, not by reading the subscriptions', async () => {
    const plan = await s.server.ctx.store.db.connection().execute(async (c) => {
      const pg = isPostgres(c);
      if (pg) await sql`set enable_seqscan = off`.execute(c); // a tiny table is otherwise read whole by choice
      try {
        const rows = (await sql.raw(`${pg ? 'explain (costs off)' : 'explain query plan'} select min(start_seq) from mail_subscriptions`).execute(c)).rows as Record<string, string>[];
        return rows.map((r) => Object.values(r).join(' ')).join('\n');
      } finally {
        if (pg) await sql`reset enable_seqscan`.execute(c);
      }
    });
    assert.match(plan, /mail_subscriptions_start/, plan);
  });
});

describe('mail subscriptions: listing pages', () => {
  let s: TestServer;
  const rx = new Receiver();
  before(async () => {
    await rx.start();
    s = await startTestServer({ settings: { mailNotificationPollMs: 50 } });
  });
  after(async () => {
    await s?.close();
    await rx.stop();
  });

  test('GET /subscriptions pages with an absolute @odata.nextLink', async () => {
    const token = await userToken(s.url, identities.user, ['api://stratus/mail/Mail.Read']);
    const created = new Set<string>();
    for (let i = 0; i < 105; i++) {
      const r = await call(s.url, token, 'POST', '/v1.0/subscriptions', { changeType: 'created', notificationUrl: `${rx.base}/p${i}`, resource: 'me/messages', expirationDateTime: inMinutes(60) });
      assert.equal(r.status, 201);
      created.add(r.body.id);
    }
    const first = await call(s.url, token, 'GET', '/v1.0/subscriptions');
    assert.equal(first.status, 200);
    assert.equal(first.body['@odata.context'], `${s.url}/v1.0/$metadata#subscriptions`);
    assert.equal(first.body.value.length, 100);
    assert.ok(first.body['@odata.nextLink'].startsWith(`${s.url}/v1.0/subscriptions?`));
    const second = await call(s.url, token, 'GET', first.body['@odata.nextLink'].slice(s.url.length));
    assert.equal(second.body.value.length, 5);
    assert.equal(second.body['@odata.nextLink'], undefined);
    const seen = new Set([...first.body.value, ...second.body.value].map((x: any) => x.id));
    assert.deepEqual(seen, created);
    const bad = await call(s.url, token, 'GET', '/v1.0/subscriptions?$skiptoken=%%%');
    assert.equal(bad.status, 400);
  });
});

describe('mail subscriptions: lifecycle notifications', () => {
  let s: TestServer;
  const rx = new Receiver();
  before(async () => {
    await rx.start();
    s = await startTestServer({ settings: { mailNotificationPollMs: 50, mailSubscriptionValidationTimeoutMs: 1500 } });
  });
  after(async () => {
    await s?.close();
    await rx.stop();
  });

  test('reauthorizationRequired shortly before expiry, subscriptionRemoved at expiry', async () => {
    const user = await userToken(s.url, identities.user, scopes);
    const now = await serverNow(s);
    const expiration = new Date(now + 60 * 60_000).toISOString();
    const sub = await graphClient(s.url, user).api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/n`, lifecycleNotificationUrl: `${rx.base}/lc`, resource: 'me/messages', expirationDateTime: expiration, clientState: 'lc-state' });
    assert.equal(sub.lifecycleNotificationUrl, `${rx.base}/lc`);
    assert.ok(rx.received.some((r) => r.path === '/lc' && r.query.has('validationToken')), 'the lifecycle URL gets the handshake too');
    await advance(s, 50 * 60);
    const reauth = await rx.untilNotification('/lc', (n) => n.lifecycleEvent === 'reauthorizationRequired');
    assert.deepEqual(reauth, { subscriptionId: sub.id, subscriptionExpirationDateTime: expiration, tenantId: reauth.tenantId, clientState: 'lc-state', lifecycleEvent: 'reauthorizationRequired' });
    await advance(s, 11 * 60);
    const removed = await rx.untilNotification('/lc', (n) => n.lifecycleEvent === 'subscriptionRemoved');
    assert.equal(removed.subscriptionId, sub.id);
    const fresh = await userToken(s.url, identities.user, scopes);
    const get = await call(s.url, fresh, 'GET', `/v1.0/subscriptions/${sub.id}`);
    assert.equal(get.status, 404);
    assert.equal(rx.notifications('/lc').filter((n) => n.lifecycleEvent === 'reauthorizationRequired').length, 1);
  });

  test('missed when delivery gave up after the retry window', async () => {
    rx.failures.set('/down', 1_000_000);
    const user = await userToken(s.url, identities.user, scopes);
    const client = graphClient(s.url, user);
    const sub = await client.api('/subscriptions').post({ changeType: 'created', notificationUrl: `${rx.base}/down`, lifecycleNotificationUrl: `${rx.base}/lc2`, resource: 'me/messages', expirationDateTime: inMinutesFrom(await serverNow(s), 3 * 24 * 60) });
    await client.api('/me/messages').post({ subject: 'never delivered' });
    await rx.untilPosts('/down', 1);
    await advance(s, 4 * 3600 + 60);
    const missed = await rx.untilNotification('/lc2', (n) => n.lifecycleEvent === 'missed');
    assert.equal(missed.subscriptionId, sub.id);
    const queued = await s.server.ctx.store.db.selectFrom('mail_notifications').select('seq').where('subscription_id', '=', sub.id).where('kind', '=', 'change').execute();
    assert.equal(queued.length, 0, 'the dropped notification left the outbox');
  });
});

function inMinutesFrom(ms: number, minutes: number): string {
  return new Date(ms + minutes * 60_000).toISOString();
}
