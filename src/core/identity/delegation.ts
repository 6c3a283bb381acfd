/**
 * What the identity provider's endpoints share about a request: the tenant of the path, the
 * family and scopes a delegated grant asks for (`scope`, or v1 `resource`), and whether a
 * redirect URI is registered (spec: resource-manager §5).
 */
import { errors } from '../errors/index.ts';
import type { AudienceAlias } from '../../config.ts';
import type { DirectoryApp, Tenant } from './directory.ts';
import type { AudienceFamily, Identity } from './identity.ts';
import { audienceUri, delegatedScopes, openIdScopes, parseScopes, resolveResource } from './scopes.ts';

/** Client id of the development public client (sign-in page, password grant without client id). */
export const devPublicClientId = 'b7e4c2a1-6d3f-4a8e-9c5b-2f1d0e7a3c94';

/** Options of every error the identity provider raises: rendered as OAuth 2.0 errors whatever the path looks like. */
export const asOauth = { family: 'oauth' } as const;

/** A tenant path segment: a tenant, or `common`/`organizations` (any tenant; the user's home tenant decides). */
export interface TenantSegment {
  tenant?: Tenant;
  common: boolean;
}

/** The tenant a path segment names; undefined when none. */
export async function resolveTenant(identity: Identity, segment: string): Promise<TenantSegment | undefined> {
  if (['common', 'organizations'].includes(segment.toLowerCase())) return { tenant: (await identity.directory.listTenants())[0], common: true };
  const tenant = await identity.directory.findTenant(segment);
  return tenant ? { tenant, common: false } : undefined;
}

/** The longest `scope` string accepted (characters; issue 30 row 9: it is stored with codes and device codes). */
export const maxScopeLength = 2048;

/** True when a principal of `tenantId` may sign in through `seg`. */
export function inTenant(seg: TenantSegment, tenantId: string): boolean {
  return seg.common || seg.tenant?.id === tenantId;
}

/** A delegated request: the family, the `aud` to carry and the granted scope names. */
export interface DelegatedRequest {
  audience: AudienceFamily;
  aud: string;
  scopes: string[];
}

/**
 * Resolves the requested scopes (or the v1 `resource=`) for a delegated grant; aliases of
 * `STRATUS_AUDIENCE_ALIASES` name their family. @throws ApiError invalid_scope (also for a scope or
 * resource over {@link maxScopeLength} characters).
 */
export function delegatedRequest(scope: string | undefined, resource: string | undefined, origin: string, aliases: readonly AudienceAlias[]): DelegatedRequest {
  if ((scope ?? '').length > maxScopeLength) throw errors.oauth.scopeTooLong({ length: String((scope ?? '').length), max: String(maxScopeLength) }, asOauth);
  if ((resource ?? '').length > maxScopeLength) throw errors.oauth.scopeTooLong({ length: String((resource ?? '').length), max: String(maxScopeLength) }, asOauth);
  const names = (scope ?? '').split(/\s+/).filter(Boolean);
  if (resource && names.every((n) => openIdScopes.includes(n))) {
    const r = resolveResource(resource, origin, aliases);
    if (r) return { ...r, scopes: delegatedScopes[r.audience] };
  }
  // Only OpenID scopes: the access token is for the user directory (mail family), carrying them.
  if (!resource && names.includes('openid') && names.every((n) => openIdScopes.includes(n))) {
    return { audience: 'mail', aud: audienceUri('mail'), scopes: names.filter((n) => n !== 'offline_access') };
  }
  const parsed = parseScopes(scope ?? '', origin, aliases);
  if (!parsed) throw errors.oauth.scopeNamesNoResource({ example: `${audienceUri('arm')}/user_impersonation`, scope: scope ?? '' }, asOauth);
  if (parsed.unknown.length) throw errors.oauth.scopeUnknown({ scope: parsed.unknown.join(' ') }, asOauth);
  const offered = delegatedScopes[parsed.audience];
  const scopes = new Set<string>();
  for (const n of parsed.names) {
    if (n === '.default') offered.forEach((s) => scopes.add(s));
    else if (offered.includes(n)) scopes.add(n);
    else throw errors.oauth.scopeNotOnResource({ scope: n, resource: audienceUri(parsed.audience) }, asOauth);
  }
  return { audience: parsed.audience, aud: parsed.aud, scopes: [...scopes] };
}

/**
 * True when `redirectUri` is registered for `app` (loopback hosts match on any port, as for native
 * clients). A URI holding a control character (CR, LF, …) or a character above U+00FF is never
 * allowed: it cannot be sent in a `Location` header (issue 30 row 12), and the URL parser would
 * silently drop CR/LF before comparing.
 */
export function redirectAllowed(app: DirectoryApp, redirectUri: string): boolean {
  if (!headerSafe(redirectUri)) return false;
  let given: URL;
  try {
    given = new URL(redirectUri);
  } catch {
    return false;
  }
  if (given.hash) return false;
  return app.redirectUris.some((r) => {
    if (r === redirectUri) return true;
    const reg = new URL(r);
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(reg.hostname) && reg.protocol === 'http:';
    return loopback && given.protocol === reg.protocol && given.hostname === reg.hostname && given.pathname === reg.pathname;
  });
}

/** True when `text` can be a header value as it is: no control characters, nothing above U+00FF. */
export function headerSafe(text: string): boolean {
  return !/[\u0000-\u001f\u007f]|[^\u0000-\u00ff]/.test(text);
}

/** The scope words of a request string. */
export function words(scope: string | undefined): string[] {
  return (scope ?? '').split(/\s+/).filter(Boolean);
}
