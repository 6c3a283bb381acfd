/**
 * The automation part of a world file: `automationAccounts` of a resource group, each the
 * automation account resource (`name`, `location` — default the group's —, `tags`,
 * `systemData`, `properties`) with its `runbooks` (runbook resources) and `webhooks` (webhook
 * resources, `properties.runbook.name` naming a runbook of the account, and the URI `token` text
 * or its stored `tokenHash`: SHA-256 hex). Accounts and runbooks go to `arm_resources` through
 * `ArmStore.insertResources` (`data.ts`), webhooks through `AutomationStore.insertWebhook`. Jobs are run-time
 * state, not part of a world.
 */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../store/database.ts';
import { fromJson } from '../store/db.ts';
import { automationTypes } from '../services/automation/rules.ts';
import { AutomationStore, tokenHash } from '../services/automation/store.ts';
import type { WorldFileData } from './schema.ts';
import { byKey, exportedGroups, type DataContext } from './data.ts';
import { fileResource, resourceBody, resourceFields, resourceTimes, type FileResource } from './resource.ts';

const strict = { additionalProperties: false } as const;

/** An automation account with its runbooks and webhooks. */
export const WorldAutomationAccount = Type.Object(
  {
    ...resourceFields,
    location: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    runbooks: Type.Optional(Type.Array(Type.Object({ ...resourceFields, location: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, strict), { maxItems: 10_000 })),
    webhooks: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ...resourceFields,
            token: Type.Optional(Type.String({ minLength: 16, maxLength: 256, description: 'The URI token text (the webhook answers POST /automation/webhooks?token=<token>). One of token and tokenHash.' })),
            tokenHash: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 (hex) of the token, as an export writes it.' })),
          },
          strict,
        ),
        { maxItems: 10_000 },
      ),
    ),
  },
  { ...strict, description: 'An automation account resource with its runbooks and webhooks.' },
);

/** Resource-group properties of the automation kinds. */
export const automationGroupProperties = { automationAccounts: Type.Optional(Type.Array(WorldAutomationAccount, { maxItems: 1000 })) };

