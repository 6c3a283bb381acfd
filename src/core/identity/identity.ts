/**
 * The OAuth 2.0 issuer: audiences and scopes, signing keys kept in the store, token
 * issuance and verification (spec: resource-manager §5; analytics-platform-mail-wopi §5).
 *
 * Tokens are RS256 JWTs signed with `jose`. Claims: iss, aud, tid, oid, sub, iat, nbf, exp,
 * appid, azp, ver, idtyp, uti, and either `scp` (delegated, space-separated) with upn, name,
 * preferred_username (and `wids` for tenant administrators), or `roles` (application).
 */
import { exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, decodeProtectedHeader, errors as joseErrors, type JWK, type JWTPayload, type CryptoKey } from 'jose';
import type { Kysely } from 'kysely';
import { nowIso, nowMs, nowSeconds } from '../clock.ts';
import { newUuid, randomToken } from '../ids.ts';
import { LRUCache } from 'lru-cache';
import type { CacheHub } from '../cache.ts';
import type { AudienceAlias } from '../../config.ts';
import { Directory, type DirectoryApp, type DirectoryUser } from './directory.ts';
import { Grants } from './grants.ts';
import type { IdentityDatabase } from '../tables.ts';
import { audienceFamilies, audienceUri, pairwiseSubject, tenantAdminRoleTemplateId, trimSlash, type AudienceFamily } from './scopes.ts';

/** Audiences and scopes live in `scopes.ts`; re-exported for the families that import them from here. */
export { audienceFamilies, audienceUri, clientInfo, delegatedScopes, openIdScopes, pairwiseSubject, parseScopes, resolveResource, tenantAdminRoleTemplateId, type AudienceFamily, type ParsedScopes } from './scopes.ts';

/** Who a verified token speaks for. */
export interface Principal {
  tenantId: string;
  /** `oid`: the user's or the service principal's object id. */
  objectId: string;
  /** `user` for delegated tokens, `app` for application tokens. */
  kind: 'user' | 'app';
  /** `appid`: client id the token was issued to. */
  appId: string;
  /** Delegated scopes (`scp`). */
  scopes: string[];
  /** Application roles (`roles`). */
  roles: string[];
  /** For users. */
  userPrincipalName?: string;
  /** Display name of the user or application. */
  name?: string;
  /** Holds the tenant administrator role (`wids`). */
  isTenantAdmin: boolean;
  /** Kind of application principal for app tokens. */
  appKind?: string;
  /** Audience family of the token. */
  audience: AudienceFamily;
  /** All claims. */
  claims: JWTPayload & Record<string, unknown>;
}

/** Why a bearer token was refused. */
export type TokenFailure = 'malformed' | 'invalid_signature' | 'expired' | 'not_yet_valid' | 'audience' | 'issuer';

/** Clock skew allowed on `exp`, `nbf` and `iat`, seconds. */
const tokenClockToleranceSeconds = 60;

/** An RSA key pair for RS256 token signatures (what {@link newSigningKeyPair} makes). */
export type SigningKeyPair = Awaited<ReturnType<typeof generateKeyPair>>;

/**
 * Starts making an RS256 signing key pair on the thread pool (RSA 2048: 70–460 ms on the slow
 * machine kind, bench/README.md eighth pass); a rejection is kept for the caller of
 * {@link Identity.init} to see.
 */
export function newSigningKeyPair(): Promise<SigningKeyPair> {
  const p = generateKeyPair('RS256', { extractable: true });
  p.catch(() => undefined);
  return p;
}

/** Thrown by {@link Identity.verify}; `reason` selects each family's error code. */
export class TokenError extends Error {
  constructor(readonly reason: TokenFailure, message: string) {
    super(message);
  }
}

/** An issued access token and its lifetime. */
export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  scope: string;
}

interface KeyEntry {
  kid: string;
  publicJwk: JWK;
  publicKey: CryptoKey | Uint8Array;
  privateKey?: CryptoKey | Uint8Array;
}


/**
 * The identity provider's token machinery over the directory and the signing keys.
 */
export class Identity {
  readonly directory: Directory;
  /** Refresh tokens, authorization codes and device codes. */
  readonly grants: Grants;
  private keys = new Map<string, KeyEntry>();
  private active?: KeyEntry;
  /**
   * Tokens whose signature verified (issue 9 item 4), keyed by the last {@link verifiedKeyChars}
   * characters of the token (its signature: hashing a 1–2 KB token for every look-up cost
   * about 1.5 µs) and holding the whole token, which must be equal for a hit. Time (exp/nbf)
   * is checked again on every use, so an entry never serves a token past its `exp`; the
   * principal is kept per expected family and origin (the issuer check depends on both).
   */
  private readonly verified = new LRUCache<string, VerifiedToken>({ max: 10_000 });

