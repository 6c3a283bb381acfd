/**
 * The token endpoint (`POST /{tenant}/oauth2[/v2.0]/token`: `client_credentials`, `password`,
 * `authorization_code`, `refresh_token` (rotated) and the device-code grant) and device
 * authorization (`POST /{tenant}/oauth2[/v2.0]/devicecode`, RFC 8628 §3.1–3.2); spec:
 * resource-manager §5. Errors are OAuth 2.0 error bodies (RFC 6749 §5.2).
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors/index.ts';
import type { Identity } from './identity.ts';
import { clientInfo, openIdScopes, parseScopes, resolveResource } from './scopes.ts';
import { deviceCodeIntervalSeconds, deviceCodeLifetimeSeconds, refreshTokenLifetimeSeconds } from './grants.ts';
import type { DirectoryApp, DirectoryUser } from './directory.ts';
import { clientAssertion, tokenEndpointAudiences, verifyClientAssertion } from './assertion.ts';
import { asOauth, delegatedRequest, devPublicClientId, inTenant, resolveTenant, words, type DelegatedRequest } from './delegation.ts';
import { accountSubject, clientSubject, type SignInThrottle } from './throttle.ts';

/** Options of {@link tokenBody}. */
interface TokenBodyOptions {
  /** The scope string the client asked with (decides `id_token` and `refresh_token`). */
  scope: string;
  resource?: string;
  nonce?: string;
  /** `client_info=1` was sent. */
  clientInfo: boolean;
  /** Issue a refresh token even without `offline_access` (v1 endpoint, refresh grant). */
  alwaysRefresh: boolean;
  /** The refresh-token family of the issued refresh token (a code's, or the rotated token's); a new one when absent. */
  familyId?: string;
}

