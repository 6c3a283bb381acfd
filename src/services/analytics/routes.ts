/**
 * Routes of the analytics area: `GET /v1.0/myorg/admin/dataflows` (spec analytics §4.1, §5,
 * §8; reference §1), the tenant's dataflows for a tenant administrator or a service
 * principal, with `$filter`, `$top` and `$skip`, throttled per caller. A route table: what
 * the operation means is in `rules.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { listAdminDataflows } from './rules.ts';

/**
 * Headers of every analytics response, as on the observed responses of the admin APIs
 * (reference §1.4): no caching, no framing, no sniffing, HTTPS only.
 */
export const analyticsResponseHeaders: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store, must-revalidate, no-cache',
  Pragma: 'no-cache',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Strict-Transport-Security': 'max-age=31536000; includeSubDomains',
};

/** Registers the admin dataflow listing inside its own plugin, whose hook sets {@link analyticsResponseHeaders} on every answer (errors too). */
export async function registerAnalyticsRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  await root.register(async (app) => {
    app.addHook('onSend', async (_req, reply, payload) => {
      reply.headers(analyticsResponseHeaders);
      return payload;
    });
    app.get('/v1.0/myorg/admin/dataflows', { config: { family: 'analytics' } }, (req, reply) => listAdminDataflows(ctx, req, reply));
  });
}
