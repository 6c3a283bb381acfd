/**
 * The developer console at `/_stratus/console` (issue 12 item 1): server-rendered pages behind
 * the control key. `GET /_stratus/console?key=<control key>` (the link the banner prints) sets
 * the session cookie (HttpOnly, SameSite=Strict, Path=/_stratus, Secure over HTTPS) and
 * redirects to the console without the key in the URL; every other console request needs that
 * cookie or `Authorization: Bearer <control key>` (checked by the app's control-plane hook).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { consoleCookieName, consoleSessionValue } from '../../core/control-key.ts';
import { deliveryQueue, listAllSubscriptions } from '../mailsync/store.ts';
import { href, html, page, sendPage, table } from './html.ts';
import { registerMailPages } from './mail.ts';
import { registerSubscriptionPages } from './subscriptions.ts';
import { registerOperationPages } from './operations.ts';
import { registerResourcePages } from './resources.ts';
import { registerResourceGroupPages } from './resource-groups.ts';
import { registerRequestPages, consoleScript } from './requests.ts';
import { registerFaultPages } from './faults.ts';
import { registerWorldPages } from './world.ts';
import { registerDirectoryPages } from './directory.ts';

/** Registers the console's routes and `GET /_stratus/requests`. */
export function registerConsoleRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/_stratus/console', async (req, reply) => {
    const q = req.query as { key?: unknown };
    if (q.key !== undefined) {
      // Reaching here with a key means the app's hook found it correct (or the caller had the key anyway).
      const secure = req.protocol === 'https' ? '; Secure' : '';
      return reply
        .code(303)
        .header('set-cookie', `${consoleCookieName}=${consoleSessionValue(ctx.controlKey)}; Path=/_stratus; HttpOnly; SameSite=Strict${secure}`)
        .header('location', '/_stratus/console')
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer')
        .send();
    }
    const tenants = await ctx.identity.directory.listTenants();
    const subs = await listAllSubscriptions(ctx.store.db, 1000);
    const queue = await deliveryQueue(ctx.store.db);
    const recent = ctx.requestLog.list({ limit: 10 });
    const body = html`<p>Everything this Stratus holds, read in-process. Sections:</p>
      <ul><li><a href="${href('/mail')}">Mail</a>: ${tenants.length} tenant(s), their mailboxes and outbound mail</li>
      <li><a href="${href('/subscriptions')}">Subscriptions</a>: ${subs.length} change-notification subscription(s), ${queue.reduce((n, q) => n + q.queued, 0)} notification(s) queued</li>
      <li><a href="${href('/operations')}">Operations</a>: data-platform operations and eventstreams, automation webhooks and jobs</li>
      <li><a href="${href('/resources')}">Resource manager</a>: subscriptions, resource groups, role assignments and policies, billing</li>
      <li><a href="${href('/resource-groups')}">Resource groups</a>: every group and the resources it holds</li>
      <li><a href="${href('/directory')}">Directory</a>: users, groups, applications and service principals</li>
      <li><a href="${href('/requests')}">Requests</a>: the last ${ctx.requestLog.size} requests, live</li>
      <li><a href="${href('/faults')}">Faults</a>: fault-injection rules</li>
      <li><a href="${href('/world')}">World</a>: the clock, snapshots, reset and the world export</li></ul>
      <h2>Latest requests</h2>${table('Latest requests', ['Time', 'Method', 'URL', 'Status'], recent.map((e) => [e.time, e.method, html`<a href="${href(`/requests/${encodeURIComponent(e.id)}`)}">${e.url}</a>`, e.status]), 'No requests yet.')}`;
    return sendPage(reply, page('Overview', '', body));
  });

  app.get('/_stratus/console/app.js', async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(consoleScript),
  );

  registerMailPages(app, ctx);
  registerSubscriptionPages(app, ctx);
  registerOperationPages(app, ctx);
  registerResourcePages(app, ctx);
  registerResourceGroupPages(app, ctx);
  registerDirectoryPages(app, ctx);
  registerRequestPages(app, ctx);
  registerFaultPages(app, ctx);
  registerWorldPages(app, ctx);
}