  /** @param cache when given, directory reads are cached (see {@link Directory}). */
  constructor(
    private readonly db: Kysely<IdentityDatabase>,
    private readonly origin: () => string,
    private readonly tokenLifetimeSeconds: number,
    /** `STRATUS_AUDIENCE_ALIASES`: extra `aud` values each family issues and accepts. */
    readonly aliases: readonly AudienceAlias[] = [],
    cache?: CacheHub,
  ) {
    this.directory = new Directory(db, cache);
    this.grants = new Grants(db);
    for (const f of audienceFamilies) this.familyOfAud.set(audienceUri(f), f);
    for (const a of aliases) this.familyOfAud.set(trimSlash(a.uri), a.family as AudienceFamily);
  }

  /** The family of each accepted `aud` (trailing slashes trimmed): `api://stratus/<family>` and the aliases. */
  private readonly familyOfAud = new Map<string, AudienceFamily>();

  /** The issuer of a tenant's tokens: `{origin}/{tenantId}/v2.0`. */
  issuer(tenantId: string): string {
    return `${this.origin()}/${tenantId}/v2.0`;
  }

  /**
   * Loads the signing keys from the store, creating the first one when there is none.
   * @param made a key pair already being made ({@link newSigningKeyPair}: a new store's first
   *   start makes it while the store opens); used for the first key, ignored when the store has one
   */
  async init(made?: Promise<SigningKeyPair>): Promise<void> {
    await this.loadKeys();
    if (!this.active) {
      const { privateKey, publicKey } = await (made ?? newSigningKeyPair());
      const kid = randomToken(12);
      const priv = await exportJWK(privateKey);
      const pub = await exportJWK(publicKey);
      await this.db
        .insertInto('signing_keys')
        .values({ kid, private_jwk: JSON.stringify({ ...priv, kid, alg: 'RS256' }), public_jwk: JSON.stringify({ ...pub, kid, alg: 'RS256', use: 'sig', kty: 'RSA' }), created_at: nowIso() })
        .onConflict((oc) => oc.doNothing())
        .execute();
      await this.loadKeys();
    }
  }