/** Checks the automation accounts of the tenant entry's groups and queues their writes. */
export function resolveAutomation(c: DataContext): void {
  for (const g of c.groups) {
    (g.data.automationAccounts ?? []).forEach((a, i) => {
      const rel = (p: string) => `${g.path}/automationAccounts/${i}${p}`;
      const where = (p: string) => c.at(rel(p));
      const accountId = `${g.id}/providers/Vendor.Automation/automationAccounts/${a.name}`;
      if (!c.unique('resource', accountId.toLowerCase(), rel(''))) return;
      const location = a.location ?? g.location;
      const account = resourceBody(accountId, automationTypes.account, a, c.now, { tracked: true, location, defaults: { sku: { name: 'Basic' }, state: 'Ok', creationTime: c.now, lastModifiedTime: c.now, publicNetworkAccess: true, disableLocalAuth: false } });
      const runbooks = (a.runbooks ?? []).map((r, j) => {
        const id = `${accountId}/runbooks/${r.name}`;
        c.unique('resource', id.toLowerCase(), rel(`/runbooks/${j}`));
        return resourceBody(id, automationTypes.runbook, r, c.now, { tracked: true, location, defaults: { runbookType: 'PowerShell', state: 'Published', logVerbose: false, logProgress: false, logActivityTrace: 0, jobCount: 0, creationTime: c.now, lastModifiedTime: c.now, provisioningState: 'Succeeded' } });
      });
      const webhooks = (a.webhooks ?? []).flatMap((w, j) => {
        const id = `${accountId}/webhooks/${w.name}`;
        c.unique('resource', id.toLowerCase(), rel(`/webhooks/${j}`));
        if ((w.token === undefined) === (w.tokenHash === undefined)) c.problems.push(`${where(`/webhooks/${j}`)}: give exactly one of token and tokenHash`);
        const hash = w.tokenHash ?? tokenHash(w.token ?? '');
        c.unique('webhook token', hash, rel(`/webhooks/${j}/token`));
        const body = resourceBody(id, automationTypes.webhook, w, c.now, { tracked: false, defaults: { isEnabled: true, expiryTime: new Date(Date.parse(c.now) + 365 * 86_400_000).toISOString(), parameters: {}, runOn: null, creationTime: c.now, lastModifiedTime: c.now } });
        const p = body.properties as { isEnabled?: unknown; expiryTime?: unknown; runbook?: { name?: unknown }; creationTime?: unknown };
        const runbook = typeof p.runbook?.name === 'string' ? p.runbook.name : undefined;
        if (!runbook) c.problems.push(`${where(`/webhooks/${j}/properties`)}: a webhook needs properties.runbook.name`);
        else if (!runbooks.some((r) => String(r.name).toLowerCase() === runbook.toLowerCase())) c.problems.push(`${where(`/webhooks/${j}/properties/runbook/name`)}: no runbook '${runbook}' in automation account ${a.name}`);
        if (typeof p.expiryTime !== 'string' || Number.isNaN(Date.parse(p.expiryTime))) c.problems.push(`${where(`/webhooks/${j}/properties/expiryTime`)}: not a date-time`);
        return runbook ? [{ id, name: w.name, runbook, body, hash, isEnabled: p.isEnabled !== false, expiryTime: String(p.expiryTime), creationTime: String(p.creationTime ?? c.now) }] : [];
      });
      const tenantId = c.tenant.id;
      const common = { tenantId, subscriptionId: g.subscriptionId, resourceGroup: g.name };
      c.resources.push({ ...common, id: accountId, type: automationTypes.account, name: a.name, parentId: g.id, body: account, ...resourceTimes(account, c.now) });
      for (const r of runbooks) c.resources.push({ ...common, id: String(r.id), type: automationTypes.runbook, name: String(r.name), parentId: accountId, body: r, ...resourceTimes(r, c.now) });
      if (webhooks.length)
        c.writes.push(async (ctx, trx) => {
          const store = new AutomationStore(trx, ctx.cache);
          for (const w of webhooks) {
            await store.insertWebhook({ id: w.id, tenantId, accountIdLower: accountId.toLowerCase(), name: w.name, runbookName: w.runbook, isEnabled: w.isEnabled, expiryTime: w.expiryTime, creationTime: w.creationTime, lastInvokedTime: null, body: w.body }, w.hash, trx);
          }
        });
    });
  }
}

/** Adds the automation accounts of the store to the exported resource groups. */
export async function exportAutomation(db: Kysely<Database>, out: WorldFileData): Promise<void> {
  const [resources, hooks] = await Promise.all([
    db.selectFrom('arm_resources').select(['id_lower', 'parent_id_lower', 'type_lower', 'body']).where('type_lower', 'in', [automationTypes.account.toLowerCase(), automationTypes.runbook.toLowerCase()]).orderBy('id_lower').execute(),
    db.selectFrom('automation_webhooks').select(['account_id_lower', 'id_lower', 'token_hash', 'body']).orderBy('id_lower').execute(),
  ]);
  const groups = exportedGroups(out);
  for (const r of resources.filter((x) => x.type_lower === automationTypes.account.toLowerCase())) {
    const g = groups.get(r.parent_id_lower);
    if (!g) continue;
    const body = fromJson<Record<string, any>>(r.body)!;
    const runbooks = resources.filter((x) => x.parent_id_lower === r.id_lower && x.type_lower === automationTypes.runbook.toLowerCase()).map((x) => fileResource(fromJson<Record<string, any>>(x.body)!));
    const webhooks = hooks.filter((h) => h.account_id_lower === r.id_lower).map((h) => ({ ...fileResource(fromJson<Record<string, any>>(h.body)!), tokenHash: h.token_hash }));
    const account = { ...fileResource(body), ...(runbooks.length ? { runbooks } : {}), ...(webhooks.length ? { webhooks } : {}) };
    (g.automationAccounts ??= []).push(account as FileResource & { name: string });
    g.automationAccounts.sort(byKey((x) => x.name.toLowerCase()));
  }
}
