/**
 * The data kinds of a world file (issue 28 item 1): a world written in the test with a mailbox
 * (a well-known folder and folders of its own holding messages, one with an attachment, one
 * from an `.eml` file), a data
 * platform workspace (role assignments, a folder, an eventstream), an automation account with a runbook and a
 * webhook, a data share account with a share and its runs, a billing account (a declared and
 * generated transactions) and an analytics dataflow, used through the official mail
 * client and plain HTTPS as the areas' tests do; the export round trip (export → a fresh start
 * from it → export again); bad files (dangling references, duplicate ids) refuse with file, line
 * and path and change nothing. Both databases.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { bothDatabases, startTestServerOn } from './helpers/databases.ts';
import { exportedWorld as exported } from './helpers/world.ts';
import { tokenRequest } from './helpers/auth.ts';
import { graphClient, mailScopes } from './helpers/mail.ts';
import { call as platformCall } from './helpers/platform.ts';
import { stableUuid } from '../src/core/ids.ts';
import { readWorld } from '../src/world/file.ts';
import { resolveWorld } from '../src/world/load.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-world-data-'));
const worldFile = path.join(dir, 'fabrikam.yaml');
const hookToken = 'fabrikam-cleanup-hook-token-0000000000';
const cliAppId = '2c4e6a8b-1d3f-4a5b-8c7d-9e0f1a2b3c4d';
const world = `clock: 2026-03-01T09:00:00Z
tenants:
  - domain: fabrikam.test
    users:
      - { userPrincipalName: ann@fabrikam.test, displayName: Ann, password: Ann-Pass-1, tenantAdmin: true }
      - { userPrincipalName: ben@fabrikam.test, displayName: Ben, password: Ben-Pass-1 }
    applications:
      - { displayName: fabrikam-cli, appId: ${cliAppId}, publicClient: { redirectUris: [http://localhost] } }
    subscriptions:
      - displayName: Fabrikam Dev
        roleAssignments:
          - { principal: ann@fabrikam.test, role: Owner }
        resourceGroups:
          - name: ops-rg
            location: westus
            automationAccounts:
              - name: ops-auto
                runbooks: [{ name: cleanup, properties: { description: Cleans up. } }]
                webhooks:
                  - name: cleanup-hook
                    token: ${hookToken}
                    properties: { runbook: { name: cleanup }, expiryTime: 2027-01-01T00:00:00Z, parameters: { Mode: full } }
            dataShareAccounts:
              - name: fab-share
                shares:
                  - name: orders
                    properties: { description: Orders by day., terms: Internal. }
                    synchronizations:
                      - { synchronizationMode: FullSync, status: Succeeded, startTime: 2026-02-01T01:00:00Z, endTime: 2026-02-01T01:02:00Z, durationMs: 120000, consumerName: Zed, consumerEmail: zed@example.test }
                      - { synchronizationMode: Incremental, status: Failed, message: Source unreadable., startTime: 2026-02-02T01:00:00Z, endTime: 2026-02-02T01:00:10Z, durationMs: 10000 }
    mailboxes:
      - user: ann@fabrikam.test
        folders:
          - wellKnownName: inbox
            messages:
              - subject: Welcome
                body: { contentType: text, content: Hello Ann }
                from: { emailAddress: { name: Ben, address: ben@fabrikam.test } }
                toRecipients: [{ emailAddress: { name: Ann, address: ann@fabrikam.test } }]
                receivedDateTime: 2026-02-27T08:00:00Z
                categories: [Blue category]
                attachments: [{ name: notes.txt, contentType: text/plain, contentBytes: aGVsbG8= }]
          - displayName: Projects
            messages:
              - { subject: Plan, isRead: true, body: { contentType: html, content: "<p>The plan</p>" }, receivedDateTime: 2026-02-26T08:00:00Z }
          - { displayName: Archive 2025, parentFolderId: Projects }
          - { displayName: Imported, messages: [{ eml: mail/hello.eml, isRead: true }] }
    billingAccounts:
      - name: '80000001'
        displayName: Fabrikam Billing
        roleAssignments: [{ principal: ann@fabrikam.test, role: Billing account owner }]
        billingProfiles:
          - { name: FAB-PROFILE, displayName: Fabrikam Engineering, currency: USD, invoiceSections: [{ name: FAB-SECTION, displayName: Platform }] }
        invoices:
          - name: G100000001
            billingProfile: FAB-PROFILE
            invoiceDate: 2026-02-01T00:00:00Z
            dueDate: 2026-03-01T00:00:00Z
            invoicePeriodStartDate: 2026-01-01T00:00:00Z
            invoicePeriodEndDate: 2026-01-31T00:00:00Z
            status: Due
            currency: USD
            transactions:
              - name: 0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0
                properties: { kind: All, date: 2026-01-15T00:00:00Z, invoice: G100000001, transactionType: Purchase, productDescription: Support plan, billingCurrency: USD, transactionAmount: { currency: USD, value: 108 } }
            generate: { billed: 5, pending: 1, seed: 42 }
    analyticsWorkspaces: [{ name: Fabrikam BI }]
    dataflows:
      - { name: Orders - Daily, configuredBy: ann@fabrikam.test, workspaceId: Fabrikam BI, modifiedDateTime: 2026-02-20T10:00:00Z }
    workspaces:
      - displayName: Fabrikam Analytics
        description: Team analytics.
        roleAssignments:
          - { principal: ann@fabrikam.test, role: Admin }
          - { principal: ben@fabrikam.test, role: Viewer }
        folders: [{ displayName: Reports }]
        items:
          - { type: Eventstream, displayName: orders-stream, description: Orders as they come., folderId: Reports, createdBy: ann@fabrikam.test }
`;
fs.writeFileSync(worldFile, world);
fs.mkdirSync(path.join(dir, 'mail'));
fs.writeFileSync(
  path.join(dir, 'mail', 'hello.eml'),
  'From: "Carol Vendor" <carol@supplier.example>\r\nTo: Ann <ann@fabrikam.test>\r\nSubject: Hello from an eml file\r\nDate: Tue, 24 Feb 2026 10:30:00 +0000\r\nMessage-ID: <hello-1@supplier.example>\r\nX-Stratus-Test: eml\r\nContent-Type: text/plain\r\n\r\nThe quarterly catalogue is attached.\r\n',
);
const tenantId = stableUuid('world-tenant', 'fabrikam.test');
const subscriptionId = stableUuid('world-subscription', tenantId, 'Fabrikam Dev');
const workspaceId = stableUuid('world-workspace', tenantId, 'Fabrikam Analytics');
const rg = `/subscriptions/${subscriptionId}/resourceGroups/ops-rg`;
const ann = { username: 'ann@fabrikam.test', password: 'Ann-Pass-1', tenant: 'fabrikam.test' };
const ben = { username: 'ben@fabrikam.test', password: 'Ben-Pass-1', tenant: 'fabrikam.test' };

let s: TestServer;
before(async () => {
  s = await startTestServer({ env: { STRATUS_WORLD: worldFile } });
});
after(async () => {
  await s?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A delegated token of a user of the world's tenant, through its public client. */
