/**
 * `GET /v1.0/myorg/admin/dataflows` (spec analytics §4.1, §5, §8; reference §1): the
 * tenant's dataflows for a tenant administrator or a service principal, with `$filter`,
 * `$top` and `$skip`, throttled per caller.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../core/errors.ts';
import { authenticate, AuthFailure } from '../../core/auth.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { compileFilter, ODataError, parseFilter } from '../../core/odata/index.ts';
import { dataflowFields, listDataflows } from './store.ts';

/** Delegated scopes that admit an administrator (spec §5). */
export const adminScopes = ['Tenant.Read.All', 'Tenant.ReadWrite.All'];

/** The error code of every refused caller, as the real service answers (reference §1.5). */
export const notAuthorizedCode = 'AnalyticsNotAuthorizedException';

/**
 * The analytics 401 for a request without a usable token (missing, malformed, expired,
 * wrong audience). `TokenExpired` for an expired token, `AnalyticsNotAuthorizedException`
 * otherwise; with a `WWW-Authenticate: Bearer` challenge naming Stratus's identity provider.
 */
export function tokenFailure(ctx: AppContext, e: AuthFailure): ApiError {
  const challenge = `Bearer authorization_uri="${ctx.origin()}/common/oauth2/authorize", error="invalid_token"`;
  if (e.reason === 'expired') return new ApiError(401, 'TokenExpired', 'Access token has expired, resubmit with a new access token', { headers: { 'WWW-Authenticate': challenge } });
  return new ApiError(401, notAuthorizedCode, e.message, { headers: { 'WWW-Authenticate': challenge } });
}

/**
 * Spec §5: a tenant administrator with a delegated token holding `Tenant.Read.All` or
 * `Tenant.ReadWrite.All`, or a service principal (or managed identity) whose app token
 * carries no analytics application permissions at all (those are all admin-consent
 * permissions; `Tenant.Read.All` / `Tenant.ReadWrite.All` "must not be present").
 * @throws ApiError 401 `AnalyticsNotAuthorizedException` (reference §1.5) otherwise.
 */
export function checkAdminAccess(p: Principal): void {
  if (p.kind === 'user') {
    if (!p.isTenantAdmin) throw new ApiError(401, notAuthorizedCode, 'The caller is not a tenant administrator; the admin APIs need a tenant administrator or a service principal.');
    if (!adminScopes.some((s) => p.scopes.includes(s))) throw new ApiError(401, notAuthorizedCode, `The delegated token holds none of the required scopes ${adminScopes.join(', ')}.`);
    return;
  }
  if (p.kind === 'app') {
    if (p.roles.length > 0) {
      throw new ApiError(401, notAuthorizedCode, `A service principal must not hold analytics application permissions for the admin APIs (the token carries ${p.roles.join(', ')}).`);
    }
    return;
  }
  throw new ApiError(401, notAuthorizedCode, 'The caller is not authorized.');
}

/**
 * Reads `$top` / `$skip`: absent → undefined; otherwise a non-negative int32.
 * @throws ApiError 400 `BadRequest` for a repeated, non-integer, negative or too large value.
 */
export function readCount(q: Record<string, unknown>, name: '$top' | '$skip'): number | undefined {
  const key = Object.keys(q).find((k) => k.toLowerCase() === name);
  if (key === undefined) return undefined;
  const v = q[key];
  if (typeof v !== 'string') throw new ApiError(400, 'BadRequest', `The query parameter '${name}' must be given once.`);
  if (!/^\s*\+?\d+\s*$/.test(v)) {
    if (/^\s*-\d+\s*$/.test(v)) throw new ApiError(400, 'BadRequest', `Invalid value '${v}' for query parameter '${name}': it must not be negative.`);
    throw new ApiError(400, 'BadRequest', `Invalid value '${v}' for query parameter '${name}': expected a non-negative integer.`);
  }
  const n = Number(v.trim());
  if (n > 2_147_483_647) throw new ApiError(400, 'BadRequest', `Invalid value '${v}' for query parameter '${name}': it exceeds the 32-bit integer range.`);
  return n;
}

/** Registers the admin dataflow listing. */
export function registerAnalyticsRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/v1.0/myorg/admin/dataflows', { config: { family: 'analytics' } }, async (req: FastifyRequest, reply: FastifyReply) => {
    let principal: Principal;
    try {
      principal = await authenticate(req, ctx.identity, 'analytics');
    } catch (e) {
      if (e instanceof AuthFailure) throw tokenFailure(ctx, e);
      throw e;
    }
    checkAdminAccess(principal);

    const s = ctx.config.settings;
    const decision = await ctx.rateLimiter.hit(`analytics:${principal.tenantId}:${principal.objectId}`, s.analyticsRequestsPerWindow, s.analyticsWindowSeconds);
    if (!decision.allowed) {
      // Observed shape of the service's 429 (reference §1.4): a bare message, Retry-After in seconds.
      return reply
        .code(429)
        .header('Retry-After', String(decision.retryAfterSeconds))
        .header('Cache-Control', 'no-store, must-revalidate, no-cache')
        .header('Pragma', 'no-cache')
        .send({ message: `You have exceeded the amount of requests allowed in the current time frame and further requests will fail. Retry in ${decision.retryAfterSeconds} seconds.` });
    }

    const q = (req.query ?? {}) as Record<string, unknown>;
    const top = readCount(q, '$top');
    const skip = readCount(q, '$skip') ?? 0;
    const filterKey = Object.keys(q).find((k) => k.toLowerCase() === '$filter');
    let filter;
    if (filterKey !== undefined) {
      const text = q[filterKey];
      if (typeof text !== 'string') throw new ApiError(400, 'BadRequest', "The query parameter '$filter' must be given once.");
      if (text.trim() !== '') {
        try {
          filter = compileFilter(parseFilter(text), dataflowFields);
        } catch (e) {
          if (e instanceof ODataError) throw new ApiError(400, 'BadRequest', `Invalid $filter '${text}': ${e.message}`);
          throw e;
        }
      }
    }
    const value = await listDataflows(ctx.store.db, principal.tenantId, filter, skip, top);
    reply.header('Cache-Control', 'no-store, must-revalidate, no-cache');
    return { '@odata.context': `${ctx.origin()}/v1.0/myorg/admin/$metadata#dataflows`, value };
  });
}
