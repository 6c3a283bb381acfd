/**
 * Attachments (file, item, reference; `$value`), open extensions, single- and multi-value
 * extended properties (`$expand`, `$filter`), MIME, and the beta actions (reportMessage,
 * markAsJunk / markAsNotJunk past their deprecation date, recall, unsubscribe), served under
 * /beta and /v1.0 (reference mail.md §1, §2.9–§2.12).
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@microsoft/microsoft-graph-client';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { graphClient, tokens, call } from './helpers/mail.ts';
import { demoAdmin, demoTenant } from '../src/seed/demo.ts';
import { listOutboundMail } from '../src/services/mail/outbound.ts';

describe('mail attachments, extensions, extended properties, beta actions', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  let user: Client;
  let admin: Client;
  before(async () => {
    s = await startTestServer();
    t = await tokens(s.url);
    user = graphClient(s.url, t.user);
    admin = graphClient(s.url, t.admin);
  });
  after(async () => {
    await s?.close();
  });

  test('file, item and reference attachments: add, list, get, $value, delete; delivered with the message', async () => {
    const m = await user.api('/me/messages').post({ subject: 'with attachments', toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] });
    const file = await user.api(`/me/messages/${m.id}/attachments`).post({ '@odata.type': '#vendor.graph.fileAttachment', name: 'notes.txt', contentType: 'text/plain', contentBytes: Buffer.from('hello world').toString('base64') });
    assert.equal(file.size, 11);
    assert.equal(file.contentBytes, Buffer.from('hello world').toString('base64'));
    const item = await user.api(`/me/messages/${m.id}/attachments`).post({ '@odata.type': '#vendor.graph.itemAttachment', name: 'forwarded', item: { '@odata.type': '#vendor.graph.message', subject: 'inner', body: { contentType: 'text', content: 'inner body' } } });
    assert.equal(item.contentType, null);
    const ref = await user.api(`/me/messages/${m.id}/attachments`).post({ '@odata.type': '#vendor.graph.referenceAttachment', name: 'doc', sourceUrl: 'https://files.example/doc' });
    const list = await user.api(`/me/messages/${m.id}/attachments`).get();
    assert.equal(list.value.length, 3);
    const raw = await fetch(`${s.url}/v1.0/me/messages/${m.id}/attachments/${file.id}/$value`, { headers: { authorization: `Bearer ${t.user}` } });
    assert.equal(await raw.text(), 'hello world');
    const mime = await call(s.url, t.user, 'GET', `/v1.0/me/messages/${m.id}/attachments/${item.id}/$value`);
    assert.match(mime.body, /Subject: inner/);
    assert.equal((await call(s.url, t.user, 'GET', `/v1.0/me/messages/${m.id}/attachments/${ref.id}/$value`)).status, 405);
    const expanded = await user.api(`/me/messages/${m.id}/attachments/${item.id}`).expand('vendor.graph.itemattachment/item').get();
    assert.equal(expanded.item.subject, 'inner');
    await user.api(`/me/messages/${m.id}/attachments/${ref.id}`).delete();
    assert.equal((await user.api(`/me/messages/${m.id}/attachments`).get()).value.length, 2);
    const noType = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${m.id}/attachments`, { name: 'x' });
    assert.equal(noType.status, 400);

    const msgMime = await call(s.url, t.user, 'GET', `/v1.0/me/messages/${m.id}/$value`);
    assert.match(msgMime.body, /Subject: with attachments/);
    assert.match(msgMime.body, /filename="notes.txt"/);

    await user.api(`/me/messages/${m.id}/send`).post(null);
    const got = await admin.api('/me/mailFolders/inbox/messages').filter("subject eq 'with attachments'").expand('attachments').get();
    assert.equal(got.value.length, 1);
    assert.equal(got.value[0].hasAttachments, true);
    assert.deepEqual(got.value[0].attachments.map((a: any) => a.name).sort(), ['forwarded', 'notes.txt']);
  });

  test('upload session: 5 MB in two chunks, then the attachment exists; small files refused; cancel', async () => {
    const m = await user.api('/me/messages').post({ subject: 'large attachment' });
    const size = 5 * 1024 * 1024;
    const bytes = Buffer.alloc(size, 7);
    const small = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${m.id}/attachments/createUploadSession`, { AttachmentItem: { attachmentType: 'file', name: 'small.bin', size: 1000 } });
    assert.equal(small.status, 400);
    assert.equal(small.body.error.code, 'ErrorAttachmentSizeShouldNotBeLessThanMinimumSize');
    const session = await user.api(`/me/messages/${m.id}/attachments/createUploadSession`).post({ AttachmentItem: { attachmentType: 'file', name: 'big.bin', size } });
    assert.deepEqual(session.nextExpectedRanges, ['0-']);
    assert.ok(session.uploadUrl.startsWith(s.url + '/v1.0/'));
    const put = (from: number, to: number) => fetch(session.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes ${from}-${to}/${size}` }, body: bytes.subarray(from, to + 1) });
    const wrong = await put(100, 200);
    assert.equal(wrong.status, 416);
    const first = await put(0, 4 * 1024 * 1024 - 1);
    assert.equal(first.status, 200);
    assert.deepEqual(((await first.json()) as any).nextExpectedRanges, [String(4 * 1024 * 1024)]);
    const last = await put(4 * 1024 * 1024, size - 1);
    assert.equal(last.status, 201);
    assert.match(last.headers.get('location')!, /\/attachments\('/);
    const list = await user.api(`/me/messages/${m.id}/attachments`).get();
    assert.equal(list.value[0].size, size);
    assert.equal((await user.api(`/me/messages/${m.id}`).get()).hasAttachments, true);
    const s2 = await user.api(`/me/messages/${m.id}/attachments/createUploadSession`).post({ AttachmentItem: { attachmentType: 'file', name: 'cancel.bin', size } });
    assert.equal((await fetch(s2.uploadUrl, { method: 'DELETE' })).status, 204);
    const gone = await fetch(s2.uploadUrl, { method: 'PUT', headers: { 'content-type': 'application/octet-stream', 'content-range': `bytes 0-9/${size}` }, body: bytes.subarray(0, 10) });
    assert.equal(gone.status, 404);
  });

  test('create with file attachments and MIME; bad base64 MIME', async () => {
    const m = await user.api('/me/messages').post({ subject: 'att at creation', attachments: [{ '@odata.type': '#vendor.graph.fileAttachment', name: 'a.txt', contentBytes: Buffer.from('a').toString('base64') }] });
    assert.equal(m.hasAttachments, true);
    const mime = Buffer.from('Subject: from mime\r\nTo: "Stratus Administrator" <admin@stratus.test>\r\nX-Trace: 42\r\nContent-Type: text/plain\r\n\r\nhello from mime\r\n').toString('base64');
    const r = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${t.user}`, 'content-type': 'text/plain' }, body: mime });
    assert.equal(r.status, 201);
    const body: any = await r.json();
    assert.equal(body.subject, 'from mime');
    assert.equal(body.toRecipients[0].emailAddress.address, 'admin@stratus.test');
    const replyMime = Buffer.from('Subject: RE: from mime\r\nTo: <admin@stratus.test>\r\nContent-Type: text/plain\r\n\r\nreplied in mime\r\n').toString('base64');
    const cr = await fetch(`${s.url}/v1.0/me/messages/${body.id}/createReply`, { method: 'POST', headers: { authorization: `Bearer ${t.user}`, 'content-type': 'text/plain' }, body: replyMime });
    assert.equal(cr.status, 201);
    const crBody: any = await cr.json();
    assert.equal(crBody.conversationId, body.conversationId);
    assert.match(crBody.bodyPreview, /replied in mime/);
    const bad = await fetch(`${s.url}/v1.0/me/messages`, { method: 'POST', headers: { authorization: `Bearer ${t.user}`, 'content-type': 'text/plain' }, body: 'not base64 !!!' });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).error.code, 'ErrorMimeContentInvalidBase64String');
  });

  test('open extensions: with the message, on an existing message, get by name or id, PATCH replaces, delete', async () => {
    const m = await user.api('/me/messages').post({ subject: 'ext', extensions: [{ '@odata.type': 'vendor.graph.openTypeExtension', extensionName: 'Com.Contoso.Referral', companyName: 'Wingtip' }] });
    assert.equal(m.extensions[0].id, 'vendor.graph.openTypeExtension.Com.Contoso.Referral');
    const e2 = await user.api(`/me/messages/${m.id}/extensions`).post({ '@odata.type': '#vendor.graph.openTypeExtension', extensionName: 'Com.Contoso.Deal', amount: 5 });
    assert.equal(e2.amount, 5);
    const dup = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${m.id}/extensions`, { extensionName: 'Com.Contoso.Deal' });
    assert.equal(dup.status, 409);
    assert.equal((await user.api(`/me/messages/${m.id}/extensions/Com.Contoso.Referral`).get()).companyName, 'Wingtip');
    assert.equal((await user.api(`/me/messages/${m.id}/extensions/vendor.graph.openTypeExtension.Com.Contoso.Deal`).get()).amount, 5);
    const patched = await user.api(`/me/messages/${m.id}/extensions/Com.Contoso.Deal`).patch({ stage: 'won' });
    assert.equal(patched.amount, undefined);
    assert.equal(patched.stage, 'won');
    const exp = await user.api(`/me/messages/${m.id}`).expand("extensions($filter=id eq 'Com.Contoso.Deal')").get();
    assert.equal(exp.extensions.length, 1);
    await user.api(`/me/messages/${m.id}/extensions/Com.Contoso.Deal`).delete();
    assert.equal((await call(s.url, t.user, 'GET', `/v1.0/me/messages/${m.id}/extensions/Com.Contoso.Deal`)).status, 404);
  });

  test('extended properties: set at creation and by PATCH, not echoed, read with $expand and $filter', async () => {
    const sid = 'String {66f5a359-4659-4830-9070-00047ec6ac6e} Name Color';
    const mid = 'StringArray {66f5a359-4659-4830-9070-00047ec6ac6e} Name Palette';
    const m = await user.api('/me/messages').post({ subject: 'props', singleValueExtendedProperties: [{ id: sid, value: 'Green' }] });
    assert.equal(m.singleValueExtendedProperties, undefined);
    await user.api(`/me/messages/${m.id}`).patch({ multiValueExtendedProperties: [{ id: mid, value: ['red', 'blue'] }] });
    const e = await user.api(`/me/messages/${m.id}`).expand(`singleValueExtendedProperties($filter=id eq '${sid}'),multiValueExtendedProperties($filter=id eq '${mid}')`).get();
    assert.deepEqual(e.singleValueExtendedProperties, [{ id: sid, value: 'Green' }]);
    assert.deepEqual(e.multiValueExtendedProperties, [{ id: mid, value: ['red', 'blue'] }]);
    const f = await user.api('/me/messages').filter(`singleValueExtendedProperties/Any(ep: ep/id eq '${sid}' and ep/value eq 'green')`).get();
    assert.deepEqual(f.value.map((x: any) => x.id), [m.id]);
    await user.api(`/me/messages/${m.id}`).patch({ singleValueExtendedProperties: [{ id: sid, value: 'Blue' }] });
    const f2 = await user.api('/me/messages').filter(`singleValueExtendedProperties/Any(ep: ep/id eq '${sid}' and ep/value eq 'green')`).get();
    assert.equal(f2.value.length, 0);
  });

  test('beta actions: reportMessage, markAsJunk (deprecated), recall, unsubscribe; also under /v1.0', async () => {
    const beta = graphClient(s.url, t.user);
    const inbox = await user.api('/me/mailFolders/inbox/messages').top(3).get();
    const all = (await user.api('/me/mailFolders/inbox/messages').top(1000).get()).value;
    const [a, b] = inbox.value;
    const reported = await beta.api(`/me/messages/${a.id}/reportMessage`).version('beta').post({ IsMessageMoveRequested: true, ReportAction: 'junk' });
    assert.equal(reported.parentFolderId, (await user.api('/me/mailFolders/junkemail').get()).id);
    const junk = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${b.id}/markAsJunk`, { moveToJunk: true });
    assert.equal(junk.status, 202);
    // Spec mail §4.3: past 30 December 2025 the deprecated actions return no data.
    assert.equal(junk.body, undefined);
    const bad = await call(s.url, t.user, 'POST', `/beta/me/messages/${inbox.value[2].id}/reportMessage`, { ReportAction: 'spam' });
    assert.equal(bad.status, 400);

    // Recall withdraws the unread delivered copy.
    const subject = 'recall me';
    await user.api('/me/sendMail').post({ message: { subject, toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] } });
    assert.equal((await admin.api('/me/mailFolders/inbox/messages').filter(`subject eq '${subject}'`).get()).value.length, 1);
    const sent = (await user.api('/me/mailFolders/sentitems/messages').filter(`subject eq '${subject}'`).get()).value[0];
    const rc = await call(s.url, t.user, 'POST', `/beta/me/mailFolders/sentitems/messages/${sent.id}/recall`);
    assert.equal(rc.status, 202);
    assert.equal((await admin.api('/me/mailFolders/inbox/messages').filter(`subject eq '${subject}'`).get()).value.length, 0);

    const listMail = (await user.api('/me/messages').filter("from/emailAddress/address eq 'travel@margie.example'").top(1000).get()).value.filter((x: any) => x.unsubscribeEnabled);
    assert.ok(listMail.length > 0);
    const un = await call(s.url, t.user, 'POST', `/beta/me/messages/${listMail[0].id}/unsubscribe`);
    assert.equal(un.status, 202);
    const trash = await user.api('/me/mailFolders/deleteditems/messages').filter(`internetMessageId eq '${listMail[0].internetMessageId}'`).get();
    assert.equal(trash.value.length, 1);
    const outbound = await listOutboundMail(s.server.ctx, demoTenant.id);
    assert.ok(outbound.some((o) => o.recipients.includes('unsubscribe@margie.example')));
    const notList = all.find((x: any) => !x.unsubscribeEnabled && x.id !== a.id && x.id !== b.id)!;
    const un2 = await call(s.url, t.user, 'POST', `/beta/me/messages/${notList.id}/unsubscribe`);
    assert.equal(un2.status, 400);
  });
});
