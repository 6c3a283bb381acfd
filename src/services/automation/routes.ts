/**
 * Routes of the automation area (spec: resource-manager §2.5, §4.6, §7, §9; reference §6):
 * automation accounts and runbooks (create/get/list/delete), webhooks (GET, PUT 201/200,
 * PATCH, DELETE, list by account with `$filter`, `generateUri`), the jobs list of an
 * account, and the webhook endpoint itself.
 *
 * Webhook URIs point at Stratus: `POST {origin}/automation/webhooks?token=<token>` (no
 * bearer; the token is the credential and only its SHA-256 is stored). The URI comes back
 * only in the response that created the webhook; GET answers `""`, the list `null`
 * (reference §6.3). An invocation records a job and moves `lastInvokedTime`; the job runs
 * for {@link jobRunMs} of clock time and is then `Completed`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../core/errors/index.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { newUuid, randomToken } from '../../core/ids.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { compileFilter, ODataError, parseFilter } from '../../core/odata/index.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { armErrors, armRoute, systemDataFor, withoutSystemData, type ArmCall } from '../arm/gateway.ts';
import { ArmStore, type ArmResourceRow } from '../arm/store.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { firstValue, isJsonContent, nulPath } from '../../core/input.ts';
import { AutomationStore, tokenHash, webhookFields, type JobRow, type WebhookRow } from './store.ts';

/**
 * api-versions of the automation operations, newest first: the spec's (§9) and the published
 * stable one the official clients send (2015-10-31, whose definitions have no `systemData`:
 * {@link withoutSystemData}).
 */
export const automationApiVersions = ['2024-10-23', '2015-10-31'];
/** The api-versions whose resources carry no `systemData`. */
const noSystemDataVersions = new Set(['2015-10-31']);

/** The path webhook URIs point at (POST, `?token=`). */
export const webhookInvokePath = '/automation/webhooks';
/** Webhooks / jobs per page of their lists. */
export const automationPageSize = 20;
/** Accounts / runbooks per page of their lists. */
export const resourcePageSize = 50;
/** Clock time a webhook-started job runs before it is `Completed`, in ms. */
export const jobRunMs = 20_000;
/** Largest accepted webhook request body, in bytes. */
export const maxWebhookBodyBytes = 512 * 1024;

const ns = 'Vendor.Automation';
/** Resource types as the service spells them in responses. */
export const automationTypes = {
  account: `${ns}/AutomationAccounts`,
  runbook: `${ns}/AutomationAccounts/Runbooks`,
  webhook: `${ns}/AutomationAccounts/Webhooks`,
  job: `${ns}/AutomationAccounts/Jobs`,
};

const accountNamePattern = /^[A-Za-z0-9][-A-Za-z0-9]{4,48}[A-Za-z0-9]$/u;
const runbookNamePattern = /^[A-Za-z][-\w]{0,62}$/u;
const webhookNamePattern = /^[A-Za-z0-9][-\w. ()]{0,127}$/u;
const runbookTypes = ['Script', 'Graph', 'PowerShellWorkflow', 'PowerShell', 'GraphPowerShellWorkflow', 'GraphPowerShell', 'Python2', 'Python3', 'PowerShell72', 'Python'];
const tokenPattern = /^[A-Za-z0-9_-]{32,128}$/u;

const bad = (target: string, message: string) => armErrors.invalidParameter(target, message);

