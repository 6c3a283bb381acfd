/**
 * Routes of message change-notification subscriptions (reference mail.md §7.1, §9):
 * `POST|GET /{v1.0|beta}/subscriptions`, `GET|PATCH|DELETE /{v1.0|beta}/subscriptions/{id}`,
 * `POST /{v1.0|beta}/subscriptions/{id}/reauthorize`. Errors in the mail envelope. A route
 * table: what each operation means is in `rules.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { create, get, list, reauthorize, remove, update } from './rules.ts';

/** Registers the subscription routes on both versions (mail family errors). */
export function registerSubscriptionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const config = { family: 'mail' as const };
  for (const v of ['v1.0', 'beta']) {
    app.post(`/${v}/subscriptions`, { config }, (req, reply) => create(ctx, req, reply));
    app.get(`/${v}/subscriptions`, { config }, (req) => list(ctx, req));
    app.get(`/${v}/subscriptions/:id`, { config }, (req) => get(ctx, req));
    app.patch(`/${v}/subscriptions/:id`, { config }, (req) => update(ctx, req));
    app.delete(`/${v}/subscriptions/:id`, { config }, (req, reply) => remove(ctx, req, reply));
    app.post(`/${v}/subscriptions/:id/reauthorize`, { config }, (req, reply) => reauthorize(ctx, req, reply));
  }
}
