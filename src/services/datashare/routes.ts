/**
 * Routes of the data share area (spec: resource-manager §2.4, §4.5, §7 rule 2, §8;
 * reference §5): accounts, shares, invitations, consumer share subscriptions with
 * `synchronize`, and the provider's `listSynchronizations`.
 *
 * Every route renders errors as `DataShareError` (`family: 'datashare'`, gateway errors
 * included) and carries `x-vendor-ratelimit-remaining-subscription-reads`: each request
 * that passes the gateway counts against its subscription's budget
 * (`settings.armReadsPerWindow` per `settings.armReadWindowSeconds`); at zero → 429 with
 * `Retry-After`. Responses the gateway rejected carry the current remainder uncounted
 * (`RateLimiter.peek`), when the caller's valid token belongs to the subscription's tenant.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../core/errors/index.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { isUuid, newUuid, stableUuid } from '../../core/ids.ts';
import { authenticate } from '../../core/auth.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { compileFilter, compileOrderBy, ODataError, parseFilter, parseOrderBy } from '../../core/odata/index.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { armRoute, systemDataFor, withoutSystemData, type ArmCall, type ArmRouteOptions } from '../arm/gateway.ts';
import { ArmStore, type ArmResourceRow } from '../arm/store.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { firstValue, isJsonContent, nulPath } from '../../core/input.ts';
import { consumerSynchronizationFields, DataShareStore, synchronizationFields } from './store.ts';

/**
 * The body of a finished delete (the definition's 200: an `OperationResponse`), `startTime`
 * and `endTime` the moment of the delete (ISO 8601 UTC).
 */
export function deletedOperation(at: string): { status: 'Succeeded'; startTime: string; endTime: string } {
  return { status: 'Succeeded', startTime: at, endTime: at };
}

/**
 * api-versions of every data share operation, newest first: the spec's (§9) and the published
 * stable ones the official clients send (2020-09-01 by the Python client; 2019-11-01, the first
 * stable one, whose resources have no `systemData`: docs/deviations/datashare.md).
 */
export const dataShareApiVersions = ['2021-08-01', '2020-09-01', '2019-11-01'];
/** The api-versions whose resources carry no `systemData`. */
const noSystemDataVersions = new Set(['2019-11-01']);
/** Synchronizations per page of `listSynchronizations`. */
export const synchronizationPageSize = 20;
/** Resources per page of the account and share lists. */
export const resourcePageSize = 50;
/** How long a consumer-started run stays `InProgress`, in ms, by mode. */
export const runDurationMs = { Incremental: 30_000, FullSync: 120_000 } as const;

const ns = 'Vendor.DataShare';
const types = {
  account: `${ns}/accounts`,
  share: `${ns}/accounts/shares`,
  invitation: `${ns}/accounts/shares/invitations`,
  shareSubscription: `${ns}/accounts/shareSubscriptions`,
};

/** The bucket of a subscription's read budget. */
export function readBucket(subscriptionId: string): string {
  return `datashare:reads:${subscriptionId.toLowerCase()}`;
}

/** A DataShareError (spec §7 rule 2). */
function dsError(status: number, code: string, message: string, target?: string): ApiError {
  return new ApiError(status, code, message, { target, family: 'datashare' });
}

/** The standard not-found error for a resource path below a resource group (reference §1.2). */
function notFound(typeAndName: string, rg: string): ApiError {
  return dsError(404, 'ResourceNotFound', `The Resource '${typeAndName}' under resource group '${rg}' was not found.`);
}

const namePattern = /^[A-Za-z0-9][-\w.]{0,88}[A-Za-z0-9_]$|^[A-Za-z0-9]$/u;
function checkName(kind: string, value: string): void {
  if (!namePattern.test(value)) throw dsError(400, 'InvalidResourceName', `The ${kind} name '${value}' is invalid. It must be 1 to 90 letters, digits, '-', '_' or '.', start with a letter or digit and not end with '-' or '.'.`, kind);
}

/**
 * Refuses a path name holding a `/` (sent as `%2F`) or a control character (`%00`…): each
 * name is one segment, and a decoded slash would let e.g. the account routes address a share
 * (`accounts/a%2Fshares%2Fs`); PostgreSQL refuses NUL in text (a database error otherwise).
 * @throws ApiError 400 `InvalidResourceName` naming the parameter.
 */
