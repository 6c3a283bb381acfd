/**
 * Console page of the resource manager (issue 12 item 1, "Resource manager"): subscriptions,
 * resource groups, role assignments (with the names of their roles, built-in or custom, and of
 * their principals: users, groups, service principals; issue 27 item 8), role management
 * policies per scope (changed policies with their rules in words; every other role has the
 * default rule set), billing accounts and invoices.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { fromJson } from '../../store/db.ts';
import { builtInRoles } from '../arm/roles.ts';
import { policyTable } from '../authorization/store.ts';
import { defaultRules } from '../authorization/defaults.ts';
import { html, page, sendPage, table, type Safe } from './html.ts';

/** One policy rule in words: its id and type, then its settings. */
function ruleText(r: Record<string, unknown>): Safe {
  const { id, ruleType, target, ...rest } = r;
  const settings = Object.entries(rest)
    .filter(([, v]) => v !== null && v !== undefined && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join('; ');
  const t = target as Record<string, unknown> | undefined;
  const who = t ? ` — for ${String(t.caller ?? '?')} ${String(t.level ?? '')} ${Array.isArray(t.operations) ? (t.operations as string[]).join('/') : ''}` : '';
  return html`<li><strong>${String(id)}</strong> (${String(ruleType).replace(/^RoleManagementPolicy|Rule$/g, '')})${who}: ${settings}</li>`;
}

/** Names of the principals `ids` (object ids): users by UPN, groups and service principals by display name (500 ids a query). */
async function principalNames(db: AppContext['store']['db'], ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const part = ids.slice(i, i + 500);
    const [users, groups, apps] = await Promise.all([
      db.selectFrom('directory_users').select(['id', 'upn']).where('id', 'in', part).execute(),
      db.selectFrom('directory_groups').select(['id', 'display_name']).where('id', 'in', part).execute(),
      db.selectFrom('directory_apps').select(['object_id', 'display_name']).where('object_id', 'in', part).execute(),
    ]);
    for (const u of users) out.set(u.id, u.upn);
    for (const g of groups) out.set(g.id, g.display_name);
    for (const a of apps) out.set(a.object_id, a.display_name);
  }
  return out;
}

/** Registers `/_stratus/console/resources`. */
export function registerResourcePages(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.store.db;
  app.get('/_stratus/console/resources', async (_req, reply) => {
    const custom = await db.selectFrom('arm_role_definitions').select(['id', 'role_name']).orderBy('id').limit(5000).execute();
    const roleName = new Map([...builtInRoles.map((r) => [r.id.toLowerCase(), r.roleName] as const), ...custom.map((r) => [r.id.toLowerCase(), r.role_name] as const)]);
    const subs = (await db.selectFrom('arm_subscriptions').selectAll().orderBy('tenant_id').orderBy('subscription_id').limit(500).execute()) as any[];
    const groups = (await db.selectFrom('arm_resource_groups').selectAll().orderBy('subscription_id').orderBy('name_lower').limit(1000).execute()) as any[];
    const assignments = (await db.selectFrom('arm_role_assignments').selectAll().orderBy('scope_lower').orderBy('id').limit(1000).execute()) as any[];
    const who = await principalNames(db, [...new Set(assignments.map((a) => String(a.principal_id).toLowerCase()))]);
    const policies = (await db.selectFrom(policyTable).selectAll().orderBy('scope_lower').orderBy('role_definition_id').limit(500).execute()) as any[];
    const accounts = (await db.selectFrom('billing_accounts').selectAll().orderBy('tenant_id').orderBy('name').limit(200).execute()) as any[];
    const invoices = (await db.selectFrom('billing_invoices').selectAll().orderBy('tenant_id').orderBy('account_name').orderBy('name').limit(1000).execute()) as any[];
    const invoiceCells = (i: any) => {
      const b = fromJson<any>(i.body) ?? {};
      const p = { ...b, ...(b.properties ?? {}) };
      return [i.account_name, i.name, i.profile_name, p.invoiceDate ?? '', p.dueDate ?? '', p.status ?? '', p.currency ?? ''];
    };
    const body = html`<section aria-labelledby="subs"><h2 id="subs">Subscriptions</h2>${table('Subscriptions', ['Subscription', 'Name', 'State', 'Tenant', 'Management group'], subs.map((s) => [s.subscription_id, s.display_name, s.state, s.tenant_id, s.management_group_lower]), 'No subscriptions.')}</section>
      <section aria-labelledby="rgs"><h2 id="rgs">Resource groups</h2>${table('Resource groups', ['Subscription', 'Resource group', 'Location', 'Tags'], groups.map((g) => [g.subscription_id, g.name, g.location, g.tags]), 'No resource groups.')}</section>
      <section aria-labelledby="ras"><h2 id="ras">Role assignments</h2>${table('Role assignments', ['Scope', 'Role', 'Principal', 'Type', 'Principal id', 'Id'], assignments.map((a) => [a.scope, roleName.get(String(a.role_definition_id).toLowerCase()) ?? a.role_definition_id, who.get(String(a.principal_id).toLowerCase()) ?? '(unknown principal)', a.principal_type, a.principal_id, a.id]), 'No role assignments.')}</section>
      <section aria-labelledby="pol"><h2 id="pol">Role management policies</h2><p class="muted">Policies changed through the API, per scope; every other role at every scope has the default rule set.</p>
      ${table('Changed role management policies', ['Scope', 'Role', 'Rules', 'Last modified'], policies.map((p) => [p.scope, roleName.get(String(p.role_definition_id).toLowerCase()) ?? p.role_definition_id, html`<ul>${fromJson<Record<string, unknown>[]>(p.rules).map(ruleText)}</ul>`, `${p.last_modified_at} by ${fromJson<any>(p.last_modified_by)?.displayName ?? '?'}`]), 'No policy has been changed: all use the default rules.')}
      <details><summary>The default rule set</summary><ul>${(defaultRules() as unknown as Record<string, unknown>[]).map(ruleText)}</ul></details></section>
      <section aria-labelledby="bill"><h2 id="bill">Billing</h2>${table('Billing accounts', ['Tenant', 'Account', 'Name', 'Agreement'], accounts.map((a) => [a.tenant_id, a.name, a.display_name, a.agreement_type]), 'No billing accounts.')}
      ${table('Invoices', ['Account', 'Invoice', 'Billing profile', 'Date', 'Due', 'Status', 'Currency'], invoices.map(invoiceCells), 'No invoices.')}</section>`;
    return sendPage(reply, page('Resource manager', '/resources', body));
  });
}
