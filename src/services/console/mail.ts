/**
 * Console mail pages (issue 12 item 1, "Mail"): every mailbox of every tenant; a mailbox's
 * folder tree with counts and its message list (search with the API's own `$search`
 * machinery, paging, read/unread toggles); a message view (sanitised body, headers,
 * attachments to download); outbound mail. Reads go through the mail area's store and query
 * modules in-process.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { folderCounts, getMessage, hiddenFromMailboxList, listChildFolders, messageFromRow, openMailbox, updateMessage, type FolderRow, type Mailbox } from '../mail/store.ts';
import { listMessageRows } from '../mail/query.ts';
import { getAttachment, listAttachments } from '../mail/attachments.ts';
import { listOutboundMail } from '../mail/outbound.ts';
import { newChangeKey } from '../mail/ids.ts';
import type { Recipient } from '../mail/message.ts';
import { href, html, page, raw, sendPage, table, type Safe } from './html.ts';
import { sanitizeMailHtml } from './sanitize.ts';
import { checkCsrf } from './csrf.ts';

const pageSize = 25;

function who(r: Recipient | null | undefined): string {
  if (!r) return '';
  const { name, address } = r.emailAddress;
  return name && name !== address ? `${name} <${address}>` : address;
}

/** The mailbox a console page shows; `raw` (the request) is marked as one that wrote when it opens the mailbox first (`core/cache-requests.ts`). */
async function mailboxOf(ctx: AppContext, tenantId: string, userId: string, raw: object): Promise<Mailbox> {
  const user = await ctx.identity.directory.findUser(userId);
  if (!user || user.tenantId !== tenantId) throw errors.mail.consoleMailboxNotFound({ user: userId, tenant: tenantId });
  return openMailbox(ctx.store.db, user, () => ctx.cache.markWritten(raw));
}

async function folderTree(ctx: AppContext, mb: Mailbox, current: string, base: string): Promise<Safe> {
  const root = mb.wellKnown.get('msgfolderroot')!;
  const all: FolderRow[] = [];
  const children = new Map<string, FolderRow[]>();
  const walk = async (parent: string, depth: number) => {
    const kids = await listChildFolders(ctx.store.db, mb, parent, { includeHidden: false, top: 500, skip: 0 });
    children.set(parent, kids);
    all.push(...kids);
    if (depth < 8) for (const k of kids) await walk(k.id, depth + 1);
  };
  await walk(root, 0);
  const counts = await folderCounts(ctx.store.db, mb, all.map((f) => f.id));
  const render = (parent: string): Safe => {
    const kids = children.get(parent) ?? [];
    if (kids.length === 0) return html``;
    return html`<ul>${kids.map((f) => {
      const c = counts.get(f.id)!;
      const label = html`${f.displayName} <span class="muted">(${c.unread ? `${c.unread}/` : ''}${c.total})</span>`;
      return html`<li>${f.id === current ? html`<strong aria-current="true">${label}</strong>` : html`<a href="${href(base, { folder: f.id })}">${label}</a>`}${render(f.id)}</li>`;
    })}</ul>`;
  };
  return html`<nav class="tree" aria-label="Folders"><h2>Folders</h2><ul><li>${current === '' ? html`<strong aria-current="true">All mail</strong>` : html`<a href="${href(base)}">All mail</a>`}</li></ul>${render(root)}</nav>`;
}