  private async loadKeys(): Promise<void> {
    const rows = await this.db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'asc').execute();
    for (const r of rows) {
      if (this.keys.has(r.kid)) continue;
      const pub = JSON.parse(r.public_jwk) as JWK;
      const priv = JSON.parse(r.private_jwk) as JWK;
      const entry: KeyEntry = { kid: r.kid, publicJwk: pub, publicKey: await importJWK(pub, 'RS256'), privateKey: await importJWK(priv, 'RS256') };
      this.keys.set(r.kid, entry);
    }
    if (rows.length) this.active = this.keys.get(rows[0]!.kid);
  }

  /** The JSON Web Key Set of the public signing keys. */
  jwks(): { keys: JWK[] } {
    return { keys: [...this.keys.values()].map((k) => ({ kty: 'RSA', use: 'sig', kid: k.kid, n: k.publicJwk.n, e: k.publicJwk.e, alg: 'RS256' })) };
  }

  private async sign(claims: Record<string, unknown>, tenantId: string, aud: string): Promise<{ token: string; expiresIn: number }> {
    if (!this.active?.privateKey) throw new Error('identity provider not initialised');
    const iat = nowSeconds();
    const exp = iat + this.tokenLifetimeSeconds;
    const token = await new SignJWT({ ...claims, tid: tenantId, ver: '2.0', uti: randomToken(16) })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.active.kid })
      .setIssuer(this.issuer(tenantId))
      .setAudience(aud)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(exp)
      .setJti(newUuid())
      .sign(this.active.privateKey);
    return { token, expiresIn: this.tokenLifetimeSeconds };
  }

  /**
   * Issues a delegated (user) token carrying `scopes` for `audience`, on behalf of client `appId`.
   * `aud` (default `api://stratus/<family>`) may be one of the family's aliases.
   */
  async issueUserToken(user: DirectoryUser, appId: string, audience: AudienceFamily, scopes: string[], aud: string = audienceUri(audience)): Promise<IssuedToken> {
    const claims: Record<string, unknown> = {
      oid: user.id,
      sub: user.id,
      appid: appId,
      azp: appId,
      idtyp: 'user',
      scp: scopes.join(' '),
      upn: user.userPrincipalName,
      unique_name: user.userPrincipalName,
      preferred_username: user.userPrincipalName,
      name: user.displayName,
    };
    if (user.isTenantAdmin) claims.wids = [tenantAdminRoleTemplateId];
    const { token, expiresIn } = await this.sign(claims, user.tenantId, aud);
    return { accessToken: token, expiresIn, scope: scopes.map((s) => `${trimSlash(aud)}/${s}`).join(' ') };
  }

  /** Issues an application token for `app` on `audience` with its granted roles; `aud` as for {@link issueUserToken}. */
  async issueAppToken(app: DirectoryApp, audience: AudienceFamily, aud: string = audienceUri(audience)): Promise<IssuedToken> {
    const roles = await this.directory.appRoles(app.appId, audience);
    const claims: Record<string, unknown> = {
      oid: app.objectId,
      sub: app.objectId,
      appid: app.appId,
      azp: app.appId,
      idtyp: 'app',
      app_displayname: app.displayName,
      xms_mirid: app.kind === 'ManagedIdentity' ? `/managedIdentities/${app.appId}` : undefined,
    };
    if (claims.xms_mirid === undefined) delete claims.xms_mirid;
    if (roles.length) claims.roles = roles;
    const { token, expiresIn } = await this.sign(claims, app.tenantId, aud);
    return { accessToken: token, expiresIn, scope: `${trimSlash(aud)}/.default` };
  }

  /**
   * Issues an OpenID Connect ID token (RS256) for `user` to client `clientId`: `aud` = client id,
   * `iss`, `iat`, `nbf`, `exp`, `sub` (pairwise: per user and client), `oid`, `tid`, `ver` 2.0,
   * `preferred_username`, `name`, `nonce` when given, `email` when `withEmail`.
   */
  async issueIdToken(user: DirectoryUser, clientId: string, opts: { nonce?: string; withEmail?: boolean } = {}): Promise<string> {
    if (!this.active?.privateKey) throw new Error('identity provider not initialised');
    const iat = nowSeconds();
    const claims: Record<string, unknown> = {
      oid: user.id,
      tid: user.tenantId,
      preferred_username: user.userPrincipalName,
      name: user.displayName,
      ver: '2.0',
      uti: randomToken(16),
    };
    if (opts.nonce !== undefined) claims.nonce = opts.nonce;
    if (opts.withEmail) claims.email = user.mail;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: this.active.kid })
      .setIssuer(this.issuer(user.tenantId))
      .setAudience(clientId)
      .setSubject(pairwiseSubject(user.id, clientId))
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(iat + this.tokenLifetimeSeconds)
      .sign(this.active.privateKey);
  }

  /** Sets a user's password and revokes the user's refresh tokens. @returns false when there is no such user. */
  async changePassword(userId: string, password: string): Promise<boolean> {
    if (!(await this.directory.setPassword(userId, password))) return false;
    await this.grants.revokeUser(userId.toLowerCase());
    return true;
  }

  /** Sets an application's client secret and revokes the refresh tokens issued to it. @returns false when there is no such app. */
  async changeClientSecret(appId: string, secret: string): Promise<boolean> {
    if (!(await this.directory.setClientSecret(appId, secret))) return false;
    await this.grants.revokeApp(appId.toLowerCase());
    return true;
  }

  /**
   * Verifies a bearer token of any family (the `userinfo` endpoint accepts each of them).
   * @throws TokenError as {@link verify}; `audience` when no family accepts the token.
   */
  async verifyAnyFamily(token: string): Promise<Principal> {
    return this.verify(token, 'any');
  }

  /**
   * Verifies a bearer token for the family `expected` (its own audience or an alias), or for any family.
   * @throws TokenError with the reason (malformed, invalid_signature, expired, not_yet_valid, audience, issuer).
   */
  async verify(token: string, expected: AudienceFamily | 'any'): Promise<Principal> {
    let entry = this.verifiedEntry(token);
    const origin = this.origin();
    const kept = entry?.principals.get(expected);
    if (kept && kept.origin === origin) return kept.principal;
    if (!entry) {
      entry = { token, payload: await this.verifySignature(token), principals: new Map() };
      this.verified.set(token.length > verifiedKeyChars ? token.slice(-verifiedKeyChars) : token, entry);
    }
    const principal = Object.freeze(this.principalOf(entry.payload, expected));
    entry.principals.set(expected, { origin, principal });
    return principal;
  }

  /**
   * The principal of a token verified before, made for the same family and origin and still
   * within its `exp`/`nbf` (no promise, no signature check: the whole token must equal the
   * verified one); undefined otherwise (then {@link verify} decides).
   */
  verifiedPrincipal(token: string, expected: AudienceFamily | 'any'): Principal | undefined {
    const kept = this.verifiedEntry(token)?.principals.get(expected);
    return kept && kept.origin === this.origin() ? kept.principal : undefined;
  }

  /** The kept verification of exactly this token, while its `exp`/`nbf` hold. */
  private verifiedEntry(token: string): VerifiedToken | undefined {
    const entry = this.verified.get(token.length > verifiedKeyChars ? token.slice(-verifiedKeyChars) : token);
    return entry && entry.token === token && stillValid(entry.payload, nowMs()) ? entry : undefined;
  }

  /** Full verification (signature with the token's key, exp/nbf with 60 s tolerance on the Stratus clock). */
  private async verifySignature(token: string): Promise<JWTPayload & Record<string, unknown>> {
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      throw new TokenError('malformed', 'The access token is not a well-formed JWT.');
    }
    if (!kid || !this.keys.has(kid)) await this.loadKeys();
    const key = kid ? this.keys.get(kid) : undefined;
    if (!key) throw new TokenError('invalid_signature', 'The access token was signed by an unknown key.');
    let payload: JWTPayload & Record<string, unknown>;
    try {
      // Every token must expire (issue 11): `exp` is required; `nbf` and `iat`, when present, are checked too.
      const r = await jwtVerify(token, key.publicKey, { algorithms: ['RS256'], currentDate: new Date(nowMs()), clockTolerance: tokenClockToleranceSeconds, requiredClaims: ['exp'] });
      payload = r.payload as JWTPayload & Record<string, unknown>;
      if (payload.iat !== undefined && payload.iat > Math.floor(nowMs() / 1000) + tokenClockToleranceSeconds) throw new TokenError('not_yet_valid', 'The access token was issued in the future (iat).');
    } catch (e) {
      if (e instanceof TokenError) throw e;
      // JWTExpired is a JWTClaimValidationFailed on `exp` too: test it first.
      if (e instanceof joseErrors.JWTExpired) throw new TokenError('expired', 'The access token has expired.');
      if (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'exp') throw new TokenError('malformed', 'The access token has no valid expiry (exp).');
      if (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'iat') throw new TokenError('malformed', 'The access token has an invalid issue time (iat).');
      if (e instanceof joseErrors.JWTClaimValidationFailed && e.claim === 'nbf') throw new TokenError('not_yet_valid', 'The access token is not yet valid.');
      if (e instanceof joseErrors.JWSSignatureVerificationFailed) throw new TokenError('invalid_signature', 'The access token signature is invalid.');
      throw new TokenError('malformed', 'The access token is invalid.');
    }
    return payload;
  }

  /** The audience and issuer checks and the principal of a verified payload. */
  private principalOf(payload: JWTPayload & Record<string, unknown>, expected: AudienceFamily | 'any'): Principal {
    const aud = (Array.isArray(payload.aud) ? payload.aud : [payload.aud]).map((a) => (typeof a === 'string' ? a : ''));
    const families = aud.map((a) => this.familyOfAud.get(trimSlash(a)));
    const audience = expected === 'any' ? families.find((f) => f !== undefined) : families.find((f) => f === expected);
    if (!audience) throw new TokenError('audience', `The access token has an invalid audience '${aud.join(',')}'${expected === 'any' ? '' : `; expected '${audienceUri(expected)}'`}.`);
    const tid = String(payload.tid ?? '');
    if (payload.iss !== this.issuer(tid)) throw new TokenError('issuer', `The access token is from the wrong issuer '${payload.iss}'.`);
    const kind = payload.idtyp === 'app' ? 'app' : 'user';
    const wids = Array.isArray(payload.wids) ? (payload.wids as string[]) : [];
    return {
      tenantId: tid,
      objectId: String(payload.oid),
      kind,
      appId: String(payload.appid ?? ''),
      scopes: typeof payload.scp === 'string' ? payload.scp.split(' ').filter(Boolean) : [],
      roles: Array.isArray(payload.roles) ? (payload.roles as string[]) : [],
      userPrincipalName: typeof payload.upn === 'string' ? payload.upn : undefined,
      name: typeof payload.name === 'string' ? payload.name : typeof payload.app_displayname === 'string' ? payload.app_displayname : undefined,
      isTenantAdmin: wids.includes(tenantAdminRoleTemplateId),
      appKind: kind === 'app' ? (payload.xms_mirid ? 'ManagedIdentity' : 'ServicePrincipal') : undefined,
      audience,
      claims: payload,
    };
  }
}

/** How many trailing characters of a token key {@link Identity}'s verified-token cache (an RS256 signature is 342). */
const verifiedKeyChars = 64;

/** A token whose signature verified, with the principal made of it for each expected family (and the origin it was checked against). */
interface VerifiedToken {
  token: string;
  payload: JWTPayload & Record<string, unknown>;
  principals: Map<AudienceFamily | 'any', { origin: string; principal: Principal }>;
}

/** Whether a verified payload's exp/nbf still hold at `ms` (jose's rule with the same tolerance). */
function stillValid(p: JWTPayload, ms: number): boolean {
  const now = Math.floor(ms / 1000);
  if (typeof p.nbf === 'number' && p.nbf > now + tokenClockToleranceSeconds) return false;
  if (typeof p.exp === 'number' && p.exp <= now - tokenClockToleranceSeconds) return false;
  return true;
}
