/**
 * Mail answers kept per mailbox version (issue 9; `src/services/mail/kept.ts`): a message by
 * id and pages of messages are answered from kept texts until any message or folder of the
 * mailbox changes, whatever the write. Each read below is made twice first, so the second one
 * is answered from the kept text; the read after the write must show the write.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokens, call } from './helpers/mail.ts';
import { identities, userToken } from './helpers/auth.ts';

describe('mail answers kept per mailbox version', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  const get = async (path: string, token = t.user, headers: Record<string, string> = {}) => {
    const first = await call(s.url, token, 'GET', path, undefined, headers);
    const again = await call(s.url, token, 'GET', path, undefined, headers);
    assert.equal(again.status, first.status);
    if (first.status === 200) assert.deepEqual(again.body, first.body, `the kept answer of ${path} is the answer`);
    return again;
  };
  before(async () => {
    s = await startTestServer();
    t = await tokens(s.url);
  });
  after(async () => {
    await s?.close();
  });

  test('a message by id and the pages that hold it follow its update, move and delete', async () => {
    const m = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'kept-1' })).body;
    const page = '/v1.0/me/mailFolders/drafts/messages?$select=subject&$top=50';
    const wide = '/v1.0/me/messages?$select=subject,isRead&$top=50';
    assert.equal((await get(`/v1.0/me/messages/${m.id}`)).body.subject, 'kept-1');
    assert.ok((await get(page)).body.value.some((v: any) => v.subject === 'kept-1'));
    assert.ok((await get(wide)).body.value.some((v: any) => v.subject === 'kept-1'));

    assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${m.id}`, { subject: 'kept-2' })).status, 200);
    assert.equal((await get(`/v1.0/me/messages/${m.id}`)).body.subject, 'kept-2');
    assert.ok((await get(page)).body.value.some((v: any) => v.subject === 'kept-2'));
    assert.ok((await get(wide)).body.value.some((v: any) => v.subject === 'kept-2'));

    // The Prefer options are part of what is kept: the immutable id is answered on request only.
    const immutable = await get(`/v1.0/me/messages/${m.id}`, t.user, { prefer: 'IdType="ImmutableId"' });
    assert.notEqual(immutable.body.id, m.id);
    assert.equal((await get(`/v1.0/me/messages/${m.id}`)).body.id, m.id);

    const moved = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${m.id}/move`, { destinationId: 'archive' });
    assert.equal(moved.status, 201);
    assert.equal((await get(`/v1.0/me/messages/${m.id}`)).status, 404);
    assert.ok(!(await get(page)).body.value.some((v: any) => v.subject === 'kept-2'));
    assert.equal((await get(`/v1.0/me/messages/${moved.body.id}`)).body.subject, 'kept-2');

    assert.equal((await call(s.url, t.user, 'DELETE', `/v1.0/me/messages/${moved.body.id}`)).status, 204);
    assert.equal((await get(`/v1.0/me/messages/${moved.body.id}`)).status, 404);
    assert.ok(!(await get(wide)).body.value.some((v: any) => v.subject === 'kept-2'));
  });

  test('a page is kept from its second sighting on: one asked once is answered and not stored', async () => {
    const texts = s.server.ctx.cache.shared<Buffer>('mail.keptTexts', 'directory', 1000);
    const page = `/v1.0/me/mailFolders/inbox/messages?$select=subject&$top=3&$skip=${Date.now() % 1000}`;
    const size = texts.size;
    const first = await call(s.url, t.user, 'GET', page);
    assert.equal(first.status, 200);
    assert.equal(texts.size, size, 'a first sighting is not kept');
    const second = await call(s.url, t.user, 'GET', page);
    assert.deepEqual(second.body, first.body);
    assert.equal(texts.size, size + 1, 'the second sighting is kept');
    const third = await call(s.url, t.user, 'GET', page);
    assert.deepEqual(third.body, first.body);
    assert.equal(texts.size, size + 1, 'the third is answered from it');
    // Another mailbox asking the same URL is its own first sighting.
    assert.equal((await call(s.url, t.admin, 'GET', page)).status, 200);
    assert.equal(texts.size, size + 1);
  });

  test('a page is written as UTF-8 part by part: text outside ASCII, its length and the next link come out whole', async () => {
    const f = (await call(s.url, t.user, 'POST', '/v1.0/me/mailFolders', { displayName: 'Bytes ü' })).body;
    const subjects = ['Grüße aus Köln', '漢字のテスト', 'emoji 🎉 and — dash', 'plain'];
    for (const subject of subjects) assert.equal((await call(s.url, t.user, 'POST', `/v1.0/me/mailFolders/${f.id}/messages`, { subject, body: { contentType: 'text', content: `${subject} ✓` } })).status, 201);
    for (const select of ['subject', '', 'subject,bodyPreview,from']) {
      const res = await fetch(`${s.url}/v1.0/me/mailFolders/${f.id}/messages?$top=3${select ? `&$select=${select}` : ''}`, { headers: { authorization: `Bearer ${t.user}` } });
      const bytes = Buffer.from(await res.arrayBuffer());
      assert.equal(res.status, 200);
      assert.equal(Number(res.headers.get('content-length')), bytes.length);
      const page = JSON.parse(bytes.toString('utf8'));
      assert.equal(page.value.length, 3);
      for (const m of page.value) assert.ok(subjects.includes(m.subject), m.subject);
      assert.match(page['@odata.nextLink'], /%24skip=3$/);
    }
  });

  test('a folder deleted changes its kept pages (folder writes change the version)', async () => {
    const f = (await call(s.url, t.user, 'POST', '/v1.0/me/mailFolders/inbox/childFolders', { displayName: 'Kept folder' })).body;
    const path = `/v1.0/me/mailFolders/inbox/childFolders/${f.id}/messages`;
    const empty = await get(path);
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body.value, []);
    // An empty folder's delete touches no message: only the folder's own version bump shows it.
    assert.equal((await call(s.url, t.user, 'DELETE', `/v1.0/me/mailFolders/${f.id}`)).status, 204);
    const gone = await get(path);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.code, 'ErrorFolderNotFound');
  });

  test('a delta first page is kept until its mailbox changes; a round from a kept page reports exactly the changes since', async () => {
    // A folder of its own, so the whole first round is one page.
    const f = (await call(s.url, t.user, 'POST', '/v1.0/me/mailFolders', { displayName: 'Kept delta' })).body;
    const post = async (subject: string) => (await call(s.url, t.user, 'POST', `/v1.0/me/mailFolders/${f.id}/messages`, { subject })).body;
    const first = `/v1.0/me/mailFolders/${f.id}/messages/delta?$select=subject`;
    const a = await post('delta-kept-a');
    const r1 = await get(first);
    assert.deepEqual(r1.body.value.map((v: any) => v.subject), ['delta-kept-a']);
    const link1: string = r1.body['@odata.deltaLink'];

    // Another mailbox's write moves the change log on, not this mailbox's version: the kept page
    // (and its link) is answered, and a round from it has nothing.
    await call(s.url, t.admin, 'POST', '/v1.0/me/messages', { subject: 'elsewhere' });
    const again = await call(s.url, t.user, 'GET', first);
    assert.deepEqual(again.body, r1.body);
    assert.deepEqual((await call(s.url, t.user, 'GET', link1.slice(s.url.length))).body.value, []);

    // This mailbox's writes: the next first page shows them, and the round from the kept link reports each once.
    const b = await post('delta-kept-b');
    assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${a.id}`, { subject: 'delta-kept-a2' })).status, 200);
    const r2 = await get(first);
    assert.deepEqual(r2.body.value.map((v: any) => v.subject).sort(), ['delta-kept-a2', 'delta-kept-b']);
    assert.notEqual(r2.body['@odata.deltaLink'], link1);
    const round = await call(s.url, t.user, 'GET', link1.slice(s.url.length));
    assert.deepEqual(round.body.value.map((v: any) => [v.id, v.subject]).sort(), [[a.id, 'delta-kept-a2'], [b.id, 'delta-kept-b']].sort());
    assert.deepEqual((await call(s.url, t.user, 'GET', r2.body['@odata.deltaLink'].slice(s.url.length))).body.value, []);
  });

  test('scopes are checked on every kept answer, and one mailbox\'s writes leave the other\'s texts alone', async () => {
    const m = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'scoped' })).body;
    assert.equal((await get(`/v1.0/me/messages/${m.id}`)).status, 200);
    // The text is kept now; a token without a read scope is still refused.
    const sendOnly = await userToken(s.url, identities.user, ['api://stratus/mail/Mail.Send']);
    const refused = await call(s.url, sendOnly, 'GET', `/v1.0/me/messages/${m.id}`);
    assert.equal(refused.status, 403);
    assert.equal((await call(s.url, sendOnly, 'GET', '/v1.0/me/mailFolders/drafts/messages?$select=subject&$top=50')).status, 403);
    assert.equal((await call(s.url, t.userRead, 'GET', `/v1.0/me/messages/${m.id}`)).status, 200, 'Mail.Read reads it');
    // The same id in the administrator's mailbox is not found, and the user's writes leave the administrator's pages as they were.
    assert.equal((await call(s.url, t.admin, 'GET', `/v1.0/me/messages/${m.id}`)).status, 404);
    const adminPage = await get('/v1.0/me/mailFolders/drafts/messages?$select=subject', t.admin);
    assert.ok(!adminPage.body.value.some((v: any) => v.subject === 'scoped'));
    await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${m.id}`, { subject: 'scoped-2' });
    assert.deepEqual((await get('/v1.0/me/mailFolders/drafts/messages?$select=subject', t.admin)).body, adminPage.body);
  });
  test('a message by id follows every write of it (SQLite: kept by message version), per API version, $select and path', async () => {
    const m = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'version-1' })).body;
    const path = `/v1.0/me/messages/${m.id}`;
    const v1 = await get(path);
    assert.equal(v1.body.isRead, true);
    assert.equal(v1.body.hasAttachments, false);
    assert.match(v1.body['@odata.context'], /\/v1\.0\/\$metadata#/);
    // Another API version and another `$select` are other answers of the same message version.
    assert.match((await get(`/beta/me/messages/${m.id}`)).body['@odata.context'], /\/beta\/\$metadata#/);
    assert.deepEqual(Object.keys((await get(`${path}?$select=subject`)).body).sort(), ['@odata.context', '@odata.etag', 'id', 'subject']);
    assert.equal((await get(`/v1.0/me/mailFolders/drafts/messages/${m.id}`)).body.subject, 'version-1');

    assert.equal((await call(s.url, t.user, 'PATCH', path, { isRead: false })).status, 200);
    assert.equal((await get(path)).body.isRead, false);
    assert.equal((await get(`${path}?$select=subject`)).body['@odata.etag'] === v1.body['@odata.etag'], false, 'a new change key');

    const added = await call(s.url, t.user, 'POST', `${path}/attachments`, { '@odata.type': '#vendor.graph.fileAttachment', name: 'a.txt', contentBytes: Buffer.from('hi').toString('base64') });
    assert.equal(added.status, 201);
    assert.equal((await get(path)).body.hasAttachments, true);
    assert.equal((await get(`/beta/me/messages/${m.id}`)).body.hasAttachments, true);

    // Another message of the mailbox changes (a new mailbox version): this one's answer is the
    // same, and its own next write still shows.
    const before = (await get(path)).body;
    const other = (await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'sibling' })).body;
    assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${other.id}`, { isRead: false })).status, 200);
    assert.deepEqual((await get(path)).body, before);
    assert.equal((await call(s.url, t.user, 'PATCH', path, { subject: 'version-2' })).status, 200);
    assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${other.id}`, { isRead: true })).status, 200);
    assert.equal((await get(path)).body.subject, 'version-2');
    assert.equal((await call(s.url, t.user, 'DELETE', `/v1.0/me/messages/${other.id}`)).status, 204);
    assert.equal((await get(`/v1.0/me/messages/${other.id}`)).status, 404);

    // Malformed and unknown ids keep their errors.
    assert.equal((await call(s.url, t.user, 'GET', '/v1.0/me/messages/not*an*id')).body.error.code, 'ErrorInvalidIdMalformed');
    assert.equal((await call(s.url, t.user, 'GET', `/v1.0/me/messages/${m.id.slice(0, -4)}AAAA`)).status, 404);
  });
});