async function userToken(base: string, u: { username: string; password: string; tenant: string }, scopes: string[]): Promise<string> {
  const r = await tokenRequest(base, { grant_type: 'password', client_id: cliAppId, username: u.username, password: u.password, scope: scopes.join(' ') }, u.tenant);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.access_token as string;
}

/** An ARM call over HTTPS: `{status, body}`. */
async function arm(method: string, p: string, token: string, api: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.url}${p}?api-version=${api}`, { method, headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

test('the mailbox: folders of its own and well-known ones hold the messages, attachments and categories, through the official client', async () => {
  const mail = graphClient(s.url, await userToken(s.url, ann, mailScopes));
  const inbox = await mail.api('/me/mailFolders/inbox/messages').select('subject,from,categories,hasAttachments,receivedDateTime').get();
  assert.deepEqual(
    inbox.value.map((m: any) => [m.subject, m.from.emailAddress.address, m.categories, m.hasAttachments, m.receivedDateTime]),
    [['Welcome', 'ben@fabrikam.test', ['Blue category'], true, '2026-02-27T08:00:00Z']],
  );
  const atts = await mail.api(`/me/messages/${inbox.value[0].id}/attachments`).get();
  assert.deepEqual(atts.value.map((a: any) => [a.name, Buffer.from(a.contentBytes, 'base64').toString()]), [['notes.txt', 'hello']]);
  const all = await mail.api('/me/mailFolders').top(50).get();
  const folders = { value: all.value.filter((f: any) => f.displayName === 'Projects') };
  assert.equal(folders.value.length, 1, JSON.stringify(all.value.map((f: any) => f.displayName)));
  assert.equal(folders.value[0].totalItemCount, 1);
  assert.equal(folders.value[0].childFolderCount, 1);
  const plan = await mail.api(`/me/mailFolders/${folders.value[0].id}/messages`).get();
  assert.deepEqual(plan.value.map((m: any) => [m.subject, m.isRead, m.body.content]), [['Plan', true, '<p>The plan</p>']]);
  const children = await mail.api(`/me/mailFolders/${folders.value[0].id}/childFolders`).get();
  assert.deepEqual(children.value.map((f: any) => f.displayName), ['Archive 2025']);
  const imported = all.value.find((f: any) => f.displayName === 'Imported');
  const eml = (await mail.api(`/me/mailFolders/${imported.id}/messages`).select('subject,from,receivedDateTime,internetMessageId,isRead,body').get()).value;
  assert.deepEqual(
    eml.map((m: any) => [m.subject, m.from.emailAddress.address, m.from.emailAddress.name, m.receivedDateTime, m.internetMessageId, m.isRead, m.body.content]),
    [['Hello from an eml file', 'carol@supplier.example', 'Carol Vendor', '2026-02-24T10:30:00Z', '<hello-1@supplier.example>', true, 'The quarterly catalogue is attached.']],
  );
  // Ben's mailbox is not in the file: it is made on first use, empty.
  const benMail = graphClient(s.url, await userToken(s.url, ben, mailScopes));
  assert.equal((await benMail.api('/me/messages').get()).value.length, 0);
});

test('the workspace, its role assignments and folder; the automation webhook; the data share runs', async () => {
  const annPlatform = await userToken(s.url, ann, ['api://stratus/platform/Item.ReadWrite.All']);
  const benPlatform = await userToken(s.url, ben, ['api://stratus/platform/Item.ReadWrite.All']);
  const mine = await platformCall(s.url, 'GET', '/v1/workspaces', benPlatform);
  assert.deepEqual(mine.body.value, [{ id: workspaceId, displayName: 'Fabrikam Analytics', description: 'Team analytics.', type: 'Workspace' }]);
  const folders = await platformCall(s.url, 'GET', `/v1/workspaces/${workspaceId}/folders`, annPlatform);
  assert.deepEqual(folders.body.value.map((f: any) => f.displayName), ['Reports']);
  const streams = await platformCall(s.url, 'GET', `/v1/workspaces/${workspaceId}/eventstreams`, benPlatform);
  assert.deepEqual(
    streams.body.value.map((e: any) => [e.displayName, e.description, e.folderId === folders.body.value[0].id, e.defaultIdentity.userDetails.userPrincipalName]),
    [['orders-stream', 'Orders as they come.', true, 'ann@fabrikam.test']],
  );
  const def = await platformCall(s.url, 'POST', `/v1/workspaces/${workspaceId}/eventstreams/${streams.body.value[0].id}/getDefinition`, annPlatform);
  assert.equal(def.status, 200, JSON.stringify(def.body));
  assert.deepEqual(def.body.definition.parts.map((p: any) => p.path).sort(), ['.platform', 'eventstream.json', 'eventstreamProperties.json']);
  const viewer = await platformCall(s.url, 'POST', `/v1/workspaces/${workspaceId}/eventstreams`, benPlatform, { displayName: 'es1' });
  assert.equal(viewer.status, 403, 'a Viewer does not create items');

  const hook = await fetch(`${s.url}/automation/webhooks?token=${hookToken}`, { method: 'POST' });
  assert.equal(hook.status, 202);
  assert.equal(((await hook.json()) as any).JobIds.length, 1);
  const annArm = await userToken(s.url, ann, ['api://stratus/arm/user_impersonation']);
  const account = await arm('GET', `${rg}/providers/Vendor.Automation/automationAccounts/ops-auto`, annArm, '2024-10-23');
  assert.equal(account.status, 200, JSON.stringify(account.body));
  assert.equal(account.body.location, 'westus', 'the account takes its group location');
  const runbook = await arm('GET', `${rg}/providers/Vendor.Automation/automationAccounts/ops-auto/runbooks/cleanup`, annArm, '2024-10-23');
  assert.equal(runbook.body.properties.description, 'Cleans up.');

  const runs = await arm('POST', `${rg}/providers/Vendor.DataShare/accounts/fab-share/shares/orders/listSynchronizations`, annArm, '2021-08-01');
  assert.equal(runs.status, 200, JSON.stringify(runs.body));
  assert.deepEqual(runs.body.value.map((r: any) => [r.status, r.synchronizationMode, r.durationMs]), [['Failed', 'Incremental', 10000], ['Succeeded', 'FullSync', 120000]]);
  const share = await arm('GET', `${rg}/providers/Vendor.DataShare/accounts/fab-share/shares/orders`, annArm, '2021-08-01');
  assert.equal(share.body.properties.terms, 'Internal.');
});

test('the billing account: its invoice lists the declared and generated transactions; the dataflow is listed', async () => {
  const annArm = await userToken(s.url, ann, ['api://stratus/arm/user_impersonation']);
  const txs = await arm('GET', '/providers/Vendor.Billing/billingAccounts/80000001/invoices/G100000001/transactions', annArm, '2024-04-01');
  assert.equal(txs.status, 200, JSON.stringify(txs.body));
  assert.equal(txs.body.value.length, 7, 'one declared and six generated');
  assert.ok(txs.body.value.some((t: any) => t.name === '0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0' && t.properties.productDescription === 'Support plan'));
  const benArm = await userToken(s.url, ben, ['api://stratus/arm/user_impersonation']);
  assert.equal((await arm('GET', '/providers/Vendor.Billing/billingAccounts/80000001/invoices/G100000001/transactions', benArm, '2024-04-01')).status, 403, 'no billing role: refused');
  const flows = await fetch(`${s.url}/v1.0/myorg/admin/dataflows`, { headers: { authorization: `Bearer ${await userToken(s.url, ann, ['api://stratus/analytics/Tenant.Read.All'])}` } });
  assert.equal(flows.status, 200);
  const body = (await flows.json()) as any;
  assert.deepEqual(body.value.map((d: any) => [d.name, d.configuredBy, d.workspaceId]), [['Orders - Daily', 'ann@fabrikam.test', stableUuid('world-analytics-workspace', tenantId, 'Fabrikam BI')]]);
});

test('export round trip: export → a fresh start from it (also on the other database) → export again gives the same document', async () => {
  const first = await exported(s);
  const t = first.doc.tenants[0];
  const group = t.subscriptions[0].resourceGroups[0];
  assert.equal(group.automationAccounts[0].webhooks[0].tokenHash.length, 64, 'the webhook token is exported as its hash');
  assert.equal(group.dataShareAccounts[0].shares[0].synchronizations.length, 2);
  assert.deepEqual(t.workspaces[0].roleAssignments, [{ principal: 'ann@fabrikam.test', role: 'Admin' }, { principal: 'ben@fabrikam.test', role: 'Viewer' }]);
  assert.deepEqual(t.mailboxes.map((m: any) => m.user), ['ann@fabrikam.test', 'ben@fabrikam.test']);
  assert.equal(t.mailboxes[0].folders.flatMap((f: any) => f.messages ?? []).length, 3, 'the .eml message is written out as a message');
  assert.equal(t.billingAccounts[0].invoices[0].transactions.length, 7, 'generated transactions are written out');
  assert.equal(t.dataflows.length, 1);
  assert.equal(t.workspaces[0].items[0].createdBy, 'ann@fabrikam.test');
  const file = path.join(dir, 'exported.yaml');
  fs.writeFileSync(file, first.text);
  // The other database too (test/helpers/databases.ts).
  for (const url of bothDatabases()) {
    const fresh = await startTestServerOn(url, { env: { STRATUS_WORLD: file } });
    try {
      assert.deepEqual((await exported(fresh)).doc, first.doc, `same document on ${url ? 'PostgreSQL' : 'SQLite'}`);
      // The exported webhook hash still answers the token.
      assert.equal((await fetch(`${fresh.url}/automation/webhooks?token=${hookToken}`, { method: 'POST' })).status, 202);
    } finally {
      await fresh.close();
    }
  }
});

test('bad data kinds refuse with file, line and path, and change nothing', async () => {
  const bad = (name: string, edit: (w: string) => string) => {
    const f = path.join(dir, name);
    fs.writeFileSync(f, edit(world));
    return f;
  };
  const cases: [string, string, RegExp][] = [
    [bad('mailbox-user.yaml', (w) => w.replace('- user: ann@fabrikam.test', '- user: carol@fabrikam.test')), 'no mailbox owner', /mailbox-user\.yaml:\d+:\d+: \/tenants\/0\/mailboxes\/0\/user: no user 'carol@fabrikam\.test'/],
    [bad('other-folder.yaml', (w) => w.replace('- subject: Welcome', '- subject: Welcome\n                parentFolderId: Projects')), 'a message naming another folder', /other-folder\.yaml:\d+:\d+: \/tenants\/0\/mailboxes\/0\/folders\/0\/messages\/0\/parentFolderId: 'Projects' is not the folder it is listed in/],
    [bad('parent.yaml', (w) => w.replace('parentFolderId: Projects }', 'parentFolderId: Nowhere }')), 'an unknown parent folder', /parent\.yaml:\d+:\d+: \/tenants\/0\/mailboxes\/0\/folders\/2\/parentFolderId: no folder 'Nowhere'/],
    [bad('ws-role.yaml', (w) => w.replace('principal: ben@fabrikam.test, role: Viewer', 'principal: carol@fabrikam.test, role: Viewer')), 'a workspace role naming an unknown user', /ws-role\.yaml:\d+:\d+: \/tenants\/0\/workspaces\/0\/roleAssignments\/1\/principal: no user or application 'carol@fabrikam\.test'/],
    [bad('runbook.yaml', (w) => w.replace('runbook: { name: cleanup }', 'runbook: { name: nightly }')), 'a webhook of an unknown runbook', /runbook\.yaml:\d+:\d+: \/tenants\/0\/subscriptions\/0\/resourceGroups\/0\/automationAccounts\/0\/webhooks\/0\/properties\/runbook\/name: no runbook 'nightly'/],
    [bad('dup-ws.yaml', (w) => w + `      - { id: ${workspaceId}, displayName: Copy }\n`), 'a duplicate workspace id', /dup-ws\.yaml:\d+:\d+: \/tenants\/0\/workspaces\/1: duplicate workspace id/],
    [bad('dup-share.yaml', (w) => w.replace('              - name: fab-share\n', '              - name: fab-share\n              - name: FAB-share\n')), 'a duplicate resource', /dup-share\.yaml:\d+:\d+: \/tenants\/0\/subscriptions\/0\/resourceGroups\/0\/dataShareAccounts\/1: duplicate resource/],
    [bad('profile.yaml', (w) => w.replace('billingProfile: FAB-PROFILE', 'billingProfile: NOPE')), 'an invoice of an unknown billing profile', /profile\.yaml:\d+:\d+: \/tenants\/0\/billingAccounts\/0\/invoices\/0\/billingProfile: no billing profile 'NOPE'/],
    [bad('dataflow.yaml', (w) => w.replace('workspaceId: Fabrikam BI', 'workspaceId: Nowhere')), 'a dataflow of an unknown workspace', /dataflow\.yaml:\d+:\d+: \/tenants\/0\/dataflows\/0\/workspaceId: no analytics workspace 'Nowhere'/],
    [bad('eml.yaml', (w) => w.replace('mail/hello.eml', 'mail/missing.eml')), 'an .eml file that is not there', /eml\.yaml:\d+:\d+: \/tenants\/0\/mailboxes\/0\/folders\/3\/messages\/0\/eml: cannot read 'mail\/missing\.eml'/],
    [bad('item-folder.yaml', (w) => w.replace('folderId: Reports', 'folderId: Nowhere')), 'an item in an unknown folder', /item-folder\.yaml:\d+:\d+: \/tenants\/0\/workspaces\/0\/items\/0\/folderId: no folder 'Nowhere'/],
    [bad('field.yaml', (w) => w.replace('isRead: true,', 'isRead: true, shoeSize: 42,')), 'an unknown message field', /field\.yaml:\d+:\d+: \/tenants\/0\/mailboxes\/0\/folders\/1\/messages\/0\/shoeSize: unknown field 'shoeSize'/],
  ];
  const before = (await exported(s)).doc;
  for (const [file, name, expected] of cases) {
    assert.throws(() => resolveWorld(readWorld([file])), (e: Error) => expected.test(e.message), name);
    const r = await s.control('/_stratus/world', { method: 'PUT', headers: { 'content-type': 'application/yaml' }, body: fs.readFileSync(file, 'utf8') });
    assert.equal(r.status, 400, name);
    if (name.includes('.eml')) assert.match(((await r.json()) as any).detail, /a world sent in a request cannot name files/);
  }
  assert.deepEqual((await exported(s)).doc, before, 'nothing changed');
});
