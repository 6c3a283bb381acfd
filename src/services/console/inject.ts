/**
 * The control plane's own JSON API called in-process by console pages (`app.inject` with the
 * control key and the request log's internal marker), so a page and the API cannot disagree.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { consoleInternalHeader } from '../../core/request-log.ts';

/** A caller of the control API: `(method, url, payload?)` → the injected response. */
export function controlApi(app: FastifyInstance, ctx: AppContext) {
  return (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${ctx.controlKey}`, [consoleInternalHeader]: ctx.requestLog.internalToken, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
      payload: payload === undefined ? undefined : JSON.stringify(payload),
    });
}
