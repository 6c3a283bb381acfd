/**
 * Which API family serves a path (design: "One process, many API families"); the error
 * handler and the response-header hook render by it. A route may name its family in its
 * config (`{ config: { family: 'datashare' } }`), which wins.
 */
import type { FastifyRequest } from 'fastify';
import type { Family } from './errors/index.ts';

/** The family that owns `path` by its prefix. */
export function familyOfPath(path: string): Family {
  const p = path.toLowerCase().replace(/\/{2,}/g, '/');
  if (p.startsWith('/_stratus')) return 'control';
  if (p.startsWith('/v1.0/myorg/')) return 'analytics';
  if (p.startsWith('/v1/')) return 'platform';
  if (p.startsWith('/v1.0/') || p.startsWith('/beta/')) return 'mail';
  if (p.startsWith('/wopi')) return 'wopi';
  if (/^\/[^/]+\/(oauth2|discovery|userrealm|openid|v2\.0\/\.well-known|\.well-known)(\/|$)/.test(p) || p.startsWith('/oidc/') || p === '/devicelogin') return 'oauth';
  if (p.includes('/providers/vendor.datashare/')) return 'datashare';
  return 'arm';
}

const familyKey = Symbol('stratus.family');

/** The family of a request: its route's config, else its path (worked out once per request). */
export function familyOf(req: FastifyRequest): Family {
  const memo = (req as unknown as Record<symbol, Family | undefined>)[familyKey];
  if (memo !== undefined) return memo;
  const f = (req.routeOptions?.config as { family?: Family } | undefined)?.family ?? familyOfPath(req.url.split('?')[0]!);
  (req as unknown as Record<symbol, Family>)[familyKey] = f;
  return f;
}