function obj(v: unknown, target: string, required: boolean): Record<string, unknown> {
  if (v === undefined || v === null) {
    if (required) throw bad(target, `The '${target}' member is required.`);
    return {};
  }
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(target, `The '${target}' member must be a JSON object.`);
  return v as Record<string, unknown>;
}
function optString(o: Record<string, unknown>, key: string, target: string, max: number): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) throw bad(target, `The value of '${target}' must be a string of at most ${max} characters.`);
  return v;
}
function optBool(o: Record<string, unknown>, key: string, target: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw bad(target, `The value of '${target}' must be true or false.`);
  return v;
}
function optDate(o: Record<string, unknown>, key: string, target: string): string | undefined {
  const s = optString(o, key, target, 40);
  if (s === undefined) return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/u.test(s) ? Date.parse(s) : NaN;
  if (Number.isNaN(ms)) throw bad(target, `The value '${s}' of '${target}' is not an ISO 8601 date-time.`);
  return new Date(ms).toISOString();
}
function optParameters(o: Record<string, unknown>, target: string): Record<string, string> | null | undefined {
  const v = o.parameters;
  if (v === undefined) return undefined;
  if (v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) throw bad(target, `The '${target}' member must be an object of strings.`);
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (typeof val !== 'string') throw bad(target, `The parameter '${k}' of '${target}' must be a string.`);
    out[k] = val;
  }
  return out;
}
function checkTags(v: unknown): Record<string, string> {
  const t = obj(v, 'tags', false);
  for (const [k, val] of Object.entries(t)) {
    if (typeof val !== 'string' || k.length < 1 || k.length > 512 || val.length > 256) throw bad('tags', `The tag '${k}' is invalid: names are 1 to 512 characters and values strings of at most 256.`);
  }
  return t as Record<string, string>;
}
/**
 * The JSON object body of a write. A body of another media type (form, XML, text, which
 * the app parses into an object or a buffer) → 415 `UnsupportedMediaType`; none → 400; a
 * string or key holding U+0000 anywhere → 400 naming its path.
 */
function bodyOf(req: FastifyRequest): Record<string, unknown> {
  if (req.body !== undefined && req.body !== null && !isJsonContent(req)) {
    throw new ApiError(415, 'UnsupportedMediaType', `The content media type '${req.headers['content-type'] ?? ''}' is not supported. Send 'application/json'.`);
  }
  const body = obj(req.body, 'body', true);
  const nul = nulPath(body);
  if (nul !== undefined) throw bad(nul, `The value of '${nul}' contains the character U+0000, which is not allowed.`);
  return body;
}
function byName(p: Principal): string {
  return p.userPrincipalName ?? p.appId;
}

/**
 * The decoded `$skipToken` (also `$skiptoken`) of a list request; undefined when absent.
 * @throws ApiError 400 `InvalidParameter` (target `$skipToken`) when it does not decode, holds U+0000 (a forged token) or `valid` refuses it.
 */
function skipTokenOf<T extends object>(req: FastifyRequest, valid: (t: T) => boolean): T | undefined {
  const q = req.query as Record<string, unknown>;
  const token = firstValue(q.$skipToken ?? q.$skiptoken);
  if (token === undefined) return undefined;
  const t = decodeToken<T>(token);
  if (!t || nulPath(t) !== undefined || !valid(t)) throw bad('$skipToken', `The value '${token}' of '$skipToken' is not valid.`);
  return t;
}

/** The token of a webhook URI made by generateUri (its path and the `token` parameter); undefined if it is not one. */
export function tokenOfUri(uri: string): string | undefined {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  if (u.pathname !== webhookInvokePath) return undefined;
  const t = u.searchParams.get('token');
  return t && tokenPattern.test(t) ? t : undefined;
}

/** The public webhook document with the URI as given (`""` on reads, `null` in lists). */
function showWebhook(w: WebhookRow, uri: string | null): Record<string, unknown> {
  return { ...w.body, properties: { ...w.body.properties, uri, lastInvokedTime: w.lastInvokedTime } };
}

/** A job as listed / read (reference: the real API's jobs). */
function showJob(accountId: string, j: JobRow, full: boolean): Record<string, unknown> {
  const done = nowMs() >= Date.parse(j.completesAt);
  const props: Record<string, unknown> = {
    runbook: { name: j.runbookName },
    jobId: j.jobId,
    creationTime: j.creationTime,
    status: done ? 'Completed' : 'Running',
    startTime: j.creationTime,
    endTime: done ? j.completesAt : null,
    lastModifiedTime: done ? j.completesAt : j.creationTime,
    provisioningState: done ? 'Succeeded' : 'Processing',
    runOn: j.runOn,
  };
  if (full) Object.assign(props, { startedBy: j.webhookName, statusDetails: 'None', exception: null, lastStatusModifiedTime: props.lastModifiedTime, parameters: j.parameters });
  return { id: `${accountId}/jobs/${j.jobId}`, name: j.jobId, type: automationTypes.job, properties: props };
}

