/**
 * Compatibility suite, mail part (issue 10 item 5): the official mail clients —
 * `@microsoft/microsoft-graph-client` and the Kiota-based `@microsoft/msgraph-sdk` — configured as
 * a user would, with nothing but
 *   - the base URL (and each client's host allow-list: `customHosts` / `allowedHosts`, which the
 *     README names),
 *   - CA trust (`NODE_EXTRA_CA_CERTS`, set by the test runner),
 *   - an `@azure/identity` credential (`ClientSecretCredential` for app-only,
 *     `UsernamePasswordCredential` for delegated) with `authorityHost` = Stratus and
 *     `disableInstanceDiscovery`,
 *   - `STRATUS_AUDIENCE_ALIASES=mail=https://graph.microsoft.com`, so the scope the clients ask for
 *     (`https://graph.microsoft.com/.default`, Kiota's default) is issued for the mail family.
 * No middleware, no scope override, no token written by hand. Each client lists with
 * `$select`/`$filter`/paging (its page iterator following `@odata.nextLink`), creates a draft,
 * sends it, replies, and runs delta rounds to the delta link — delegated under /me (graph client)
 * or /users/{upn} (Kiota has no /me package), and app-only under /users/{id}.
 */
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ClientSecretCredential, UsernamePasswordCredential, type TokenCredential } from '@azure/identity';
import { Client, PageIterator as GraphPageIterator } from '@microsoft/microsoft-graph-client';
import { TokenCredentialAuthenticationProvider } from '@microsoft/microsoft-graph-client/authProviders/azureTokenCredentials/index.js';
import { AzureIdentityAuthenticationProvider } from '@microsoft/kiota-authentication-azure';
import { createGraphServiceClient, GraphRequestAdapter, type GraphServiceClient } from '@microsoft/msgraph-sdk';
import '@microsoft/msgraph-sdk-users';
import { createMessageCollectionResponseFromDiscriminatorValue, type Message } from '@microsoft/msgraph-sdk/models/index.js';
import { createODataErrorFromDiscriminatorValue } from '@microsoft/msgraph-sdk/models/oDataErrors/index.js';
import { PageIterator as KiotaPageIterator } from '@microsoft/msgraph-sdk-core';
import { decodeJwt } from 'jose';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { demoAdmin, demoPublicClient, demoServicePrincipal, demoTenant, demoUser } from '../src/seed/demo.ts';

/** The mail audience the official clients ask for (`<uri>/.default`), given to Stratus as an alias. */
const mailAudience = 'https://graph.microsoft.com';

