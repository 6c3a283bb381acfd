/**
 * Small request-input facts every API area needs the same way, and the core's input guards
 * (issue 11, item 3): the first value of a query parameter that may be repeated, whether a body
 * was sent as JSON, where a JSON document holds U+0000 (which PostgreSQL text cannot store) or a
 * lone surrogate, how deep a JSON text nests (scanned before it is parsed), and which query
 * parameters are repeated where one value is expected. Each area, or the app's hooks, turn a
 * finding into the family's error envelope. Nothing here recurses: any input depth is safe.
 */
import type { FastifyRequest } from 'fastify';

/** Deepest nesting of arrays and objects a JSON request body may have, in every family. */
export const maxJsonDepth = 64;

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
 * Whether the JSON text `text` nests arrays/objects deeper than `max` levels. One linear pass
 * over the characters (strings and their escapes skipped), no recursion, no parse; meant to run
 * before `JSON.parse` so neither the parser nor any later walk sees an over-deep document.
 */
export function jsonDepthExceeds(text: string, max: number = maxJsonDepth): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** A lone UTF-16 surrogate (text no UTF-8 store can hold as sent). */

const loneSurrogateUtf16 = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether `s` holds U+0000 or a lone surrogate: text neither database stores as sent. */
export function isBadText(s: string): boolean {
  return s.includes('\u0000') || loneSurrogateUtf16.test(s);
}


/**
 * The JSON path (`a.b[2].c`) of the first string value or key in `v` (document order) that
 * `bad` flags, starting at `path`; undefined when there is none. Iterative: any depth is safe.
 */
function findText(v: unknown, bad: (s: string) => boolean, path: string): string | undefined {
  const stack: [unknown, string][] = [[v, path]];
  while (stack.length > 0) {
    const [x, at] = stack.pop()!;
    if (typeof x === 'string') {
      if (bad(x)) return at;
      continue;
    }
    if (x === null || typeof x !== 'object' || ArrayBuffer.isView(x)) continue;
    const entries = Object.entries(x as Record<string, unknown>);
    const children: [unknown, string][] = [];
    for (const [k, child] of entries) {
      const childAt = Array.isArray(x) ? `${at}[${k}]` : at ? `${at}.${k}` : k;
      if (bad(k)) {
        // A bad key is found before its value; keep document order with the siblings before it.
        children.push([k, childAt]);
        continue;
      }
      children.push([child, childAt]);
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

/**
 * The JSON path (`a.b[2].c`) of the first string value or key in `v` holding U+0000, starting
 * at `path`; undefined when there is none. Iterative: any depth is safe.
 */
export function nulPath(v: unknown, path = ''): string | undefined {
  return findText(v, (s) => s.includes('\u0000'), path);
}

/** Like {@link nulPath} for a lone UTF-16 surrogate. */
export function surrogatePath(v: unknown, path = ''): string | undefined {
  return findText(v, (s) => loneSurrogateUtf16.test(s), path);
}

/** Like {@link nulPath} for U+0000 or a lone surrogate ({@link isBadText}). */
export function badTextPath(v: unknown, path = ''): string | undefined {
  return findText(v, isBadText, path);
}

/**
 * Query parameters that take one value in every family that knows them (OData system options,
 * `api-version`): given twice — under any letter case — the request is ambiguous.
 */
const singleValued = new Set(['api-version', '$filter', '$top', '$skip', '$skiptoken', '$orderby', '$select', '$expand', '$search', '$count', '$format', '$apply', '$levels']);

/**
 * The name of the first query parameter of `query` (Fastify's parse: a repeated key is a list)
 * given more than once where one value is expected, or undefined. Parameters the route's
 * querystring schema declares (`declared`) are left to the schema; with `all` (the identity
 * provider: RFC 6749 §3.1) every repeated parameter counts, otherwise only the well-known
 * single-valued ones (also when repeated under another letter case).
 */
export function repeatedParameter(query: unknown, declared: Record<string, unknown> | undefined, all: boolean): string | undefined {
  if (query === null || typeof query !== 'object') return undefined;
  const seen = new Map<string, string>();
  for (const [k, v] of Object.entries(query as Record<string, unknown>)) {
    if (declared && Object.prototype.hasOwnProperty.call(declared, k)) continue;
    const lower = k.toLowerCase();
    if (!all && !singleValued.has(lower)) continue;
    if (Array.isArray(v) && v.length > 1) return k;
    if (seen.has(lower)) return k;
    seen.set(lower, k);
  }
  return undefined;
}
