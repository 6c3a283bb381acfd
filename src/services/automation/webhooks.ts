/**
 * What the webhook operations mean (spec: resource-manager §4.6; reference §6.1, §6.3):
 * GET, PUT (201/200), PATCH, DELETE, the list by account with `$filter`, `generateUri`, and
 * the webhook endpoint itself.
 *
 * Webhook URIs point at Stratus: `POST {origin}/automation/webhooks?token=<token>` (no
 * bearer; the token is the credential and only its SHA-256 is stored). The URI comes back
 * only in the response that created the webhook; GET answers `""`, the list `null`
 * (reference §6.3). An invocation records a job and moves `lastInvokedTime`; the job runs
 * for {@link jobRunMs} of clock time and is then `Completed`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import { errors } from '../../core/errors/index.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { newUuid, randomToken } from '../../core/ids.ts';
import { firstValue } from '../../core/input.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import { compileFilter, parseFilter } from '../../core/odata/index.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { odataOption, queryValue } from '../arm/input.ts';
import { systemDataFor } from '../arm/kernel.ts';
import { keptWhileKeyUnchanged } from '../arm/kept-answers.ts';
import type { ArmResourceRow } from '../arm/store.ts';
import { tokenHash, webhookCacheName, webhookFields, webhookSource, type JobRow, type WebhookRow } from './store.ts';
import { automationPageSize, automationTypes, bad, byName, input, jobRunMs, notFound, ns, params, type AutomationResources } from './rules.ts';

/** The path webhook URIs point at (POST, `?token=`). */
export const webhookInvokePath = '/automation/webhooks';
/** Largest accepted webhook request body, in bytes. */
export const maxWebhookBodyBytes = 512 * 1024;

const webhookNamePattern = /^[A-Za-z0-9][-\w. ()]{0,127}$/u;
const tokenPattern = /^[A-Za-z0-9_-]{32,128}$/u;

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

/**
 * The JSON text of a webhook read (`showWebhook(w, "")`), made once per stored version of a
 * cached row ({@link webhookSource}: every webhook write and invocation replaces the cached row).
 * The text depends on the stored document and `last_invoked_time` only, so it is also kept by
 * webhook id with that version ({@link renderedWebhooks}): a row read again after its cache
 * area was emptied — by any write of a tracked resource, a webhook PUT among them — is not
 * parsed and rendered again while its version is the one rendered (issue 31: the webhook GET's
 * miss path; the stored text is compared, never trusted by key alone).
 */
const readTexts = new WeakMap<object, string>();
const renderedWebhooks = new LRUCache<string, { body: string; lastInvokedTime: string | null; text: string }>({ max: 20_000 });
function webhookReadText(w: WebhookRow): string {
  const source = w[webhookSource] as { id_lower?: unknown; body?: unknown; last_invoked_time?: unknown } | undefined;
  let t = source && readTexts.get(source);
  if (t !== undefined) return t;
  if (!source || typeof source.id_lower !== 'string' || typeof source.body !== 'string') return JSON.stringify(showWebhook(w, ''));
  const lastInvokedTime = (source.last_invoked_time as string | null | undefined) ?? null;
  const kept = renderedWebhooks.get(source.id_lower);
  if (kept && kept.body === source.body && kept.lastInvokedTime === lastInvokedTime) t = kept.text;
  else {
    t = JSON.stringify(showWebhook(w, ''));
    renderedWebhooks.set(source.id_lower, { body: source.body, lastInvokedTime, text: t });
  }
  readTexts.set(source, t);
  return t;
}

