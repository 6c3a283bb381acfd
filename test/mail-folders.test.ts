/**
 * Mail folders (reference mail.md §4): well-known names and key syntax, hidden folders,
 * child folders (create, list, get, rename, copy, move, delete) and counts that stay right.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@microsoft/microsoft-graph-client';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { graphClient, tokens, call } from './helpers/mail.ts';

describe('mail folders', () => {
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

  test('top-level folders, hidden ones only on request; well-known names and key syntax', async () => {
    const list = await user.api('/me/mailFolders').top(50).get();
    const names = list.value.map((f: any) => f.displayName);
    for (const n of ['Inbox', 'Drafts', 'Sent Items', 'Deleted Items', 'Junk Email', 'Archive', 'Outbox']) assert.ok(names.includes(n), n);
    assert.ok(!names.includes('Clutter'));
    const hidden = await user.api('/me/mailFolders').query({ includeHiddenFolders: 'true' }).top(50).get();
    assert.ok(hidden.value.some((f: any) => f.displayName === 'Clutter' && f.isHidden === true));
    const byName = await user.api('/me/mailFolders/INBOX').get();
    const byKey = await call(s.url, t.user, 'GET', "/v1.0/me/mailFolders('Inbox')");
    assert.equal(byKey.body.id, byName.id);
    const purges = await user.api('/me/mailFolders/recoverableitemspurges').get();
    assert.equal(purges.isHidden, true);
    const paged = await user.api('/me/mailFolders').top(3).get();
    assert.equal(paged.value.length, 3);
    assert.ok(paged['@odata.nextLink'].startsWith(s.url));
    const nf = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/AQMkdoesnotexistdoesnotexist0000');
    assert.equal(nf.status, 404);
    assert.equal(nf.body.error.code, 'ErrorFolderNotFound');
  });

  test('child folders: create, duplicate, rename, move, copy, delete; counts follow the messages', async () => {
    const inbox = await user.api('/me/mailFolders/inbox').get();
    const projects = await user.api('/me/mailFolders/inbox/childFolders').post({ displayName: 'Projects' });
    assert.equal(projects.parentFolderId, inbox.id);
    assert.equal(projects.totalItemCount, 0);
    const dup = await call(s.url, t.user, 'POST', '/v1.0/me/mailFolders/inbox/childFolders', { displayName: 'Projects' });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.error.code, 'ErrorFolderExists');
    assert.equal((await user.api('/me/mailFolders/inbox').get()).childFolderCount, inbox.childFolderCount + 1);

    const m1 = await user.api(`/me/mailFolders/${projects.id}/messages`).post({ subject: 'p1' });
    const m2 = await user.api(`/me/mailFolders/${projects.id}/messages`).post({ subject: 'p2', isRead: false });
    let f = await user.api(`/me/mailFolders/${projects.id}`).get();
    assert.equal(f.totalItemCount, 2);
    assert.equal(f.unreadItemCount, 1);
    await user.api(`/me/messages/${m2.id}`).patch({ isRead: true });
    f = await user.api(`/me/mailFolders/${projects.id}`).get();
    assert.equal(f.unreadItemCount, 0);
    const nested = await user.api(`/me/mailFolders/inbox/childFolders/${projects.id}/messages`).get();
    assert.equal(nested.value.length, 2);

    const renamed = await user.api(`/me/mailFolders/${projects.id}`).patch({ displayName: 'Projects 2026' });
    assert.equal(renamed.displayName, 'Projects 2026');
    const wk = await call(s.url, t.user, 'PATCH', '/v1.0/me/mailFolders/inbox', { displayName: 'Mine' });
    assert.equal(wk.status, 403);

    const copy = await user.api(`/me/mailFolders/${projects.id}/copy`).post({ destinationId: 'archive' });
    assert.notEqual(copy.id, projects.id);
    assert.equal(copy.totalItemCount, 2);
    const clash = await call(s.url, t.user, 'POST', `/v1.0/me/mailFolders/${projects.id}/move`, { destinationId: 'archive' });
    assert.equal(clash.status, 409);
    const moved = await user.api(`/me/mailFolders/${projects.id}/move`).post({ destinationId: 'junkemail' });
    assert.equal(moved.id, projects.id);
    assert.equal(moved.parentFolderId, (await user.api('/me/mailFolders/junkemail').get()).id);
    // Messages keep their ids when their folder moves.
    assert.equal((await user.api(`/me/messages/${m1.id}`).get()).subject, 'p1');

    await user.api(`/me/mailFolders/${projects.id}`).delete();
    const deleted = await user.api('/me/mailFolders/deleteditems/childFolders').get();
    assert.ok(deleted.value.some((x: any) => x.id === projects.id));
    const wkDel = await call(s.url, t.user, 'DELETE', '/v1.0/me/mailFolders/inbox');
    assert.equal(wkDel.status, 403);
  });
});
