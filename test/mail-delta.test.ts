/**
 * Delta per folder (reference mail.md §6): a first round pages through the folder and ends
 * with a delta link; the next round reports exactly the adds, updates, moves and deletes
 * since, with `@removed`; tokens are bound to their folder; unsupported filters are refused.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PageIterator, type Client } from '@microsoft/microsoft-graph-client';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { graphClient, tokens, call } from './helpers/mail.ts';

describe('mail delta', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  let user: Client;
  before(async () => {
    s = await startTestServer();
    t = await tokens(s.url);
    user = graphClient(s.url, t.user);
  });
  after(async () => {
    await s?.close();
  });

  async function round(link: string, pageSize = 20): Promise<{ items: any[]; deltaLink: string; pages: number }> {
    const items: any[] = [];
    let pages = 0;
    let res = await user.api(link).header('Prefer', `odata.maxpagesize=${pageSize}`).get();
    for (;;) {
      pages++;
      items.push(...res.value);
      if (res['@odata.deltaLink']) return { items, deltaLink: res['@odata.deltaLink'], pages };
      assert.ok(res['@odata.nextLink'].startsWith(s.url + '/v1.0/'));
      res = await user.api(res['@odata.nextLink']).header('Prefer', `odata.maxpagesize=${pageSize}`).get();
    }
  }

  test('first round pages through the folder; the next round holds exactly the changes', async () => {
    const inbox = await user.api('/me/mailFolders/inbox').get();
    const r1 = await round('/me/mailFolders/inbox/messages/delta?$select=subject,isRead');
    assert.equal(r1.items.length, inbox.totalItemCount);
    assert.ok(r1.pages > 1);
    assert.equal(r1.items[0]['@odata.type'], '#vendor.graph.message');
    assert.deepEqual(Object.keys(r1.items[0]).sort(), ['@odata.etag', '@odata.type', 'id', 'isRead', 'subject']);
    assert.ok(r1.deltaLink.startsWith(s.url + "/v1.0/me/mailFolders('"));

    // Nothing changed: an empty round.
    const empty = await round(r1.deltaLink);
    assert.equal(empty.items.length, 0);

    // Changes: one added (draft moved into inbox), one updated, one moved out, one deleted; one change elsewhere.
    const [a, b, c] = r1.items;
    const added = await user.api('/me/mailFolders/inbox/messages').post({ subject: 'delta add' });
    await user.api(`/me/messages/${a.id}`).patch({ isRead: !a.isRead });
    await user.api(`/me/messages/${b.id}/move`).post({ destinationId: 'archive' });
    await user.api(`/me/messages/${c.id}`).delete();
    await user.api('/me/messages').post({ subject: 'in drafts, not inbox' });

    const r2 = await round(empty.deltaLink, 2);
    const byId = new Map(r2.items.map((i) => [i.id, i]));
    assert.equal(r2.items.length, 4);
    assert.equal(byId.get(added.id).subject, 'delta add');
    assert.equal(byId.get(a.id).isRead, !a.isRead);
    assert.deepEqual(byId.get(b.id)['@removed'], { reason: 'deleted' });
    assert.deepEqual(byId.get(c.id)['@removed'], { reason: 'deleted' });

    // The archive folder's delta sees the moved message as present.
    const arch = await round('/me/mailFolders/archive/messages/delta');
    assert.ok(arch.items.some((i) => i.subject === b.subject));
  });

  test('with Prefer IdType="ImmutableId" delta ids, including @removed ones, are immutable', async () => {
    const imm = { Prefer: 'IdType="ImmutableId", odata.maxpagesize=500' };
    let r = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/archive/messages/delta', undefined, imm);
    while (r.body['@odata.nextLink']) r = await call(s.url, t.user, 'GET', r.body['@odata.nextLink'].slice(s.url.length), undefined, imm);
    const link = r.body['@odata.deltaLink'].slice(s.url.length);
    const m = await call(s.url, t.user, 'POST', '/v1.0/me/mailFolders/archive/messages', { subject: 'imm delta' }, imm);
    const moved = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${m.body.id}/move`, { destinationId: 'inbox' }, imm);
    assert.equal(moved.body.id, m.body.id);
    const r2 = await call(s.url, t.user, 'GET', link, undefined, imm);
    assert.deepEqual(r2.body.value.map((v: any) => [v.id, !!v['@removed']]), [[m.body.id, true]]);
  });

  test('PageIterator follows delta next links and exposes the delta link', async () => {
    const first = await user.api('/me/mailFolders/sentitems/messages/delta').header('Prefer', 'odata.maxpagesize=10').get();
    // More than one page, so the iterator has next links to follow.
    assert.equal(first.value.length, 10);
    assert.ok(first['@odata.nextLink'], 'the first page links to the next');
    assert.equal(first['@odata.deltaLink'], undefined);
    const ids: string[] = [];
    const it = new PageIterator(user, first, (m: any) => {
      ids.push(m.id);
      return true;
    }, { headers: { Prefer: 'odata.maxpagesize=10' } });
    await it.iterate();
    const total = (await user.api('/me/mailFolders/sentitems').get()).totalItemCount;
    assert.ok(total > 10);
    assert.equal(ids.length, total);
    assert.equal(new Set(ids).size, total, 'every message once');
    // The delta link it exposes is the next round's start: nothing changed, nothing listed.
    const deltaLink = it.getDeltaLink();
    assert.match(deltaLink ?? '', /\/v1\.0\/me\/mailFolders\('[^']+'\)\/messages\/delta\?%24deltatoken=/);
    const next = await user.api(deltaLink!).get();
    assert.deepEqual(next.value, []);
    assert.ok(next['@odata.deltaLink']);
  });

  test('errors: unsupported filter, foreign or garbage tokens, mailbox-wide delta', async () => {
    const f = await call(s.url, t.user, 'GET', `/v1.0/me/mailFolders/inbox/messages/delta?$filter=${encodeURIComponent('isRead eq false')}`);
    assert.equal(f.status, 400);
    assert.equal(f.body.error.code, 'ErrorInvalidUrlQuery');
    const ok = await call(s.url, t.user, 'GET', `/v1.0/me/mailFolders/inbox/messages/delta?$filter=${encodeURIComponent('receivedDateTime ge 2026-09-25T00:00:00Z')}`);
    assert.equal(ok.status, 200);
    assert.ok(ok.body.value.every((m: any) => m.receivedDateTime >= '2026-09-25'));
    const junk = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/inbox/messages/delta?$deltatoken=garbage');
    assert.equal(junk.status, 400);
    assert.equal(junk.body.error.code, 'syncStateNotFound');
    const r = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/inbox/messages/delta');
    const link = new URL(r.body['@odata.nextLink'] ?? r.body['@odata.deltaLink']);
    // A token of the inbox used on another folder.
    const other = await call(s.url, t.user, 'GET', `/v1.0/me/mailFolders/archive/messages/delta${link.search}`);
    assert.equal(other.status, 400);
    assert.equal(other.body.error.code, 'syncStateNotFound');
    // Another user's token.
    const foreign = await call(s.url, t.admin, 'GET', `/v1.0/me/mailFolders/inbox/messages/delta${link.search}`);
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.error.code, 'syncStateNotFound');
    const wide = await call(s.url, t.user, 'GET', '/v1.0/me/messages/delta');
    assert.equal(wide.status, 400);
    assert.equal(wide.body.error.code, 'ErrorInvalidRequest');
  });
});
