/**
 * The control plane (ours, not the spec's): `GET /_stratus/health`, `POST /_stratus/reset`,
 * `GET|POST /_stratus/clock`, `GET /_stratus/mail/outbound`. Errors are RFC 9457 problem+json.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import type { AppContext, ServiceModule } from '../../context.ts';
import { resetAll } from '../../seed/index.ts';
import { advance, nowIso, offset } from '../../core/clock.ts';
import { ApiError } from '../../core/errors.ts';
import { listOutboundMail } from '../mail/outbound.ts';
import { demoTenant } from '../../seed/demo.ts';

/** Body of `POST /_stratus/clock`. */
const ClockAdvance = Type.Object({ advanceSeconds: Type.Number({ minimum: 0, maximum: 100 * 365 * 86400 }) }, { additionalProperties: false });

/** Query of `GET /_stratus/mail/outbound`. */
const OutboundQuery = Type.Object({ tenant: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })), top: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })) });

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

  app.post('/_stratus/clock', { schema: { body: ClockAdvance } }, async (req) => {
    const b = req.body as Static<typeof ClockAdvance>;
    advance(b.advanceSeconds * 1000);
    return { now: nowIso(), offsetMs: offset() };
  });

  /**
   * Mail sent to recipients outside the tenant, recorded as delivered outbound (issue 5),
   * newest first. `?tenant=<id or domain>` (default: the demo tenant), `?top=` (1–1000).
   */
  app.get('/_stratus/mail/outbound', { schema: { querystring: OutboundQuery } }, async (req) => {
    const q = req.query as Static<typeof OutboundQuery>;
    const tenant = await ctx.identity.directory.findTenant(q.tenant ?? demoTenant.id);
    if (!tenant) throw new ApiError(404, 'NotFound', `No tenant '${q.tenant}'.`);
    return { tenantId: tenant.id, value: await listOutboundMail(ctx, tenant.id, q.top ?? 1000) };
  });
}
