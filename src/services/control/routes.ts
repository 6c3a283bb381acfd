/**
 * The control plane (ours, not the spec's): `GET /_stratus/health`, `POST /_stratus/reset`,
 * `GET|POST /_stratus/clock`. Errors are RFC 9457 problem+json.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext, ServiceModule } from '../../context.ts';
import { resetAll } from '../../seed/index.ts';
import { advance, nowIso, offset } from '../../core/clock.ts';
import { ApiError } from '../../core/errors.ts';

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
}
