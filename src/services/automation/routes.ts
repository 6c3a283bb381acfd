/**
 * Routes of the automation area (spec: resource-manager §2.5, §4.6, §7, §9; reference §6):
 * automation accounts and runbooks (create/get/list/delete), webhooks (GET, PUT 201/200,
 * PATCH, DELETE, list by account with `$filter`, `generateUri`), the jobs list of an
 * account, and the webhook endpoint itself. A route table on the resource-manager kernel:
 * what each operation means is in `rules.ts` and `webhooks.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { armArea } from '../arm/kernel.ts';
import { AutomationResources, automationRules, bad } from './rules.ts';
import { maxWebhookBodyBytes, webhookInvokePath, webhookRules } from './webhooks.ts';

/**
 * api-versions of the automation operations, newest first: the spec's (§9) and the published
 * stable one the official clients send (2015-10-31, whose definitions have no `systemData`).
 */
export const automationApiVersions = ['2024-10-23', '2015-10-31'];

const action = (what: string) => `Vendor.Automation/automationAccounts/${what}`;
const base = '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Vendor.Automation/automationAccounts';
const accountUrl = `${base}/:automationAccountName`;
const runbookUrl = `${accountUrl}/runbooks/:runbookName`;
const webhookUrl = `${accountUrl}/webhooks/:webhookName`;

/** Registers the automation routes and the webhook endpoint. */
export function registerAutomationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const route = armArea(app, ctx, {
    apiVersions: automationApiVersions,
    noSystemDataVersions: ['2015-10-31'],
    invalidPathName: (param, value) => bad(param, `The value '${value}' of '${param}' is invalid: a name cannot contain '/' or control characters.`),
  });
  const resources = new AutomationResources(ctx);
  const rules = automationRules(resources);
  const webhooks = webhookRules(resources);

  // ---- automation accounts ----
  route({ method: 'PUT', url: accountUrl, action: 'Vendor.Automation/automationAccounts/write', handler: rules.putAccount });
  route({ method: 'GET', url: accountUrl, action: 'Vendor.Automation/automationAccounts/read', handler: rules.getAccount });
  route({ method: 'GET', url: base, action: 'Vendor.Automation/automationAccounts/read', handler: rules.listAccounts });
  route({ method: 'DELETE', url: accountUrl, action: 'Vendor.Automation/automationAccounts/delete', handler: rules.deleteAccount });

  // ---- runbooks ----
  route({ method: 'PUT', url: runbookUrl, action: action('runbooks/write'), handler: rules.putRunbook });
  route({ method: 'GET', url: runbookUrl, action: action('runbooks/read'), handler: rules.getRunbook });
  route({ method: 'GET', url: `${accountUrl}/runbooks`, action: action('runbooks/read'), handler: rules.listRunbooks });
  route({ method: 'DELETE', url: runbookUrl, action: action('runbooks/delete'), handler: rules.deleteRunbook });

  // ---- webhooks (spec §4.6; reference §6.1) ----
  route({ method: 'POST', url: `${accountUrl}/webhooks/generateUri`, action: action('webhooks/action'), handler: webhooks.generateUri });
  // A webhook's read is a function of its stored row and the caller: its answers are kept (kernel.ts `keep`).
  route({ method: 'GET', url: webhookUrl, action: action('webhooks/read'), handler: webhooks.getWebhook, keep: true });
  route({ method: 'PUT', url: webhookUrl, action: action('webhooks/write'), handler: webhooks.putWebhook });
  route({ method: 'PATCH', url: webhookUrl, action: action('webhooks/write'), handler: webhooks.patchWebhook });
  route({ method: 'DELETE', url: webhookUrl, action: action('webhooks/delete'), handler: webhooks.deleteWebhook });
  route({ method: 'GET', url: `${accountUrl}/webhooks`, action: action('webhooks/read'), handler: webhooks.listWebhooks });

  // ---- jobs (the real API's jobs list, for the jobs webhooks start) ----
  route({ method: 'GET', url: `${accountUrl}/jobs`, action: action('jobs/read'), handler: rules.listJobs });
  route({ method: 'GET', url: `${accountUrl}/jobs/:jobName`, action: action('jobs/read'), handler: rules.getJob });

  // ---- the webhook endpoint: POST {origin}/automation/webhooks?token=… (no bearer, no gateway) ----
  app.route({ method: 'POST', url: webhookInvokePath, config: { family: 'arm' }, bodyLimit: maxWebhookBodyBytes, handler: webhooks.invoke });
}
