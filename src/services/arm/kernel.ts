/**
 * The resource-manager kernel every ARM area declares its operations on (design: "Layout";
 * spec: resource-manager §2.6, §4, §5, §8):
 *
 * - {@link armRoute}: THE way to declare one resource-manager operation. The gateway checks
 *   ({@link armCheck}: api-version → bearer → subscription → resource group → authorization)
 *   run in `onRequest`, before the body is parsed or validated (a caller without a token gets
 *   401, not 400); the handler runs after them and receives the {@link ArmCall}. A kept
 *   answer of a `keep` operation is sent from `onRequest` too, skipping the rest.
 * - {@link armArea}: an area's defaults for its routes (api-versions, envelope, the path-name
 *   guard, `systemData` per api-version, a step before every handler), returning its `route`.
 * - {@link TrackedResources}: the generic tracked/proxy resource operations over
 *   `arm_resources` — get (404 when missing), create-or-update (201/200, a concurrent create
 *   answered 409), list with `$skipToken` paging and next links, delete with its descendants.
 *
 * Input helpers (query values, skip tokens, JSON bodies, members) are in `input.ts`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { AppContext } from '../../context.ts';
import type { ApiError, Family } from '../../core/errors/index.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { nowIso } from '../../core/clock.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { armCheck, armReader, authorizationFailed, type ArmCall, type ArmChecks } from './gateway.ts';
import { ArmStore, type ArmResourceRow } from './store.ts';
import { pathNamesCheck, skipToken } from './input.ts';
import { keptAnswersOf } from './kept-answers.ts';
import { checkNamespacedPut, putNamespace, recordOperation } from './operations.ts';

/** A transaction handle of the app's store (what `ctx.store.transaction` hands its callback). */
export type Tx = Parameters<Parameters<AppContext['store']['transaction']>[0]>[0];

/** HTTP methods of resource-manager operations. */
export type ArmMethod = 'GET' | 'PUT' | 'PATCH' | 'POST' | 'DELETE';

/** A handler: runs after the gateway's checks, returns the JSON body (or sends through `reply`). */
export type ArmHandler<C extends ArmCall = ArmCall> = (req: FastifyRequest, reply: FastifyReply, call: C) => Promise<unknown>;

/** What a resource's path resolves to before the action is checked: at least the scope it is checked at. */
export interface Resolved {
  scope: string;
}

/**
 * Declaration of one resource-manager operation (one row of an area's route table).
 * `R` is what {@link resolve} returns (the handler gets it as `call.resolved`).
 */
export interface ArmOperation<R extends Resolved | undefined = undefined> extends Omit<ArmChecks, 'apiVersions'> {
  method: ArmMethod;
  url: string;
  schema?: FastifySchema;
  /**
   * Resolves the path after the gateway's checks (404s of the area, e.g. a scope that does
   * not exist) and returns the scope `action` is then checked at (403 `AuthorizationFailed`).
   */
  resolve?: (req: FastifyRequest, call: ArmCall) => Promise<R>;
  handler: ArmHandler<ArmCall & { resolved: R }>;
  /**
   * A GET whose 200 answer is a function of the stored data (cache areas), the URL and the
   * caller alone — not of the clock, the origin or other request headers — and whose handler
   * sets no header but `Content-Type`: its answers are kept (`kept-answers.ts`).
   */
  keep?: boolean;
}

/** An operation with everything the gateway needs: api-versions and the envelope. */
export interface ArmRouteOptions<R extends Resolved | undefined = undefined> extends ArmOperation<R> {
  /** Supported api-versions, newest first. */
  apiVersions: string[];
  /** Envelope of this operation's errors (default `arm`). */
  family?: Family;
}

/** The gateway's result rides on the request (a symbol property: cheaper than a WeakMap per route). */
const armCallKey = Symbol('stratus.armCall');

/**
 * Declares one resource-manager operation on `app` (the only way an ARM route is declared).
 * @param opts the operation; errors of the checks are `errors.arm`'s, rendered in `opts.family`.
 */