/** Registers the mail pages under `/_stratus/console/mail`. */
export function registerMailPages(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.store.db;

  app.get('/_stratus/console/mail', async (_req, reply) => {
    const sections: Safe[] = [];
    for (const t of await ctx.identity.directory.listTenants()) {
      const users = await ctx.identity.directory.listUsers(t.id);
      sections.push(html`<section aria-labelledby="t-${t.id}"><h2 id="t-${t.id}">${t.displayName} <span class="muted">(${t.domain}, ${t.id})</span></h2>
        ${table(`Mailboxes of ${t.domain}`, ['Mailbox', 'Address', 'Object id'], users.map((u) => [html`<a href="${href(`/mail/${t.id}/${u.id}`)}">${u.displayName}</a>`, u.mail, u.id]), 'No users in this tenant.')}</section>`);
    }
    sections.push(html`<p><a href="${href('/mail/outbound')}">Outbound mail</a> (sent to recipients outside the tenant)</p>`);
    return sendPage(reply, page('Mail', '/mail', html`${sections}`));
  });

  app.get('/_stratus/console/mail/outbound', async (_req, reply) => {
    const sections: Safe[] = [];
    for (const t of await ctx.identity.directory.listTenants()) {
      const rows = await listOutboundMail(ctx, t.id, 200);
      sections.push(html`<h2>${t.domain}</h2>${table(`Outbound mail of ${t.domain}`, ['Sent', 'From', 'To', 'Subject'], rows.map((m) => [m.sentDateTime, m.from, m.recipients.join(', '), m.subject]), 'No outbound mail.')}`);
    }
    return sendPage(reply, page('Outbound mail', '/mail', html`${sections}`));
  });

  app.get('/_stratus/console/mail/:tenant/:user', async (req, reply) => {
    const { tenant, user } = req.params as { tenant: string; user: string };
    const query = req.query as { folder?: string; q?: string; skip?: string };
    const mb = await mailboxOf(ctx, tenant, user, req.raw);
    const folderId = query.folder && query.folder !== '' ? query.folder : undefined;
    const skip = Math.max(0, Math.min(1_000_000, Number.parseInt(query.skip ?? '0', 10) || 0));
    const q = new URLSearchParams();
    const search = (query.q ?? '').trim().slice(0, 500);
    if (search) q.set('$search', `"${search.replace(/"/g, ' ')}"`);
    const exclude = hiddenFromMailboxList.map((n) => mb.wellKnown.get(n)!).filter(Boolean);
    const { rows, more } = await listMessageRows(db, { tenantId: mb.tenantId, mailboxId: mb.mailboxId, folderId, excludeFolderIds: folderId ? [] : exclude, q, pageSize, skip });
    const base = `/mail/${tenant}/${user}`;
    const msgs = rows.map(messageFromRow);
    const list = msgs.length
      ? html`<table><caption class="muted">Messages ${skip + 1}–${skip + msgs.length}</caption><thead><tr><th scope="col">Received</th><th scope="col">From</th><th scope="col">Subject</th><th scope="col">Read</th></tr></thead><tbody>${msgs.map(
          (m) => html`<tr class="${m.isRead ? '' : 'unread'}"><td>${m.receivedAt}</td><td>${who(m.doc.from)}</td><td><a href="${href(`${base}/messages/${encodeURIComponent(m.id)}`)}">${m.doc.subject || '(no subject)'}</a>${m.isDraft ? html` <span class="muted">[draft]</span>` : ''}</td>
            <td><form class="inline" method="post" action="${href(`${base}/messages/${encodeURIComponent(m.id)}/read`)}"><input type="hidden" name="read" value="${m.isRead ? 'false' : 'true'}"><input type="hidden" name="back" value="${href(base, { folder: folderId, q: search, skip })}"><button type="submit">${m.isRead ? 'Mark unread' : 'Mark read'}</button></form></td></tr>`,
        )}</tbody></table>`
      : html`<p class="muted">No messages${search ? ' match the search' : ''}.</p>`;
    const pager = html`<nav aria-label="Pages">${skip > 0 ? html`<a href="${href(base, { folder: folderId, q: search, skip: Math.max(0, skip - pageSize) })}" rel="prev">Previous page</a> ` : ''}${more ? html`<a href="${href(base, { folder: folderId, q: search, skip: skip + pageSize })}" rel="next">Next page</a>` : ''}</nav>`;
    const searchForm = html`<form method="get" action="${href(base)}" role="search">${folderId ? html`<input type="hidden" name="folder" value="${folderId}">` : ''}<label for="q">Search messages</label><input id="q" name="q" type="search" value="${search}"><button type="submit">Search</button></form>`;
    const body = html`<p class="muted">${mb.address} · <a href="${href('/mail')}">all mailboxes</a></p><div class="cols">${await folderTree(ctx, mb, folderId ?? '', base)}<section aria-label="Messages">${searchForm}${list}${pager}</section></div>`;
    return sendPage(reply, page(`Mailbox ${mb.displayName}`, '/mail', body));
  });

  app.get('/_stratus/console/mail/:tenant/:user/messages/:id', async (req, reply) => {
    const { tenant, user, id } = req.params as { tenant: string; user: string; id: string };
    const mb = await mailboxOf(ctx, tenant, user, req.raw);
    const m = await getMessage(db, mb, id);
    const d = m.doc;
    const atts = await listAttachments(db, m.pk);
    const base = `/mail/${tenant}/${user}/messages/${encodeURIComponent(m.id)}`;
    const bodyMarkup = d.body.contentType === 'html' ? raw(sanitizeMailHtml(d.body.content)) : html`<pre>${d.body.content}</pre>`;
    const fields: [string, unknown][] = [
      ['From', who(d.from)],
      ['To', d.toRecipients.map(who).join(', ')],
      ['Cc', d.ccRecipients.map(who).join(', ')],
      ['Bcc', d.bccRecipients.map(who).join(', ')],
      ['Received', m.receivedAt],
      ['Sent', m.sentAt ?? '(draft)'],
      ['Importance', d.importance],
      ['Read', m.isRead ? 'yes' : 'no'],
      ['Internet message id', d.internetMessageId],
      ['Id', m.id],
    ];
    const body = html`<p><a href="${href(`/mail/${tenant}/${user}`, { folder: m.folderId })}">Back to the folder</a></p>
      <dl class="kv">${fields.filter(([, v]) => v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>
      <form method="post" action="${href(`${base}/read`)}"><input type="hidden" name="read" value="${m.isRead ? 'false' : 'true'}"><input type="hidden" name="back" value="${href(base)}"><button type="submit">${m.isRead ? 'Mark unread' : 'Mark read'}</button></form>
      <h2>Body <span class="muted">(${d.body.contentType}; sanitised, remote content blocked)</span></h2><div class="mailbody" id="mail-body">${bodyMarkup}</div>
      <h2>Attachments</h2>${table('Attachments', ['Name', 'Type', 'Size'], atts.map((a) => [a['@odata.type'] === '#vendor.graph.fileAttachment' ? html`<a href="${href(`${base}/attachments/${encodeURIComponent(String(a.id))}`)}" download>${String(a.name)}</a>` : String(a.name), String(a.contentType ?? ''), String(a.size ?? '')]), 'No attachments.')}
      <h2>Internet message headers</h2>${table('Headers', ['Name', 'Value'], d.internetMessageHeaders.map((h) => [h.name, h.value]), 'No internet message headers.')}`;
    return sendPage(reply, page(d.subject || '(no subject)', '/mail', body));
  });

  app.get('/_stratus/console/mail/:tenant/:user/messages/:id/attachments/:aid', async (req, reply) => {
    const { tenant, user, id, aid } = req.params as { tenant: string; user: string; id: string; aid: string };
    const mb = await mailboxOf(ctx, tenant, user, req.raw);
    const m = await getMessage(db, mb, id);
    const a = await getAttachment(db, m.pk, aid);
    if (typeof a.contentBytes !== 'string') throw errors.mail.consoleNotFileAttachment();
    const name = String(a.name ?? 'attachment').replace(/[^\w.\- ]/g, '_');
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${name}"`)
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .send(Buffer.from(a.contentBytes, 'base64'));
  });

  app.post('/_stratus/console/mail/:tenant/:user/messages/:id/read', async (req, reply) => {
    checkCsrf(req, ctx.origin());
    ctx.cache.markRequest(req.raw);
    const { tenant, user, id } = req.params as { tenant: string; user: string; id: string };
    const form = (req.body ?? {}) as Record<string, unknown>;
    const read = form.read === 'true' || form.read === true;
    const mb = await mailboxOf(ctx, tenant, user, req.raw);
    await ctx.store.transaction(async (trx) => {
      const m = await getMessage(trx, mb, id);
      if (m.isRead === read) return;
      await updateMessage(trx, { ...m, isRead: read, modifiedAt: nowIso(), changeKey: newChangeKey() });
    });
    const back = typeof form.back === 'string' && form.back.startsWith('/_stratus/console/') && !form.back.startsWith('//') ? form.back : href(`/mail/${tenant}/${user}`);
    return reply.code(303).header('location', back).send();
  });
}