function checkPathNames(req: FastifyRequest): void {
  for (const [k, v] of Object.entries(req.params as Record<string, string>)) {
    if (typeof v === 'string' && /[/\u0000-\u001f\u007f]/u.test(v)) throw dsError(400, 'InvalidResourceName', `The value '${JSON.stringify(v).slice(1, -1)}' of '${k}' is invalid: a name cannot contain '/' or control characters.`, k);
  }
}

/** A query value under any of `names` (`$filter` / `filter`, …). */
function queryValue(req: FastifyRequest, ...names: string[]): string | undefined {
  const q = req.query as Record<string, unknown>;
  for (const n of names) {
    const v = firstValue(q[n]);
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * The decoded `$skipToken` (also `$skiptoken`, `skipToken`) of a list request; undefined when absent.
 * @throws ApiError 400 `InvalidSkipToken` (target `$skipToken`) when it does not decode, holds U+0000 (a forged token) or `valid` refuses it.
 */
function skipTokenOf<T extends object>(req: FastifyRequest, valid: (t: T) => boolean): T | undefined {
  const token = queryValue(req, '$skipToken', '$skiptoken', 'skipToken');
  if (token === undefined) return undefined;
  const t = decodeToken<T>(token);
  if (!t || nulPath(t) !== undefined || !valid(t)) throw dsError(400, 'InvalidSkipToken', `The value '${token}' of '$skipToken' is not valid.`, '$skipToken');
  return t;
}

/**
 * The first number literal of a parsed `$filter` that is not an int32 (the one numeric field,
 * `durationMs`, is int32, spec §2.4): PostgreSQL refuses to compare an integer column with a
 * fraction or an out-of-range value, so such a filter is a 400, not a database error.
 */
function nonInt32Literal(node: unknown): { value: number; position: number } | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  const n = node as Record<string, unknown>;
  if (n.kind === 'literal' && n.type === 'number') {
    const v = n.value as number;
    return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? undefined : { value: v, position: n.position as number };
  }
  for (const child of Object.values(n)) {
    const hit = Array.isArray(child) ? child.map(nonInt32Literal).find((x) => x) : nonInt32Literal(child);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * Compiles an OData option with `fn` when it is given and not blank; an `ODataError` becomes
 * 400 `code` in `DataShareError` with the expression, the 0-based position and `target` = `param`.
 */
function odata<T>(param: string, code: string, text: string | undefined, fn: (text: string) => T): T | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  try {
    return fn(text);
  } catch (e) {
    if (e instanceof ODataError) throw dsError(400, code, `The ${param} expression '${text}' is invalid${e.position !== undefined ? ` at position ${e.position}` : ''}: ${e.message}`, param);
    throw e;
  }
}

/** True when the request declares a JSON body (`application/json` or `application/*+json`). */

/**
 * The JSON object body of a write. A body of another media type (form, XML, text, which
 * the app parses into an object or a buffer) → 415; a missing one → 400 when `required`;
 * a string or key holding U+0000 anywhere → 400 naming its path.
 */
function bodyObject(req: FastifyRequest, required: boolean): Record<string, unknown> {
  const b = req.body;
  if (b !== undefined && b !== null && !isJsonContent(req)) throw dsError(415, 'UnsupportedMediaType', `The content media type '${req.headers['content-type'] ?? ''}' is not supported. Send 'application/json'.`);
  if (b === undefined || b === null) {
    if (required) throw dsError(400, 'InvalidRequestContent', 'The request body is required.');
    return {};
  }
  if (typeof b !== 'object' || Array.isArray(b)) throw dsError(400, 'InvalidRequestContent', 'The request body must be a JSON object.');
  const nul = nulPath(b);
  if (nul !== undefined) throw dsError(400, 'InvalidRequestContent', `The value of '${nul}' contains the character U+0000, which is not allowed.`, nul);
  return b as Record<string, unknown>;
}
function propertiesOf(body: Record<string, unknown>): Record<string, unknown> {
  const p = body.properties;
  if (p === undefined || p === null) return {};
  if (typeof p !== 'object' || Array.isArray(p)) throw dsError(400, 'InvalidRequestContent', "The 'properties' member must be a JSON object.", 'properties');
  return p as Record<string, unknown>;
}
function optString(o: Record<string, unknown>, key: string, target: string, max = 4000): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) throw dsError(400, 'InvalidRequestContent', `The value of '${target}' must be a string of at most ${max} characters.`, target);
  return v;
}
function checkTags(v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw dsError(400, 'InvalidRequestContent', "The 'tags' member must be an object of strings.", 'tags');
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    if (typeof val !== 'string' || k.length < 1 || k.length > 512 || val.length > 256) throw dsError(400, 'InvalidTag', `The tag '${k}' is invalid: names are 1 to 512 characters and values strings of at most 256.`, 'tags');
    out[k] = val;
  }
  return out;
}

