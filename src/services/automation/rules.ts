/**
 * What the automation operations mean (spec: resource-manager §2.5, §4.6, §7; reference §6):
 * automation accounts, runbooks and the jobs list of an account, declared on the
 * resource-manager kernel (`../arm/kernel.ts`); webhooks are in `webhooks.ts`. Every error
 * is `errors.arm`'s: 400 `InvalidParameter` naming the member or path name, 404
 * `ResourceNotFound`, 409 `Conflict`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowMs } from '../../core/clock.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { ArmInput, skipToken } from '../arm/input.ts';
import { systemDataFor, TrackedResources } from '../arm/kernel.ts';
import type { ArmResourceRow } from '../arm/store.ts';
import { AutomationStore, type JobRow } from './store.ts';

/** Webhooks / jobs per page of their lists. */
export const automationPageSize = 20;
/** Accounts / runbooks per page of their lists. */
export const resourcePageSize = 50;
/** Clock time a webhook-started job runs before it is `Completed`, in ms. */
export const jobRunMs = 20_000;

/** The provider namespace of the area. */
export const ns = 'Vendor.Automation';
/** Resource types as the service spells them in responses. */
export const automationTypes = {
  account: `${ns}/AutomationAccounts`,
  runbook: `${ns}/AutomationAccounts/Runbooks`,
  webhook: `${ns}/AutomationAccounts/Webhooks`,
  job: `${ns}/AutomationAccounts/Jobs`,
};

const accountNamePattern = /^[A-Za-z0-9][-A-Za-z0-9]{4,48}[A-Za-z0-9]$/u;
const runbookNamePattern = /^[A-Za-z][-\w]{0,62}$/u;
const runbookTypes = ['Script', 'Graph', 'PowerShellWorkflow', 'PowerShell', 'GraphPowerShellWorkflow', 'GraphPowerShell', 'Python2', 'Python3', 'PowerShell72', 'Python'];

/** 400 `InvalidParameter` naming `target`. */
export const bad = (target: string | undefined, message: string) => errors.arm.invalidParameter({ message }, { target });

/** Body and member validation with the area's errors (`InvalidParameter`; the body is the member `body`). */
export const input = new ArmInput({ invalid: bad, unsupportedMediaType: (contentType) => errors.arm.bodyNotJson({ contentType }), bodyMember: 'body' });

/** The skip token spellings the area reads. */
const skipTokenNames = ['$skipToken', '$skiptoken'];

/** 400 `InvalidParameter` (target `$skipToken`) for a token that does not decode. */
export const invalidSkipToken = (token: string) => bad('$skipToken', `The value '${token}' of '$skipToken' is not valid.`);

/** Who last modified a resource, as the service writes it. */
export function byName(p: Principal): string {
  return p.userPrincipalName ?? p.appId;
}

/** The path's parameters. */
export const params = (req: FastifyRequest) => req.params as Record<string, string>;
/** The resource group id of the path. */
export const rgId = (req: FastifyRequest) => `/subscriptions/${params(req).subscriptionId}/resourceGroups/${params(req).resourceGroupName}`;

/** 404 `ResourceNotFound` for `typeAndName` below the path's resource group. */
export const notFound = (req: FastifyRequest, typeAndName: string) => errors.arm.resourceNotFound({ typeAndName, resourceGroup: params(req).resourceGroupName! });

/** The automation resources (accounts and runbooks tracked in `arm_resources`; webhooks and jobs in the area's tables). */
export class AutomationResources extends TrackedResources {
  readonly store: AutomationStore;

  constructor(ctx: AppContext) {
    super(ctx, { pageSize: resourcePageSize, skipTokenNames, invalidSkipToken, concurrentCreate: (name) => errors.arm.concurrentCreate({ name }) });
    this.store = new AutomationStore(ctx.store.db, ctx.cache);
  }

  /** The account of the path. @throws 404 `ResourceNotFound`. */
  account(req: FastifyRequest): Promise<ArmResourceRow> {
    const name = params(req).automationAccountName!;
    return this.require(`${rgId(req)}/providers/${ns}/automationAccounts/${name}`, () => notFound(req, `${ns}/automationAccounts/${name}`));
  }

  /** The runbook `name` of `account`; undefined when there is none. */
  runbook(account: ArmResourceRow, name: string): Promise<ArmResourceRow | undefined> {
    return this.find(`${account.id}/runbooks/${name}`, automationTypes.runbook);
  }

