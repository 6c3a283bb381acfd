/**
 * The data share subscription read budget (spec: resource-manager §8; reference §5): every
 * data share request that passes the gateway counts against its subscription's budget
 * (`settings.armReadsPerWindow` per `settings.armReadWindowSeconds`) and carries
 * `x-vendor-ratelimit-remaining-subscription-reads`; at zero → 429 `TooManyRequests` with
 * `Retry-After`. Responses the gateway rejected carry the current remainder uncounted
 * (`RateLimiter.peek`), when the caller's valid token belongs to the subscription's tenant.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { isUuid } from '../../core/ids.ts';
import { authenticate } from '../../core/auth.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { ArmStore } from '../arm/store.ts';

/** The response header of the remaining budget. */
const header = 'x-vendor-ratelimit-remaining-subscription-reads';

/** The bucket of a subscription's read budget: `datashare:reads:<subscription id, lower case>`. */
function readBucket(ctx: AppContext, subscriptionId: string): string {
  return ctx.rateLimiter.bucket('datashare', 'reads', subscriptionId.toLowerCase());
}

/**
 * Counts one read against the call's subscription and sets the header.
 * @throws 429 `TooManyRequests` with `Retry-After` when the budget is spent.
 */
export async function spendRead(ctx: AppContext, reply: FastifyReply, call: ArmCall): Promise<void> {
  const { armReadsPerWindow, armReadWindowSeconds } = ctx.config.settings;
  const subscriptionId = call.subscription!.subscriptionId;
  const d = await ctx.rateLimiter.hit(readBucket(ctx, subscriptionId), armReadsPerWindow, armReadWindowSeconds);
  reply.header(header, String(d.remaining));
  if (!d.allowed) {
    throw errors.datashare.tooManyRequests(
      { subscriptionId, limit: d.limit, windowSeconds: armReadWindowSeconds, retryAfterSeconds: d.retryAfterSeconds },
      { headers: { 'Retry-After': String(d.retryAfterSeconds), [header]: '0' } },
    );
  }
}

/**
 * Adds the `onSend` hook that gives responses the gateway rejected the remainder of the
 * subscription's budget, read without counting — but only to a caller whose token is valid
 * and whose tenant owns the subscription: an anonymous caller or another tenant learns
 * nothing about the subscription (tenant isolation), so their rejections carry no header.
 */
export function addBudgetHeader(scoped: FastifyInstance, ctx: AppContext): void {
  const arm = new ArmStore(ctx.store.db, ctx.cache);
  /** The remainder to show on a rejected answer, undefined when the caller may not learn it. */
  const remainder = async (req: FastifyRequest): Promise<number | undefined> => {
    const sub = (req.params as Record<string, string> | undefined)?.subscriptionId;
    if (typeof sub !== 'string' || !isUuid(sub)) return undefined;
    let tenantId: string;
    try {
      tenantId = (await authenticate(req, ctx.identity, 'arm')).tenantId;
    } catch {
      return undefined;
    }
    if ((await arm.subscription(sub))?.tenantId !== tenantId) return undefined;
    const { armReadsPerWindow, armReadWindowSeconds } = ctx.config.settings;
    return (await ctx.rateLimiter.peek(readBucket(ctx, sub), armReadsPerWindow, armReadWindowSeconds)).remaining;
  };
  // Callback style: an answer that passed the gateway (header set by spendRead) costs no promise.
  scoped.addHook('onSend', (req, reply, payload, done) => {
    if (reply.hasHeader(header)) return done(null, payload);
    remainder(req).then(
      (n) => {
        if (n !== undefined) reply.header(header, String(n));
        done(null, payload);
      },
      (e: Error) => done(e),
    );
  });
}
