/**
 * Small request-input facts every API area needs the same way: the first value of a
 * query parameter that may be repeated, whether a body was sent as JSON, and where a JSON
 * document holds U+0000 (which PostgreSQL text cannot store). Each area turns a finding
 * into its own error envelope.
 */
import type { FastifyRequest } from 'fastify';

/** The first value of a query parameter Fastify may have parsed as a list; undefined when absent or not text. */
export function firstValue(v: unknown): string | undefined {
  if (Array.isArray(v)) return typeof v[0] === 'string' ? v[0] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** Whether the request's `Content-Type` is JSON (`application/json` or `application/*+json`, any parameters). */
export function isJsonContent(req: FastifyRequest): boolean {
  return /^application\/([\w.+-]+\+)?json\s*(;|$)/iu.test(req.headers['content-type'] ?? '');
}

/**
 * The JSON path (`a.b[2].c`) of the first string value or key in `v` holding U+0000, starting
 * at `path`; undefined when there is none. Depth is bounded by the JSON parser's input.
 */
export function nulPath(v: unknown, path = ''): string | undefined {
  if (typeof v === 'string') return v.includes('\u0000') ? path : undefined;
  if (v === null || typeof v !== 'object') return undefined;
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    const at = Array.isArray(v) ? `${path}[${k}]` : path ? `${path}.${k}` : k;
    if (k.includes('\u0000')) return at;
    const hit = nulPath(child, at);
    if (hit) return hit;
  }
  return undefined;
}
