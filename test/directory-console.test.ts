/**
 * Console pages of the directory (issue 27 item 8): users, groups with members, applications
 * (secret hints, certificates, never a secret) and service principals with their application
 * permissions; behind the control key; values escaped.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { userToken } from './helpers/auth.ts';
import { demoAdmin, demoServicePrincipal, demoTenant } from '../src/seed/demo.ts';

let s: TestServer;
let token: string;
before(async () => {
  s = await startTestServer();
  token = await userToken(s.url, { username: demoAdmin.userPrincipalName, password: demoAdmin.password }, ['api://stratus/mail/.default']);
});
after(async () => {
  await s?.close();
});

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const r = await fetch(`${s.url}/v1.0${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

async function page(path: string): Promise<string> {
  const r = await s.control(`/_stratus/console${path}`);
  assert.equal(r.status, 200, path);
  assert.match(r.headers.get('content-type') ?? '', /text\/html/);
  return r.text();
}

test('directory pages list users, groups and members, applications with secret hints, service principals with permissions; markup is escaped', async () => {
  const user = await api('POST', '/users', {
    accountEnabled: true,
    displayName: '<script>alert(1)</script>',
    mailNickname: 'consoleuser',
    userPrincipalName: `consoleuser@${demoTenant.domain}`,
    passwordProfile: { password: 'Console-Pass-1' },
  });
  const group = await api('POST', '/groups', { displayName: 'Console group', mailEnabled: false, mailNickname: 'cg', securityEnabled: true });
  await api('POST', `/groups/${group.id}/members/$ref`, { '@odata.id': `${s.url}/v1.0/directoryObjects/${user.id}` });
  const app = await api('POST', '/applications', { displayName: 'Console app', web: { redirectUris: ['https://console.example/cb'] } });
  const secret = await api('POST', `/applications/${app.id}/addPassword`, {});

  const users = await page('/directory/users');
  assert.ok(users.includes(`consoleuser@${demoTenant.domain}`));
  assert.ok(users.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(!users.includes('<script>alert(1)'), 'no markup from the store');
  const groups = await page('/directory/groups');
  assert.ok(groups.includes('Console group'));
  assert.ok(groups.includes(`consoleuser@${demoTenant.domain}`), 'the member is listed under its group');
  const apps = await page('/directory/applications');
  assert.ok(apps.includes(app.appId));
  assert.ok(apps.includes('https://console.example/cb'));
  assert.ok(apps.includes(`${secret.hint}…`));
  assert.ok(!apps.includes(secret.secretText), 'never the secret');
  assert.ok(apps.includes('not created'), 'no service principal yet');
  const sps = await page('/directory/service-principals');
  assert.ok(sps.includes(demoServicePrincipal.appId));
  assert.ok(sps.includes('Mail.Send'), "the demo principal's application permissions");
  assert.ok(sps.includes('Stratus Mail and Directory API'));
  const index = await page('/directory');
  assert.match(index, /Users<\/a>: \d+/);

  // The request log shows the addPassword answer with its secret redacted, and the new user's password too.
  const log = (await (await s.control('/_stratus/requests?limit=200')).json()) as any;
  const entries: any[] = log.requests ?? log.value ?? log;
  const added = entries.find((e) => String(e.url).endsWith('/addPassword'));
  assert.ok(added, 'the addPassword call is logged');
  assert.match(added.responseBody, /"secretText":"\[redacted\]"/);
  assert.ok(!added.responseBody.includes(secret.secretText));
  const createdUser = entries.find((e) => e.method === 'POST' && String(e.url).endsWith('/v1.0/users'));
  assert.match(createdUser.requestBody, /"password":"\[redacted\]"/);

  const anonymous = await fetch(`${s.url}/_stratus/console/directory/users`);
  assert.equal(anonymous.status, 401);
  await anonymous.arrayBuffer();
});
