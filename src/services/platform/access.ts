/**
 * Who may call the data platform (spec analytics-platform-mail-wopi §5, §8; reference §2.1,
 * §2.5, §4.2, §4.3): bearer verification for the `platform` audience, delegated scopes, the
 * per-caller request budget, and workspace roles.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { bearerChallenge, errors } from '../../core/errors/index.ts';
import { authenticate, AuthFailure } from '../../core/auth.ts';
import { isUuid } from '../../core/ids.ts';
import { nowMs } from '../../core/clock.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { invalidInput } from './schemas.ts';
import { getRole, getWorkspace, settleDueOperations, workspaceRoles, type WorkspaceRole, type WorkspaceRow } from './store.ts';
import type { AreaCache, CacheHub } from '../../core/cache.ts';

/** This instance's `platform` caches: workspaces, roles, and the next due operation per workspace. */
interface PlatformCaches {
  workspaces: AreaCache<WorkspaceRow | undefined>;
  roles: AreaCache<WorkspaceRole | undefined>;
  /** `complete_ms` of the workspace's earliest pending operation; +Infinity when none. */
  nextDue: AreaCache<number>;
}

const cachesByHub = new WeakMap<CacheHub, PlatformCaches>();

function caches(hub: CacheHub): PlatformCaches {
  let c = cachesByHub.get(hub);
  if (!c) {
    c = { workspaces: hub.cache('platform'), roles: hub.cache('platform'), nextDue: hub.cache('platform') };
    cachesByHub.set(hub, c);
  }
  return c;
}

/** `complete_ms` of the earliest operation of the workspace still pending (+Infinity when none). */
async function nextDueOperation(ctx: AppContext, tenantId: string, workspaceId: string): Promise<number> {
  const r = await ctx.store.db
    .selectFrom('platform_operations')
    .select((eb) => eb.fn.min('complete_ms').as('m'))
    .where('tenant_id', '=', tenantId)
    .where('workspace_id', '=', workspaceId)
    .where('status', 'is', null)
    .executeTakeFirst();
  const m = (r as { m?: unknown } | undefined)?.m;
  return m === null || m === undefined ? Number.POSITIVE_INFINITY : Number(m);
}

/** Delegated scopes that allow writing eventstreams (spec §5). */
export const writeScopes = ['Eventstream.ReadWrite.All', 'Item.ReadWrite.All'];
/** Delegated scopes that allow reading eventstreams (reference §2.5). */
export const readScopes = ['Eventstream.Read.All', 'Item.Read.All', 'Workspace.Read.All', 'Workspace.ReadWrite.All', ...writeScopes];

/**
 * Verifies the bearer token for the `platform` audience and spends one request of the
 * caller's budget.
 * @throws ApiError 401 `TokenExpired` (expired) or `Unauthorized` (missing, malformed, wrong
 * audience, bad signature) with a `WWW-Authenticate: Bearer` challenge; 403
 * `InsufficientScopes` for a delegated token without any of `scopes`; 429 `RequestBlocked`
 * with `Retry-After` when the caller's budget is spent (reference §4.3).
 */
export async function platformCaller(req: FastifyRequest, ctx: AppContext, scopes: string[]): Promise<Principal> {
  let p: Principal;
  try {
    p = await authenticate(req, ctx.identity, 'platform');
  } catch (e) {
    if (!(e instanceof AuthFailure)) throw e;
    const headers = { 'WWW-Authenticate': bearerChallenge(ctx.origin(), true) };
    if (e.reason === 'expired') throw errors.platform.tokenExpired({}, { headers, isRetriable: false });
    throw errors.platform.unauthorized({ reason: e.message }, { headers, isRetriable: false });
  }
  const s = ctx.config.settings;
  const d = await ctx.rateLimiter.hit(ctx.rateLimiter.bucket('platform', p.tenantId, p.objectId), s.platformRequestsPerWindow, s.platformWindowSeconds);
  if (!d.allowed) {
    throw errors.platform.requestBlocked({ until: blockedUntil(nowMs() + d.retryAfterSeconds * 1000) }, {
      headers: { 'Retry-After': String(d.retryAfterSeconds) },
      isRetriable: true,
    });
  }
  if (p.kind === 'user' && !scopes.some((x) => p.scopes.includes(x))) {
    throw errors.platform.insufficientScopes({ scopes: scopes.join(', ') }, { isRetriable: false });
  }
  return p;
}

