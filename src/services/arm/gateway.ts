/**
 * The resource-manager gateway shared by every ARM operation (spec: resource-manager §4,
 * §5, §7, §8, §9; reference §1.2–§1.5): api-version first, bearer verification, the
 * subscription and resource group checks, authorization by role assignments, the
 * standard headers (added by the app's onSend hook); its errors are `errors.arm`'s.
 *
 * Operations are declared on the kernel (`kernel.ts`, `armRoute` / `armArea`), which runs
 * {@link armCheck} before the handler and hands it the {@link ArmCall}.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { armBearerChallenge, errors, type ApiError } from '../../core/errors/index.ts';
import { AuthFailure, authenticate } from '../../core/auth.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { isUuid } from '../../core/ids.ts';
import { ArmStore, type ManagementGroup, type ResourceGroup, type RoleAssignment, type Subscription } from './store.ts';
import type { AreaCache, CacheHub } from '../../core/cache.ts';
import { isAuthorized } from './rbac.ts';
import type { RoleDefinition } from './roles.ts';

/** The gateway checks of one operation (what {@link armCheck} needs of its declaration). */
export interface ArmChecks {
  /** Supported api-versions, newest first. */
  apiVersions: string[];
  /** RBAC action checked at {@link scope}; a function for actions that depend on the request; omit when the operation checks access itself. */
  action?: string | ((req: FastifyRequest) => string);
  /** Scope the action is checked at; default: the path up to the resource group or subscription ({@link defaultScope}). */
  scope?: (req: FastifyRequest) => string;
  /** Whether a missing resource group in the path is a 404 before the handler (default true). */
  requireResourceGroup?: boolean;
}

/** 403 `AuthorizationFailed`: `p` may not perform `action` at `scope` (reference §1.2). */
export function authorizationFailed(p: Principal, action: string, scope: string): ApiError {
  return errors.arm.authorizationFailed({ client: p.userPrincipalName ?? p.objectId, objectId: p.objectId, action, scope });
}

/** What a handler gets once the gateway's checks passed. */
export interface ArmCall {
  principal: Principal;
  apiVersion: string;
  /** The subscription of the path, when it has one. */
  subscription?: Subscription;
  /** The resource group of the path, when it has one. */
  resourceGroup?: ResourceGroup;
  /** The scope the action was authorized at. */
  scope: string;
}

/** Resource group names (reference resource-manager-base §2.1): letters and digits of any script (`\w` as the service's regular expressions read it), `-`, `.`, `_`, `(`, `)`. */
const rgChar = /[-\p{L}\p{Mn}\p{Nd}\p{Pc}.()]/u;
const rgPattern = /^[-\p{L}\p{Mn}\p{Nd}\p{Pc}.()]+$/u;

/** The api-version query value of a request (also read when `$`-less or percent-encoded names are used). */
function apiVersionOf(req: FastifyRequest): string | undefined {
  const q = req.query as Record<string, string | string[] | undefined>;
  const v = q['api-version'];
  return Array.isArray(v) ? v[0] : v;
}

/** Converts a bearer failure into the ARM 401 with its `WWW-Authenticate` challenge. */
export function armAuthError(e: AuthFailure, ctx: AppContext, principalTenant?: string): ApiError {
  const tenant = principalTenant ?? 'common';
  const challenge = armBearerChallenge(`${ctx.origin()}/${tenant}`, e.reason);
  const options = { headers: { 'WWW-Authenticate': challenge } };
  return e.reason === 'missing'
    ? errors.arm.authenticationFailed({}, options)
    : e.reason === 'invalid_header'
      ? errors.arm.invalidAuthenticationHeader({}, options)
      : errors.arm.invalidAuthenticationToken({ detail: e.message }, options);
}

/** The default RBAC scope of a request: `/subscriptions/{s}[/resourceGroups/{rg}]`. */
export function defaultScope(req: FastifyRequest): string {
  const p = req.params as Record<string, string>;
  if (p.subscriptionId && p.resourceGroupName) return `/subscriptions/${p.subscriptionId}/resourceGroups/${p.resourceGroupName}`;
  if (p.subscriptionId) return `/subscriptions/${p.subscriptionId}`;
  return '/';
}

/**
 * The ARM hierarchy read through this instance's `arm` caches: subscriptions, resource groups,
 * management groups (and so their chains), custom role definitions and a principal's role assignments are read from
 * the database once and then served from memory until a write invalidates the `arm` area
 * (issue 9 item 3). Callers run `ctx.cache.sync()` once per request before using it.
 * Returned objects are shared: read-only.
 */
export class CachedArmStore extends ArmStore {
  private readonly subs: AreaCache<Subscription | undefined>;
  private readonly groups: AreaCache<ResourceGroup | undefined>;
  private readonly mgs: AreaCache<ManagementGroup | undefined>;
  private readonly assignments: AreaCache<RoleAssignment[]>;
  private readonly decisions: AreaCache<boolean>;
  private readonly customRoles: AreaCache<RoleDefinition | undefined>;