export function armRoute<R extends Resolved | undefined = undefined>(app: FastifyInstance, ctx: AppContext, opts: ArmRouteOptions<R>): void {
  type Carrier = { [armCallKey]?: ArmCall & { resolved: R } };
  const kept = opts.keep && opts.method === 'GET' && !opts.schema?.response ? keptAnswersOf(ctx) : undefined;
  recordOperation(ctx, { method: opts.method, url: opts.url, apiVersions: opts.apiVersions });
  const namespace = putNamespace(opts.method, opts.url);
  app.route({
    method: opts.method,
    url: opts.url,
    schema: opts.schema,
    config: { family: opts.family ?? 'arm' },
    onRequest: async (req, reply) => {
      const key = kept?.keyOf(req, ctx);
      if (key !== undefined) {
        // Other instances' writes first (one version read per event-loop turn), then the epoch.
        await ctx.cache.sync();
        const hit = kept!.get(key, ctx.cache);
        if (hit) {
          // Answered here: the rest of the request's hooks and the handler are skipped. They
          // passed, with the same result, for the same caller and URL when the answer was kept
          // (its input checks depend on the URL alone; the body of a GET is not read).
          reply.type(hit.contentType);
          // The request log may hold it by reference: this cache keeps it anyway.
          ctx.requestLog.heldBody(req.raw, hit.body);
          return reply.send(hit.body);
        }
        kept!.begin(req, key, ctx.cache);
      }
      const { resolve } = opts;
      if (!resolve) {
        const checked = await armCheck(req, ctx, opts);
        await checkNamespacedPut(ctx, namespace, checked);
        (req as Carrier)[armCallKey] = { ...checked, resolved: undefined as R };
        return;
      }
      // The action is checked at the scope the path resolves to, after the area's 404s.
      const call = await armCheck(req, ctx, { ...opts, action: undefined });
      const resolved = await resolve(req, call);
      const scope = resolved?.scope ?? call.scope;
      if (opts.action) {
        const action = typeof opts.action === 'function' ? opts.action(req) : opts.action;
        if (!(await armReader(ctx).authorized(call.principal, action, scope))) throw authorizationFailed(call.principal, action, scope);
      }
      await checkNamespacedPut(ctx, namespace, call);
      (req as Carrier)[armCallKey] = { ...call, scope, resolved };
    },
    handler: async (req, reply) => {
      const out = await opts.handler(req, reply, (req as Carrier)[armCallKey]!);
      // What is kept is what is sent (an object is not serialised a second time).
      return kept?.finish(req, reply, ctx.cache, out) ?? out;
    },
  });
}

/** An area's defaults for every operation it declares (see {@link armArea}). */
export interface ArmArea {
  /** Supported api-versions, newest first. */
  apiVersions: string[];
  /** Envelope of the area's errors (default `arm`). */
  family?: Family;
  /** api-versions whose resources carry no `systemData` (it is removed from every answer: {@link withoutSystemData}). */
  noSystemDataVersions?: string[];
  /**
   * The error of a path name holding `/` (sent as `%2F`) or a control character; when given,
   * every path name is checked before the handler (each name is one segment: a decoded slash
   * would let e.g. an account route address a child; PostgreSQL refuses NUL in text).
   */
  invalidPathName?: (param: string, value: string) => ApiError;
  /** Runs after the gateway's checks and before the path-name check and the handler (a budget, a header). */
  before?: (req: FastifyRequest, reply: FastifyReply, call: ArmCall) => Promise<void>;
}

/**
 * An area's route declarer: `route(op)` declares `op` with the area's api-versions and
 * envelope; before the handler run `area.before` and the path-name check, after it
 * `systemData` is removed for the api-versions that predate it.
 */
export function armArea(app: FastifyInstance, ctx: AppContext, area: ArmArea): <R extends Resolved | undefined = undefined>(op: ArmOperation<R>) => void {
  const noSystemData = new Set(area.noSystemDataVersions ?? []);
  return (op) =>
    armRoute(app, ctx, {
      ...op,
      // An area step runs on every request (a budget, a header): its operations' answers are not kept.
      keep: op.keep && !area.before,
      apiVersions: area.apiVersions,
      family: area.family,
      handler: async (req, reply, call) => {
        if (area.before) await area.before(req, reply, call);
        if (area.invalidPathName) pathNamesCheck(req, area.invalidPathName);
        const out = await op.handler(req, reply, call);
        return noSystemData.has(call.apiVersion) ? withoutSystemData(out) : out;
      },
    });
}

/**
 * A handler's JSON result without `systemData` (on the resource and on each item of a `value`
 * list), for api-versions whose definitions predate it: a plain object, or the JSON text of one
 * (parsed); anything else as it is.
 */
export function withoutSystemData(out: unknown): unknown {
  // A JSON text a handler made itself (a read kept as text) is parsed for this older shape.
  if (typeof out === 'string' && out.startsWith('{')) return withoutSystemData(JSON.parse(out));
  if (out === null || typeof out !== 'object' || Object.getPrototypeOf(out) !== Object.prototype) return out;
  const { systemData: _s, ...rest } = out as Record<string, unknown>;
  if (Array.isArray(rest.value)) rest.value = rest.value.map(withoutSystemData);
  return rest;
}

/** `systemData` for a write by `p` at `at` (spec: resource-manager §2.6). */
export function systemDataFor(p: Principal, at: string, created?: { createdAt: string; createdBy: string; createdByType: string }) {
  const by = p.userPrincipalName ?? p.appId;
  const byType = p.kind === 'user' ? 'User' : p.appKind === 'ManagedIdentity' ? 'ManagedIdentity' : 'Application';
  return {
    createdBy: created?.createdBy ?? by,
    createdByType: created?.createdByType ?? byType,
    createdAt: created?.createdAt ?? at,
    lastModifiedBy: by,
    lastModifiedByType: byType,
    lastModifiedAt: at,
  };
}