/** Registers the automation routes and the webhook endpoint. */
export function registerAutomationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const arm = new ArmStore(ctx.store.db);
  const store = new AutomationStore(ctx.store.db);
  const base = '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Vendor.Automation/automationAccounts';
  const accountUrl = `${base}/:automationAccountName`;
  // Each path name is one segment: a decoded `/` (sent as `%2F`) would let e.g. the account
  // routes address a runbook (`automationAccounts/a%2Frunbooks%2Fr`), and PostgreSQL refuses
  // NUL in text, so a name with `/` or a control character is refused first.
  const route = (opts: Omit<Parameters<typeof armRoute>[2], 'apiVersions'>) =>
    armRoute(app, ctx, {
      ...opts,
      apiVersions: automationApiVersions,
      handler: async (req, reply, call) => {
        for (const [k, v] of Object.entries(req.params as Record<string, string>)) {
          if (typeof v === 'string' && /[/\u0000-\u001f\u007f]/u.test(v)) throw bad(k, `The value '${JSON.stringify(v).slice(1, -1)}' of '${k}' is invalid: a name cannot contain '/' or control characters.`);
        }
        const out = await opts.handler(req, reply, call);
        return noSystemDataVersions.has(call.apiVersion) ? withoutSystemData(out) : out;
      },
    });
  const params = (req: FastifyRequest) => req.params as Record<string, string>;
  const rgId = (req: FastifyRequest) => `/subscriptions/${params(req).subscriptionId}/resourceGroups/${params(req).resourceGroupName}`;

  /** `arm.putResource`, with a concurrent create of the same resource answered 409 instead of a 500. */
  const putTracked = async (row: Parameters<ArmStore['putResource']>[0]) => {
    try {
      return await arm.putResource(row);
    } catch (e) {
      if (isUniqueViolation(e)) throw new ApiError(409, 'Conflict', `The resource '${row.name}' was created by a concurrent request; retry.`);
      throw e;
    }
  };
  const getAccount = async (req: FastifyRequest): Promise<ArmResourceRow> => {
    const name = params(req).automationAccountName!;
    const row = await arm.getResource(`${rgId(req)}/providers/${ns}/automationAccounts/${name}`);
    if (!row) throw armErrors.resourceNotFound(`${ns}/automationAccounts/${name}`, params(req).resourceGroupName!);
    return row;
  };
  const webhookNotFound = (req: FastifyRequest) =>
    armErrors.resourceNotFound(`${ns}/automationAccounts/${params(req).automationAccountName}/webhooks/${params(req).webhookName}`, params(req).resourceGroupName!);
  const getWebhook = async (req: FastifyRequest, account: ArmResourceRow): Promise<WebhookRow> => {
    const w = await store.webhook(`${account.id}/webhooks/${params(req).webhookName}`);
    if (!w) throw webhookNotFound(req);
    return w;
  };

  const listResourcesPage = async (req: FastifyRequest, call: ArmCall, parentId: string, type: string, path: string) => {
    const after = skipTokenOf<{ a: string }>(req, (t) => typeof t.a === 'string')?.a;
    const rows = await arm.listResources(parentId, type, resourcePageSize + 1, after);
    const page = rows.slice(0, resourcePageSize);
    const body: Record<string, unknown> = { value: page.map((r) => r.body) };
    if (rows.length > resourcePageSize) body.nextLink = absoluteUrl(ctx.origin(), path, { 'api-version': call.apiVersion, $skipToken: encodeToken({ a: page.at(-1)!.id.toLowerCase() }) });
    return body;
  };

  // ---- automation accounts ----
  route({
    method: 'PUT',
    url: accountUrl,
    action: 'Vendor.Automation/automationAccounts/write',
    handler: async (req, reply, call) => {
      const name = params(req).automationAccountName!;
      if (!accountNamePattern.test(name)) throw bad('automationAccountName', `The automation account name '${name}' is invalid. It must be 6 to 50 letters, digits or hyphens, starting and ending with a letter or digit.`);
      const body = bodyOf(req);
      const location = optString(body, 'location', 'location', 64);
      if (!location) throw bad('location', "The 'location' member is required.");
      const props = obj(body.properties, 'properties', false);
      const sku = obj(props.sku, 'properties.sku', false);
      const skuName = optString(sku, 'name', 'properties.sku.name', 16) ?? 'Basic';
      if (skuName !== 'Basic' && skuName !== 'Free') throw bad('properties.sku.name', `The SKU '${skuName}' is invalid. Allowed values: Free, Basic.`);
      const tags = checkTags(body.tags);
      const id = `${rgId(req)}/providers/${ns}/automationAccounts/${name}`;
      const existing = await arm.getResource(id);
      const prev = existing?.body as any;
      const at = nowIso();
      const resource = {
        id: existing?.id ?? id,
        name: existing?.name ?? name,
        type: automationTypes.account,
        location: prev?.location ?? location,
        tags,
        systemData: systemDataFor(call.principal, at, prev?.systemData),
        properties: {
          sku: { name: skuName },
          state: 'Ok',
          creationTime: prev?.properties?.creationTime ?? at,
          lastModifiedTime: at,
          lastModifiedBy: byName(call.principal),
          publicNetworkAccess: true,
          disableLocalAuth: false,
        },
      };
      const created = await putTracked({ id: resource.id, tenantId: call.principal.tenantId, subscriptionId: params(req).subscriptionId!, resourceGroup: call.resourceGroup!.name, type: automationTypes.account, name: resource.name, parentId: rgId(req), body: resource, createdAt: existing?.createdAt ?? at, updatedAt: at });
      reply.code(created ? 201 : 200);
      return resource;
    },
  });
  route({ method: 'GET', url: accountUrl, action: 'Vendor.Automation/automationAccounts/read', handler: async (req) => (await getAccount(req)).body });
  route({
    method: 'GET',
    url: base,
    action: 'Vendor.Automation/automationAccounts/read',
    handler: async (req, _r, call) => listResourcesPage(req, call, rgId(req), automationTypes.account, `${rgId(req)}/providers/${ns}/automationAccounts`),
  });
  route({
    method: 'DELETE',
    url: accountUrl,
    action: 'Vendor.Automation/automationAccounts/delete',
    handler: async (req, reply) => {
      const id = `${rgId(req)}/providers/${ns}/automationAccounts/${params(req).automationAccountName}`;
      const existed = await ctx.store.transaction(async (tx) => {
        await store.deleteForAccount(id.toLowerCase(), { jobs: true }, tx);
        return arm.deleteResource(id, tx);
      });
      reply.code(existed ? 200 : 204);
      return reply.send();
    },
  });

  // ---- runbooks ----
  const runbookUrl = `${accountUrl}/runbooks/:runbookName`;
  route({
    method: 'PUT',
    url: runbookUrl,
    action: 'Vendor.Automation/automationAccounts/runbooks/write',
    handler: async (req, reply, call) => {
      const account = await getAccount(req);
      const name = params(req).runbookName!;
      if (!runbookNamePattern.test(name)) throw bad('runbookName', `The runbook name '${name}' is invalid. It must start with a letter and have at most 63 letters, digits, '_' or '-'.`);
      const body = bodyOf(req);
      const props = obj(body.properties, 'properties', true);
      const runbookType = optString(props, 'runbookType', 'properties.runbookType', 32);
      if (!runbookType || !runbookTypes.includes(runbookType)) throw bad('properties.runbookType', `The runbook type '${runbookType ?? ''}' is invalid. Allowed values: ${runbookTypes.join(', ')}.`);
      const description = optString(props, 'description', 'properties.description', 512);
      const logVerbose = optBool(props, 'logVerbose', 'properties.logVerbose') ?? false;
      const logProgress = optBool(props, 'logProgress', 'properties.logProgress') ?? false;
      const logActivityTrace = props.logActivityTrace ?? 0;
      if (!Number.isSafeInteger(logActivityTrace) || (logActivityTrace as number) < 0) throw bad('properties.logActivityTrace', "The value of 'properties.logActivityTrace' must be a non-negative integer.");
      const published = props.publishContentLink !== undefined && props.publishContentLink !== null;
      const tags = checkTags(body.tags);
      const id = `${account.id}/runbooks/${name}`;
      const existing = await arm.getResource(id);
      const prev = existing?.body as any;
      const at = nowIso();
      const resource = {
        id: existing?.id ?? id,
        name: existing?.name ?? name,
        type: automationTypes.runbook,
        location: optString(body, 'location', 'location', 64) ?? (account.body as any).location,
        tags,
        systemData: systemDataFor(call.principal, at, prev?.systemData),
        properties: {
          runbookType,
          state: published || prev?.properties?.state === 'Published' ? 'Published' : 'New',
          logVerbose,
          logProgress,
          logActivityTrace,
          jobCount: 0,
          description,
          creationTime: prev?.properties?.creationTime ?? at,
          lastModifiedTime: at,
          lastModifiedBy: byName(call.principal),
          provisioningState: 'Succeeded',
        },
      };
      const created = await putTracked({ id: resource.id, tenantId: call.principal.tenantId, subscriptionId: account.subscriptionId, resourceGroup: account.resourceGroup, type: automationTypes.runbook, name: resource.name, parentId: account.id, body: resource, createdAt: existing?.createdAt ?? at, updatedAt: at });
      reply.code(created ? 201 : 200);
      return resource;
    },
  });
  const getRunbook = async (req: FastifyRequest, account: ArmResourceRow, name: string) => {
    const row = await arm.getResource(`${account.id}/runbooks/${name}`);
    return row && row.type === automationTypes.runbook.toLowerCase() ? row : undefined;
  };
  route({
    method: 'GET',
    url: runbookUrl,
    action: 'Vendor.Automation/automationAccounts/runbooks/read',
    handler: async (req) => {
      const account = await getAccount(req);
      const row = await getRunbook(req, account, params(req).runbookName!);
      if (!row) throw armErrors.resourceNotFound(`${ns}/automationAccounts/${account.name}/runbooks/${params(req).runbookName}`, params(req).resourceGroupName!);
      return row.body;
    },
  });
  route({
    method: 'GET',
    url: `${accountUrl}/runbooks`,
    action: 'Vendor.Automation/automationAccounts/runbooks/read',
    handler: async (req, _r, call) => {
      const account = await getAccount(req);
      return listResourcesPage(req, call, account.id, automationTypes.runbook, `${account.id}/runbooks`);
    },
  });
  route({
    method: 'DELETE',
    url: runbookUrl,
    action: 'Vendor.Automation/automationAccounts/runbooks/delete',
    handler: async (req, reply) => {
      const account = await getAccount(req);
      const row = await getRunbook(req, account, params(req).runbookName!);
      if (row) {
        await ctx.store.transaction(async (tx) => {
          await store.deleteForAccount(account.id.toLowerCase(), { runbookName: row.name, jobs: false }, tx);
          await arm.deleteResource(row.id, tx);
        });
      }
      reply.code(row ? 200 : 204);
      return reply.send();
    },
  });

  // ---- webhooks (spec §4.6; reference §6.1) ----
  const webhookUrl = `${accountUrl}/webhooks/:webhookName`;
  route({
    method: 'POST',
    url: `${accountUrl}/webhooks/generateUri`,
    action: 'Vendor.Automation/automationAccounts/webhooks/action',
    handler: async (req, reply) => {
      await getAccount(req);
      reply.type('application/json');
      return JSON.stringify(absoluteUrl(ctx.origin(), webhookInvokePath, { token: randomToken(32) }));
    },
  });
  route({
    method: 'GET',
    url: webhookUrl,
    action: 'Vendor.Automation/automationAccounts/webhooks/read',
    handler: async (req) => showWebhook(await getWebhook(req, await getAccount(req)), ''),
  });
  route({
    method: 'PUT',
    url: webhookUrl,
    action: 'Vendor.Automation/automationAccounts/webhooks/write',
    handler: async (req, reply, call) => {
      const account = await getAccount(req);
      const name = params(req).webhookName!;
      if (!webhookNamePattern.test(name) || name.endsWith('.') || name.endsWith(' ')) throw bad('webhookName', `The webhook name '${name}' is invalid. It must be 1 to 128 letters, digits, spaces, '-', '_', '.', '(' or ')', start with a letter or digit and not end with '.' or a space.`);
      const body = bodyOf(req);
      if (body.name !== undefined && body.name !== name) throw bad('name', `The name '${String(body.name)}' in the body does not match the webhook name '${name}' of the path.`);
      const props = obj(body.properties, 'properties', true);
      const runbookName = optString(obj(props.runbook, 'properties.runbook', true), 'name', 'properties.runbook.name', 256);
      if (!runbookName) throw bad('properties.runbook.name', "The 'properties.runbook.name' member is required.");
      const runbook = await getRunbook(req, account, runbookName);
      if (!runbook) throw bad('properties.runbook.name', `The runbook '${runbookName}' was not found in automation account '${account.name}'.`);
      const isEnabled = optBool(props, 'isEnabled', 'properties.isEnabled');
      const expiryTime = optDate(props, 'expiryTime', 'properties.expiryTime');
      const parameters = optParameters(props, 'properties.parameters');
      const runOn = optString(props, 'runOn', 'properties.runOn', 128);
      const description = optString(props, 'description', 'properties.description', 512);
      const uri = optString(props, 'uri', 'properties.uri', 2048);
      const id = `${account.id}/webhooks/${name}`;
      const existing = await store.webhook(id);
      const at = nowIso();
      if (expiryTime !== undefined && Date.parse(expiryTime) <= nowMs() && !existing) throw bad('properties.expiryTime', `The expiry time '${expiryTime}' must be in the future.`);
      let hash: string | undefined;
      if (!existing) {
        const token = uri ? tokenOfUri(uri) : undefined;
        if (!uri) throw bad('properties.uri', "The 'properties.uri' member is required when a webhook is created; get one from generateUri.");
        if (!token) throw bad('properties.uri', `The uri '${uri}' is not a webhook uri made by generateUri.`);
        hash = tokenHash(token);
        if (await store.tokenInUse(hash)) throw new ApiError(409, 'Conflict', 'Another webhook already uses this uri; get a new one from generateUri.');
      } else if (uri && uri !== '') {
        // The URI may be sent again unchanged; another one is refused.
        const token = tokenOfUri(uri);
        const owner = token ? await store.webhookByTokenHash(tokenHash(token)) : undefined;
        if (owner?.id.toLowerCase() !== id.toLowerCase()) throw bad('properties.uri', 'The uri of a webhook cannot be changed.');
      }
      const prev = existing?.body as any;
      const row: WebhookRow = {
        id: existing?.id ?? id,
        tenantId: call.principal.tenantId,
        accountIdLower: account.id.toLowerCase(),
        name: existing?.name ?? name,
        runbookName: runbook.name,
        isEnabled: isEnabled ?? false,
        expiryTime: expiryTime ?? prev?.properties?.expiryTime ?? new Date(nowMs() + 365 * 86_400_000).toISOString(),
        creationTime: existing?.creationTime ?? at,
        lastInvokedTime: existing?.lastInvokedTime ?? null,
        body: {},
      };
      row.body = {
        id: row.id,
        name: row.name,
        type: automationTypes.webhook,
        systemData: systemDataFor(call.principal, at, prev?.systemData),
        properties: {
          isEnabled: row.isEnabled,
          expiryTime: row.expiryTime,
          runbook: { name: runbook.name },
          parameters: parameters === undefined ? null : parameters,
          runOn: runOn ?? null,
          creationTime: row.creationTime,
          lastModifiedBy: byName(call.principal),
          lastModifiedTime: at,
          ...(description !== undefined ? { description } : prev?.properties?.description !== undefined ? { description: prev.properties.description } : {}),
        },
      };
      if (existing) {
        await store.updateWebhook(row);
        reply.code(200);
        return showWebhook(row, '');
      }
      try {
        await store.insertWebhook(row, hash!);
      } catch (e) {
        // A concurrent create of the same webhook or with the same URI won the race.
        if (isUniqueViolation(e)) throw new ApiError(409, 'Conflict', `The webhook '${name}' or its uri was created by a concurrent request; read it and retry.`);
        throw e;
      }
      reply.code(201);
      return showWebhook(row, uri!);
    },
  });
  route({
    method: 'PATCH',
    url: webhookUrl,
    action: 'Vendor.Automation/automationAccounts/webhooks/write',
    handler: async (req, _reply, call) => {
      const account = await getAccount(req);
      const w = await getWebhook(req, account);
      const body = bodyOf(req);
      if (body.name !== undefined && body.name !== w.name) throw bad('name', `The name '${String(body.name)}' in the body does not match the webhook name '${w.name}' of the path.`);
      const props = obj(body.properties, 'properties', false);
      const isEnabled = optBool(props, 'isEnabled', 'properties.isEnabled');
      const runOn = optString(props, 'runOn', 'properties.runOn', 128);
      const parameters = optParameters(props, 'properties.parameters');
      const description = optString(props, 'description', 'properties.description', 512);
      const at = nowIso();
      const p = { ...w.body.properties };
      if (isEnabled !== undefined) p.isEnabled = isEnabled;
      if (props.runOn !== undefined) p.runOn = runOn ?? null;
      if (parameters !== undefined) p.parameters = parameters;
      if (description !== undefined) p.description = description;
      p.lastModifiedBy = byName(call.principal);
      p.lastModifiedTime = at;
      const row: WebhookRow = { ...w, isEnabled: p.isEnabled, body: { ...w.body, systemData: systemDataFor(call.principal, at, w.body.systemData), properties: p } };
      await store.updateWebhook(row);
      return showWebhook(row, '');
    },
  });
  route({
    method: 'DELETE',
    url: webhookUrl,
    action: 'Vendor.Automation/automationAccounts/webhooks/delete',
    handler: async (req, reply) => {
      const account = await getAccount(req);
      if (!(await store.deleteWebhook(`${account.id}/webhooks/${params(req).webhookName}`))) throw webhookNotFound(req);
      reply.code(200);
      return reply.send();
    },
  });
  route({
    method: 'GET',
    url: `${accountUrl}/webhooks`,
    action: 'Vendor.Automation/automationAccounts/webhooks/read',
    handler: async (req, _r, call) => {
      const account = await getAccount(req);
      const q = req.query as Record<string, unknown>;
      const filterText = firstValue(q.$filter ?? q.filter);
      let filter;
      if (filterText !== undefined && filterText.trim() !== '') {
        try {
          filter = compileFilter(parseFilter(filterText), webhookFields);
        } catch (e) {
          if (e instanceof ODataError) throw bad('$filter', `The $filter expression '${filterText}' is invalid${e.position !== undefined ? ` at position ${e.position}` : ''}: ${e.message}`);
          throw e;
        }
      }
      const after = skipTokenOf<{ a: string }>(req, (t) => typeof t.a === 'string')?.a;
      const rows = await store.listWebhooks(account.id.toLowerCase(), automationPageSize + 1, after, filter);
      const page = rows.slice(0, automationPageSize);
      const body: Record<string, unknown> = { value: page.map((w) => showWebhook(w, null)) };
      if (rows.length > automationPageSize) body.nextLink = absoluteUrl(ctx.origin(), `${account.id}/webhooks`, { 'api-version': call.apiVersion, $filter: filterText, $skipToken: encodeToken({ a: page.at(-1)!.id.toLowerCase() }) });
      return body;
    },
  });

  // ---- jobs (the real API's jobs list, for the jobs webhooks start) ----
  route({
    method: 'GET',
    url: `${accountUrl}/jobs`,
    action: 'Vendor.Automation/automationAccounts/jobs/read',
    handler: async (req, _r, call) => {
      const account = await getAccount(req);
      const before = skipTokenOf<{ s: number }>(req, (t) => Number.isSafeInteger(t.s))?.s;
      const rows = await store.listJobs(account.id.toLowerCase(), automationPageSize + 1, before);
      const page = rows.slice(0, automationPageSize);
      const body: Record<string, unknown> = { value: page.map((j) => showJob(account.id, j, false)) };
      if (rows.length > automationPageSize) body.nextLink = absoluteUrl(ctx.origin(), `${account.id}/jobs`, { 'api-version': call.apiVersion, $skipToken: encodeToken({ s: page.at(-1)!.seq }) });
      return body;
    },
  });
  route({
    method: 'GET',
    url: `${accountUrl}/jobs/:jobName`,
    action: 'Vendor.Automation/automationAccounts/jobs/read',
    handler: async (req) => {
      const account = await getAccount(req);
      const j = await store.job(account.id.toLowerCase(), params(req).jobName!);
      if (!j) throw armErrors.resourceNotFound(`${ns}/automationAccounts/${account.name}/jobs/${params(req).jobName}`, params(req).resourceGroupName!);
      return showJob(account.id, j, true);
    },
  });

  // ---- the webhook endpoint: POST {origin}/automation/webhooks?token=… (no bearer) ----
  app.route({
    method: 'POST',
    url: webhookInvokePath,
    config: { family: 'arm' },
    bodyLimit: maxWebhookBodyBytes,
    handler: async (req, reply) => {
      const token = firstValue((req.query as Record<string, unknown>).token);
      if (!token || !tokenPattern.test(token)) throw new ApiError(400, 'BadRequest', 'The webhook token in the URL is missing or invalid.');
      const w = await store.webhookByTokenHash(tokenHash(token));
      if (!w) throw new ApiError(404, 'NotFound', 'The webhook was not found.');
      if (!w.isEnabled) throw new ApiError(400, 'BadRequest', 'The webhook is disabled.');
      if (Date.parse(w.expiryTime) <= nowMs()) throw new ApiError(400, 'BadRequest', 'The webhook has expired.');
      if (!(await arm.getResource(`${w.accountIdLower}/runbooks/${w.runbookName}`))) throw new ApiError(404, 'NotFound', `The runbook '${w.runbookName}' of the webhook was not found.`);
      const raw = req.body;
      const requestBody = raw === undefined || raw === null ? '' : Buffer.isBuffer(raw) ? raw.toString('utf8') : typeof raw === 'string' ? raw : JSON.stringify(raw);
      const header: Record<string, string> = {};
      for (const h of ['content-type', 'user-agent', 'x-vendor-client-request-id']) {
        const v = req.headers[h];
        if (typeof v === 'string') header[h] = v;
      }
      const start = nowMs();
      const job: JobRow = {
        jobId: newUuid(),
        tenantId: w.tenantId,
        accountIdLower: w.accountIdLower,
        runbookName: w.runbookName,
        webhookName: w.name,
        runOn: (w.body.properties?.runOn as string | null) ?? null,
        parameters: { ...((w.body.properties?.parameters as Record<string, string> | null) ?? {}), WebhookData: JSON.stringify({ WebhookName: w.name, RequestBody: requestBody, RequestHeader: header }) },
        creationTime: new Date(start).toISOString(),
        completesAt: new Date(start + jobRunMs).toISOString(),
      };
      await store.recordInvocation(w.id.toLowerCase(), job);
      reply.code(202);
      return { JobIds: [job.jobId] };
    },
  });
}
