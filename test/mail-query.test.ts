/**
 * Mail queries (reference mail.md §2.2, §5): $filter, $orderby + InefficientFilter, $top / $skip
 * and absolute next links with PageIterator, $count, $select, $expand, $search (full-text index)
 * + SearchWithOrderBy, Prefer odata.maxpagesize, against answers computed from the demo data
 * and a bulk-loaded mailbox of thousands of messages.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { PageIterator } from '@microsoft/microsoft-graph-client';
import type { Client } from '@microsoft/microsoft-graph-client';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { graphClient, tokens, call } from './helpers/mail.ts';
import { demoAdmin, demoTenant, demoUser } from '../src/seed/demo.ts';
import { seedBulkMessages, demoMailboxSize } from '../src/services/mail/seed.ts';

describe('mail queries', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  let user: Client;
  let all: any[];
  before(async () => {
    s = await startTestServer();
    t = await tokens(s.url);
    user = graphClient(s.url, t.user);
    // The whole visible mailbox, for computing expected answers.
    all = [];
    const first = await user.api('/me/messages').top(1000).get();
    all = first.value;
  });
  after(async () => {
    await s?.close();
  });

  test('the demo mailbox: a few hundred realistic messages', async () => {
    assert.equal(all.length, demoMailboxSize);
    assert.ok(all.some((m) => m.hasAttachments));
    assert.ok(all.some((m) => m.flag.flagStatus === 'flagged'));
    assert.ok(all.some((m) => m.categories.length > 0));
    assert.ok(all.some((m) => m.importance === 'high'));
    assert.ok(all.some((m) => !m.isRead) && all.some((m) => m.isRead));
    const convs = new Map<string, number>();
    for (const m of all) convs.set(m.conversationId, (convs.get(m.conversationId) ?? 0) + 1);
    assert.ok([...convs.values()].some((n) => n >= 2));
    // Default order: newest received first.
    const times = all.map((m) => m.receivedDateTime);
    assert.deepEqual(times, [...times].sort().reverse());
  });

  const ids = (r: any) => r.value.map((m: any) => m.id).sort();
  const expectIds = (pred: (m: any) => boolean) => all.filter(pred).map((m) => m.id).sort();

  test('$filter: comparisons, logic, startswith, contains, any, dates, enums', async () => {
    const cases: [string, (m: any) => boolean][] = [
      ['isRead eq false', (m) => !m.isRead],
      ['importance eq \'high\'', (m) => m.importance === 'high'],
      ['hasAttachments eq true and isRead eq true', (m) => m.hasAttachments && m.isRead],
      ["flag/flagStatus eq 'flagged'", (m) => m.flag.flagStatus === 'flagged'],
      ["startswith(subject,'re: ')", (m) => m.subject.toLowerCase().startsWith('re: ')],
      ["contains(subject,'budget')", (m) => m.subject.toLowerCase().includes('budget')],
      ["categories/any(c:c eq 'Red category')", (m) => m.categories.includes('Red category')],
      [`from/emailAddress/address eq '${demoAdmin.userPrincipalName.toUpperCase()}'`, (m) => m.from?.emailAddress.address === demoAdmin.userPrincipalName],
      ['receivedDateTime ge 2026-09-20 and receivedDateTime lt 2026-09-25', (m) => m.receivedDateTime >= '2026-09-20' && m.receivedDateTime < '2026-09-25'],
      ["not (inferenceClassification eq 'focused') or importance eq 'low'", (m) => m.inferenceClassification !== 'focused' || m.importance === 'low'],
    ];
    for (const [f, pred] of cases) {
      const r = await user.api('/me/messages').filter(f).top(1000).get();
      assert.deepEqual(ids(r), expectIds(pred), f);
      assert.ok(r.value.length > 0, `${f} matches something`);
    }
  });

  test('$filter errors: syntax, unknown property, recipients collections', async () => {
    const syn = await call(s.url, t.user, 'GET', `/v1.0/me/messages?$filter=${encodeURIComponent('isRead eq')}`);
    assert.equal(syn.status, 400);
    assert.equal(syn.body.error.code, 'BadRequest');
    assert.match(syn.body.error.message, /^Invalid filter clause/);
    const unk = await call(s.url, t.user, 'GET', `/v1.0/me/messages?$filter=${encodeURIComponent("colour eq 'x'")}`);
    assert.equal(unk.status, 400);
    assert.equal(unk.body.error.code, 'BadRequest');
    assert.equal(unk.body.error.message, "Invalid filter clause: Could not find a property named 'colour' on type 'vendor.graph.message'.");
    const rec = await call(s.url, t.user, 'GET', `/v1.0/me/messages?$filter=${encodeURIComponent("toRecipients/any(r:r/emailAddress/address eq 'a@b.c')")}`);
    assert.equal(rec.status, 400);
    assert.equal(rec.body.error.code, 'ErrorInvalidUrlQueryFilter');
  });

  test('$orderby and the InefficientFilter rule', async () => {
    const r = await user.api('/me/messages').orderby('receivedDateTime asc').top(5).get();
    assert.deepEqual(r.value.map((m: any) => m.receivedDateTime), all.map((m) => m.receivedDateTime).sort().slice(0, 5));
    const ok = await call(s.url, t.user, 'GET', `/v1.0/me/messages?$filter=${encodeURIComponent('receivedDateTime ge 2026-01-01 and isRead eq false')}&$orderby=receivedDateTime desc`);
    assert.equal(ok.status, 200);
    const bad = await call(s.url, t.user, 'GET', `/v1.0/me/messages?$filter=${encodeURIComponent('isRead eq false and receivedDateTime ge 2026-01-01')}&$orderby=receivedDateTime desc`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'InefficientFilter');
    const missing = await call(s.url, t.user, 'GET', `/v1.0/me/messages?$filter=${encodeURIComponent('isRead eq false')}&$orderby=subject`);
    assert.equal(missing.body.error.code, 'InefficientFilter');
    const unk = await call(s.url, t.user, 'GET', '/v1.0/me/messages?$orderby=colour');
    assert.equal(unk.body.error.code, 'RequestBroker--ParseUri');
  });

  test('$top / $skip / $count / $select / absolute next links / PageIterator / maxpagesize', async () => {
    const page = await user.api('/me/messages').get();
    assert.equal(page.value.length, 10);
    assert.ok(page['@odata.nextLink'].startsWith(s.url + '/v1.0/me/messages?'));
    assert.match(page['@odata.nextLink'], /%24skip=10/);
    const top = await call(s.url, t.user, 'GET', '/v1.0/me/messages?$top=1001');
    assert.equal(top.status, 400);
    const zero = await call(s.url, t.user, 'GET', '/v1.0/me/messages?$top=0');
    assert.equal(zero.status, 400);
    const skip = await user.api('/me/messages').skip(20).top(3).get();
    assert.deepEqual(skip.value.map((m: any) => m.id), all.slice(20, 23).map((m) => m.id));
    const counted = await user.api('/me/messages').filter('isRead eq false').count(true).top(2).get();
    assert.equal(counted['@odata.count'], all.filter((m) => !m.isRead).length);
    const c = await call(s.url, t.user, 'GET', '/v1.0/me/messages/$count?$filter=isRead%20eq%20false');
    assert.equal(c.body, all.filter((m) => !m.isRead).length);
    assert.match(c.headers.get('content-type')!, /^text\/plain/);
    const sel = await user.api('/me/messages').select('subject,from').top(2).get();
    assert.deepEqual(Object.keys(sel.value[0]).sort(), ['@odata.etag', 'from', 'id', 'subject']);
    assert.match(sel['@odata.context'], /messages\(subject,from\)$/);
    const badSel = await call(s.url, t.user, 'GET', '/v1.0/me/messages?$select=colour');
    assert.equal(badSel.body.error.code, 'RequestBroker--ParseUri');

    const seen: string[] = [];
    const first = await user.api('/me/mailFolders/inbox/messages').select('id').top(25).get();
    const it = new PageIterator(user, first, (m: any) => {
      seen.push(m.id);
      return true;
    });
    await it.iterate();
    const inboxTotal = (await user.api('/me/mailFolders/inbox').get()).totalItemCount;
    assert.equal(seen.length, inboxTotal);
    assert.equal(new Set(seen).size, inboxTotal);

    const mp = await call(s.url, t.user, 'GET', '/v1.0/me/messages', undefined, { Prefer: 'odata.maxpagesize=7' });
    assert.equal(mp.body.value.length, 7);
  });


  test('$select of the properties a row holds itself (read without the stored document) answers what the full representation says', async () => {
    const props = ['subject', 'isRead', 'isDraft', 'hasAttachments', 'receivedDateTime', 'sentDateTime', 'createdDateTime', 'lastModifiedDateTime', 'changeKey', 'parentFolderId', 'webLink'];
    const light = await user.api('/me/messages').select(props.join(',')).top(40).get();
    assert.equal(light.value.length, 40);
    for (const [i, m] of light.value.entries()) {
      const full = all[i];
      assert.equal(m.id, full.id);
      assert.deepEqual(Object.keys(m).sort(), ['@odata.etag', 'id', ...props].sort());
      for (const p of props) assert.deepEqual(m[p], full[p], `${p} of message ${i}`);
      assert.equal(m['@odata.etag'], full['@odata.etag']);
    }
    // A draft's subject changed through the API shows in the light page too (the column follows the document).
    const draft = await user.api('/me/messages').post({ subject: 'Light column draft' });
    await user.api(`/me/messages/${draft.id}`).patch({ subject: 'Light column check' });
    const drafts = await user.api('/me/mailFolders/drafts/messages').select('subject').top(50).get();
    assert.equal(drafts.value.find((m: any) => m.id === draft.id)?.subject, 'Light column check');
    await user.api(`/me/messages/${draft.id}`).delete();
  });
  test('pages, delta pages and single messages follow every change and every preference (texts are kept per message version)', async () => {
    // A draft of its own (the demo mailbox stays as the other tests expect it), newest in the drafts folder.
    const draft = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'Kept text draft', body: { contentType: 'html', content: '<p>Kept <b>text</b></p>' }, toRecipients: [{ emailAddress: { address: 'someone@example.com' } }] });
    assert.equal(draft.status, 201);
    const draftsPage = () => call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/drafts/messages?$top=5');
    const first = (await draftsPage()).body.value;
    const target = first.find((m: any) => m.id === draft.body.id);
    assert.ok(target);
    // The single message says what the page item says (both read twice: the second read is answered from the kept text).
    for (let i = 0; i < 2; i++) {
      const one = await call(s.url, t.user, 'GET', `/v1.0/me/messages/${target.id}`);
      assert.equal(one.status, 200);
      assert.equal(Object.keys(one.body)[0], '@odata.context');
      const { '@odata.context': _context, ...rest } = one.body;
      assert.deepEqual(rest, target);
      assert.deepEqual((await draftsPage()).body.value, first);
    }
    // Preferences change the text: body as text, immutable ids; and the plain page is unchanged after them.
    const asText = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/drafts/messages?$top=5', undefined, { Prefer: 'outlook.body-content-type="text"' });
    const textItem = asText.body.value.find((m: any) => m.id === target.id);
    assert.equal(textItem.body.contentType, 'text');
    assert.equal(target.body.contentType, 'html');
    const immutable = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/drafts/messages?$top=5', undefined, { Prefer: 'IdType="ImmutableId"' });
    const index = first.indexOf(target);
    assert.notEqual(immutable.body.value[index].id, target.id);
    const oneImmutable = await call(s.url, t.user, 'GET', `/v1.0/me/messages/${target.id}`, undefined, { Prefer: 'IdType="ImmutableId"' });
    assert.equal(oneImmutable.body.id, immutable.body.value[index].id);
    assert.deepEqual((await draftsPage()).body.value, first);
    const delta0 = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/drafts/messages/delta?$top=1000');
    assert.equal(delta0.status, 200);
    assert.equal(delta0.body.value.find((m: any) => m.id === target.id)?.subject, 'Kept text draft');
    // A change shows at once in the page, the single message and the delta page.
    const patched = await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${target.id}`, { subject: 'Kept text check', categories: ['Kept text check'] });
    assert.equal(patched.status, 200);
    const item = (await draftsPage()).body.value.find((m: any) => m.id === target.id);
    assert.equal(item.subject, 'Kept text check');
    assert.deepEqual(item.categories, ['Kept text check']);
    assert.notEqual(item['@odata.etag'], target['@odata.etag']);
    assert.equal((await call(s.url, t.user, 'GET', `/v1.0/me/messages/${target.id}`)).body.subject, 'Kept text check');
    const delta1 = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/drafts/messages/delta?$top=1000');
    const d = delta1.body.value.find((m: any) => m.id === target.id);
    assert.equal(d['@odata.type'], '#vendor.graph.message');
    assert.equal(d.subject, 'Kept text check');
    // A move gives a new id and parent folder; the old id is gone from the drafts page.
    const archive = await call(s.url, t.user, 'GET', '/v1.0/me/mailFolders/archive');
    const moved = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${target.id}/move`, { destinationId: archive.body.id });
    assert.equal(moved.status, 201);
    assert.ok(!(await draftsPage()).body.value.some((m: any) => m.id === target.id));
    const movedOne = await call(s.url, t.user, 'GET', `/v1.0/me/messages/${moved.body.id}`);
    assert.equal(movedOne.body.parentFolderId, archive.body.id);
    assert.equal(movedOne.body.subject, 'Kept text check');
    assert.equal((await call(s.url, t.user, 'DELETE', `/v1.0/me/messages/${moved.body.id}`)).status, 204);
  });

  test('$search uses the full-text index; SearchWithOrderBy', async () => {
    const r = await user.api('/me/messages').search('"spreadsheet"').top(1000).get();
    const expected = all.filter((m) => m.bodyPreview.toLowerCase().includes('spreadsheet') || m.subject.toLowerCase().includes('spreadsheet')).length;
    assert.ok(expected > 0);
    assert.equal(r.value.length, expected);
    const sent = r.value.map((m: any) => m.sentDateTime ?? m.createdDateTime);
    assert.deepEqual(sent, [...sent].sort().reverse());
    const two = await user.api('/me/messages').search('"pizza kitchen"').top(1000).get();
    assert.ok(two.value.length > 0);
    assert.ok(two.value.every((m: any) => /pizza/i.test(m.subject)));
    const bad = await call(s.url, t.user, 'GET', '/v1.0/me/messages?$search=%22pizza%22&$orderby=subject');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, 'SearchWithOrderBy');
  });

  test('$search and $count=true with $search answer every committed write at once (a repeated search is never stale)', async () => {
    const search = async () => {
      const r = await call(s.url, t.user, 'GET', '/v1.0/me/messages?$search=%22quillwobble%22&$count=true&$top=10&$select=subject');
      assert.equal(r.status, 200);
      return { count: r.body['@odata.count'], subjects: r.body.value.map((m: any) => m.subject) };
    };
    // Asked twice before any write: the same (empty) answer.
    assert.deepEqual(await search(), { count: 0, subjects: [] });
    assert.deepEqual(await search(), { count: 0, subjects: [] });
    const draft = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'Quillwobble plans' });
    assert.equal(draft.status, 201);
    assert.deepEqual(await search(), { count: 1, subjects: ['Quillwobble plans'] });
    assert.deepEqual(await search(), { count: 1, subjects: ['Quillwobble plans'] });
    assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${draft.body.id}`, { subject: 'Other plans' })).status, 200);
    assert.deepEqual(await search(), { count: 0, subjects: [] });
    assert.equal((await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${draft.body.id}`, { subject: 'Quillwobble again' })).status, 200);
    assert.deepEqual(await search(), { count: 1, subjects: ['Quillwobble again'] });
    assert.equal((await call(s.url, t.user, 'DELETE', `/v1.0/me/messages/${draft.body.id}`)).status, 204);
    assert.deepEqual(await search(), { count: 0, subjects: [] });
  });

  test('$expand attachments; hasAttachments ignores inline attachments', async () => {
    const withAtt = all.find((m) => m.hasAttachments)!;
    const e = await user.api(`/me/messages/${withAtt.id}`).expand('attachments').get();
    assert.ok(e.attachments.length >= 1);
    assert.equal(e.attachments[0]['@odata.type'], '#vendor.graph.fileAttachment');
    const m = await user.api('/me/messages').post({ subject: 'inline only' });
    await user.api(`/me/messages/${m.id}/attachments`).post({ '@odata.type': '#vendor.graph.fileAttachment', name: 'img.png', contentBytes: Buffer.from('png').toString('base64'), isInline: true, contentId: 'img1' });
    assert.equal((await user.api(`/me/messages/${m.id}`).get()).hasAttachments, false);
    await user.api(`/me/messages/${m.id}/attachments`).post({ '@odata.type': '#vendor.graph.fileAttachment', name: 'a.txt', contentBytes: Buffer.from('hello').toString('base64') });
    assert.equal((await user.api(`/me/messages/${m.id}`).get()).hasAttachments, true);
  });

  test('a mailbox of thousands of messages: filter, search, page, count', async () => {
    const ctx = s.server.ctx;
    await seedBulkMessages(ctx, { tenantId: demoTenant.id, id: demoAdmin.id, mail: demoAdmin.userPrincipalName, displayName: demoAdmin.displayName }, 5000);
    const admin = graphClient(s.url, t.admin);
    const n = await call(s.url, t.admin, 'GET', '/v1.0/me/messages/$count');
    assert.ok(n.body >= 5000);
    const unread = await admin.api('/me/messages').filter('isRead eq false').count(true).top(50).get();
    assert.equal(unread.value.length, 50);
    assert.ok(unread['@odata.count'] > 500);
    const search = await admin.api('/me/messages').search('"invoice"').count(true).top(5).get();
    assert.ok(search['@odata.count'] > 100);
    const deep = await admin.api('/me/messages').skip(4000).top(10).get();
    assert.equal(deep.value.length, 10);
    assert.ok(deep['@odata.nextLink']);
    void demoUser;
  });
});
