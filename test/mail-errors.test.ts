/**
 * Mail errors, permissions and limits (reference mail.md §8, §9): the error envelope, 401s,
 * `/me` with an app token, app access through `/users/{id|upn}`, scopes per method, one user
 * never reading another's mailbox, tenant isolation, and the per-app-and-mailbox throttle.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { tokens, call, graphClient } from './helpers/mail.ts';
import { userToken, identities } from './helpers/auth.ts';
import { demoAdmin, demoUser } from '../src/seed/demo.ts';

describe('mail errors and permissions', () => {
  let s: TestServer;
  let t: Awaited<ReturnType<typeof tokens>>;
  before(async () => {
    s = await startTestServer({ settings: { mailRequestsPerWindow: 1000, mailWindowSeconds: 60 } });
    t = await tokens(s.url);
  });
  after(async () => {
    await s?.close();
  });

  test('401 without or with a bad token, in the mail envelope', async () => {
    const none = await call(s.url, undefined, 'GET', '/v1.0/me/messages', undefined, { 'client-request-id': 'abc-123' });
    assert.equal(none.status, 401);
    assert.equal(none.body.error.code, 'InvalidAuthenticationToken');
    assert.equal(none.body.error.message, 'Access token is empty.');
    assert.equal(none.body.error.innerError['client-request-id'], 'abc-123');
    assert.match(none.body.error.innerError.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    assert.equal(none.headers.get('client-request-id'), 'abc-123');
    const bad = await call(s.url, 'garbage', 'GET', '/v1.0/me/messages');
    assert.equal(bad.status, 401);
    const arm = await userToken(s.url, identities.user, ['api://stratus/arm/user_impersonation']);
    assert.equal((await call(s.url, arm, 'GET', '/v1.0/me/messages')).status, 401);
  });

  test('/me with an app token; apps use /users/{id | upn}', async () => {
    const me = await call(s.url, t.app, 'GET', '/v1.0/me/messages');
    assert.equal(me.status, 400);
    assert.equal(me.body.error.code, 'BadRequest');
    assert.equal(me.body.error.message, '/me request is only valid with delegated authentication flow.');
    const byUpn = await call(s.url, t.app, 'GET', `/v1.0/users/${demoUser.userPrincipalName}/messages?$top=2`);
    assert.equal(byUpn.status, 200);
    assert.equal(byUpn.body.value.length, 2);
    const app = graphClient(s.url, t.app);
    const byId = await app.api(`/users/${demoAdmin.id}/mailFolders/inbox/messages`).top(1).get();
    assert.equal(byId.value.length, 1);
    await app.api(`/users/${demoAdmin.id}/sendMail`).post({ message: { subject: 'from the app', toRecipients: [{ emailAddress: { address: demoUser.userPrincipalName } }] } });
    const got = await app.api(`/users/${demoUser.id}/messages`).filter("subject eq 'from the app'").get();
    assert.equal(got.value.length, 1);
    assert.equal(got.value[0].from.emailAddress.address, demoAdmin.userPrincipalName);
  });

  test('a user never reads another mailbox; other tenants are invisible', async () => {
    const other = await call(s.url, t.user, 'GET', `/v1.0/users/${demoAdmin.id}/messages`);
    assert.equal(other.status, 403);
    assert.equal(other.body.error.code, 'ErrorAccessDenied');
    const own = await call(s.url, t.user, 'GET', `/v1.0/users/${demoUser.userPrincipalName}/messages?$top=1`);
    assert.equal(own.status, 200);
    const eve = await userToken(s.url, identities.eve, ['api://stratus/mail/Mail.ReadWrite']);
    const cross = await call(s.url, eve, 'GET', `/v1.0/users/${demoUser.id}/messages`);
    assert.equal(cross.status, 404);
    const eveOwn = await call(s.url, eve, 'GET', '/v1.0/me/messages');
    assert.equal(eveOwn.status, 200);
    assert.equal(eveOwn.body.value.length, 0);
    const m = (await call(s.url, t.user, 'GET', '/v1.0/me/messages?$top=1')).body.value[0];
    const steal = await call(s.url, eve, 'GET', `/v1.0/me/messages/${m.id}`);
    assert.equal(steal.status, 404);
    assert.equal(steal.body.error.code, 'ErrorItemNotFound');
  });

  test('scopes per method: Mail.Read reads but cannot write or send', async () => {
    assert.equal((await call(s.url, t.userRead, 'GET', '/v1.0/me/messages?$top=1')).status, 200);
    const w = await call(s.url, t.userRead, 'POST', '/v1.0/me/messages', { subject: 'x' });
    assert.equal(w.status, 403);
    assert.equal(w.body.error.code, 'ErrorAccessDenied');
    const sendOnly = await userToken(s.url, identities.user, ['api://stratus/mail/Mail.Send']);
    const sm = await call(s.url, sendOnly, 'POST', '/v1.0/me/sendMail', { message: { subject: 'x', toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] } });
    assert.equal(sm.status, 202);
    assert.equal(sm.body, undefined);
    assert.equal((await call(s.url, sendOnly, 'GET', '/v1.0/me/messages')).status, 403);
    const unknown = await call(s.url, t.user, 'GET', '/v1.0/me/nothing');
    assert.equal(unknown.status, 400);
  });
});

describe('mail throttling', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ settings: { mailRequestsPerWindow: 3, mailWindowSeconds: 60 } });
  });
  after(async () => {
    await s?.close();
  });

  test('429 ApplicationThrottled with Retry-After per app and mailbox; the window ends when the clock moves', async () => {
    const tok = await userToken(s.url, identities.user, ['api://stratus/mail/Mail.Read']);
    for (let i = 0; i < 3; i++) assert.equal((await call(s.url, tok, 'GET', '/v1.0/me/messages?$top=1')).status, 200);
    const r = await call(s.url, tok, 'GET', '/v1.0/me/messages?$top=1');
    assert.equal(r.status, 429);
    assert.equal(r.body.error.code, 'ApplicationThrottled');
    assert.equal(r.body.error.innerError, undefined, 'throttling errors carry no innerError (reference §8.1)');
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    // Another mailbox has its own budget.
    const admin = await userToken(s.url, identities.admin, ['api://stratus/mail/Mail.Read']);
    assert.equal((await call(s.url, admin, 'GET', '/v1.0/me/messages?$top=1')).status, 200);
    await s.control(`/_stratus/clock`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ advanceSeconds: 61 }) });
    assert.equal((await call(s.url, tok, 'GET', '/v1.0/me/messages?$top=1')).status, 200);
  });
});