/** The webhook operations and the webhook endpoint (handlers of `routes.ts`). */
export function webhookRules(r: AutomationResources) {
  const { store } = r;
  const webhookNotFound = (req: FastifyRequest) => notFound(req, `${ns}/automationAccounts/${params(req).automationAccountName}/webhooks/${params(req).webhookName}`);
  const webhook = async (req: FastifyRequest, account: ArmResourceRow): Promise<WebhookRow> => {
    const w = await store.webhook(`${account.id}/webhooks/${params(req).webhookName}`);
    if (!w) throw webhookNotFound(req);
    return w;
  };
  /** The token hash of a new webhook's `uri` (made by generateUri, used by no other webhook). */
  const newTokenHash = async (uri: string | undefined): Promise<string> => {
    const token = uri ? tokenOfUri(uri) : undefined;
    if (!uri) throw bad('properties.uri', "The 'properties.uri' member is required when a webhook is created; get one from generateUri.");
    if (!token) throw bad('properties.uri', `The uri '${uri}' is not a webhook uri made by generateUri.`);
    const hash = tokenHash(token);
    if (await store.tokenInUse(hash)) throw errors.arm.webhookUriInUse();
    return hash;
  };

  return {
    async generateUri(req: FastifyRequest, reply: FastifyReply) {
      await r.account(req);
      reply.type('application/json');
      return JSON.stringify(absoluteUrl(r.ctx.origin(), webhookInvokePath, { token: randomToken(32) }));
    },
    async getWebhook(req: FastifyRequest, reply: FastifyReply) {
      const w = await webhook(req, await r.account(req));
      // Its one keyed row: a kept answer outlives writes of other webhooks.
      keptWhileKeyUnchanged(req, webhookCacheName, w.id.toLowerCase());
      const text = webhookReadText(w);
      reply.type('application/json; charset=utf-8');
      return text;
    },
    /** PUT webhook: a runbook of the account and a `uri` from generateUri on create (it cannot change later); 201 with the uri, 200 without. */
    async putWebhook(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      const name = params(req).webhookName!;
      if (!webhookNamePattern.test(name) || name.endsWith('.') || name.endsWith(' ')) {
        throw bad('webhookName', `The webhook name '${name}' is invalid. It must be 1 to 128 letters, digits, spaces, '-', '_', '.', '(' or ')', start with a letter or digit and not end with '.' or a space.`);
      }
      const body = input.body(req);
      if (body.name !== undefined && body.name !== name) throw bad('name', `The name '${String(body.name)}' in the body does not match the webhook name '${name}' of the path.`);
      const props = input.member(body.properties, 'properties', true);
      const runbookName = input.string(input.member(props.runbook, 'properties.runbook', true), 'name', 'properties.runbook.name', 256);
      if (!runbookName) throw bad('properties.runbook.name', "The 'properties.runbook.name' member is required.");
      const runbook = await r.runbook(account, runbookName);
      if (!runbook) throw bad('properties.runbook.name', `The runbook '${runbookName}' was not found in automation account '${account.name}'.`);
      const isEnabled = input.bool(props, 'isEnabled', 'properties.isEnabled');
      const expiryTime = input.date(props, 'expiryTime', 'properties.expiryTime');
      const parameters = input.stringMap(props.parameters, 'properties.parameters');
      const runOn = input.string(props, 'runOn', 'properties.runOn', 128);
      const description = input.string(props, 'description', 'properties.description', 512);
      const uri = input.string(props, 'uri', 'properties.uri', 2048);
      const id = `${account.id}/webhooks/${name}`;
      const existing = await store.webhook(id);
      const at = nowIso();
      if (expiryTime !== undefined && Date.parse(expiryTime) <= nowMs() && !existing) throw bad('properties.expiryTime', `The expiry time '${expiryTime}' must be in the future.`);
      let hash: string | undefined;
      if (!existing) hash = await newTokenHash(uri);
      else if (uri && uri !== '') {
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
        await store.updateWebhook(row, req.raw);
        reply.code(200);
        return showWebhook(row, '');
      }
      try {
        await store.insertWebhook(row, hash!);
      } catch (e) {
        // A concurrent create of the same webhook or with the same URI won the race.
        if (isUniqueViolation(e)) throw errors.arm.concurrentWebhookCreate({ name });
        throw e;
      }
      reply.code(201);
      return showWebhook(row, uri!);
    },
    /** PATCH webhook: `isEnabled`, `runOn`, `parameters`, `description`. */
    async patchWebhook(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const w = await webhook(req, await r.account(req));
      const body = input.body(req);
      if (body.name !== undefined && body.name !== w.name) throw bad('name', `The name '${String(body.name)}' in the body does not match the webhook name '${w.name}' of the path.`);
      const props = input.member(body.properties, 'properties', false);
      const isEnabled = input.bool(props, 'isEnabled', 'properties.isEnabled');
      const runOn = input.string(props, 'runOn', 'properties.runOn', 128);
      const parameters = input.stringMap(props.parameters, 'properties.parameters');
      const description = input.string(props, 'description', 'properties.description', 512);
      const at = nowIso();
      const p = { ...w.body.properties };
      if (isEnabled !== undefined) p.isEnabled = isEnabled;
      if (props.runOn !== undefined) p.runOn = runOn ?? null;
      if (parameters !== undefined) p.parameters = parameters;
      if (description !== undefined) p.description = description;
      p.lastModifiedBy = byName(call.principal);
      p.lastModifiedTime = at;
      const row: WebhookRow = { ...w, isEnabled: p.isEnabled, body: { ...w.body, systemData: systemDataFor(call.principal, at, w.body.systemData), properties: p } };
      await store.updateWebhook(row, req.raw);
      return showWebhook(row, '');
    },
    async deleteWebhook(req: FastifyRequest, reply: FastifyReply) {
      const account = await r.account(req);
      if (!(await store.deleteWebhook(`${account.id}/webhooks/${params(req).webhookName}`))) throw webhookNotFound(req);
      reply.code(200);
      return reply.send();
    },
    /** The webhooks of an account (`$filter` on the webhook fields), `uri` null. */
    async listWebhooks(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      const filterText = queryValue(req, '$filter', 'filter');
      const filter = odataOption('$filter', filterText, (text) => compileFilter(parseFilter(text), webhookFields), (message) => bad('$filter', message));
      const after = r.skipToken<{ a: string }>(req, (t) => typeof t.a === 'string')?.a;
      const rows = await store.listWebhooks(account.id.toLowerCase(), automationPageSize + 1, after, filter);
      const page = rows.slice(0, automationPageSize);
      const body: Record<string, unknown> = { value: page.map((w) => showWebhook(w, null)) };
      if (rows.length > automationPageSize) {
        body.nextLink = absoluteUrl(r.ctx.origin(), `${account.id}/webhooks`, { 'api-version': call.apiVersion, $filter: filterText, $skipToken: encodeToken({ a: page.at(-1)!.id.toLowerCase() }) });
      }
      return body;
    },

    /** The webhook endpoint (no bearer; the token is the credential): records a job; 202 with its id. */
    async invoke(req: FastifyRequest, reply: FastifyReply) {
      const token = firstValue((req.query as Record<string, unknown>).token);
      if (!token || !tokenPattern.test(token)) throw errors.arm.invalidWebhookToken();
      const w = await store.webhookByTokenHash(tokenHash(token));
      if (!w) throw errors.arm.webhookNotFound();
      if (!w.isEnabled) throw errors.arm.webhookDisabled();
      if (Date.parse(w.expiryTime) <= nowMs()) throw errors.arm.webhookExpired();
      if (!(await r.arm.getResource(`${w.accountIdLower}/runbooks/${w.runbookName}`))) throw errors.arm.webhookRunbookNotFound({ runbook: w.runbookName });
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
  };
}
