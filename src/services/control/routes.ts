/**
 * The control plane (ours, not the spec's): `GET /_stratus/health`, `POST /_stratus/reset`,
 * `GET|POST /_stratus/clock`, `GET /_stratus/mail/outbound`. Errors are RFC 9457 problem+json.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext, ServiceModule } from '../../context.ts';
import { resetAll } from '../../seed/index.ts';
import { advance, nowIso, offset } from '../../core/clock.ts';
import { ApiError } from '../../core/errors.ts';
import { listOutboundMail } from '../mail/outbound.ts';
import { demoTenant } from '../../seed/demo.ts';

/** Registers the control-plane routes. */
export function registerControlRoutes(app: FastifyInstance, ctx: AppContext, modules: ServiceModule[]): void {
  app.get('/_stratus/health', async () => ({
    status: 'ok',
    store: ctx.store.dialect,
    time: nowIso(),
    origin: ctx.origin(),
  }));

  app.post('/_stratus/reset', async () => {
    await resetAll(ctx, modules);
    return { status: 'ok', reset: true };
  });

  app.get('/_stratus/clock', async () => ({ now: nowIso(), offsetMs: offset() }));

  app.post('/_stratus/clock', async (req) => {
    const b = (req.body ?? {}) as { advanceSeconds?: unknown };
    const s = Number(b.advanceSeconds);
    if (!Number.isFinite(s) || s < 0) throw new ApiError(400, 'BadRequest', "Body must be {\"advanceSeconds\": <non-negative number>}.");
    advance(s * 1000);
    return { now: nowIso(), offsetMs: offset() };
  });

  /**
   * Mail sent to recipients outside the tenant, recorded as delivered outbound (issue 5),
   * newest first. `?tenant=<id or domain>` (default: the demo tenant), `?top=` (1–1000).
   */
  app.get('/_stratus/mail/outbound', async (req) => {
    const q = (req.query ?? {}) as { tenant?: unknown; top?: unknown };
    const tenant = await ctx.identity.directory.findTenant(typeof q.tenant === 'string' && q.tenant ? q.tenant : demoTenant.id);
    if (!tenant) throw new ApiError(404, 'NotFound', `No tenant '${String(q.tenant)}'.`);
    const top = q.top === undefined ? 1000 : Number(q.top);
    if (!Number.isInteger(top) || top < 1 || top > 1000) throw new ApiError(400, 'BadRequest', 'top must be an integer from 1 to 1000.');
    return { tenantId: tenant.id, value: await listOutboundMail(ctx, tenant.id, top) };
  });
}