/** `M/D/YYYY h:mm:ss AM|PM` in UTC, as the service writes the end of a block (reference §4.3). */
export function blockedUntil(ms: number): string {
  const d = new Date(ms);
  const h = d.getUTCHours();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()} ${h % 12 === 0 ? 12 : h % 12}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} ${h < 12 ? 'AM' : 'PM'}`;
}

/**
 * The workspace and the caller's role in it, requiring at least `minimum`.
 * @throws ApiError 400 `InvalidInput` for a malformed id; 404 `WorkspaceNotFound` when the
 * tenant has no such workspace; 403 `InsufficientWorkspaceRole` when the caller holds no role
 * or a weaker one (Stratus's choices; reference §4.2 is silent). Settles the workspace's due
 * operations before returning, so that reads see the items they created; the request `raw` (its
 * Node object) is then marked as one that wrote (`core/cache-requests.ts`).
 */
export async function requireWorkspaceRole(ctx: AppContext, p: Principal, workspaceId: string, minimum: WorkspaceRole, raw: object): Promise<{ workspace: WorkspaceRow; role: WorkspaceRole }> {
  if (!isUuid(workspaceId)) throw invalidInput("The path parameter 'workspaceId' must be a uuid.");
  const id = workspaceId.toLowerCase();
  const c = caches(ctx.cache);
  await ctx.cache.sync();
  const wsKey = `${p.tenantId}/${id}`;
  const workspace = await c.workspaces.get(wsKey, async () => {
    const w = await getWorkspace(ctx.store.db, p.tenantId, id);
    return w ? Object.freeze(w) : undefined;
  });
  if (!workspace) throw errors.platform.workspaceNotFound({}, { isRetriable: false, relatedResource: { resourceId: id, resourceType: 'Workspace' } });
  const role = await c.roles.get(`${wsKey}/${p.objectId}`, () => getRole(ctx.store.db, p.tenantId, id, p.objectId));
  if (!role || workspaceRoles.indexOf(role) < workspaceRoles.indexOf(minimum)) {
    throw errors.platform.insufficientWorkspaceRole({ minimum, held: role ? `the caller is ${role}` : 'the caller has no role in the workspace' }, {
      isRetriable: false,
      relatedResource: { resourceId: id, resourceType: 'Workspace' },
    });
  }
  // Operations of this workspace that are due complete now, whether or not anyone polled them.
  // The earliest pending completion time is cached, so reads of a workspace with nothing due
  // (the usual case) run no query for it; a new operation invalidates the `platform` area.
  const now = nowMs();
  if ((await c.nextDue.get(wsKey, () => nextDueOperation(ctx, p.tenantId, id))) <= now) {
    const gen = ctx.cache.generation('platform');
    ctx.cache.requests.mark(raw); // a read that completes operations writes (`core/cache-requests.ts`)
    await settleDueOperations(ctx.store.db, p.tenantId, id, now);
    c.nextDue.set(wsKey, await nextDueOperation(ctx, p.tenantId, id), gen);
  }
  return { workspace, role };
}

/** The `Principal` (spec §2.2 variants) of a caller: `User` with `userDetails`, or `ServicePrincipal` with `servicePrincipalDetails`. */
export function principalOf(p: Principal): Record<string, unknown> {
  if (p.kind === 'user') return { id: p.objectId, displayName: p.name ?? p.userPrincipalName ?? '', type: 'User', userDetails: { userPrincipalName: p.userPrincipalName ?? '' } };
  return { id: p.objectId, displayName: p.name ?? '', type: 'ServicePrincipal', servicePrincipalDetails: { idpAppId: p.appId } };
}
