/**
 * Client authentication with a certificate (RFC 7523 §2.2, the `private_key_jwt` of OpenID
 * Connect Core §9): `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer`
 * and `client_assertion`, a JWT signed RS256 or PS256 with the private key of a certificate
 * registered on the application (`keyCredentials`, type `AsymmetricX509Cert`, usage `Verify`).
 * The header names the certificate by `x5t` (base64url SHA-1 thumbprint) or `x5t#S256`
 * (SHA-256); `iss` and `sub` are the client id, `aud` the token endpoint, `exp` and `jti` are
 * required. What the public client libraries send (a confidential client with a certificate).
 */
import { X509Certificate } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { nowMs } from '../clock.ts';
import { errors } from '../errors/index.ts';
import type { DirectoryApp } from './directory.ts';
import type { Identity } from './identity.ts';
import { asOauth } from './delegation.ts';

/** The one client assertion type (RFC 7523 §2.2). */
export const jwtBearerAssertionType = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Clock skew allowed on the assertion's `exp` and `nbf`, seconds. */
const assertionClockToleranceSeconds = 300;

/**
 * The `client_assertion` of a token request body, or undefined when the body has none.
 * @throws ApiError invalid_request when an assertion comes without the jwt-bearer type (or the type without an assertion)
 */
export function clientAssertion(body: Record<string, string>): string | undefined {
  const type = body.client_assertion_type;
  const assertion = body.client_assertion;
  if (type === undefined && assertion === undefined) return undefined;
  if (type !== jwtBearerAssertionType) throw errors.oauth.assertionTypeInvalid({ type: type ?? '' }, asOauth);
  if (!assertion) throw errors.oauth.missingParameter({ name: 'client_assertion' }, asOauth);
  return assertion;
}

/**
 * The token endpoint URLs an assertion may name as `aud` for a request on `tenantSegment`:
 * v1 and v2 paths, under the segment as sent, the tenant id and the tenant's domain.
 */
export function tokenEndpointAudiences(origin: string, tenantSegment: string, tenant?: { id: string; domain: string }): string[] {
  const origins = new Set([origin, origin.replace(/:443$/, '')]);
  const segments = new Set([tenantSegment, tenantSegment.toLowerCase(), ...(tenant ? [tenant.id, tenant.domain] : [])]);
  const out: string[] = [];
  for (const o of origins) for (const s of segments) out.push(`${o}/${s}/oauth2/v2.0/token`, `${o}/${s}/oauth2/token`);
  return out;
}

/**
 * Verifies a client assertion and returns the application it authenticates.
 * @param clientId the `client_id` parameter when sent (must equal the assertion's `iss`).
 * @param audiences the accepted `aud` values ({@link tokenEndpointAudiences}).
 * @throws ApiError (OAuth) invalid_request for a malformed assertion, unauthorized_client for an
 *   unknown application, invalid_client for a wrong client id, audience, time, key or signature
 */
export async function verifyClientAssertion(identity: Identity, assertion: string, clientId: string | undefined, audiences: string[], tenant: string): Promise<DirectoryApp> {
  let header: ReturnType<typeof decodeProtectedHeader>;
  let claims: ReturnType<typeof decodeJwt>;
  try {
    header = decodeProtectedHeader(assertion);
    claims = decodeJwt(assertion);
  } catch {
    throw errors.oauth.assertionMalformed({}, asOauth);
  }
  const iss = typeof claims.iss === 'string' ? claims.iss : '';
  if (!iss || claims.sub !== iss) throw errors.oauth.assertionMalformed({}, asOauth);
  if (clientId !== undefined && clientId.toLowerCase() !== iss.toLowerCase()) throw errors.oauth.assertionClientMismatch({}, asOauth);
  const app = await identity.directory.findApp(iss);
  if (!app || app.appId !== iss.toLowerCase()) throw errors.oauth.appNotFound({ clientId: iss, tenant }, asOauth);
  // Thumbprints compared as unpadded base64url (some libraries send padded base64url or base64).
  const b64url = (v: unknown) => (typeof v === 'string' ? v.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_') : undefined);
  const x5t = b64url(header.x5t);
  const x5t256 = b64url(header['x5t#S256']);
  const keys = (await identity.directory.keyCredentials(app.appId)).filter((k) => (x5t256 ? k.thumbprint256 === x5t256 : x5t ? k.thumbprint === x5t : true));
  if (!keys.length) throw errors.oauth.assertionKeyNotFound({ thumbprint: x5t256 ?? x5t ?? '' }, asOauth);
  let failure: unknown;
  for (const k of keys) {
    try {
      const publicKey = new X509Certificate(Buffer.from(k.der, 'base64')).publicKey;
      await jwtVerify(assertion, publicKey, {
        algorithms: ['RS256', 'PS256'],
        audience: audiences,
        issuer: iss,
        subject: iss,
        requiredClaims: ['exp', 'jti'],
        currentDate: new Date(nowMs()),
        clockTolerance: assertionClockToleranceSeconds,
      });
      return app;
    } catch (e) {
      failure = e;
    }
  }
  if (failure instanceof joseErrors.JWTExpired) throw errors.oauth.assertionExpired({}, asOauth);
  if (failure instanceof joseErrors.JWTClaimValidationFailed) {
    if (failure.claim === 'aud') throw errors.oauth.assertionAudience({ aud: String(claims.aud ?? '') }, asOauth);
    if (failure.claim === 'nbf') throw errors.oauth.assertionExpired({}, asOauth);
    throw errors.oauth.assertionClaimMissing({ claim: failure.claim }, asOauth);
  }
  if (failure instanceof joseErrors.JOSEAlgNotAllowed) throw errors.oauth.assertionAlgorithm({ alg: String(header.alg ?? '') }, asOauth);
  throw errors.oauth.assertionSignature({}, asOauth);
}
