/**
 * Console page of long-running work (issue 12 item 1, "Operations"): data-platform
 * operations (state, percent, result link) and eventstreams per workspace; automation
 * webhooks and the jobs their invocations created.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { nowMs } from '../../core/clock.ts';
import { listItems, type OperationRow, type WorkspaceRow } from '../platform/store.ts';
import { AutomationStore } from '../automation/store.ts';
import { html, page, sendPage, table, type Safe } from './html.ts';

function opState(op: OperationRow, now: number): { state: string; percent: string } {
  if (op.status) return { state: op.status, percent: op.status === 'Failed' ? '' : '100' };
  // The API settles an operation when it is read; shown here as it would be read now.
  if (now >= Number(op.complete_ms)) return { state: `${op.outcome} (settles on next read)`, percent: op.outcome === 'Failed' ? '' : '100' };
  const created = Number(op.created_ms);
  const total = Math.max(1, Number(op.complete_ms) - created);
  return { state: 'Running', percent: String(Math.min(99, Math.floor(((now - created) / total) * 100))) };
}

/** Registers `/_stratus/console/operations`. */
export function registerOperationPages(app: FastifyInstance, ctx: AppContext): void {
  const db = ctx.store.db;
  const automation = new AutomationStore(db);

  app.get('/_stratus/console/operations', async (_req, reply) => {
    const now = nowMs();
    const origin = ctx.origin();
    const workspaces = (await db.selectFrom('platform_workspaces').selectAll().orderBy('tenant_id').orderBy('display_name').limit(500).execute()) as WorkspaceRow[];
    const parts: Safe[] = [html`<h2>Data platform</h2>`];
    for (const ws of workspaces) {
      const ops = (await db.selectFrom('platform_operations').selectAll().where('tenant_id', '=', ws.tenant_id).where('workspace_id', '=', ws.id).orderBy('created_ms', 'desc').limit(100).execute()) as OperationRow[];
      const streams = await listItems(db, ws.tenant_id, ws.id, 'Eventstream', 200);
      const opRows = ops.map((op) => {
        const s = opState(op, now);
        return [op.id, op.kind, new Date(Number(op.created_ms)).toISOString(), html`<span class="${s.state.startsWith('Failed') ? 'bad' : ''}">${s.state}</span>`, s.percent, op.item_id && op.status === 'Succeeded' ? `${origin}/v1/operations/${op.id}/result` : '', op.caller_id];
      });
      parts.push(html`<section aria-labelledby="ws-${ws.id}"><h3 id="ws-${ws.id}">Workspace ${ws.display_name} <span class="muted">(${ws.id}, tenant ${ws.tenant_id})</span></h3>
        ${table(`Long-running operations in ${ws.display_name}`, ['Operation', 'Kind', 'Created', 'State', 'Percent', 'Result', 'Caller'], opRows, 'No operations.')}
        ${table(`Eventstreams in ${ws.display_name}`, ['Eventstream', 'Id', 'State', 'Created', 'Updated'], streams.map((i) => [i.display_name, i.id, i.state, i.created_at, i.updated_at]), 'No eventstreams.')}</section>`);
    }
    if (workspaces.length === 0) parts.push(html`<p class="muted">No workspaces.</p>`);
    parts.push(html`<h2>Automation</h2>`);
    const accounts = (await db.selectFrom('automation_webhooks').select('account_id_lower').distinct().orderBy('account_id_lower').limit(200).execute()) as { account_id_lower: string }[];
    for (const { account_id_lower: acct } of accounts) {
      const hooks = await automation.listWebhooks(acct, 200);
      const jobs = await automation.listJobs(acct, 100);
      parts.push(html`<section><h3>${acct}</h3>
        ${table('Webhooks', ['Webhook', 'Runbook', 'Enabled', 'Expires', 'Last invoked'], hooks.map((w) => [w.name, w.runbookName, w.isEnabled ? 'yes' : 'no', w.expiryTime, w.lastInvokedTime ?? '']), 'No webhooks.')}
        ${table('Jobs started by webhook invocations', ['Job', 'Runbook', 'Webhook', 'Created', 'State', 'Parameters'], jobs.map((j) => [j.jobId, j.runbookName, j.webhookName, j.creationTime, Date.parse(j.completesAt) <= now ? 'Completed' : 'Running', JSON.stringify(j.parameters)]), 'No jobs.')}</section>`);
    }
    if (accounts.length === 0) parts.push(html`<p class="muted">No automation webhooks.</p>`);
    return sendPage(reply, page('Operations', '/operations', html`${parts}`));
  });
}