  constructor(db: ArmStore['db'], cache: CacheHub) {
    super(db, cache);
    this.subs = cache.cache('arm');
    this.groups = cache.cache('arm');
    this.mgs = cache.cache('arm');
    this.assignments = cache.cache('arm');
    this.decisions = cache.cache('arm', 50_000);
    this.customRoles = cache.cache('arm', 5_000);
  }

  /**
   * Whether `principal` may do `action` at `scope` (see rbac.ts `isAuthorized`), remembered
   * per principal, action and scope until the next write to the `arm` area (a role assignment,
   * subscription or management group change empties it).
   */
  authorized(principal: Principal, action: string, scope: string): Promise<boolean> {
    const key = `${principal.tenantId}|${principal.objectId}|${action}|${scope.toLowerCase()}`;
    return this.decisions.get(key, () => isAuthorized(this, principal, action, scope));
  }

  override subscription(id: string): Promise<Subscription | undefined> {
    return this.subs.get(id.toLowerCase(), () => super.subscription(id).then(freeze));
  }

  override resourceGroup(subscriptionId: string, name: string): Promise<ResourceGroup | undefined> {
    return this.groups.get(`${subscriptionId.toLowerCase()}/${name.toLowerCase()}`, () => super.resourceGroup(subscriptionId, name).then(freeze));
  }

  override managementGroup(name: string): Promise<ManagementGroup | undefined> {
    return this.mgs.get(name.toLowerCase(), () => super.managementGroup(name).then(freeze));
  }

  override customRole(id: string): Promise<RoleDefinition | undefined> {
    return this.customRoles.get(id.toLowerCase(), () => super.customRole(id).then(freeze));
  }

  override assignmentsOf(principalId: string): Promise<RoleAssignment[]> {
    return this.assignments.get(principalId.toLowerCase(), () => super.assignmentsOf(principalId).then((a) => Object.freeze(a.map((x) => Object.freeze(x))) as RoleAssignment[]));
  }
}

function freeze<T extends object | undefined>(v: T): T {
  return v === undefined ? v : Object.freeze(v);
}

const readers = new WeakMap<CacheHub, CachedArmStore>();

/** The app's cached ARM hierarchy reader (one per app). */
export function armReader(ctx: AppContext): CachedArmStore {
  let r = readers.get(ctx.cache);
  if (!r) {
    r = new CachedArmStore(ctx.store.db, ctx.cache);
    readers.set(ctx.cache, r);
  }
  return r;
}

/**
 * Runs the gateway checks for a request and returns the call context.
 * Order: api-version → bearer → subscription id format → subscription exists (in the
 * caller's tenant) → authorization → resource group exists.
 * @throws ApiError in the ARM catalogue.
 */
export async function armCheck(req: FastifyRequest, ctx: AppContext, opts: ArmChecks): Promise<ArmCall> {
  const store = armReader(ctx);
  const apiVersion = apiVersionOf(req);
  if (apiVersion === undefined || apiVersion === '') throw errors.arm.missingApiVersion();
  if (!opts.apiVersions.includes(apiVersion)) throw errors.arm.invalidApiVersion({ given: apiVersion, supported: opts.apiVersions.join(',') });
  // The caches' freshness check (PostgreSQL) runs while the token is verified.
  const synced = ctx.cache.sync();
  synced.catch(() => undefined);
  let principal: Principal;
  try {
    principal = await authenticate(req, ctx.identity, 'arm');
  } catch (e) {
    if (e instanceof AuthFailure) throw armAuthError(e, ctx);
    throw e;
  }
  await synced;
  const p = req.params as Record<string, string>;
  let subscription: Subscription | undefined;
  if (p.subscriptionId !== undefined) {
    if (!isUuid(p.subscriptionId)) throw errors.arm.invalidSubscriptionId({ subscriptionId: p.subscriptionId });
    subscription = await store.subscription(p.subscriptionId);
    if (!subscription || subscription.tenantId !== principal.tenantId) throw errors.arm.subscriptionNotFound({ subscriptionId: p.subscriptionId });
  }
  if (p.resourceGroupName !== undefined) {
    const rg = p.resourceGroupName;
    if (rg.length < 1 || rg.length > 90 || !rgPattern.test(rg) || rg.endsWith('.')) {
      const bad = [...new Set([...rg].filter((c) => !rgChar.test(c)))].join('') || (rg.endsWith('.') ? '.' : rg.length > 90 ? '(length)' : '');
      throw errors.arm.invalidResourceGroup({ name: rg, invalid: bad });
    }
  }
  const scope = (opts.scope ?? defaultScope)(req);
  if (opts.action) {
    const action = typeof opts.action === 'function' ? opts.action(req) : opts.action;
    if (!(await store.authorized(principal, action, scope))) throw authorizationFailed(principal, action, scope);
  }
  let resourceGroup: ResourceGroup | undefined;
  if (p.resourceGroupName !== undefined && subscription && opts.requireResourceGroup !== false) {
    resourceGroup = await store.resourceGroup(subscription.subscriptionId, p.resourceGroupName);
    if (!resourceGroup) throw errors.arm.resourceGroupNotFound({ name: p.resourceGroupName });
  }
  return { principal, apiVersion, subscription, resourceGroup, scope };
}

