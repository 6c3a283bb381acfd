/**
 * What the analytics operations mean (spec analytics §4.1, §5, §8; reference §1): who may
 * list the tenant's dataflows (a tenant administrator or a service principal), the 401s
 * with their bearer challenge, the per-caller throttle, and the `$filter` / `$top` / `$skip`
 * options of the listing. Every error is `errors.analytics`'s.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { cacheKey } from '../../core/cache.ts';
import { bearerChallenge, errors, type ApiError } from '../../core/errors/index.ts';
import { authenticate, AuthFailure } from '../../core/auth.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { compileFilter, ODataError, parseFilter, type FilterNode, type ValueNode } from '../../core/odata/index.ts';
import type { Expression, SqlBool } from 'kysely';
import { dataflowFields, listDataflows } from './store.ts';

/** Delegated scopes that admit an administrator (spec §5). */
export const adminScopes = ['Tenant.Read.All', 'Tenant.ReadWrite.All'];

/**
 * The analytics 401 for a request without a usable token (missing, malformed, expired,
 * wrong audience). `TokenExpired` for an expired token, `AnalyticsNotAuthorizedException`
 * otherwise; with a `WWW-Authenticate: Bearer` challenge naming Stratus's identity provider,
 * `error="invalid_token"` unless no token was sent at all (RFC 6750 §3.1).
 */
export function tokenFailure(ctx: AppContext, e: AuthFailure): ApiError {
  // RFC 6750 §3.1: no error code when the request carries no credentials at all.
  const challenge = bearerChallenge(ctx.origin(), e.reason !== 'missing');
  if (e.reason === 'expired') return errors.analytics.tokenExpired({}, { headers: { 'WWW-Authenticate': challenge } });
  return errors.analytics.notAuthorized({ message: e.message }, { headers: { 'WWW-Authenticate': challenge } });
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
    if (!p.isTenantAdmin) throw errors.analytics.notAuthorized({ message: 'The caller is not a tenant administrator; the admin APIs need a tenant administrator or a service principal.' });
    if (!adminScopes.some((s) => p.scopes.includes(s))) throw errors.analytics.notAuthorized({ message: `The delegated token holds none of the required scopes ${adminScopes.join(', ')}.` });
    return;
  }
  if (p.kind === 'app') {
    if (p.roles.length > 0) {
      throw errors.analytics.notAuthorized({ message: `A service principal must not hold analytics application permissions for the admin APIs (the token carries ${p.roles.join(', ')}).` });
    }
    return;
  }
  throw errors.analytics.notAuthorized({ message: 'The caller is not authorized.' });
}

/**
 * The one value of the system query option `name` (matched without regard to case, as OData
 * 4.01 allows); undefined when absent.
 * @throws ApiError 400 `BadRequest` when it is given more than once (also as `$TOP` beside `$top`).
 */
export function queryOption(q: Record<string, unknown>, name: string): string | undefined {
  const keys = Object.keys(q).filter((k) => k.toLowerCase() === name);
  if (keys.length === 0) return undefined;
  const v = q[keys[0]!];
  if (keys.length > 1 || typeof v !== 'string') throw errors.analytics.queryOptionNotOnce({ name });
  return v;
}

/**
 * Reads `$top` / `$skip`: absent → undefined; otherwise a non-negative int32.
 * @throws ApiError 400 `BadRequest` for a repeated, non-integer, negative or too large value.
 */
export function readCount(q: Record<string, unknown>, name: '$top' | '$skip'): number | undefined {
  const v = queryOption(q, name);
  if (v === undefined) return undefined;
  if (!/^\s*\+?\d+\s*$/.test(v)) {
    if (/^\s*-\d+\s*$/.test(v)) throw errors.analytics.countNegative({ value: v, name });
    throw errors.analytics.countNotInteger({ value: v, name });
  }
  const n = Number(v.trim());
  if (n > 2_147_483_647) throw errors.analytics.countTooLarge({ value: v, name });
  return n;
}

/** Deepest nesting of operators and function calls a `$filter` may have (the SQL engines' expression-depth limits lie far beyond). */
export const maxFilterDepth = 100;