/** Registers the token and device-code endpoints (v1 and v2 paths). */
export function registerTokenRoutes(app: FastifyInstance, identity: Identity, origin: () => string, throttle?: SignInThrottle): void {
  /**
   * A delegated token response: access token for the request's family, plus `id_token` when
   * `openid` was asked, `client_info` when asked, `refresh_token` when `offline_access` was asked
   * (or `alwaysRefresh`). The refresh token remembers the scope string for later refreshes.
   */
  /**
   * A delegated token response: access token for the request's family, plus `id_token` when
   * `openid` was asked, `client_info` when asked, `refresh_token` when `offline_access` was asked
   * (or `alwaysRefresh`). The refresh token remembers the scope string for later refreshes.
   */
  async function tokenBody(user: DirectoryUser, client: DirectoryApp, request: DelegatedRequest, o: TokenBodyOptions): Promise<Record<string, unknown>> {
    const asked = words(o.scope);
    const t = await identity.issueUserToken(user, client.appId, request.audience, request.scopes, request.aud);
    const body: Record<string, unknown> = {
      token_type: 'Bearer',
      scope: t.scope,
      expires_in: t.expiresIn,
      ext_expires_in: t.expiresIn,
      access_token: t.accessToken,
    };
    if (asked.includes('offline_access') || o.alwaysRefresh) {
      const rtScope = o.resource && !asked.some((w) => !openIdScopes.includes(w)) ? `${o.scope} ${o.resource.replace(/\/+$/, '')}/.default`.trim() : o.scope;
      body.refresh_token = await identity.grants.issueRefreshToken({ userId: user.id, appId: client.appId, scope: rtScope, familyId: o.familyId });
      body.refresh_token_expires_in = refreshTokenLifetimeSeconds;
    }
    if (asked.includes('openid')) body.id_token = await identity.issueIdToken(user, client.appId, { nonce: o.nonce, withEmail: asked.includes('email') });
    if (o.clientInfo) body.client_info = clientInfo(user);
    return body;
  }

  /** Client authentication of the token and device endpoints: body or HTTP Basic. */
  function clientCredentials(req: FastifyRequest, b: Record<string, string>): { clientId?: string; clientSecret?: string } {
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (!basic) return { clientId: b.client_id, clientSecret: b.client_secret };
    const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
    return { clientId: decodeURIComponent(id ?? ''), clientSecret: decodeURIComponent(secret ?? '') };
  }

  /**
   * The client of a delegated grant: the registered app `clientId`; a client with a secret or a
   * certificate must present a secret or a client assertion (`assertion`: see `assertion.ts`).
   * @throws ApiError unauthorized_client / invalid_client.
   */
  async function delegatedClient(clientId: string | undefined, clientSecret: string | undefined, tenant: string, assertion?: { jwt: string; audiences: string[] }): Promise<DirectoryApp> {
    const client = await identity.directory.findApp(clientId ?? devPublicClientId);
    if (!client || (clientId !== undefined && client.appId !== clientId.toLowerCase())) throw errors.oauth.appNotFound({ clientId: String(clientId), tenant }, asOauth);
    if (client.hasSecret && assertion) {
      await verifyClientAssertion(identity, assertion.jwt, client.appId, assertion.audiences, tenant);
      return client;
    }
    if (client.hasSecret && clientSecret) await throttle?.assertOpen(clientSubject(client.appId)); // a locked client: no scrypt
    if (client.hasSecret && !(clientSecret && (await identity.directory.checkClientSecret(client.appId, clientSecret)))) {
      if (clientSecret) await throttle?.failed(clientSubject(client.appId));
      throw clientSecret ? errors.oauth.invalidClientSecret({ clientId: client.appId }, asOauth) : errors.oauth.clientSecretMissing({}, asOauth);
    }
    return client;
  }

  /** The client whose secret this is, behind the client's lockout (issue 30 row 8); undefined for a wrong secret (counted). */
  async function checkedSecret(clientId: string, clientSecret: string): Promise<DirectoryApp | undefined> {
    await throttle?.assertOpen(clientSubject(clientId));
    const client = await identity.directory.checkClientSecret(clientId, clientSecret);
    if (!client) await throttle?.failed(clientSubject(clientId));
    return client;
  }

  /** The user of a password, behind the account's lockout (issue 30 row 8); undefined for a wrong one (counted). */
  async function checkedPassword(userName: string, password: string): Promise<DirectoryUser | undefined> {
    await throttle?.assertOpen(accountSubject(userName));
    const user = await identity.directory.checkPassword(userName, password);
    if (!user) await throttle?.failed(accountSubject(userName));
    return user;
  }

  const token = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    if (typeof req.body !== 'object' || req.body === null) throw errors.oauth.missingParameter({ name: 'grant_type' }, asOauth);
    const b = req.body as Record<string, string>;
    for (const [k, v] of Object.entries(b)) if (typeof v !== 'string') throw errors.oauth.parameterNotOnce({ name: k }, asOauth);
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) throw errors.oauth.tokenTenantNotFound({ tenant: req.params.tenant }, asOauth);
    const { clientId, clientSecret } = clientCredentials(req, b);
    const v1 = !req.url.includes('/v2.0/');
    const grant = b.grant_type;
    if (!grant) throw errors.oauth.missingParameter({ name: 'grant_type' }, asOauth);
    const wantsClientInfo = b.client_info === '1';
    const assertionOf = () => {
      const jwt = clientAssertion(b);
      return jwt ? { jwt, audiences: tokenEndpointAudiences(origin(), req.params.tenant, seg.tenant) } : undefined;
    };
    const send = (body: Record<string, unknown>) => reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(body);
    const need = (name: string) => {
      if (!b[name]) throw errors.oauth.missingParameter({ name }, asOauth);
      return b[name]!;
    };
    if (grant === 'client_credentials') {
      const jwt = clientAssertion(b);
      if (!clientId && !jwt) throw errors.oauth.missingParameter({ name: 'client_id' }, asOauth);
      if (!clientSecret && !jwt) throw errors.oauth.clientSecretMissing({}, asOauth);
      const client = jwt
        ? await verifyClientAssertion(identity, jwt, clientId, tokenEndpointAudiences(origin(), req.params.tenant, seg.tenant), req.params.tenant)
        : await checkedSecret(clientId!, clientSecret!);
      if (!client) throw errors.oauth.invalidClientSecret({ clientId: clientId! }, asOauth);
      if (!inTenant(seg, client.tenantId)) throw errors.oauth.appNotFound({ clientId: client.appId, tenant: req.params.tenant }, asOauth);
      if (client.hasServicePrincipal === false) throw errors.oauth.servicePrincipalMissing({ clientId: client.appId, tenant: client.tenantId }, asOauth);
      const viaResource = b.resource && !b.scope ? resolveResource(b.resource, origin(), identity.aliases) : undefined;
      const parsed = viaResource ? { ...viaResource, names: ['.default'], unknown: [] } : parseScopes(b.scope ?? '', origin(), identity.aliases);
      if (!parsed || parsed.unknown.length || parsed.names.length !== 1 || parsed.names[0] !== '.default') {
        throw errors.oauth.clientCredentialsScope({ scope: b.scope ?? '' }, asOauth);
      }
      const issued = await identity.issueAppToken(client, parsed.audience, parsed.aud);
      return send({ token_type: 'Bearer', scope: issued.scope, expires_in: issued.expiresIn, ext_expires_in: issued.expiresIn, access_token: issued.accessToken });
    }
    if (grant === 'password') {
      const client = await delegatedClient(clientId, clientSecret, req.params.tenant, assertionOf());
      if (!b.username || !b.password) throw errors.oauth.missingCredentials({}, asOauth);
      const request = delegatedRequest(b.scope, b.resource, origin(), identity.aliases);
      const user = await checkedPassword(b.username, b.password);
      if (!user || !inTenant(seg, user.tenantId)) throw errors.oauth.badCredentials({}, asOauth);
      return send(await tokenBody(user, client, request, { scope: b.scope ?? '', resource: b.resource, clientInfo: wantsClientInfo, alwaysRefresh: v1 }));
    }
    if (grant === 'authorization_code') {
      const code = need('code');
      const client = await delegatedClient(need('client_id'), clientSecret, req.params.tenant, assertionOf());
      const g = await identity.grants.redeemCode(code);
      // A replay revoked the refresh tokens issued from the code (RFC 6749 §4.1.2).
      if (g === 'replayed') throw errors.oauth.codeReplayed({}, asOauth);
      // Bound to the client and to the tenant it was issued for (issue 30 row 10).
      if (!g || g.appId !== client.appId || (g.tenantPath !== undefined && !inTenant(seg, g.tenantPath))) throw errors.oauth.codeNotValid({}, asOauth);
      if (g.expired) throw errors.oauth.codeExpired({}, asOauth);
      if ((b.redirect_uri ?? '') !== g.redirectUri) throw errors.oauth.redirectUriNotOfCode({ redirectUri: b.redirect_uri ?? '' }, asOauth);
      if (g.codeChallenge !== undefined) {
        const verifier = b.code_verifier ?? '';
        const expected = g.challengeMethod === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (!verifier || expected !== g.codeChallenge) throw errors.oauth.codeVerifierMismatch({}, asOauth);
      } else if (b.code_verifier !== undefined) {
        // PKCE downgrade: a verifier for a code issued without a challenge (OAuth 2.0 Security BCP §2.1.1).
        throw errors.oauth.codeVerifierWithoutChallenge({}, asOauth);
      }
      const user = await identity.directory.findUser(g.userId);
      if (!user) throw errors.oauth.userNotFound({}, asOauth);
      const request = delegatedRequest(g.scope, g.resource, origin(), identity.aliases);
      return send(await tokenBody(user, client, request, { scope: g.scope, resource: g.resource, nonce: g.nonce, clientInfo: wantsClientInfo, alwaysRefresh: v1, familyId: g.familyId }));
    }
    if (grant === 'refresh_token') {
      const rt = need('refresh_token');
      const client = await delegatedClient(need('client_id'), clientSecret, req.params.tenant, assertionOf());
      const g = await identity.grants.redeemRefreshToken(rt);
      if (!g || g.appId !== client.appId) {
        throw errors.oauth.refreshTokenNotValid({}, asOauth);
      }
      const user = await identity.directory.findUser(g.userId);
      if (!user || !inTenant(seg, user.tenantId)) throw errors.oauth.userNotFound({}, asOauth);
      // v2 may name other scopes; v1 may name another resource; neither: what the token was issued with.
      const scope = b.scope || (b.resource ? '' : g.scope);
      const request = delegatedRequest(scope, b.resource, origin(), identity.aliases);
      return send(await tokenBody(user, client, request, { scope, resource: b.resource, clientInfo: wantsClientInfo, alwaysRefresh: true, familyId: g.familyId }));
    }
    if (grant === 'urn:ietf:params:oauth:grant-type:device_code' || grant === 'device_code') {
      const deviceCode = b.device_code ?? b.code ?? '';
      if (!deviceCode) throw errors.oauth.missingParameter({ name: 'device_code' }, asOauth);
      const client = await delegatedClient(need('client_id'), clientSecret, req.params.tenant);
      const poll = await identity.grants.pollDevice(deviceCode, client.appId, seg.common ? undefined : seg.tenant?.id);
      switch (poll.state) {
        case 'unknown':
          throw errors.oauth.deviceCodeNotValid({}, asOauth);
        case 'pending':
          throw errors.oauth.authorizationPending({}, asOauth);
        case 'too_soon':
          throw errors.oauth.slowDown({ seconds: deviceCodeIntervalSeconds }, asOauth);
        case 'expired':
          throw errors.oauth.deviceCodeExpired({}, asOauth);
        case 'denied':
          throw errors.oauth.deviceSignInDeclined({}, asOauth);
      }
      const user = await identity.directory.findUser(poll.grant.userId ?? '');
      if (!user) throw errors.oauth.userNotFound({}, asOauth);
      const request = delegatedRequest(poll.grant.scope, poll.grant.resource, origin(), identity.aliases);
      return send(await tokenBody(user, client, request, { scope: poll.grant.scope, resource: poll.grant.resource, clientInfo: wantsClientInfo, alwaysRefresh: v1 }));
    }
    throw errors.oauth.unsupportedGrantType({ grant }, asOauth);
  };
  app.post('/:tenant/oauth2/v2.0/token', token);
  app.post('/:tenant/oauth2/token', token);

  /** Device authorization (RFC 8628 §3.1–3.2): `client_id`, `scope` (v2) or `resource` (v1). */
  const devicecode = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    const b = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, string>;
    for (const [k, v] of Object.entries(b)) if (typeof v !== 'string') throw errors.oauth.parameterNotOnce({ name: k }, asOauth);
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) throw errors.oauth.tokenTenantNotFound({ tenant: req.params.tenant }, asOauth);
    const { clientId, clientSecret } = clientCredentials(req, b);
    if (!clientId) throw errors.oauth.missingParameter({ name: 'client_id' }, asOauth);
    const client = await delegatedClient(clientId, clientSecret, req.params.tenant);
    delegatedRequest(b.scope, b.resource, origin(), identity.aliases); // invalid_scope now, not at the first poll (also for an over-long scope)
    // A public client's start is unauthenticated: bounded per client and per address (issue 30 row 9).
    if (!client.hasSecret) await throttle?.deviceStart(client.appId, req.ip);
    const scope = b.scope ?? '';
    const { deviceCode, userCode } = await identity.grants.startDevice({ appId: client.appId, tenantId: seg.common ? undefined : seg.tenant?.id, scope, resource: b.resource });
    const verificationUri = `${origin()}/devicelogin`;
    return reply.header('cache-control', 'no-store').send({
      user_code: userCode,
      device_code: deviceCode,
      verification_uri: verificationUri,
      expires_in: deviceCodeLifetimeSeconds,
      interval: deviceCodeIntervalSeconds,
      message: `To sign in, use a web browser to open the page ${verificationUri} and enter the code ${userCode} to authenticate.`,
    });
  };
  app.post('/:tenant/oauth2/v2.0/devicecode', devicecode);
  app.post('/:tenant/oauth2/devicecode', devicecode);
}
