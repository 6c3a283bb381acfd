/**
 * Console pages of resource groups (issue 27 item 8): every subscription's groups (location,
 * tags, managedBy, a delete still running) with the number of resources each holds, and one
 * group's resources as the generic listing reads them (every area's, webhooks included).
 * Read-only pages: nothing here writes, so no form and no CSRF token.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { nowIso } from '../../core/clock.ts';
import { fromJson } from '../../store/db.ts';
import { ResourcesStore } from '../resources/store.ts';
import { href, html, page, sendPage, table } from './html.ts';

/** Most groups and resources a page lists. */
const pageLimit = 500;

/** Registers `/_stratus/console/resource-groups` and `/_stratus/console/resource-groups/{subscriptionId}/{name}`. */
export function registerResourceGroupPages(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.store.db;
  const store = new ResourcesStore(db);

  app.get('/_stratus/console/resource-groups', async (_req, reply) => {
    const groups = await db.selectFrom('arm_resource_groups').selectAll().orderBy('subscription_id').orderBy('name_lower').limit(pageLimit).execute();
    const counts = await db
      .selectFrom('arm_resources')
      .select(['subscription_id', 'resource_group_lower', db.fn.countAll<number | string>().as('n')])
      .groupBy(['subscription_id', 'resource_group_lower'])
      .execute();
    const countOf = new Map(counts.map((c) => [`${c.subscription_id}/${c.resource_group_lower}`, Number(c.n)]));
    const now = nowIso();
    const deleting = await db.selectFrom('resources_group_deletions').select(['subscription_id', 'name_lower', 'completes_at']).where('completes_at', '>', now).orderBy('completes_at').limit(pageLimit).execute();
    const rows = groups.map((g) => {
      const tags = Object.entries(fromJson<Record<string, string>>(g.tags) ?? {}).map(([k, v]) => `${k}=${v}`).join(', ');
      return [
        g.subscription_id,
        html`<a href="${href(`/resource-groups/${encodeURIComponent(g.subscription_id)}/${encodeURIComponent(g.name)}`)}">${g.name}</a>`,
        g.location,
        tags,
        g.managed_by ?? '',
        countOf.get(`${g.subscription_id}/${g.name_lower}`) ?? 0,
      ];
    });
    const body = html`<p>Resource groups of every subscription (at most ${pageLimit}); the count is of resources tracked in the group (an area's child rows such as webhooks are listed on the group's page).</p>
      <section aria-labelledby="groups"><h2 id="groups">Resource groups</h2>${table('Resource groups', ['Subscription', 'Resource group', 'Location', 'Tags', 'Managed by', 'Resources'], rows, 'No resource groups.')}</section>
      <section aria-labelledby="deleting"><h2 id="deleting">Deletes running</h2>${table('Resource-group deletes still running (Stratus clock)', ['Subscription', 'Resource group', 'Completes at'], deleting.map((d) => [d.subscription_id, d.name_lower, d.completes_at]), 'No delete is running.')}</section>`;
    return sendPage(reply, page('Resource groups', '/resource-groups', body));
  });

  app.get('/_stratus/console/resource-groups/:subscriptionId/:name', async (req, reply) => {
    const p = req.params as { subscriptionId: string; name: string };
    const g = await db.selectFrom('arm_resource_groups').selectAll().where('subscription_id', '=', p.subscriptionId.toLowerCase()).where('name_lower', '=', p.name.toLowerCase()).executeTakeFirst();
    if (!g) return sendPage(reply, page('Resource group not found', '/resource-groups', html`<p>No resource group <strong>${p.name}</strong> in subscription ${p.subscriptionId}. <a href="${href('/resource-groups')}">All resource groups</a></p>`), 404);
    const { modules } = await import('../index.ts');
    const parts = modules.flatMap((m) => (m.listedResources ? [m.listedResources(db, g.subscription_id, g.name)] : []));
    const resources = await store.listResources(parts, pageLimit, undefined, undefined);
    const rows = resources.map((r) => {
      const b = fromJson<Record<string, any>>(r.body) ?? {};
      return [r.name, typeof b.type === 'string' ? b.type : r.type_lower, b.location ?? '', Object.entries(b.tags ?? {}).map(([k, v]) => `${k}=${String(v)}`).join(', '), r.created_at, r.id];
    });
    const body = html`<p><a href="${href('/resource-groups')}">All resource groups</a></p>
      <dl class="kv"><dt>Subscription</dt><dd>${g.subscription_id}</dd><dt>Location</dt><dd>${g.location}</dd><dt>Tags</dt><dd>${g.tags}</dd><dt>Managed by</dt><dd>${g.managed_by ?? ''}</dd></dl>
      <section aria-labelledby="res"><h2 id="res">Resources</h2>${table(`Resources of ${g.name} (at most ${pageLimit}, by id)`, ['Name', 'Type', 'Location', 'Tags', 'Created', 'Id'], rows, 'The group holds no resources.')}</section>`;
    return sendPage(reply, page(`Resource group ${g.name}`, '/resource-groups', body));
  });
}
