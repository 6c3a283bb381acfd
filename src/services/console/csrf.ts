/**
 * CSRF protection of the console's state-changing requests (issue 12 item 1). The session
 * cookie is `SameSite=Strict`; on top of that a POST authorised by the cookie (not by an
 * `Authorization: Bearer <control key>` header) must carry an `Origin` (or, failing that, a
 * `Referer`) of the server's own origin: the one the request came to (Host header) or the
 * public URL.
 */
import type { FastifyRequest } from 'fastify';
import { errors } from '../../core/errors/index.ts';

/** The origin a request was addressed to (`http(s)://host[:port]`). */
export function requestOrigin(req: FastifyRequest): string {
  return `${req.protocol}://${req.headers.host ?? ''}`.toLowerCase();
}

/**
 * Accepts the request, or throws.
 * @throws ApiError 403 `CsrfCheckFailed` when a cookie-authorised request comes from another origin or names none
 */
export function checkCsrf(req: FastifyRequest, publicOrigin?: string): void {
  if (/^Bearer\s/i.test(req.headers.authorization ?? '')) return;
  let origin = typeof req.headers.origin === 'string' ? req.headers.origin : undefined;
  if (!origin && typeof req.headers.referer === 'string') {
    try {
      origin = new URL(req.headers.referer).origin;
    } catch {
      origin = undefined;
    }
  }
  const o = origin?.toLowerCase();
  if (o && (o === requestOrigin(req) || (publicOrigin && o === publicOrigin.toLowerCase()))) return;
  throw errors.control.csrfCheckFailed();
}