  /** A page of the request's skip token (`{a}`: after an id; `{s}`: before a job sequence). */
  skipToken<T extends object>(req: FastifyRequest, valid: (t: T) => boolean): T | undefined {
    return skipToken<T>(req, skipTokenNames, valid, invalidSkipToken);
  }
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

/** The account, runbook and job operations (handlers of `routes.ts`). */
export function automationRules(r: AutomationResources) {
  const { store } = r;
  return {
    /** PUT account: `location` required, SKU Free or Basic. */
    async putAccount(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const name = params(req).automationAccountName!;
      if (!accountNamePattern.test(name)) throw bad('automationAccountName', `The automation account name '${name}' is invalid. It must be 6 to 50 letters, digits or hyphens, starting and ending with a letter or digit.`);
      const body = input.body(req);
      const location = input.string(body, 'location', 'location', 64);
      if (!location) throw bad('location', "The 'location' member is required.");
      const props = input.member(body.properties, 'properties', false);
      const sku = input.member(props.sku, 'properties.sku', false);
      const skuName = input.string(sku, 'name', 'properties.sku.name', 16) ?? 'Basic';
      if (skuName !== 'Basic' && skuName !== 'Free') throw bad('properties.sku.name', `The SKU '${skuName}' is invalid. Allowed values: Free, Basic.`);
      const tags = input.tags(body.tags);
      const target = { id: `${rgId(req)}/providers/${ns}/automationAccounts/${name}`, name, type: automationTypes.account, parentId: rgId(req), tenantId: call.principal.tenantId, subscriptionId: params(req).subscriptionId!, resourceGroup: call.resourceGroup!.name };
      return r.createOrUpdate(reply, target, (existing, at, names) => {
        const prev = existing?.body as any;
        return {
          ...names,
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
      });
    },
    async getAccount(req: FastifyRequest) {
      return (await r.account(req)).body;
    },
    async listAccounts(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      return r.list(req, call, rgId(req), automationTypes.account, `${rgId(req)}/providers/${ns}/automationAccounts`);
    },
    /** DELETE account: with its runbooks, webhooks and jobs; 200, or 204 when there was none. */
    async deleteAccount(req: FastifyRequest, reply: FastifyReply) {
      const id = `${rgId(req)}/providers/${ns}/automationAccounts/${params(req).automationAccountName}`;
      const existed = await r.delete(id, (tx) => store.deleteForAccount(id.toLowerCase(), { jobs: true }, tx));
      reply.code(existed ? 200 : 204);
      return reply.send();
    },

    /** PUT runbook: a known `runbookType`; `Published` once a content link was given. */
    async putRunbook(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      const name = params(req).runbookName!;
      if (!runbookNamePattern.test(name)) throw bad('runbookName', `The runbook name '${name}' is invalid. It must start with a letter and have at most 63 letters, digits, '_' or '-'.`);
      const body = input.body(req);
      const props = input.member(body.properties, 'properties', true);
      const runbookType = input.string(props, 'runbookType', 'properties.runbookType', 32);
      if (!runbookType || !runbookTypes.includes(runbookType)) throw bad('properties.runbookType', `The runbook type '${runbookType ?? ''}' is invalid. Allowed values: ${runbookTypes.join(', ')}.`);
      const description = input.string(props, 'description', 'properties.description', 512);
      const logVerbose = input.bool(props, 'logVerbose', 'properties.logVerbose') ?? false;
      const logProgress = input.bool(props, 'logProgress', 'properties.logProgress') ?? false;
      const logActivityTrace = props.logActivityTrace ?? 0;
      if (!Number.isSafeInteger(logActivityTrace) || (logActivityTrace as number) < 0) throw bad('properties.logActivityTrace', "The value of 'properties.logActivityTrace' must be a non-negative integer.");
      const published = props.publishContentLink !== undefined && props.publishContentLink !== null;
      const tags = input.tags(body.tags);
      const target = { id: `${account.id}/runbooks/${name}`, name, type: automationTypes.runbook, parentId: account.id, tenantId: call.principal.tenantId, subscriptionId: account.subscriptionId, resourceGroup: account.resourceGroup };
      return r.createOrUpdate(reply, target, (existing, at, names) => {
        const prev = existing?.body as any;
        return {
          ...names,
          type: automationTypes.runbook,
          location: input.string(body, 'location', 'location', 64) ?? (account.body as any).location,
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
      });
    },
    async getRunbook(req: FastifyRequest) {
      const account = await r.account(req);
      const row = await r.runbook(account, params(req).runbookName!);
      if (!row) throw notFound(req, `${ns}/automationAccounts/${account.name}/runbooks/${params(req).runbookName}`);
      return row.body;
    },
    async listRunbooks(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      return r.list(req, call, account.id, automationTypes.runbook, `${account.id}/runbooks`);
    },
    /** DELETE runbook: with its webhooks; 200, or 204 when there was none. */
    async deleteRunbook(req: FastifyRequest, reply: FastifyReply) {
      const account = await r.account(req);
      const row = await r.runbook(account, params(req).runbookName!);
      if (row) await r.delete(row.id, (tx) => store.deleteForAccount(account.id.toLowerCase(), { runbookName: row.name, jobs: false }, tx));
      reply.code(row ? 200 : 204);
      return reply.send();
    },

    /** The jobs of an account, newest first, paged by sequence. */
    async listJobs(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      const before = r.skipToken<{ s: number }>(req, (t) => Number.isSafeInteger(t.s))?.s;
      const rows = await store.listJobs(account.id.toLowerCase(), automationPageSize + 1, before);
      const page = rows.slice(0, automationPageSize);
      const body: Record<string, unknown> = { value: page.map((j) => showJob(account.id, j, false)) };
      if (rows.length > automationPageSize) body.nextLink = absoluteUrl(r.ctx.origin(), `${account.id}/jobs`, { 'api-version': call.apiVersion, $skipToken: encodeToken({ s: page.at(-1)!.seq }) });
      return body;
    },
    async getJob(req: FastifyRequest) {
      const account = await r.account(req);
      const j = await store.job(account.id.toLowerCase(), params(req).jobName!);
      if (!j) throw notFound(req, `${ns}/automationAccounts/${account.name}/jobs/${params(req).jobName}`);
      return showJob(account.id, j, true);
    },
  };
}
