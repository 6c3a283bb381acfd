/**
 * Mail: the headline cycle with the official client — draft, edit, send, delivery into the
 * colleague's Inbox, reply, thread — plus the rules of spec mail §2.3 / §3 on drafts, sending
 * and ids (move / copy with and without immutable ids), on SQLite and PostgreSQL.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { graphClient, tokens, call } from './helpers/mail.ts';
import { demoAdmin, demoTenant, demoUser } from '../src/seed/demo.ts';
import { listOutboundMail } from '../src/services/mail/outbound.ts';
import type { Client } from '@microsoft/microsoft-graph-client';

describe('mail: draft, send, deliver, reply', () => {
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

  test('user drafts to the administrator, edits, sends; the administrator replies; the thread holds', async () => {
    const draft = await user.api('/me/messages').post({ subject: 'Lunch plans', body: { contentType: 'Text', content: 'Shall we meet at noon?' }, toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }], importance: 'High' });
    assert.equal(draft.isDraft, true);
    assert.equal(draft.importance, 'high');
    assert.equal(draft.toRecipients[0].emailAddress.name, demoAdmin.displayName);
    assert.equal(draft.from, null);
    assert.match(draft.internetMessageId, /^<.+@stratus\.test>$/);
    const drafts = await user.api('/me/mailFolders/drafts').get();
    assert.equal(draft.parentFolderId, drafts.id);

    assert.equal((await user.api(`/me/messages/${draft.id}`).get()).bodyPreview, 'Shall we meet at noon?');
    const edited = await user.api(`/me/messages/${draft.id}`).patch({ subject: 'Lunch plans (updated)', body: { contentType: 'html', content: '<p>Shall we meet at <b>12:30</b>?</p>' } });
    assert.equal(edited.subject, 'Lunch plans (updated)');
    assert.notEqual(edited.changeKey, draft.changeKey);
    assert.equal(edited['@odata.etag'], `W/"${edited.changeKey}"`);
    assert.equal(edited.bodyPreview, 'Shall we meet at 12:30?');
    // A later read renders the new version's preview, not the one read before the edit.
    assert.equal((await user.api(`/me/messages/${draft.id}`).get()).bodyPreview, 'Shall we meet at 12:30?');
    assert.match(edited.body.content, /^<html>\r\n<head>/);

    const before = await admin.api('/me/mailFolders/inbox').get();
    await user.api(`/me/messages/${draft.id}/send`).post(null);
    // The draft is gone (its REST id changed when it moved to Sent Items).
    await assert.rejects(user.api(`/me/messages/${draft.id}`).get(), (e: any) => e.statusCode === 404 && e.code === 'ErrorItemNotFound');
    const sent = await user.api('/me/mailFolders/sentitems/messages').filter(`internetMessageId eq '${draft.internetMessageId}'`).get();
    assert.equal(sent.value.length, 1);
    assert.equal(sent.value[0].isDraft, false);
    assert.equal(sent.value[0].from.emailAddress.address, demoUser.userPrincipalName);

    const inbox = await admin.api('/me/mailFolders/inbox/messages').filter(`internetMessageId eq '${draft.internetMessageId}'`).get();
    assert.equal(inbox.value.length, 1);
    const received = inbox.value[0];
    assert.notEqual(received.id, sent.value[0].id);
    assert.equal(received.isRead, false);
    assert.equal(received.isDraft, false);
    assert.ok(received.receivedDateTime);
    assert.equal(received.subject, 'Lunch plans (updated)');
    assert.equal(received.conversationId, draft.conversationId);
    const afterCounts = await admin.api('/me/mailFolders/inbox').get();
    assert.equal(afterCounts.totalItemCount, before.totalItemCount + 1);
    assert.equal(afterCounts.unreadItemCount, before.unreadItemCount + 1);

    await admin.api(`/me/messages/${received.id}/reply`).post({ comment: 'Noon works for me.' });
    const thread = await user.api('/me/mailFolders/inbox/messages').filter(`conversationId eq '${draft.conversationId}'`).get();
    assert.equal(thread.value.length, 1);
    const reply = thread.value[0];
    assert.equal(reply.subject, 'RE: Lunch plans (updated)');
    assert.equal(reply.from.emailAddress.address, demoAdmin.userPrincipalName);
    assert.match(reply.bodyPreview, /^Noon works for me\./);
    assert.ok(Buffer.from(reply.conversationIndex, 'base64').length === Buffer.from(draft.conversationIndex, 'base64').length + 5);
    const adminSent = await admin.api('/me/mailFolders/sentitems/messages').filter(`conversationId eq '${draft.conversationId}'`).get();
    assert.equal(adminSent.value.length, 1);

    // Forward to an outside address: recorded as outbound.
    await user.api(`/me/messages/${reply.id}/forward`).post({ comment: 'FYI', toRecipients: [{ emailAddress: { address: 'friend@elsewhere.example', name: 'Friend' } }] });
    const out = await listOutboundMail(s.server.ctx, demoTenant.id);
    assert.ok(out.some((o) => o.recipients.includes('friend@elsewhere.example') && o.subject === 'FW: RE: Lunch plans (updated)'));
  });

  test('createReply / createReplyAll / createForward give drafts in the conversation (201)', async () => {
    const inbox = await user.api('/me/mailFolders/inbox/messages').top(1).get();
    const orig = inbox.value[0];
    const r = await user.api(`/me/messages/${orig.id}/createReply`).post({ comment: 'Thanks' });
    assert.equal(r.isDraft, true);
    assert.equal(r.conversationId, orig.conversationId);
    assert.equal(r.toRecipients[0].emailAddress.address, orig.from.emailAddress.address);
    const f = await user.api(`/me/messages/${orig.id}/createForward`).post({ toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] });
    assert.match(f.subject, /^FW: /);
    const ra = await user.api(`/me/messages/${orig.id}/createReplyAll`).post({});
    assert.match(ra.subject, /^RE: /);
    const bad = await call(s.url, t.user, 'POST', `/v1.0/me/messages/${orig.id}/createReply`, { comment: 'x', message: { body: { content: 'y' } } });
    assert.equal(bad.status, 400);
  });

  test('sendMail delivers and saves to Sent Items unless saveToSentItems is false', async () => {
    const subject = 'sendMail ' + Date.now();
    await user.api('/me/sendMail').post({ message: { subject, toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }], body: { contentType: 'text', content: 'hello' } } });
    const got = await admin.api('/me/messages').filter(`subject eq '${subject}'`).get();
    assert.equal(got.value.length, 1);
    const sent = await user.api('/me/mailFolders/sentitems/messages').filter(`subject eq '${subject}'`).get();
    assert.equal(sent.value.length, 1);
    const subject2 = subject + ' nosave';
    await user.api('/me/sendMail').post({ message: { subject: subject2, toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] }, saveToSentItems: 'false' });
    assert.equal((await user.api('/me/messages').filter(`subject eq '${subject2}'`).get()).value.length, 0);
    assert.equal((await admin.api('/me/messages').filter(`subject eq '${subject2}'`).get()).value.length, 1);
    const inside = await call(s.url, t.user, 'POST', '/v1.0/me/sendMail', { message: { subject: 'x', saveToSentItems: false, toRecipients: [{ emailAddress: { address: 'a@b.example' } }] } });
    assert.equal(inside.status, 400);
    assert.equal(inside.body.error.code, 'RequestBodyRead');
    const none = await call(s.url, t.user, 'POST', '/v1.0/me/sendMail', { message: { subject: 'x' } });
    assert.equal(none.status, 400);
    assert.equal(none.body.error.code, 'ErrorInvalidRecipients');
    assert.ok(none.body.error.innerError['request-id']);
  });

  test('draft-only properties, from, recipients cap, custom headers', async () => {
    const sent = (await user.api('/me/mailFolders/sentitems/messages').top(1).get()).value[0];
    const r = await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${sent.id}`, { subject: 'changed' });
    assert.equal(r.status, 400);
    assert.equal(r.body.error.code, 'ErrorInvalidPropertySet');
    assert.equal(r.body.error.message, 'Message is not draft.');
    const ok = await user.api(`/me/messages/${sent.id}`).patch({ isRead: false, categories: ['Blue category'], flag: { flagStatus: 'flagged' } });
    assert.equal(ok.isRead, false);
    assert.deepEqual(ok.categories, ['Blue category']);

    const from = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'x', from: { emailAddress: { address: demoAdmin.userPrincipalName } } });
    assert.equal(from.status, 403);
    assert.equal(from.body.error.code, 'ErrorSendAsDenied');

    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ emailAddress: { address: `r${i}@example.com` } }));
    const ok500 = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'x', toRecipients: many(300), ccRecipients: many(150), bccRecipients: many(50) });
    assert.equal(ok500.status, 201);
    const over = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'x', toRecipients: many(300), ccRecipients: many(150), bccRecipients: many(51) });
    assert.equal(over.status, 400);
    assert.equal(over.body.error.code, 'ErrorExceededMaxRecipientLimit');

    const hdr = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'h', internetMessageHeaders: [{ name: 'x-custom-one', value: 'v1' }] });
    assert.equal(hdr.status, 201);
    assert.equal(hdr.body.internetMessageHeaders, undefined);
    const sel = await user.api(`/me/messages/${hdr.body.id}`).select('internetMessageHeaders,subject').get();
    assert.deepEqual(sel.internetMessageHeaders, [{ name: 'x-custom-one', value: 'v1' }]);
    const badHdr = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'h', internetMessageHeaders: [{ name: 'Custom', value: 'v1' }] });
    assert.equal(badHdr.status, 400);
    const later = await call(s.url, t.user, 'PATCH', `/v1.0/me/messages/${hdr.body.id}`, { internetMessageHeaders: [{ name: 'x-a', value: 'b' }] });
    assert.equal(later.status, 400);
    const unknown = await call(s.url, t.user, 'POST', '/v1.0/me/messages', { subject: 'h', colour: 'red' });
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body.error.code, 'RequestBodyRead');

    const long = 'word '.repeat(100);
    const p = await user.api('/me/messages').post({ body: { contentType: 'html', content: `<p>${long}</p>` } });
    assert.equal(p.bodyPreview.length, 255);
    assert.equal(p.uniqueBody, undefined);
    const ub = await user.api(`/me/messages/${p.id}`).select('uniqueBody').get();
    assert.ok(ub.uniqueBody.content.includes('word'));
    const text = await user.api(`/me/messages/${p.id}`).header('Prefer', 'outlook.body-content-type="text"').get();
    assert.equal(text.body.contentType, 'text');
    assert.ok(!text.body.content.includes('<p>'));
    const pref = await call(s.url, t.user, 'GET', `/v1.0/me/messages/${p.id}`, undefined, { Prefer: 'outlook.body-content-type="text"' });
    assert.equal(pref.headers.get('preference-applied'), 'outlook.body-content-type="text"');

    // Mentions: in bodyPreview, mentionsPreview set by the server, the navigation only with $expand.
    const men = await user.api('/me/messages').version('beta').post({ subject: 'mention', body: { contentType: 'text', content: 'please review' }, mentions: [{ mentioned: { name: 'Stratus Administrator', address: demoAdmin.userPrincipalName } }] });
    assert.equal(men.bodyPreview, '@Stratus Administrator please review');
    assert.deepEqual(men.mentionsPreview, { isMentioned: true });
    assert.equal(men.mentions, undefined);
    const menExp = await user.api(`/me/messages/${men.id}`).version('beta').expand('mentions').get();
    assert.equal(menExp.mentions[0].mentioned.address, demoAdmin.userPrincipalName);
  });

  test('move and copy change the id; immutable ids stay; permanent delete hides the message', async () => {
    const m = await user.api('/me/messages').post({ subject: 'movable' });
    const moved = await user.api(`/me/messages/${m.id}/move`).post({ destinationId: 'archive' });
    assert.notEqual(moved.id, m.id);
    await assert.rejects(user.api(`/me/messages/${m.id}`).get(), (e: any) => e.statusCode === 404);
    const copy = await user.api(`/me/messages/${moved.id}/copy`).post({ destinationId: 'inbox' });
    assert.notEqual(copy.id, moved.id);

    const imm = await user.api('/me/messages').header('Prefer', 'IdType="ImmutableId"').post({ subject: 'immutable' });
    const immMoved = await user.api(`/me/messages/${imm.id}/move`).header('Prefer', 'IdType="ImmutableId"').post({ destinationId: 'archive' });
    assert.equal(immMoved.id, imm.id);
    const again = await user.api(`/me/messages/${imm.id}`).header('Prefer', 'IdType="ImmutableId"').get();
    assert.equal(again.subject, 'immutable');
    const immCopy = await user.api(`/me/messages/${imm.id}/copy`).header('Prefer', 'IdType="ImmutableId"').post({ destinationId: 'inbox' });
    assert.notEqual(immCopy.id, imm.id);

    await user.api(`/me/messages/${copy.id}/permanentDelete`).post(null);
    await assert.rejects(user.api(`/me/messages/${copy.id}`).get(), (e: any) => e.statusCode === 404);
    await user.api(`/me/messages/${moved.id}`).delete();
    await assert.rejects(user.api(`/me/mailFolders/archive/messages/${moved.id}`).get(), (e: any) => e.statusCode === 404);
    const malformed = await call(s.url, t.user, 'GET', '/v1.0/me/messages/not!an!id');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.error.code, 'ErrorInvalidIdMalformed');
  });

  test('state survives a restart', async () => {
    const m = await user.api('/me/messages').post({ subject: 'durable' });
    await s.restart();
    const got = await graphClient(s.url, t.user).api(`/me/messages/${m.id}`).get();
    assert.equal(got.subject, 'durable');
  });
});