/** Nesting depth of a parsed filter (operators, lambdas and calls), counted without recursion. */
export function filterDepth(root: FilterNode): number {
  let max = 0;
  const stack: [FilterNode | ValueNode, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [n, d] = stack.pop()!;
    if (d > max) max = d;
    switch (n.kind) {
      case 'and':
      case 'or':
      case 'compare':
        stack.push([n.left, d + 1], [n.right, d + 1]);
        break;
      case 'not':
        stack.push([n.operand, d + 1]);
        break;
      case 'lambda':
        if (n.predicate) stack.push([n.predicate, d + 1]);
        break;
      case 'in':
        stack.push([n.left, d + 1]);
        break;
      case 'boolcall':
        stack.push([n.call, d + 1]);
        break;
      case 'call':
        for (const a of n.args) stack.push([a, d + 1]);
        break;
      default:
        break;
    }
  }
  return max;
}

/**
 * Parses and compiles a `$filter` over {@link dataflowFields}; undefined for a blank one.
 * @throws ApiError 400 `BadRequest` for a syntax error, an unknown property, a type mismatch,
 *   an unsupported function, a NUL character or an expression nested deeper than {@link maxFilterDepth}.
 */
export function dataflowFilter(text: string): Expression<SqlBool> | undefined {
  if (text.trim() === '') return undefined;
  const bad = (why: string) => errors.analytics.invalidFilter({ filter: text, reason: why });
  let node: FilterNode;
  try {
    node = parseFilter(text);
  } catch (e) {
    if (e instanceof ODataError) throw bad(e.message);
    throw e;
  }
  if (filterDepth(node) > maxFilterDepth) throw bad(`the expression is nested too deeply (at most ${maxFilterDepth} levels).`);
  try {
    return compileFilter(node, dataflowFields);
  } catch (e) {
    if (e instanceof ODataError) throw bad(e.message);
    throw e;
  }
}

/**
 * `GET /v1.0/myorg/admin/dataflows` (spec §4.1, §5, §8): authenticates the caller, checks
 * admin access, throttles per caller (429 with `Retry-After` in seconds and a bare message,
 * reference §1.4), then lists the tenant's dataflows filtered and paged in SQL.
 * @throws ApiError 401 (see {@link tokenFailure}, {@link checkAdminAccess}); 400 for a bad
 *   `$filter`, `$top` or `$skip`.
 */
export async function listAdminDataflows(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  let principal: Principal;
  try {
    principal = await authenticate(req, ctx.identity, 'analytics');
  } catch (e) {
    if (e instanceof AuthFailure) throw tokenFailure(ctx, e);
    throw e;
  }
  checkAdminAccess(principal);

  const s = ctx.config.settings;
  const decision = await ctx.rateLimiter.hit(ctx.rateLimiter.bucket('analytics', principal.tenantId, principal.objectId), s.analyticsRequestsPerWindow, s.analyticsWindowSeconds);
  if (!decision.allowed) {
    // Observed shape of the service's 429 (reference §1.4): a bare message, Retry-After in seconds.
    return reply
      .code(429)
      .header('Retry-After', String(decision.retryAfterSeconds))
      .send({ message: `You have exceeded the amount of requests allowed in the current time frame and further requests will fail. Retry in ${decision.retryAfterSeconds} seconds.` });
  }

  const q = (req.query ?? {}) as Record<string, unknown>;
  const top = readCount(q, '$top');
  const skip = readCount(q, '$skip') ?? 0;
  const text = queryOption(q, '$filter');
  // Dataflows change only when the store is seeded (which changes every cache area): a page's
  // text is kept per tenant and query in the `seeded` area, made on first ask.
  await ctx.cache.sync();
  const pages = ctx.cache.shared<string>('analytics.dataflowPages', 'seeded', 1000);
  const origin = ctx.origin();
  const page = await pages.get(cacheKey(principal.tenantId, origin, text, skip, top), async () => {
    const filter = text === undefined ? undefined : dataflowFilter(text);
    const value = await listDataflows(ctx.store.db, principal.tenantId, filter, skip, top);
    return JSON.stringify({ '@odata.context': `${origin}/v1.0/myorg/admin/$metadata#dataflows`, value });
  });
  return reply.type('application/json; charset=utf-8').send(page);
}
