/**
 * Console pages of the directory (issue 27 item 8): users, groups with their members,
 * applications (client ids, redirect URIs, secret hints and certificates — never a secret) and
 * service principals with the application permissions granted to them, per tenant. Read-only,
 * read in-process; every value is escaped by `html` (no markup from the store reaches the page).
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { bool, fromJson } from '../../store/db.ts';
import { resourcePrincipals } from '../directory/resources.ts';
import { href, html, page, sendPage, table } from './html.ts';

/** Most rows a directory page lists per table. */
const pageRows = 1000;

/** Registers `/_stratus/console/directory` and its four pages. */
export function registerDirectoryPages(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.store.db;
  const tenantNames = async () => new Map((await ctx.identity.directory.listTenants()).map((t) => [t.id, t.domain]));

  app.get('/_stratus/console/directory', async (_req, reply) => {
    const count = async (t: 'directory_users' | 'directory_groups' | 'directory_apps') => Number((await db.selectFrom(t).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirst())?.n ?? 0);
    const body = html`<ul><li><a href="${href('/directory/users')}">Users</a>: ${await count('directory_users')}</li>
      <li><a href="${href('/directory/groups')}">Groups</a>: ${await count('directory_groups')}</li>
      <li><a href="${href('/directory/applications')}">Applications</a> and <a href="${href('/directory/service-principals')}">service principals</a>: ${await count('directory_apps')} registration(s)</li></ul>`;
    return sendPage(reply, page('Directory', '/directory', body));
  });

  app.get('/_stratus/console/directory/users', async (_req, reply) => {
    const tenants = await tenantNames();
    const rows = await db.selectFrom('directory_users').selectAll().orderBy('tenant_id').orderBy('upn_lower').limit(pageRows).execute();
    const body = table(
      'Users',
      ['Tenant', 'User principal name', 'Display name', 'Mail', 'Enabled', 'Administrator', 'Object id', 'Created'],
      rows.map((u) => [tenants.get(u.tenant_id) ?? u.tenant_id, u.upn, u.display_name, u.mail, bool(u.account_enabled) ? 'yes' : 'no', bool(u.is_tenant_admin) ? 'yes' : '', u.id, u.created_at ?? '']),
      'No users.',
    );
    return sendPage(reply, page('Directory users', '/directory', body));
  });

  app.get('/_stratus/console/directory/groups', async (_req, reply) => {
    const tenants = await tenantNames();
    const groups = await db.selectFrom('directory_groups').selectAll().orderBy('tenant_id').orderBy('display_name').limit(pageRows).execute();
    const members = await db.selectFrom('directory_group_members').selectAll().orderBy('group_id').orderBy('member_id').limit(pageRows * 10).execute();
    const users = new Map((await db.selectFrom('directory_users').select(['id', 'upn']).limit(pageRows * 10).execute()).map((u) => [u.id, u.upn]));
    const names = new Map(groups.map((g) => [g.id, g.display_name]));
    const apps = new Map((await db.selectFrom('directory_apps').select(['object_id', 'display_name']).limit(pageRows * 10).execute()).map((a) => [a.object_id, a.display_name]));
    const memberText = (id: string) => users.get(id) ?? names.get(id) ?? apps.get(id) ?? id;
    const body = table(
      'Groups and their direct members',
      ['Tenant', 'Group', 'Mail nickname', 'Security', 'Members', 'Object id'],
      groups.map((g) => [
        tenants.get(g.tenant_id) ?? g.tenant_id,
        g.display_name,
        g.mail_nickname,
        bool(g.security_enabled) ? 'yes' : 'no',
        html`<ul>${members.filter((m) => m.group_id === g.id).map((m) => html`<li>${memberText(m.member_id)} <span class="muted">(${m.member_type})</span></li>`)}</ul>`,
        g.id,
      ]),
      'No groups.',
    );
    return sendPage(reply, page('Directory groups', '/directory', body));
  });

  app.get('/_stratus/console/directory/applications', async (_req, reply) => {
    const tenants = await tenantNames();
    const apps = await db.selectFrom('directory_apps').selectAll().where('application_id', 'is not', null).orderBy('tenant_id').orderBy('display_name').limit(pageRows).execute();
    const secrets = await db.selectFrom('app_password_credentials').select(['app_id', 'hint', 'display_name', 'end_at']).orderBy('app_id').limit(pageRows * 5).execute();
    const certs = await db.selectFrom('app_key_credentials').select(['app_id', 'display_name', 'thumbprint', 'end_at']).orderBy('app_id').limit(pageRows * 5).execute();
    const body = table(
      'Application registrations',
      ['Tenant', 'Application', 'Client id (appId)', 'Kind', 'Redirect URIs', 'Secrets (hint, expiry)', 'Certificates (SHA-1 thumbprint, expiry)', 'Service principal', 'Object id'],
      apps.map((a) => [
        tenants.get(a.tenant_id) ?? a.tenant_id,
        a.display_name,
        a.app_id,
        a.kind,
        html`<ul>${(fromJson<string[]>(a.redirect_uris) ?? []).map((u) => html`<li>${u}</li>`)}</ul>`,
        html`<ul>${[...(a.secret_hash ? [{ hint: '(set by the control plane)', display_name: null, end_at: '' }] : []), ...secrets.filter((s) => s.app_id === a.app_id)].map((s) => html`<li>${s.hint}… ${s.display_name ?? ''} ${s.end_at}</li>`)}</ul>`,
        html`<ul>${certs.filter((c) => c.app_id === a.app_id).map((c) => html`<li>${Buffer.from(c.thumbprint, 'base64url').toString('hex').toUpperCase()} ${c.display_name ?? ''} ${c.end_at}</li>`)}</ul>`,
        bool(a.has_sp) ? a.object_id : html`<span class="muted">not created</span>`,
        a.application_id,
      ]),
      'No applications.',
    );
    return sendPage(reply, page('Directory applications', '/directory', body));
  });

  app.get('/_stratus/console/directory/service-principals', async (_req, reply) => {
    const tenants = await tenantNames();
    const sps = await db.selectFrom('directory_apps').selectAll().where('has_sp', '=', 1).orderBy('tenant_id').orderBy('display_name').limit(pageRows).execute();
    const grants = await db.selectFrom('app_role_grants').selectAll().orderBy('app_id').orderBy('audience').orderBy('role').limit(pageRows * 10).execute();
    const resourceName = new Map<string, string>(resourcePrincipals.map((r) => [r.family, r.displayName]));
    const body = html`${table(
      'Service principals and their application permissions',
      ['Tenant', 'Service principal', 'Client id (appId)', 'Type', 'Application permissions', 'Object id'],
      sps.map((a) => [
        tenants.get(a.tenant_id) ?? a.tenant_id,
        a.display_name,
        a.app_id,
        a.kind === 'ManagedIdentity' ? 'Managed identity' : 'Application',
        html`<ul>${grants.filter((g) => g.app_id === a.app_id).map((g) => html`<li>${g.role} <span class="muted">on ${resourceName.get(g.audience) ?? g.audience}</span></li>`)}</ul>`,
        a.object_id,
      ]),
      'No service principals.',
    )}
      <h2>Built-in resource service principals</h2>${table(
        'One per API family, in every tenant',
        ['Resource', 'appId', 'Object id', 'Application roles'],
        resourcePrincipals.map((r) => [r.displayName, r.appId, r.id, r.appRoles.map((a) => a.value).join(', ')]),
      )}`;
    return sendPage(reply, page('Directory service principals', '/directory', body));
  });
}
