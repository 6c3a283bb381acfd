/**
 * Acknowledgements pushed by notification (`src/core/cache-presence.ts`, `cache-peers.ts`;
 * issue 31 item 3): a writer sends a marker on its own listening connection and waits in memory
 * until every instance it knows acknowledged it. The rules a writer relies on, each observed
 * through events (notifications, answers), no timing:
 * - a writer alone sends its marker (it must see its own notifications applied) but takes no
 *   sequence row and waits for nobody;
 * - an instance that just registered and announced itself is waited for: the write is not
 *   answered before that instance acknowledged the writer's marker;
 * - an instance that stops answering is waited for only until its lease ran out on the
 *   database's clock, then dropped;
 * - an instance that joins is known to the others, and one that leaves is dropped by them;
 * - a write still in flight when another request's marker was sent is not confirmed by it: it
 *   is counted when it ended (committed), so its own request sends a marker and waits.
 *
 * The peer of the middle tests is a raw connection speaking the protocol, so that the test
 * decides when it acknowledges. PostgreSQL only (skipped on SQLite with a message).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { appToken, identities, userToken } from './helpers/auth.ts';
import { mailScopes } from './helpers/mail.ts';
import { demoSubscription } from '../src/seed/demo.ts';
import { waitFor, withDeadline } from './helpers/wait.ts';

const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
const skipReason = dbUrl ? false : 'pushed acknowledgements are a PostgreSQL feature: set STRATUS_TEST_DATABASE_URL';
const hook = `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`;
const nowSql = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

async function patchDescription(base: string, token: string, text: string): Promise<void> {
  const r = await fetch(base + hook, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ properties: { description: text } }) });
  assert.equal(r.status, 200, await r.text());
}

async function description(base: string, token: string): Promise<string> {
  const r = await fetch(base + hook, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(r.status, 200);
  return ((await r.json()) as any).properties.description;
}

/** A peer speaking the protocol on a raw connection: registers with a lease, announces itself, records the markers it receives. */
class RawPeer {
  readonly id = randomUUID();
  readonly markers: { from: string; k: number }[] = [];
  private readonly waiting: { from: string; resolve: (k: number) => void }[] = [];
  private constructor(readonly client: pg.Client) {}

  static async join(schema: string, leaseMs: number): Promise<RawPeer> {
    const client = new pg.Client({ connectionString: dbUrl, options: `-c search_path=${schema}` });
    await client.connect();
    const peer = new RawPeer(client);
    client.on('notification', (n) => {
      const [kind, from, k] = (n.payload ?? '').split(' ');
      if (kind !== 'm' || !from || from === peer.id) return;
      peer.markers.push({ from, k: Number(k) });
      for (const w of peer.waiting.splice(0)) (w.from === from ? w.resolve(Number(k)) : peer.waiting.push(w));
    });
    await client.query(`listen "stratus_cache_${schema}"`);
    await client.query(
      `insert into stratus_instances (id, acked, lease_until) select '${peer.id}', version, ${nowSql} + ${leaseMs} from stratus_cache_versions where area = '*';
       select pg_notify('stratus_cache_' || current_schema(), 'j ${peer.id} 1')`,
    );
    return peer;
  }

  /** The first marker of `from` above `after` (or one already received). */
  marker(from: string, after = 0): Promise<number> {
    const had = this.markers.find((m) => m.from === from && m.k > after);
    if (had) return Promise.resolve(had.k);
    return new Promise((resolve) => {
      const wait = (k: number) => (k > after ? resolve(k) : this.waiting.push({ from, resolve: wait }));
      this.waiting.push({ from, resolve: wait });
    });
  }

  async ack(writer: string, k: number): Promise<void> {
    await this.client.query(`select pg_notify('stratus_cache_' || current_schema(), $1)`, [`a ${this.id} ${writer}:${k}`]);
  }

  async leaseOver(): Promise<boolean> {
    const { rows } = await this.client.query(`select lease_until <= ${nowSql} as over from stratus_instances where id = $1`, [this.id]);
    return rows[0]?.over ?? true;
  }

  async close(): Promise<void> {
    await this.client.query('delete from stratus_instances where id = $1', [this.id]).catch(() => undefined);
    await this.client.end();
  }
}