describe('official mail clients, configured with endpoint + CA + credential + alias only', () => {
  let s: TestServer;
  let host: string;
  const creds = {} as Record<'app' | 'user' | 'admin', TokenCredential>;

  before(async () => {
    s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: `mail=${mailAudience}` } });
    host = new URL(s.url).hostname;
    const options = { authorityHost: s.url, disableInstanceDiscovery: true };
    creds.app = new ClientSecretCredential(demoTenant.id, demoServicePrincipal.appId, demoServicePrincipal.secret, options);
    creds.user = new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, demoUser.userPrincipalName, demoUser.password, options);
    creds.admin = new UsernamePasswordCredential(demoTenant.id, demoPublicClient.appId, demoAdmin.userPrincipalName, demoAdmin.password, options);
  });
  after(async () => {
    await s?.close();
  });

  /** `@microsoft/microsoft-graph-client` as its README sets it up, plus `baseUrl` and `customHosts`. */
  function graphClient(credential: TokenCredential): Client {
    const authProvider = new TokenCredentialAuthenticationProvider(credential, { scopes: [`${mailAudience}/.default`] });
    return Client.initWithMiddleware({ authProvider, baseUrl: s.url, customHosts: new Set([host]) });
  }

  /** `@microsoft/msgraph-sdk` as its README sets it up (default scopes), plus `allowedHosts` and `baseUrl`. */
  function kiotaClient(credential: TokenCredential): { client: GraphServiceClient; adapter: GraphRequestAdapter } {
    const authProvider = new AzureIdentityAuthenticationProvider(credential, undefined, undefined, new Set([host]));
    const adapter = new GraphRequestAdapter(authProvider);
    adapter.baseUrl = `${s.url}/v1.0`;
    return { client: createGraphServiceClient(adapter), adapter };
  }

  test('the credentials obtain mail tokens for the alias audience', async () => {
    for (const c of [creds.app, creds.user]) {
      const t = await c.getToken(`${mailAudience}/.default`);
      assert.ok(t);
      assert.equal(decodeJwt(t.token).aud, mailAudience);
    }
  });

  test('why the README names the host allow-list line: without it neither client sends the token (401)', async () => {
    const adapter = new GraphRequestAdapter(new AzureIdentityAuthenticationProvider(creds.app));
    adapter.baseUrl = `${s.url}/v1.0`;
    await assert.rejects(createGraphServiceClient(adapter).users.byUserId(demoUser.id).messages.get(), (e: any) => e.responseStatusCode === 401);
    const plain = Client.initWithMiddleware({ authProvider: new TokenCredentialAuthenticationProvider(creds.app, { scopes: [`${mailAudience}/.default`] }), baseUrl: s.url });
    await assert.rejects(plain.api(`/users/${demoUser.id}/messages`).get(), (e: any) => e.statusCode === 401);
  });

  describe('@microsoft/microsoft-graph-client', () => {
    test('delegated /me: $select/$filter/paging with PageIterator; draft, send, reply', async () => {
      const user = graphClient(creds.user);
      const admin = graphClient(creds.admin);
      const first = await user.api('/me/messages').select('subject,isRead').filter('isRead eq false').count(true).top(3).get();
      const expected = first['@odata.count'];
      assert.ok(expected > 3, `unread messages: ${expected}`);
      assert.ok(first['@odata.nextLink']);
      const seen: any[] = [];
      await new GraphPageIterator(user, first, (m) => {
        seen.push(m);
        return true;
      }).iterate();
      assert.equal(seen.length, expected);
      assert.equal(new Set(seen.map((m) => m.id)).size, expected);
      for (const m of seen) {
        assert.equal(m.isRead, false);
        assert.deepEqual(Object.keys(m).sort(), ['@odata.etag', 'id', 'isRead', 'subject']);
      }

      const draft = await user.api('/me/messages').post({ subject: 'compat graph-client', body: { contentType: 'Text', content: 'from the graph client' }, toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] });
      assert.equal(draft.isDraft, true);
      await user.api(`/me/messages/${draft.id}/send`).post(null);
      const received = await admin.api('/me/mailFolders/inbox/messages').filter(`internetMessageId eq '${draft.internetMessageId}'`).get();
      assert.equal(received.value.length, 1);
      await admin.api(`/me/messages/${received.value[0].id}/reply`).post({ comment: 'Got it.' });
      const thread = await user.api('/me/mailFolders/inbox/messages').filter(`conversationId eq '${draft.conversationId}'`).get();
      assert.equal(thread.value.length, 1);
      assert.equal(thread.value[0].subject, 'RE: compat graph-client');
    });

    for (const mode of ['delegated /me', 'app-only /users/{id}'] as const) {
      test(`delta rounds to the delta link, ${mode}`, async () => {
        const client = graphClient(mode === 'delegated /me' ? creds.user : creds.app);
        const base = mode === 'delegated /me' ? '/me' : `/users/${demoUser.id}`;
        const inbox = await client.api(`${base}/mailFolders/inbox`).get();
        const round = async (link: string) => {
          const items: any[] = [];
          const page = await client.api(link).header('Prefer', 'odata.maxpagesize=4').get();
          const it = new GraphPageIterator(client, page, (m) => {
            items.push(m);
            return true;
          }, { headers: { Prefer: 'odata.maxpagesize=4' } });
          await it.iterate();
          const deltaLink = it.getDeltaLink();
          assert.ok(deltaLink, 'the round ends with a delta link');
          return { items, deltaLink };
        };
        const r1 = await round(`${base}/mailFolders/inbox/messages/delta?$select=subject,isRead`);
        assert.equal(r1.items.length, inbox.totalItemCount);
        assert.ok(inbox.totalItemCount > 4, 'several pages');
        const added = await client.api(`${base}/mailFolders/inbox/messages`).post({ subject: `delta ${mode}` });
        await client.api(`${base}/messages/${r1.items[0].id}`).patch({ isRead: !r1.items[0].isRead });
        const r2 = await round(r1.deltaLink);
        assert.deepEqual(r2.items.map((m) => m.id).sort(), [added.id, r1.items[0].id].sort());
        await client.api(`${base}/messages/${added.id}`).delete();
        const r3 = await round(r2.deltaLink);
        assert.deepEqual(r3.items, [{ '@odata.type': '#vendor.graph.message', id: added.id, '@removed': { reason: 'deleted' } }]);
      });
    }

    test('app-only /users/{upn}: $select/$filter/paging with PageIterator', async () => {
      const app = graphClient(creds.app);
      const first = await app.api(`/users/${demoAdmin.userPrincipalName}/messages`).select('subject').filter("importance eq 'normal'").count(true).top(4).get();
      const seen: any[] = [];
      await new GraphPageIterator(app, first, (m) => {
        seen.push(m);
        return true;
      }).iterate();
      assert.ok(first['@odata.count'] > 4);
      // Paging: pages of 4 with a next link; every filtered message seen once.
      assert.equal(first.value.length, 4);
      assert.ok(first['@odata.nextLink'], 'the first page links to the next');
      assert.equal(seen.length, first['@odata.count']);
      assert.equal(new Set(seen.map((m) => m.id)).size, first['@odata.count']);
      // $select: only the selected property (and the id and etag the service always adds).
      for (const m of seen) assert.deepEqual(Object.keys(m).filter((k) => k !== '@odata.etag').sort(), ['id', 'subject'], JSON.stringify(m));
      // $filter: exactly the messages whose importance is normal, counted independently.
      const all: any[] = [];
      await new GraphPageIterator(app, await app.api(`/users/${demoAdmin.userPrincipalName}/messages`).select('importance').top(100).get(), (m) => {
        all.push(m);
        return true;
      }).iterate();
      const normal = all.filter((m) => m.importance === 'normal').map((m) => m.id).sort();
      assert.ok(normal.length < all.length, 'the mailbox has messages of other importance too, so the filter filters');
      assert.deepEqual(seen.map((m) => m.id).sort(), normal);
    });
  });

  describe('@microsoft/msgraph-sdk (Kiota)', () => {
    const errorMappings = { XXX: createODataErrorFromDiscriminatorValue };

    test('delegated /users/{upn}: $select/$filter/paging with PageIterator; draft, send, reply', async () => {
      const { client: user, adapter } = kiotaClient(creds.user);
      const { client: admin } = kiotaClient(creds.admin);
      const me = user.users.byUserId(demoUser.userPrincipalName);
      const first = await me.messages.get({ queryParameters: { select: ['subject', 'isRead'], filter: 'isRead eq false', count: true, top: 3 } });
      assert.ok(first?.value && first.odataNextLink);
      const expected = first.odataCount!;
      assert.ok(expected > 3);
      const seen: Message[] = [];
      await new KiotaPageIterator<Message>(adapter, first as any, (m) => {
        seen.push(m);
        return true;
      }, createMessageCollectionResponseFromDiscriminatorValue as any, errorMappings).iterate();
      assert.equal(seen.length, expected);
      assert.equal(new Set(seen.map((m) => m.id)).size, expected);
      assert.ok(seen.every((m) => m.isRead === false && typeof m.subject === 'string' && m.from === undefined));

      const draft = await me.messages.post({ subject: 'compat kiota', body: { contentType: 'text', content: 'from the Kiota client' }, toRecipients: [{ emailAddress: { address: demoAdmin.userPrincipalName } }] });
      assert.ok(draft?.id);
      assert.equal(draft.isDraft, true);
      await me.messages.byMessageId(draft.id).send.post();
      const adminMe = admin.users.byUserId(demoAdmin.userPrincipalName);
      const received = await adminMe.mailFolders.byMailFolderId('inbox').messages.get({ queryParameters: { filter: `internetMessageId eq '${draft.internetMessageId}'` } });
      assert.equal(received?.value?.length, 1);
      await adminMe.messages.byMessageId(received!.value![0]!.id!).reply.post({ comment: 'Got it (Kiota).' });
      const thread = await me.mailFolders.byMailFolderId('inbox').messages.get({ queryParameters: { filter: `conversationId eq '${draft.conversationId}'` } });
      assert.equal(thread?.value?.length, 1);
      assert.equal(thread!.value![0]!.subject, 'RE: compat kiota');
    });

    for (const mode of ['delegated /users/{upn}', 'app-only /users/{id}'] as const) {
      test(`delta() rounds to the delta link, ${mode}`, async () => {
        const { client } = kiotaClient(mode === 'app-only /users/{id}' ? creds.app : creds.user);
        const mailbox = client.users.byUserId(mode === 'app-only /users/{id}' ? demoUser.id : demoUser.userPrincipalName);
        const folder = mailbox.mailFolders.byMailFolderId('inbox');
        const inbox = await folder.get();
        const headers = { Prefer: 'odata.maxpagesize=4' };
        const round = async (link?: string) => {
          const items: Message[] = [];
          let page = link ? await folder.messages.delta.withUrl(link).get({ headers }) : await folder.messages.delta.get({ queryParameters: { select: ['subject', 'isRead'] }, headers });
          let pages = 1;
          for (;;) {
            items.push(...(page?.value ?? []));
            if (page?.odataDeltaLink) return { items, deltaLink: page.odataDeltaLink, pages };
            assert.ok(page?.odataNextLink, 'a page without a next or delta link');
            page = await folder.messages.delta.withUrl(page.odataNextLink).get({ headers });
            pages++;
          }
        };
        const r1 = await round();
        assert.equal(r1.items.length, inbox?.totalItemCount);
        assert.ok(r1.pages > 1);
        const added = await folder.messages.post({ subject: `kiota delta ${mode}` });
        await mailbox.messages.byMessageId(r1.items[0]!.id!).patch({ isRead: !r1.items[0]!.isRead });
        const r2 = await round(r1.deltaLink);
        assert.deepEqual(r2.items.map((m) => m.id).sort(), [added!.id, r1.items[0]!.id].sort());
        await mailbox.messages.byMessageId(added!.id!).delete();
        const r3 = await round(r2.deltaLink);
        assert.deepEqual(r3.items.map((m) => [m.id, (m.additionalData?.['@removed'] as any)?.reason]), [[added!.id, 'deleted']]);
      });
    }
  });
});
