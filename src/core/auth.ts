/**
 * Bearer verification shared by every API family: reads the `Authorization` header,
 * verifies the token for the family's audience and returns the {@link Principal}.
 * Families turn an {@link AuthFailure} into their own error (ARM AuthenticationFailed…,
 * mail InvalidAuthenticationToken, the document host's bare 401, …).
 */
import type { FastifyRequest } from 'fastify';
import { TokenError, type AudienceFamily, type Identity, type Principal, type TokenFailure } from './identity/identity.ts';

/** Why a request carries no usable bearer token. */
export type AuthFailureReason = 'missing' | 'invalid_header' | TokenFailure;

/** Thrown by {@link authenticate}; `reason` says which check failed. */
export class AuthFailure extends Error {
  constructor(readonly reason: AuthFailureReason, message: string) {
    super(message);
  }
}

/**
 * Extracts the raw bearer token from an `Authorization` header value.
 * `allowColon` accepts the `Bearer: <token>` form some hosts document (spec analytics §4.4).
 * @throws AuthFailure 'missing' (no header) or 'invalid_header' (not `Bearer <token>`).
 */
export function bearerToken(header: string | undefined, allowColon = false): string {
  if (header === undefined || header.trim() === '') throw new AuthFailure('missing', "The 'Authorization' header is missing.");
  const m = (allowColon ? /^Bearer:?\s+(\S+)\s*$/i : /^Bearer\s+(\S+)\s*$/i).exec(header);
  if (!m) throw new AuthFailure('invalid_header', "The 'Authorization' header is provided in an invalid format.");
  return m[1]!;
}

/**
 * Verifies the request's bearer token for `audience`.
 * @throws AuthFailure for a missing or malformed header, or a token that does not verify.
 */
export async function authenticate(req: FastifyRequest, identity: Identity, audience: AudienceFamily): Promise<Principal> {
  const known = knownPrincipal(req, identity, audience);
  if (known) return known;
  const token = bearerToken(req.headers.authorization);
  return verifyToken(identity, token, audience);
}

/**
 * The principal of the request's bearer token when the identity provider verified exactly this
 * token for `audience` before and it is still valid (no header pattern, no signature check, no
 * promise); undefined otherwise ({@link authenticate} then decides).
 */
export function knownPrincipal(req: FastifyRequest, identity: Identity, audience: AudienceFamily): Principal | undefined {
  const header = req.headers.authorization;
  return header !== undefined && header.startsWith('Bearer ') ? identity.verifiedPrincipal(header.slice(7), audience) : undefined;
}

/**
 * Verifies a raw token for `audience`.
 * @throws AuthFailure with the token failure reason.
 */
export async function verifyToken(identity: Identity, token: string, audience: AudienceFamily): Promise<Principal> {
  try {
    return await identity.verify(token, audience);
  } catch (e) {
    if (e instanceof TokenError) throw new AuthFailure(e.reason, e.message);
    throw e;
  }
}

/** True when the principal's delegated scopes include any of `scopes`. */
export function hasAnyScope(p: Principal, ...scopes: string[]): boolean {
  return p.kind === 'user' && scopes.some((s) => p.scopes.includes(s));
}

/** True when the principal's application roles include any of `roles`. */
export function hasAnyRole(p: Principal, ...roles: string[]): boolean {
  return p.kind === 'app' && roles.some((r) => p.roles.includes(r));
}
