/**
 * Provider-namespace aliases (`STRATUS_PROVIDER_NAMESPACE_ALIASES`, issue 10 item 2): the
 * resource manager serves a user-supplied namespace prefix (say `Acme.`) as `Vendor.`, so an
 * official client that writes its cloud's namespace into paths (`/providers/Acme.Compute/skus`),
 * filters (`roleDefinitionId eq '/providers/Acme.Authorization/roleDefinitions/…'`) and bodies
 * needs no code. Done once, at the request's entry: the URL (path and query) is rewritten before
 * routing ({@link aliasUrlRewriter}) and JSON bodies before validation ({@link aliasBodyHook}).
 * What Stratus returns keeps the `Vendor.` spelling; the links it writes name `Vendor.`, which it
 * serves natively.
 */
import type { FastifyRequest } from 'fastify';
import { familyOfPath } from '../../core/family.ts';

/** The namespace prefix Stratus serves natively. */
export const nativeNamespacePrefix = 'Vendor.';

/**
 * A matcher of `providers/<alias>` (with `/` literal or percent-encoded as `%2F`),
 * case-insensitive as the resource manager is; `undefined` when no alias is configured.
 */
function aliasPattern(aliases: readonly string[]): RegExp | undefined {
  if (aliases.length === 0) return undefined;
  const alt = aliases.map((a) => a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return new RegExp(`(/|%2F)providers(/|%2F)(?:${alt})`, 'gi');
}

/** Rewrites every `providers/<alias>` of `text` to `providers/Vendor.` (the text unchanged when none is there). */
function rewrite(text: string, re: RegExp): string {
  re.lastIndex = 0;
  return re.test(text) ? text.replace(re, `$1providers$2${nativeNamespacePrefix}`) : text;
}

/**
 * The `rewriteUrl` option of the Fastify instance: a resource-manager request URL with an
 * aliased namespace anywhere in its path or query becomes the `Vendor.` URL; every other URL
 * (other families, no alias configured) is returned as it is.
 * @param aliases prefixes ending in `.`, e.g. `['Acme.']` (see `parseNamespaceAliases` in config).
 */
export function aliasUrlRewriter(aliases: readonly string[]): (req: { url?: string }) => string {
  const re = aliasPattern(aliases);
  return (req) => {
    const url = req.url ?? '/';
    if (!re) return url;
    const out = rewrite(url, re);
    if (out === url) return url;
    const family = familyOfPath(out.split('?')[0]!);
    return family === 'arm' || family === 'datashare' ? out : url;
  };
}

/** An id-like string: a path (`/subscriptions/…`, `providers/…`) without white space; free text (descriptions) is left alone. */
const idLike = /^(\/|providers\/)\S*$/i;

/** Returns `value` with every id-like string in it (deeply) rewritten; objects are copied only where something changed. */
function rewriteDeep(value: unknown, re: RegExp): unknown {
  if (typeof value === 'string') return idLike.test(value) ? rewrite(value, re) : value;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = rewriteDeep(v, re);
      if (r !== v) changed = true;
      return r;
    });
    return changed ? out : value;
  }
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const r = rewriteDeep(v, re);
      if (r !== v) changed = true;
      out[k] = r;
    }
    return changed ? out : value;
  }
  return value;
}

/**
 * A `preValidation` hook normalising role definition ids, scopes and any other id-like string
 * (a path without white space) naming `providers/<alias>` inside a resource-manager JSON body
 * to the `Vendor.` spelling; free text is kept as sent;
 * `undefined` when no alias is configured (nothing to register).
 */
export function aliasBodyHook(aliases: readonly string[]): ((req: FastifyRequest) => Promise<void>) | undefined {
  const re = aliasPattern(aliases);
  if (!re) return undefined;
  return async (req) => {
    if (req.body === undefined || req.body === null || typeof req.body !== 'object' || Buffer.isBuffer(req.body)) return;
    const family = familyOfPath(req.url.split('?')[0]!);
    if (family !== 'arm' && family !== 'datashare') return;
    req.body = rewriteDeep(req.body, re);
  };
}