/** Where a tracked resource lives: its indexed columns (the body is built by the operation). */
export interface TrackedTarget {
  /** Fully qualified id as the path spells it (the stored casing is kept on update). */
  id: string;
  name: string;
  /** Full type, e.g. `Vendor.DataShare/accounts/shares`. */
  type: string;
  /** The parent resource id, or the resource group id. */
  parentId: string;
  tenantId: string;
  subscriptionId: string;
  resourceGroup: string;
}

/** How an area pages and names its tracked resources. */
export interface TrackedOptions {
  /** Resources per page of a list. */
  pageSize: number;
  /** Query names the skip token is read under (first present wins). */
  skipTokenNames: string[];
  /** 400 for a skip token that does not decode (or was forged). */
  invalidSkipToken: (token: string) => ApiError;
  /** 409 for a create that lost the race with a concurrent create of the same resource. */
  concurrentCreate: (name: string) => ApiError;
}

/**
 * The generic tracked/proxy resource operations of an area, over `arm_resources`
 * (spec: resource-manager §4: create-or-update 201/200, get 404, list with next links,
 * delete 200/204).
 */
export class TrackedResources {
  /** The hierarchy and tracked-resource store. */
  readonly arm: ArmStore;

  constructor(
    readonly ctx: AppContext,
    private readonly opts: TrackedOptions,
  ) {
    this.arm = new ArmStore(ctx.store.db, ctx.cache);
  }

  /** The resource with this id (case-insensitive), of `type` when given; undefined when there is none. */
  async find(id: string, type?: string): Promise<ArmResourceRow | undefined> {
    const row = await this.arm.getResource(id);
    return row && (type === undefined || row.type === type.toLowerCase()) ? row : undefined;
  }

  /**
   * The resource with this id, of `type` when given.
   * @throws the area's 404 (`notFound()`) when there is none.
   */
  async require(id: string, notFound: () => ApiError, type?: string): Promise<ArmResourceRow> {
    const row = await this.find(id, type);
    if (!row) throw notFound();
    return row;
  }

  /**
   * Runs a create; a unique-key violation (a concurrent create of the same resource won the
   * race) becomes the area's 409 instead of a 500.
   */
  async conflictSafe<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (isUniqueViolation(e)) throw this.opts.concurrentCreate(name);
      throw e;
    }
  }

  /** Stores a resource (insert or update), conflict-safe; returns whether it was created. */
  async put(row: ArmResourceRow, db?: Tx): Promise<boolean> {
    return this.conflictSafe(row.name, () => this.arm.putResource(row, db));
  }

  /**
   * Create-or-update (PUT): reads the current resource, builds the new body with
   * `build(previous, at, {id, name})` (the stored id and name casing kept), stores it and sets
   * the status (201 created, 200 updated).
   * @returns the body stored.
   */
  async createOrUpdate(
    reply: FastifyReply,
    target: TrackedTarget,
    build: (previous: ArmResourceRow | undefined, at: string, names: { id: string; name: string }) => Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const existing = await this.arm.getResource(target.id);
    const at = nowIso();
    const names = { id: existing?.id ?? target.id, name: existing?.name ?? target.name };
    const body = build(existing, at, names);
    const created = await this.put({ ...target, ...names, body, createdAt: existing?.createdAt ?? at, updatedAt: at });
    reply.code(created ? 201 : 200);
    return body;
  }

  /**
   * One page of a list: the resources of `type` below `parentId` or (`parentId` undefined)
   * anywhere in the call's subscription, in id order after the request's skip token; a
   * `nextLink` to `path` when more follow.
   * @throws the area's 400 for a skip token that does not decode.
   */
  async list(req: FastifyRequest, call: ArmCall, parentId: string | undefined, type: string, path: string): Promise<Record<string, unknown>> {
    const { pageSize } = this.opts;
    const after = skipToken<{ a: string }>(req, this.opts.skipTokenNames, (t) => typeof t.a === 'string', this.opts.invalidSkipToken)?.a;
    const rows =
      parentId === undefined
        ? await this.arm.listResourcesInSubscription(call.principal.tenantId, call.subscription!.subscriptionId, type, pageSize + 1, after)
        : await this.arm.listResources(parentId, type, pageSize + 1, after);
    const page = rows.slice(0, pageSize);
    const body: Record<string, unknown> = { value: page.map((r) => r.body) };
    if (rows.length > pageSize) body.nextLink = absoluteUrl(this.ctx.origin(), path, { 'api-version': call.apiVersion, $skipToken: encodeToken({ a: page.at(-1)!.id.toLowerCase() }) });
    return body;
  }

  /**
   * Deletes a resource and everything below it in one transaction, `alsoDelete` first (the
   * area's own rows below it).
   * @returns whether the resource existed.
   */
  async delete(id: string, alsoDelete?: (tx: Tx) => Promise<unknown>): Promise<boolean> {
    return this.ctx.store.transaction(async (tx) => {
      if (alsoDelete) await alsoDelete(tx);
      return this.arm.deleteResource(id, tx);
    });
  }
}