function userOf(p: Principal): { userName: string; userEmail: string | undefined } {
  return { userName: p.name ?? p.userPrincipalName ?? p.appId, userEmail: p.userPrincipalName };
}

function rgPath(req: FastifyRequest): { sub: string; rg: string; rgId: string } {
  const p = req.params as Record<string, string>;
  return { sub: p.subscriptionId!, rg: p.resourceGroupName!, rgId: `/subscriptions/${p.subscriptionId}/resourceGroups/${p.resourceGroupName}` };
}

/** The public body of a stored resource. */
function show(row: ArmResourceRow): Record<string, unknown> {
  return row.body;
}

/** Registers the data share routes (inside their own plugin, for the rate-limit header hook). */
export async function registerDataShareRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (scoped) => {
    const arm = new ArmStore(ctx.store.db);
    const store = new DataShareStore(ctx.store.db);
    const settings = () => ctx.config.settings;

    // Responses the gateway rejected still carry the remainder of the subscription's
    // budget, read without counting — but only to a caller whose token is valid and whose
    // tenant owns the subscription: an anonymous caller or another tenant learns nothing
    // about the subscription (tenant isolation), so their rejections carry no header.
    scoped.addHook('onSend', async (req, reply, payload) => {
      if (reply.hasHeader('x-vendor-ratelimit-remaining-subscription-reads')) return payload;
      const sub = (req.params as Record<string, string> | undefined)?.subscriptionId;
      if (typeof sub !== 'string' || !isUuid(sub)) return payload;
      let tenantId: string;
      try {
        tenantId = (await authenticate(req, ctx.identity, 'arm')).tenantId;
      } catch {
        return payload;
      }
      if ((await arm.subscription(sub))?.tenantId !== tenantId) return payload;
      const d = await ctx.rateLimiter.peek(readBucket(sub), settings().armReadsPerWindow, settings().armReadWindowSeconds);
      reply.header('x-vendor-ratelimit-remaining-subscription-reads', String(d.remaining));
      return payload;
    });

    /** armRoute with the data share family and the subscription read budget. */
    const route = (opts: Omit<ArmRouteOptions, 'family' | 'apiVersions'>) =>
      armRoute(scoped, ctx, {
        ...opts,
        apiVersions: dataShareApiVersions,
        family: 'datashare',
        handler: async (req, reply, call) => {
          const d = await ctx.rateLimiter.hit(readBucket(call.subscription!.subscriptionId), settings().armReadsPerWindow, settings().armReadWindowSeconds);
          reply.header('x-vendor-ratelimit-remaining-subscription-reads', String(d.remaining));
          if (!d.allowed) {
            throw new ApiError(429, 'TooManyRequests', `The number of read requests for subscription '${call.subscription!.subscriptionId}' exceeded the limit of ${d.limit} per ${settings().armReadWindowSeconds} seconds. Please retry after ${d.retryAfterSeconds} seconds.`, {
              family: 'datashare',
              headers: { 'Retry-After': String(d.retryAfterSeconds), 'x-vendor-ratelimit-remaining-subscription-reads': '0' },
            });
          }
          checkPathNames(req);
          const out = await opts.handler(req, reply, call);
          return noSystemDataVersions.has(call.apiVersion) ? withoutSystemData(out) : out;
        },
      });

    const accountBase = '/subscriptions/:subscriptionId/resourceGroups/:resourceGroupName/providers/Vendor.DataShare/accounts';
    const accountUrl = `${accountBase}/:accountName`;
    const shareUrl = `${accountUrl}/shares/:shareName`;

    /** Runs a create; a concurrent create of the same resource (unique-key violation) → 409, not a 500. */
    const conflictSafe = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
      try {
        return await fn();
      } catch (e) {
        if (isUniqueViolation(e)) throw dsError(409, 'Conflict', `The resource '${name}' was created by a concurrent request; retry.`);
        throw e;
      }
    };
    /** `arm.putResource`, with a concurrent create of the same resource answered 409 instead of a 500. */
    const putTracked = (row: Parameters<ArmStore['putResource']>[0]) => conflictSafe(row.name, () => arm.putResource(row));
    const getAccount = async (req: FastifyRequest): Promise<ArmResourceRow> => {
      const { rgId, rg } = rgPath(req);
      const name = (req.params as Record<string, string>).accountName!;
      const row = await arm.getResource(`${rgId}/providers/${types.account}/${name}`);
      if (!row) throw notFound(`${types.account}/${name}`, rg);
      return row;
    };
    const getChild = async (req: FastifyRequest, parent: ArmResourceRow, segment: string, type: string, name: string): Promise<ArmResourceRow> => {
      const row = await arm.getResource(`${parent.id}/${segment}/${name}`);
      if (!row || row.type !== type.toLowerCase()) throw notFound(`${types.account}/${parent.name}/${segment}/${name}`, rgPath(req).rg);
      return row;
    };

    /**
     * One page of tracked resources, `$skipToken`-paged by id: those of `type` below `parentId`,
     * or (`parentId` undefined) anywhere in the call's subscription.
     */
    const listPage = async (req: FastifyRequest, call: ArmCall, parentId: string | undefined, type: string, path: string) => {
      const after = skipTokenOf<{ a: string }>(req, (t) => typeof t.a === 'string')?.a;
      const rows =
        parentId === undefined
          ? await arm.listResourcesInSubscription(call.principal.tenantId, call.subscription!.subscriptionId, type, resourcePageSize + 1, after)
          : await arm.listResources(parentId, type, resourcePageSize + 1, after);
      const page = rows.slice(0, resourcePageSize);
      const body: Record<string, unknown> = { value: page.map(show) };
      if (rows.length > resourcePageSize) body.nextLink = absoluteUrl(ctx.origin(), path, { 'api-version': call.apiVersion, $skipToken: encodeToken({ a: page.at(-1)!.id.toLowerCase() }) });
      return body;
    };

    // ---- accounts (reference §5.2) ----
    route({
      method: 'PUT',
      url: accountUrl,
      action: 'Vendor.DataShare/accounts/write',
      handler: async (req, reply, call) => {
        const { sub, rgId } = rgPath(req);
        const name = (req.params as Record<string, string>).accountName!;
        checkName('account', name);
        const body = bodyObject(req, true);
        const location = optString(body, 'location', 'location', 64);
        if (!location) throw dsError(400, 'InvalidRequestContent', "The 'location' member is required.", 'location');
        const identity = body.identity as Record<string, unknown> | undefined;
        if (!identity || typeof identity !== 'object' || identity.type !== 'SystemAssigned') throw dsError(400, 'InvalidRequestContent', "The 'identity' member is required and its 'type' must be 'SystemAssigned'.", 'identity');
        const tags = checkTags(body.tags);
        const id = `${rgId}/providers/${types.account}/${name}`;
        const existing = await arm.getResource(id);
        const at = nowIso();
        const prev = existing?.body as any;
        const user = userOf(call.principal);
        const resource = {
          id: existing?.id ?? id,
          name: existing?.name ?? name,
          type: types.account,
          location: prev?.location ?? location,
          tags,
          identity: { principalId: prev?.identity?.principalId ?? stableUuid('datashare-identity', id.toLowerCase()), tenantId: call.principal.tenantId, type: 'SystemAssigned' },
          systemData: systemDataFor(call.principal, at, prev?.systemData),
          properties: { createdAt: prev?.properties?.createdAt ?? at, provisioningState: 'Succeeded', userEmail: prev?.properties?.userEmail ?? user.userEmail, userName: prev?.properties?.userName ?? user.userName },
        };
        const created = await putTracked({ id: resource.id, tenantId: call.principal.tenantId, subscriptionId: sub, resourceGroup: call.resourceGroup!.name, type: types.account, name: resource.name, parentId: rgId, body: resource, createdAt: existing?.createdAt ?? at, updatedAt: at });
        reply.code(created ? 201 : 200);
        return resource;
      },
    });
    route({ method: 'GET', url: accountUrl, action: 'Vendor.DataShare/accounts/read', handler: async (req) => show(await getAccount(req)) });
    route({
      method: 'GET',
      url: accountBase,
      action: 'Vendor.DataShare/accounts/read',
      handler: async (req, _reply, call) => listPage(req, call, rgPath(req).rgId, types.account, `${rgPath(req).rgId}/providers/${types.account}`),
    });
    route({
      method: 'GET',
      url: '/subscriptions/:subscriptionId/providers/Vendor.DataShare/accounts',
      action: 'Vendor.DataShare/accounts/read',
      handler: async (req, _reply, call) => listPage(req, call, undefined, types.account, `/subscriptions/${call.subscription!.subscriptionId}/providers/${types.account}`),
    });
    route({
      method: 'DELETE',
      url: accountUrl,
      action: 'Vendor.DataShare/accounts/delete',
      handler: async (req, reply) => {
        const { rgId } = rgPath(req);
        const id = `${rgId}/providers/${types.account}/${(req.params as Record<string, string>).accountName}`;
        const at = nowIso();
        const existed = await ctx.store.transaction(async (tx) => {
          await store.deleteBelow(id.toLowerCase(), tx);
          return arm.deleteResource(id, tx);
        });
        reply.code(existed ? 200 : 204);
        return existed ? deletedOperation(at) : undefined;
      },
    });

    route({
      method: 'PATCH',
      url: accountUrl,
      action: 'Vendor.DataShare/accounts/write',
      handler: async (req, _reply, call) => {
        const account = await getAccount(req);
        const body = bodyObject(req, true);
        const at = nowIso();
        const prev = account.body as any;
        const resource = { ...prev, tags: body.tags === undefined ? prev.tags : checkTags(body.tags), systemData: systemDataFor(call.principal, at, prev.systemData) };
        await arm.putResource({ ...account, body: resource, updatedAt: at });
        return resource;
      },
    });

    // ---- shares ----
    route({
      method: 'PUT',
      url: shareUrl,
      action: 'Vendor.DataShare/accounts/shares/write',
      handler: async (req, reply, call) => {
        const account = await getAccount(req);
        const name = (req.params as Record<string, string>).shareName!;
        checkName('share', name);
        const props = propertiesOf(bodyObject(req, true));
        const shareKind = optString(props, 'shareKind', 'properties.shareKind') ?? 'CopyBased';
        if (shareKind !== 'CopyBased' && shareKind !== 'InPlace') throw dsError(400, 'InvalidRequestContent', `The share kind '${shareKind}' is invalid. Allowed values: CopyBased, InPlace.`, 'properties.shareKind');
        const description = optString(props, 'description', 'properties.description');
        const terms = optString(props, 'terms', 'properties.terms');
        const id = `${account.id}/shares/${name}`;
        const existing = await arm.getResource(id);
        const prev = existing?.body as any;
        const at = nowIso();
        const user = userOf(call.principal);
        const resource = {
          id: existing?.id ?? id,
          name: existing?.name ?? name,
          type: types.share,
          systemData: systemDataFor(call.principal, at, prev?.systemData),
          properties: { createdAt: prev?.properties?.createdAt ?? at, description, provisioningState: 'Succeeded', shareKind, terms, userEmail: user.userEmail, userName: user.userName },
        };
        const created = await putTracked({ id: resource.id, tenantId: call.principal.tenantId, subscriptionId: account.subscriptionId, resourceGroup: account.resourceGroup, type: types.share, name: resource.name, parentId: account.id, body: resource, createdAt: existing?.createdAt ?? at, updatedAt: at });
        reply.code(created ? 201 : 200);
        return resource;
      },
    });
    route({
      method: 'GET',
      url: shareUrl,
      action: 'Vendor.DataShare/accounts/shares/read',
      handler: async (req) => show(await getChild(req, await getAccount(req), 'shares', types.share, (req.params as Record<string, string>).shareName!)),
    });
    route({
      method: 'GET',
      url: `${accountUrl}/shares`,
      action: 'Vendor.DataShare/accounts/shares/read',
      handler: async (req, _reply, call) => {
        const account = await getAccount(req);
        return listPage(req, call, account.id, types.share, `${account.id}/shares`);
      },
    });
    route({
      method: 'DELETE',
      url: shareUrl,
      action: 'Vendor.DataShare/accounts/shares/delete',
      handler: async (req, reply) => {
        const account = await getAccount(req);
        const id = `${account.id}/shares/${(req.params as Record<string, string>).shareName}`;
        const at = nowIso();
        const existed = await ctx.store.transaction(async (tx) => {
          await store.deleteBelow(id.toLowerCase(), tx);
          return arm.deleteResource(id, tx);
        });
        reply.code(existed ? 200 : 204);
        return existed ? deletedOperation(at) : undefined;
      },
    });

    // ---- invitations (provider side) ----
    route({
      method: 'PUT',
      url: `${shareUrl}/invitations/:invitationName`,
      action: 'Vendor.DataShare/accounts/shares/invitations/write',
      handler: async (req, reply, call) => {
        const account = await getAccount(req);
        const share = await getChild(req, account, 'shares', types.share, (req.params as Record<string, string>).shareName!);
        const name = (req.params as Record<string, string>).invitationName!;
        checkName('invitation', name);
        const id = `${share.id}/invitations/${name}`;
        const existing = await arm.getResource(id);
        if (existing) throw dsError(409, 'InvitationAlreadyExists', `The invitation '${name}' already exists; invitations cannot be updated.`);
        const props = propertiesOf(bodyObject(req, true));
        const targetEmail = optString(props, 'targetEmail', 'properties.targetEmail', 320);
        const targetActiveDirectoryId = optString(props, 'targetActiveDirectoryId', 'properties.targetActiveDirectoryId', 64);
        const targetObjectId = optString(props, 'targetObjectId', 'properties.targetObjectId', 64);
        for (const [key, v] of [['targetActiveDirectoryId', targetActiveDirectoryId], ['targetObjectId', targetObjectId]] as const) {
          if (v !== undefined && !isUuid(v)) throw dsError(400, 'InvalidRequestContent', `The value '${v}' of 'properties.${key}' is not a GUID.`, `properties.${key}`);
        }
        if (targetEmail !== undefined && !/^[^@\s]+@[^@\s]+$/u.test(targetEmail)) throw dsError(400, 'InvalidRequestContent', `The target e-mail '${targetEmail}' is not a valid e-mail address.`, 'properties.targetEmail');
        if (!targetEmail && !(targetActiveDirectoryId && targetObjectId)) {
          throw dsError(400, 'InvalidRequestContent', "An invitation needs 'targetEmail', or both 'targetActiveDirectoryId' and 'targetObjectId'.", 'properties');
        }
        const at = nowIso();
        const invitationId = newUuid();
        const user = userOf(call.principal);
        const resource = {
          id,
          name,
          type: types.invitation,
          systemData: systemDataFor(call.principal, at),
          properties: { invitationId, invitationStatus: 'Pending', sentAt: at, targetEmail, targetActiveDirectoryId, targetObjectId, userEmail: user.userEmail, userName: user.userName },
        };
        await conflictSafe(name, () => ctx.store.transaction(async (tx) => {
          await arm.putResource({ id, tenantId: call.principal.tenantId, subscriptionId: account.subscriptionId, resourceGroup: account.resourceGroup, type: types.invitation, name, parentId: share.id, body: resource, createdAt: at, updatedAt: at }, tx);
          await store.addInvitation(
            { invitationId, tenantId: call.principal.tenantId, invitationResourceId: id, shareIdLower: share.id.toLowerCase(), targetEmailLower: targetEmail?.toLowerCase(), targetTenantId: targetActiveDirectoryId?.toLowerCase(), targetObjectId: targetObjectId?.toLowerCase(), status: 'Pending' },
            tx,
          );
        }));
        reply.code(201);
        return resource;
      },
    });
    route({
      method: 'GET',
      url: `${shareUrl}/invitations/:invitationName`,
      action: 'Vendor.DataShare/accounts/shares/invitations/read',
      handler: async (req) => {
        const account = await getAccount(req);
        const p = req.params as Record<string, string>;
        const share = await getChild(req, account, 'shares', types.share, p.shareName!);
        const row = await arm.getResource(`${share.id}/invitations/${p.invitationName}`);
        if (!row) throw notFound(`${types.account}/${account.name}/shares/${share.name}/invitations/${p.invitationName}`, rgPath(req).rg);
        return show(row);
      },
    });

    // ---- share subscriptions (consumer side) ----
    const ssUrl = `${accountUrl}/shareSubscriptions/:shareSubscriptionName`;
    route({
      method: 'PUT',
      url: ssUrl,
      action: 'Vendor.DataShare/accounts/shareSubscriptions/write',
      handler: async (req, reply, call) => {
        const account = await getAccount(req);
        const name = (req.params as Record<string, string>).shareSubscriptionName!;
        checkName('share subscription', name);
        const id = `${account.id}/shareSubscriptions/${name}`;
        const existing = await arm.getResource(id);
        if (existing) {
          reply.code(200);
          return show(existing);
        }
        const props = propertiesOf(bodyObject(req, true));
        const invitationId = optString(props, 'invitationId', 'properties.invitationId', 64);
        const sourceShareLocation = optString(props, 'sourceShareLocation', 'properties.sourceShareLocation', 64);
        if (!invitationId) throw dsError(400, 'InvalidRequestContent', "The 'properties.invitationId' member is required.", 'properties.invitationId');
        if (!sourceShareLocation) throw dsError(400, 'InvalidRequestContent', "The 'properties.sourceShareLocation' member is required.", 'properties.sourceShareLocation');
        const inv = await store.invitation(invitationId);
        const p = call.principal;
        const addressed =
          inv &&
          ((inv.targetEmailLower !== undefined && inv.targetEmailLower === p.userPrincipalName?.toLowerCase()) ||
            (inv.targetTenantId !== undefined && inv.targetTenantId === p.tenantId.toLowerCase() && inv.targetObjectId === p.objectId.toLowerCase()));
        if (!inv || !addressed) throw dsError(404, 'InvitationNotFound', `The invitation '${invitationId}' was not found or is not addressed to the caller.`, 'properties.invitationId');
        if (inv.status !== 'Pending') throw dsError(409, 'InvitationAlreadyAccepted', `The invitation '${invitationId}' has already been accepted.`, 'properties.invitationId');
        const share = await arm.getResource(inv.shareIdLower);
        const invitation = await arm.getResource(inv.invitationResourceId);
        if (!share || !invitation) throw dsError(404, 'InvitationNotFound', `The share of invitation '${invitationId}' no longer exists.`, 'properties.invitationId');
        const providerTenant = await ctx.identity.directory.findTenant(share.tenantId);
        const sb = share.body as any;
        const at = nowIso();
        const user = userOf(p);
        const resource = {
          id,
          name,
          type: types.shareSubscription,
          systemData: systemDataFor(p, at),
          properties: {
            createdAt: at,
            invitationId: inv.invitationId,
            providerEmail: sb.properties?.userEmail,
            providerName: sb.properties?.userName,
            providerTenantName: providerTenant?.displayName,
            provisioningState: 'Succeeded',
            shareDescription: sb.properties?.description,
            shareKind: sb.properties?.shareKind,
            shareName: share.name,
            shareSubscriptionStatus: 'Active',
            shareTerms: sb.properties?.terms,
            sourceShareLocation,
            userEmail: user.userEmail,
            userName: user.userName,
          },
        };
        const ib = invitation.body as any;
        const acceptedInvitation = { ...ib, properties: { ...ib.properties, invitationStatus: 'Accepted', respondedAt: at } };
        await conflictSafe(name, () => ctx.store.transaction(async (tx) => {
          await arm.putResource({ id, tenantId: p.tenantId, subscriptionId: account.subscriptionId, resourceGroup: account.resourceGroup, type: types.shareSubscription, name, parentId: account.id, body: resource, createdAt: at, updatedAt: at }, tx);
          await arm.putResource({ ...invitation, body: acceptedInvitation, updatedAt: at }, tx);
          if (!(await store.acceptInvitation(inv.invitationId, tx))) throw dsError(409, 'InvitationAlreadyAccepted', `The invitation '${invitationId}' has already been accepted.`, 'properties.invitationId');
        }));
        reply.code(201);
        return resource;
      },
    });
    route({
      method: 'GET',
      url: ssUrl,
      action: 'Vendor.DataShare/accounts/shareSubscriptions/read',
      handler: async (req) => show(await getChild(req, await getAccount(req), 'shareSubscriptions', types.shareSubscription, (req.params as Record<string, string>).shareSubscriptionName!)),
    });
    route({
      method: 'POST',
      url: `${ssUrl}/synchronize`,
      action: 'Vendor.DataShare/accounts/shareSubscriptions/synchronize/action',
      handler: async (req, reply, call) => {
        const ss = await getChild(req, await getAccount(req), 'shareSubscriptions', types.shareSubscription, (req.params as Record<string, string>).shareSubscriptionName!);
        const body = bodyObject(req, false);
        const mode = optString(body, 'synchronizationMode', 'synchronizationMode', 32) ?? 'Incremental';
        if (mode !== 'Incremental' && mode !== 'FullSync') throw dsError(400, 'InvalidRequestContent', `The synchronization mode '${mode}' is invalid. Allowed values: Incremental, FullSync.`, 'synchronizationMode');
        const inv = await store.invitation(String((ss.body as any).properties?.invitationId ?? ''));
        const share = inv ? await arm.getResource(inv.shareIdLower) : undefined;
        if (!inv || !share) throw dsError(409, 'SourceShareDeleted', `The source share of share subscription '${ss.name}' no longer exists.`);
        const p = call.principal;
        const tenant = await ctx.identity.directory.findTenant(p.tenantId);
        const startMs = nowMs();
        const startTime = new Date(startMs).toISOString();
        const synchronizationId = newUuid();
        const duration = runDurationMs[mode];
        await store.addSynchronization({
          tenantId: share.tenantId,
          shareIdLower: share.id.toLowerCase(),
          shareSubscriptionIdLower: ss.id.toLowerCase(),
          synchronizationId,
          synchronizationMode: mode,
          status: 'InProgress',
          message: 'Synchronization in progress.',
          startTime,
          dueAt: new Date(startMs + duration).toISOString(),
          plannedDurationMs: duration,
          consumerName: p.name ?? p.userPrincipalName ?? p.appId,
          consumerEmail: p.userPrincipalName,
          consumerTenantName: tenant?.displayName,
        });
        reply.code(202);
        return { synchronizationId, startTime, status: 'Accepted' };
      },
    });

    /** Parses `$filter` / `$orderby` / `$skipToken` of a synchronization list. */
    const listQuery = (req: FastifyRequest, fields: typeof synchronizationFields) => {
      const filterText = queryValue(req, '$filter', 'filter');
      const orderText = queryValue(req, '$orderby', '$orderBy', 'orderby', 'orderBy');
      const filter = odata('$filter', 'InvalidFilter', filterText, (text) => {
        const tree = parseFilter(text);
        const bad = nonInt32Literal(tree);
        if (bad) throw new ODataError(`The number ${bad.value} is not an int32 (durationMs is an int32).`, 'type', bad.position);
        return compileFilter(tree, fields);
      });
      const orderBy = odata('$orderby', 'InvalidOrderBy', orderText, (text) => compileOrderBy(parseOrderBy(text), fields)) ?? [];
      const offset = skipTokenOf<{ o: number }>(req, (t) => Number.isSafeInteger(t.o) && t.o >= 0)?.o ?? 0;
      const nextLink = (path: string, apiVersion: string) =>
        absoluteUrl(ctx.origin(), path, { 'api-version': apiVersion, $filter: filterText, $orderby: orderText, $skipToken: encodeToken({ o: offset + synchronizationPageSize }) });
      return { filter, orderBy, offset, nextLink };
    };

    // ---- listSynchronizations (spec §4.5); the next link is fetched with GET by the official clients ----
    for (const method of ['POST', 'GET'] as const) route({
      method,
      url: `${shareUrl}/listSynchronizations`,
      action: 'Vendor.DataShare/accounts/shares/listSynchronizations/action',
      handler: async (req, _reply, call) => {
        const account = await getAccount(req);
        const share = await getChild(req, account, 'shares', types.share, (req.params as Record<string, string>).shareName!);
        const q = listQuery(req, synchronizationFields);
        const shareIdLower = share.id.toLowerCase();
        const page = await store.listSynchronizations({ now: nowIso(), tenantId: share.tenantId, shareIdLower, filter: q.filter, orderBy: q.orderBy, offset: q.offset, limit: synchronizationPageSize });
        const body: Record<string, unknown> = { value: page.value };
        if (page.more) body.nextLink = q.nextLink(`${share.id}/listSynchronizations`, call.apiVersion);
        return body;
      },
    });

    // ---- the consumer's runs (ShareSubscriptions_ListSynchronizations, outside the spec) ----
    for (const method of ['POST', 'GET'] as const) route({
      method,
      url: `${ssUrl}/listSynchronizations`,
      action: 'Vendor.DataShare/accounts/shareSubscriptions/listSynchronizations/action',
      handler: async (req, _reply, call) => {
        const ss = await getChild(req, await getAccount(req), 'shareSubscriptions', types.shareSubscription, (req.params as Record<string, string>).shareSubscriptionName!);
        const q = listQuery(req, consumerSynchronizationFields);
        const key = ss.id.toLowerCase();
        const page = await store.listSynchronizations({ now: nowIso(), shareSubscriptionIdLower: key, filter: q.filter, orderBy: q.orderBy, offset: q.offset, limit: synchronizationPageSize });
        const body: Record<string, unknown> = {
          value: page.value.map(({ consumerName: _n, consumerEmail: _e, consumerTenantName: _t, ...rest }) => rest),
        };
        if (page.more) body.nextLink = q.nextLink(`${ss.id}/listSynchronizations`, call.apiVersion);
        return body;
      },
    });
  });
}
