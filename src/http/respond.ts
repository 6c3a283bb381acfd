/**
 * Sending an error in a family's envelope from a hook or handler, and the `Date` header value.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { renderError, type ApiError, type Family } from '../core/errors/index.ts';
import { nowIso } from '../core/clock.ts';
import { newUuid } from '../core/ids.ts';

/** Sends `err` rendered in the envelope of `family` (status, headers, body or none); returns the reply. */
export function sendError(family: Family, err: ApiError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const client = req.headers?.['client-request-id'];
  const r = renderError(family, err, { requestId: req.id ?? newUuid(), clientRequestId: typeof client === 'string' && client ? client : undefined, date: nowIso() });
  reply.code(r.status).headers(r.headers);
  return r.body === undefined ? reply.send() : reply.send(r.body);
}