/** Creates a draft in the token's mailbox; @returns its id. */
async function draft(base: string, mail: string, subject: string): Promise<string> {
  const created = await fetch(`${base}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ subject }) });
  assert.equal(created.status, 201);
  return ((await created.json()) as any).id as string;
}

/**
 * Joins a raw peer to `a`'s schema and checks that `write` (sent once `a` knows the peer when
 * `known`, else at once) is answered only after the peer acknowledged `a`'s marker; the peer
 * then leaves and `a` drops it.
 */
async function answeredAfterPeerAck(a: TestServer, write: () => Promise<unknown>, known = false): Promise<void> {
  const peer = await RawPeer.join(a.config.databaseSchema!, 60_000);
  try {
    const writer = a.server.ctx.cache.instanceId!;
    if (known) await waitFor(() => a.server.ctx.cache.peerIds().includes(peer.id), 'the writer to know the new instance', 30_000, 20);
    let answered = false;
    const written = write().then(() => {
      answered = true;
    });
    const k = await withDeadline(peer.marker(writer), 'the writer’s marker at the new instance');
    assert.equal(answered, false, 'not answered before the new instance acknowledged');
    assert.ok(a.server.ctx.cache.peerIds().includes(peer.id), 'the writer knows the new instance');
    await peer.ack(writer, k);
    await withDeadline(written, 'the answer after the acknowledgement');
    assert.equal(answered, true);
  } finally {
    await peer.close();
  }
  await waitFor(() => !a.server.ctx.cache.peerIds().includes(peer.id), 'the writer to drop the removed instance (heartbeat)', 30_000, 20);
}

describe('pushed acknowledgements on one PostgreSQL schema', { skip: skipReason }, () => {
  let a: TestServer;
  let token: string;
  let db: pg.Client;
  const seq = async () => Number((await db.query("select version from stratus_cache_versions where area = '*'")).rows[0].version);

  before(async () => {
    a = await startTestServer();
    token = await appToken(a.url, 'arm');
    db = new pg.Client({ connectionString: dbUrl, options: `-c search_path=${a.config.databaseSchema}` });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await a?.close();
  });

  test('a writer alone: one marker on its own connection, no sequence row, nobody waited for', async () => {
    const cache = a.server.ctx.cache;
    assert.equal(cache.live, true);
    assert.deepEqual(cache.peerIds(), []);
    const before = await seq();
    const markers = cache.requests.markersSent;
    const mail = await userToken(a.url, identities.user, mailScopes);
    await draft(a.url, mail, `alone ${randomUUID()}`);
    assert.equal(cache.requests.markersSent, markers + 1, 'the write sent one marker');
    assert.equal(await seq(), before, 'no sequence number taken');
    assert.equal(cache.unsettled(), false);
  });

  test('a writer alone: a webhook’s PATCH carries its own marker in its write (one function call), sends no marker statement, and is confirmed', async () => {
    const cache = a.server.ctx.cache;
    assert.deepEqual(cache.peerIds(), []);
    for (const n of [1, 2]) {
      await description(a.url, token); // kept by the instance: only the write's notification drops it
      const before = await seq();
      const markers = cache.requests.markersSent;
      const text = `own marker ${n} ${randomUUID()}`;
      await patchDescription(a.url, token, text);
      assert.equal(cache.requests.markersSent, markers, 'no marker statement: the write carried its own marker');
      assert.equal(await seq(), before, 'no sequence number taken');
      assert.equal(cache.unsettled(), false, 'its marker confirmed it');
      assert.equal(await description(a.url, token), text, 'the write’s notification was applied before it was answered');
    }
  });

  test('a writer alone: a read-state PATCH carries its own marker in its write, and sends no marker statement after it', async () => {
    const cache = a.server.ctx.cache;
    assert.deepEqual(cache.peerIds(), []);
    const mail = await userToken(a.url, identities.user, mailScopes);
    const id = await draft(a.url, mail, `own marker ${randomUUID()}`);
    const isRead = async () => {
      const r = await fetch(`${a.url}/v1.0/me/messages/${id}?$select=isRead`, { headers: { authorization: `Bearer ${mail}` } });
      assert.equal(r.status, 200);
      return ((await r.json()) as any).isRead as boolean;
    };
    // (A new draft is read.)
    for (const value of [false, true, false]) {
      // Read first: the live instance keeps the message's version, which only the write's notification drops.
      assert.equal(await isRead(), !value);
      const markers = cache.requests.markersSent;
      const r = await fetch(`${a.url}/v1.0/me/messages/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ isRead: value }) });
      assert.equal(r.status, 200, await r.text());
      assert.equal(cache.requests.markersSent, markers, 'no marker statement: the write carried its own marker');
      assert.equal(await isRead(), value, 'the write’s notification was applied before it was answered');
    }
  });

  test('a read-state PATCH with another instance known waits for its acknowledgement, as every write', async () => {
    const mail = await userToken(a.url, identities.user, mailScopes);
    const id = await draft(a.url, mail, `peer marker ${randomUUID()}`);
    await answeredAfterPeerAck(a, async () => {
      const r = await fetch(`${a.url}/v1.0/me/messages/${id}`, { method: 'PATCH', headers: { authorization: `Bearer ${mail}`, 'content-type': 'application/json' }, body: JSON.stringify({ isRead: true }) });
      assert.equal(r.status, 200, await r.text());
    }, true);
  });

  test('a just-registered instance is waited for: the write is answered only after it acknowledged', async () => {
    await answeredAfterPeerAck(a, () => patchDescription(a.url, token, `joined ${randomUUID()}`));
  });

  test('a write in flight when another request’s marker was sent is not confirmed by that marker: its request sends its own and waits', async () => {
    const mail = await userToken(a.url, identities.user, mailScopes);
    const peer = await RawPeer.join(a.config.databaseSchema!, 60_000);
    const lock = new pg.Client({ connectionString: dbUrl, options: `-c search_path=${a.config.databaseSchema}` });
    await lock.connect();
    try {
      const writer = a.server.ctx.cache.instanceId!;
      await waitFor(() => a.server.ctx.cache.peerIds().includes(peer.id), 'the writer to know the new instance', 30_000, 20);
      await lock.query('begin');
      await lock.query('lock table automation_webhooks in share mode');
      // Write 1: its update is sent and waits for the lock (the writer counted it, it has not committed).
      let answered = false;
      const first = patchDescription(a.url, token, `in flight ${randomUUID()}`).then(() => {
        answered = true;
      });
      await waitFor(
        async () => (await db.query("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike 'update%automation_webhooks%'")).rows[0].n > 0,
        'the webhook update to wait for the table lock',
      );
      // Write 2 commits and is confirmed by a marker the peer acknowledges, while write 1 is in flight.
      const second = draft(a.url, mail, `meanwhile ${randomUUID()}`);
      const k1 = await withDeadline(peer.marker(writer), 'the second write’s marker');
      await peer.ack(writer, k1);
      await withDeadline(second, 'the second write’s answer');
      assert.equal(answered, false);
      await lock.query('commit');
      // Write 1 commits now: its request must send a marker of its own and wait for the peer.
      const k2 = await withDeadline(peer.marker(writer, k1), 'a marker for the write that was in flight');
      assert.equal(answered, false, 'not answered before the peer acknowledged the marker sent after its commit');
      await peer.ack(writer, k2);
      await withDeadline(first, 'the first write’s answer after the acknowledgement');
      assert.equal(answered, true);
    } finally {
      await lock.query('rollback').catch(() => undefined);
      await lock.end();
      await peer.close();
    }
    await waitFor(() => !a.server.ctx.cache.peerIds().includes(peer.id), 'the writer to drop the removed instance (heartbeat)', 30_000, 20);
  });

  test('an instance that stops answering is waited for only until its lease ran out, then dropped', async () => {
    const peer = await RawPeer.join(a.config.databaseSchema!, 1500);
    try {
      await waitFor(() => a.server.ctx.cache.peerIds().includes(peer.id), 'the writer to learn of the new instance');
      await patchDescription(a.url, token, `stopped ${randomUUID()}`);
      assert.ok(peer.markers.length > 0, 'the marker reached the silent instance');
      assert.equal(await peer.leaseOver(), true, 'answered once the silent instance’s lease had run out');
      assert.ok(!a.server.ctx.cache.peerIds().includes(peer.id), 'and dropped it');
      // The next write does not wait for it at all.
      await patchDescription(a.url, token, `after ${randomUUID()}`);
    } finally {
      await peer.close();
    }
  });

  test('an instance that joins is known to the others and applies their writes; one that leaves is dropped', async () => {
    const b = await startTestServer({ shareStoreWith: a, env: { STRATUS_PUBLIC_URL: a.url } });
    const idB = b.server.ctx.cache.instanceId!;
    try {
      assert.equal(b.server.ctx.cache.live, true, 'live once its own join came back');
      assert.ok(b.server.ctx.cache.peerIds().includes(a.server.ctx.cache.instanceId!), 'the new instance knows the old one from its registration');
      await waitFor(() => a.server.ctx.cache.peerIds().includes(idB), 'the old instance to learn of the new one');
      await description(b.url, token);
      const epoch = b.server.ctx.cache.epoch;
      const text = `to b ${randomUUID()}`;
      await patchDescription(a.url, token, text);
      assert.ok(b.server.ctx.cache.epoch > epoch, 'B applied the write before A answered');
      assert.equal(await description(b.url, token), text);
    } finally {
      await b.close();
    }
    await waitFor(() => !a.server.ctx.cache.peerIds().includes(idB), 'the old instance to drop the one that left');
    await patchDescription(a.url, token, `gone ${randomUUID()}`);
  });
});
