/**
 * Every link the mail API writes is one it serves (issue 10 item 4): `@odata.nextLink` of
 * message and folder lists, `@odata.nextLink` / `@odata.deltaLink` of delta rounds, the
 * entity-set path of `@odata.context`, the upload `Location` and the `resource` of change
 * notifications — followed under `/me`, `/users/{id}`, `/users/{upn}`, `/users('{upn}')` and
 * `/users(%27{upn}%27)`, with a delegated token and an app-only token. Also the path forms a
 * client may send: key syntax on every segment, `delta()`, the `vendor.graph.` qualifier.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokens, call } from './helpers/mail.ts';
import { demoAdmin } from '../src/seed/demo.ts';
import { splitPath, keySegment, requestPathRules } from '../src/services/mail/paths.ts';

describe('mail links', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  before(async () => {
    s = await startTestServer();
    t = await tokens(s.url);
  });
  after(async () => {
    await s?.close();
  });

  const upn = demoAdmin.userPrincipalName;
  /** Mailbox prefixes of the admin's mailbox, and which tokens may use them. */
  const bases = () => [
    { base: '/v1.0/me', tokens: [t.admin] },
    { base: `/v1.0/users/${demoAdmin.id}`, tokens: [t.admin, t.app] },
    { base: `/v1.0/users/${upn}`, tokens: [t.app] },
    { base: `/v1.0/users('${upn}')`, tokens: [t.admin, t.app] },
    { base: `/v1.0/users(%27${encodeURIComponent(upn)}%27)`, tokens: [t.app] },
    { base: `/beta/users('${demoAdmin.id}')`, tokens: [t.app] },
  ];

  /** GETs an absolute link on the server; asserts it is on the server's origin and answers 200. */
  async function follow(link: string, token: string, headers: Record<string, string> = {}) {
    assert.ok(link.startsWith(s.url + '/'), `link on the origin: ${link}`);
    const r = await call(s.url, token, 'GET', link.slice(s.url.length), undefined, headers);
    assert.equal(r.status, 200, `${link} → ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** The entity-set path an `@odata.context` names (`…/$metadata#users('x')/messages/$entity` → `/v1.0/users('x')/messages`). */
  function contextPath(context: string): string | undefined {
    const m = /^(.*)\/\$metadata#(.*)$/.exec(context);
    if (!m || m[2]!.startsWith('Collection(')) return undefined;
    return m[1]!.slice(s.url.length) + '/' + m[2]!.replace(/\/\$entity$/, '');
  }

  test('list next links, folder next links and @odata.context paths are served under every mailbox spelling', async () => {
    const all = await call(s.url, t.app, 'GET', `/v1.0/users/${demoAdmin.id}/messages/$count`);
    assert.equal(all.status, 200);
    const total = Number(all.body);
    assert.ok(total > 6, `the admin's mailbox has ${total} messages`);
    for (const { base, tokens: toks } of bases()) {
      for (const token of toks) {
        const seen = new Set<string>();
        // About four pages each.
        let page = (await call(s.url, token, 'GET', `${base}/messages?$top=${Math.ceil(total / 4)}`)).body;
        assert.ok(page.value, `${base}/messages: ${JSON.stringify(page)}`);
        let pages = 1;
        for (;;) {
          for (const m of page.value) seen.add(m.id);
          if (!page['@odata.nextLink']) break;
          page = await follow(page['@odata.nextLink'], token);
          pages++;
        }
        assert.equal(seen.size, total, `${base}: every message once over ${pages} pages`);
        assert.ok(pages >= 4);
        // The context of a list and of an entity names a collection that is served.
        const first = await call(s.url, token, 'GET', `${base}/messages?$top=1`);
        const listCtx = contextPath(first.body['@odata.context']);
        assert.ok(listCtx);
        assert.equal((await follow(s.url + listCtx + '?$top=1', token)).value.length, 1);
        const one = await call(s.url, token, 'GET', `${base}/messages/${first.body.value[0].id}`);
        assert.equal(one.status, 200);
        assert.equal((await follow(s.url + contextPath(one.body['@odata.context'])! + '?$top=1', token)).value.length, 1);
        // Folders page too.
        let folders = (await call(s.url, token, 'GET', `${base}/mailFolders?$top=2`)).body;
        let folderCount = folders.value.length;
        assert.ok(folders['@odata.nextLink'], 'more than two top-level folders');
        while (folders['@odata.nextLink']) {
          folders = await follow(folders['@odata.nextLink'], token);
          folderCount += folders.value.length;
        }
        assert.ok(folderCount > 2);
        const inbox = await call(s.url, token, 'GET', `${base}/mailFolders('Inbox')`);
        assert.equal(inbox.status, 200);
        assert.equal((await follow(s.url + contextPath(inbox.body['@odata.context'])!, token)).value.length > 0, true);
        const folderMsgs = await call(s.url, token, 'GET', `${base}/mailFolders/inbox/messages?$top=1`);
        assert.equal(folderMsgs.status, 200);
        assert.equal((await follow(s.url + contextPath(folderMsgs.body['@odata.context'])! + '?$top=1', token)).value[0].id, folderMsgs.body.value[0].id);
      }
    }
  });

  test('delta() rounds follow next and delta links to the end under every mailbox spelling', async () => {
    for (const { base, tokens: toks } of bases()) {
      for (const token of toks) {
        const inbox = (await call(s.url, token, 'GET', `${base}/mailFolders/inbox`)).body;
        const prefer = { Prefer: 'odata.maxpagesize=4' };
        let page = (await call(s.url, token, 'GET', `${base}/mailFolders('inbox')/messages/delta()?$select=subject`, undefined, prefer)).body;
        const ids = new Set<string>();
        for (;;) {
          for (const m of page.value) ids.add(m.id);
          if (page['@odata.deltaLink']) break;
          page = await follow(page['@odata.nextLink'], token, prefer);
        }
        assert.equal(ids.size, inbox.totalItemCount, `${base}: the first round lists the inbox`);
        const deltaLink = page['@odata.deltaLink'];
        // A change, then the delta link reports exactly it; its own delta link works again.
        const created = await call(s.url, token, 'POST', `${base}/mailFolders('inbox')/messages`, { subject: `links ${base}` });
        assert.equal(created.status, 201);
        const next = await follow(deltaLink, token, prefer);
        assert.deepEqual(next.value.map((m: any) => m.id), [created.body.id]);
        const empty = await follow(next['@odata.deltaLink'], token, prefer);
        assert.equal(empty.value.length, 0);
        assert.equal((await call(s.url, token, 'DELETE', `${base}/messages('${created.body.id}')`)).status, 204);
      }
    }
  });

  test('key syntax on every segment, delta() and the vendor.graph qualifier', async () => {
    const list = await call(s.url, t.app, 'GET', `/v1.0/users('${upn}')/mailFolders('Inbox')/messages?$top=1&$select=subject`);
    assert.equal(list.status, 200);
    const id = list.body.value[0].id;
    const forms = [
      `/v1.0/users('${upn}')/messages('${id}')`,
      `/v1.0/users(%27${encodeURIComponent(upn)}%27)/mailFolders(%27inbox%27)/messages(%27${id}%27)`,
      `/v1.0/Users/${demoAdmin.id}/Messages/${id}`,
      `/v1.0/users/${upn}/mailFolders('msgfolderroot')/childFolders('inbox')/messages('${id}')`,
    ];
    for (const p of forms) {
      const r = await call(s.url, t.app, 'GET', p);
      assert.equal(r.status, 200, `${p}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.id, id);
    }
    // An attachment by key, and the upload Location, are served.
    const draft = await call(s.url, t.app, 'POST', `/v1.0/users('${upn}')/messages`, { subject: 'key syntax attachments' });
    const att = await call(s.url, t.app, 'POST', `/v1.0/users('${upn}')/messages('${draft.body.id}')/attachments`, { '@odata.type': '#vendor.graph.fileAttachment', name: 'a.txt', contentBytes: Buffer.from('abc').toString('base64') });
    assert.equal(att.status, 201);
    const got = await call(s.url, t.app, 'GET', `/v1.0/users('${upn}')/messages('${draft.body.id}')/attachments('${att.body.id}')`);
    assert.equal(got.status, 200);
    assert.equal(got.body.name, 'a.txt');
    const attCtx = contextPath(got.body['@odata.context'])!;
    assert.equal((await follow(s.url + attCtx, t.app)).value.length, 1);
    const size = 4 * 1024 * 1024;
    const session = await call(s.url, t.admin, 'POST', `/v1.0/me/messages('${draft.body.id}')/attachments/vendor.graph.createUploadSession`, { AttachmentItem: { attachmentType: 'file', name: 'big.bin', size } });
    assert.equal(session.status, 201, JSON.stringify(session.body));
    const put = await fetch(session.body.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes 0-${size - 1}/${size}` }, body: Buffer.alloc(size, 1) });
    assert.equal(put.status, 201);
    for (const token of [t.admin, t.app]) {
      const loc = await follow(put.headers.get('location')!, token);
      assert.equal(loc.name, 'big.bin');
      assert.equal(loc.size, size);
    }
    // delta() with the qualifier; a malformed message key is still refused as before.
    const qualified = await call(s.url, t.app, 'GET', `/v1.0/users/${demoAdmin.id}/mailFolders/inbox/messages/vendor.graph.delta()?$select=subject`);
    assert.equal(qualified.status, 200);
    assert.ok(qualified.body['@odata.nextLink'] ?? qualified.body['@odata.deltaLink']);
    const bad = await call(s.url, t.app, 'GET', `/v1.0/users('${upn}')/messages('not-an-id')`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'ErrorInvalidIdMalformed');
    const unknown = await call(s.url, t.app, 'GET', `/v1.0/users('nobody@stratus.test')/messages`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'ErrorInvalidUser');
    const notMail = await call(s.url, t.app, 'GET', `/v1.0/usersX/messages`);
    assert.equal(notMail.status, 400);
    assert.equal(notMail.body.error.message, "Resource not found for the segment 'usersX'.");
  });

  test('the splitter: quote escaping, percent-encoding, slashes inside quoted keys; keySegment round-trips', () => {
    const opts = requestPathRules;
    assert.deepEqual(splitPath("/v1.0/users('o''brien@x.test')/messages/delta()", opts), ['v1.0', 'users', "o'brien@x.test", 'messages', 'delta']);
    assert.deepEqual(splitPath('/v1.0/users(%27a%2Fb%27)/mailFolders(Inbox)', opts), ['v1.0', 'users', 'a/b', 'mailFolders', 'Inbox']);
    assert.deepEqual(splitPath("/v1.0/users('a/b')/x", opts), ['v1.0', 'users', 'a/b', 'x']);
    assert.deepEqual(splitPath("/v1.0/users/o'brien@x.test/messages", opts), ['v1.0', 'users', "o'brien@x.test", 'messages']);
    assert.deepEqual(splitPath('/v1.0/me/messages/x/vendor.graph.move', opts), ['v1.0', 'me', 'messages', 'x', 'move']);
    assert.throws(() => splitPath('/v1.0/users/%E0%A4%A', opts), /percent-encoding/);
    for (const key of ["o'brien", 'a/b?c#d%e f', 'ünï', "''", 'x)y(']) {
      assert.deepEqual(splitPath(`/${keySegment('users', key)}/messages`, opts), ['users', key, 'messages'], key);
    }
  });
});
