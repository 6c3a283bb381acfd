/**
 * The identity provider's endpoints (spec: resource-manager §5, `{auth_url}`; issue 10 item 1):
 * - `GET|POST /{tenant}/oauth2[/v2.0]/authorize` — sign-in page; `response_type` `token` (the
 *   spec's implicit grant), `id_token`, `id_token token` or `code` (with PKCE S256/plain);
 *   `response_mode` `query` (code), `fragment` or `form_post`;
 * - `POST /{tenant}/oauth2[/v2.0]/token` — `client_credentials`, `password`, `authorization_code`,
 *   `refresh_token` (rotated) and the device-code grant; `id_token` when `openid` is asked,
 *   `client_info` when `client_info=1`, `refresh_token` when `offline_access` is asked (always on v1);
 * - `POST /{tenant}/oauth2[/v2.0]/devicecode` and the page at `/devicelogin` (RFC 8628);
 * - `GET|POST /oidc/userinfo` (also `/{tenant}/openid/userinfo`);
 * - `GET /{tenant}/oauth2[/v2.0]/logout`;
 * - `GET /{tenant}/discovery[/v2.0]/keys` — the JWKS;
 * - `GET /common/discovery/instance`, `GET /common/userrealm/{upn}` — instance and realm discovery;
 * - `GET /{tenant}[/v2.0]/.well-known/openid-configuration` — metadata.
 * `{tenant}` is `common`, `organizations`, the tenant id or its domain.
 * Errors are OAuth 2.0 error bodies (RFC 6749 §5.2) with the statuses of the real service.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/index.ts';
import type { Identity, AudienceFamily } from './identity.ts';
import { delegatedScopes, parseScopes, audienceUri, resolveResource, openIdScopes, clientInfo, pairwiseSubject, TokenError } from './identity.ts';
import { deviceCodeIntervalSeconds, deviceCodeLifetimeSeconds, refreshTokenLifetimeSeconds } from './grants.ts';
import type { AudienceAlias } from '../../config.ts';
import type { DirectoryApp, DirectoryUser, Tenant } from './directory.ts';

/** Client id of the development public client (sign-in page, password grant without client id). */
export const devPublicClientId = 'b7e4c2a1-6d3f-4a8e-9c5b-2f1d0e7a3c94';

function oauthError(status: number, code: string, description: string): ApiError {
  return new ApiError(status, code, description, { family: 'oauth' });
}

/** A tenant path segment: a tenant, or `common`/`organizations` (any tenant; the user's home tenant decides). */
interface TenantSegment {
  tenant?: Tenant;
  common: boolean;
}

async function resolveTenant(identity: Identity, segment: string): Promise<TenantSegment | undefined> {
  if (['common', 'organizations'].includes(segment.toLowerCase())) return { tenant: (await identity.directory.listTenants())[0], common: true };
  const tenant = await identity.directory.findTenant(segment);
  return tenant ? { tenant, common: false } : undefined;
}

/** True when a principal of `tenantId` may sign in through `seg`. */
function inTenant(seg: TenantSegment, tenantId: string): boolean {
  return seg.common || seg.tenant?.id === tenantId;
}

/** A delegated request: the family, the `aud` to carry and the granted scope names. */
interface DelegatedRequest {
  audience: AudienceFamily;
  aud: string;
  scopes: string[];
}

/**
 * Resolves the requested scopes (or the v1 `resource=`) for a delegated grant; aliases of
 * `STRATUS_AUDIENCE_ALIASES` name their family. @throws ApiError invalid_scope.
 */
function delegatedRequest(scope: string | undefined, resource: string | undefined, origin: string, aliases: readonly AudienceAlias[]): DelegatedRequest {
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
  if (!parsed) throw oauthError(400, 'invalid_scope', `AADSTS70011: The provided request must include a 'scope' input parameter naming one resource, such as '${audienceUri('arm')}/user_impersonation'. The provided value '${scope ?? ''}' is not valid.`);
  if (parsed.unknown.length) throw oauthError(400, 'invalid_scope', `AADSTS70011: The provided value for the input parameter 'scope' is not valid. The scope '${parsed.unknown.join(' ')}' does not exist.`);
  const offered = delegatedScopes[parsed.audience];
  const scopes = new Set<string>();
  for (const n of parsed.names) {
    if (n === '.default') offered.forEach((s) => scopes.add(s));
    else if (offered.includes(n)) scopes.add(n);
    else throw oauthError(400, 'invalid_scope', `AADSTS65005: The application asked for scope '${n}' that doesn't exist on the resource '${audienceUri(parsed.audience)}'.`);
  }
  return { audience: parsed.audience, aud: parsed.aud, scopes: [...scopes] };
}

/** True when `redirectUri` is registered for `app` (loopback hosts match on any port, as for native clients). */
export function redirectAllowed(app: DirectoryApp, redirectUri: string): boolean {
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

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function page(title: string, inner: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=email],input[type=password]{width:100%;padding:.4rem}button{margin-top:1rem;padding:.5rem 1.2rem}.error{color:#a00}</style>
</head><body>${inner}</body></html>`;
}

function signInPage(params: Record<string, string>, appName: string, error?: string): string {
  const hidden = ['client_id', 'redirect_uri', 'response_type', 'scope', 'resource', 'state', 'nonce', 'response_mode', 'code_challenge', 'code_challenge_method']
    .filter((k) => params[k] !== undefined)
    .map((k) => `<input type="hidden" name="${k}" value="${esc(params[k]!)}">`)
    .join('');
  return page(
    'Sign in — Stratus',
    `<h1>Sign in</h1><p>to continue to <strong>${esc(appName)}</strong></p>${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post">${hidden}<label for="username">User name</label><input id="username" name="username" type="email" autocomplete="username" required value="${esc(params.username ?? params.login_hint ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required><button type="submit">Sign in</button></form>`,
  );
}

function deviceCodePage(code = '', error?: string): string {
  return page(
    'Enter code — Stratus',
    `<h1>Enter code</h1><p>Enter the code displayed on your app or device.</p>${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post"><label for="code">Code</label><input id="code" name="code" type="text" autocomplete="off" required value="${esc(code)}"><button type="submit">Next</button></form>`,
  );
}

function deviceSignInPage(code: string, appName: string, error?: string, username = ''): string {
  return page(
    'Sign in — Stratus',
    `<h1>Sign in</h1><p>You're signing in to <strong>${esc(appName)}</strong> on another device. Only continue if you started this sign-in yourself.</p>${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post"><input type="hidden" name="code" value="${esc(code)}"><label for="username">User name</label><input id="username" name="username" type="email" autocomplete="username" required value="${esc(username)}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required><button type="submit" name="action" value="approve">Sign in</button></form>
<form method="post"><input type="hidden" name="code" value="${esc(code)}"><button type="submit" name="action" value="deny">Cancel</button></form>`,
  );
}

function errorPage(reply: FastifyReply, status: number, code: string, description: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(page('Sign-in error — Stratus', `<h1>Sorry, but we're having trouble signing you in.</h1><p class="error"><strong>${esc(code)}</strong>: ${esc(description)}</p>`));
}


/** Parses `response_type` into its words; `undefined` when it is not one of the supported combinations. */
function responseTypes(raw: string | undefined): Set<string> | undefined {
  const words = new Set((raw ?? '').split(/\s+/).filter(Boolean));
  const key = [...words].sort().join(' ');
  return ['code', 'token', 'id_token', 'id_token token'].includes(key) ? words : undefined;
}

/** Delivers authorization-response parameters to the client by `mode` (query, fragment or form_post). */
function deliver(reply: FastifyReply, mode: string, redirectUri: string, values: Record<string, string | undefined>) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) params.set(k, v);
  if (mode === 'form_post') {
    const inputs = [...params].map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`).join('');
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(page('Working… — Stratus', `<form method="post" action="${esc(redirectUri)}">${inputs}<noscript><button type="submit">Continue</button></noscript></form><script>document.forms[0].submit()</script>`));
  }
  if (mode === 'query') return reply.redirect(`${redirectUri}${redirectUri.includes('?') ? '&' : '?'}${params.toString()}`, 302);
  return reply.redirect(`${redirectUri}#${params.toString()}`, 302);
}

/** The scope words of a request string. */
function words(scope: string | undefined): string[] {
  return (scope ?? '').split(/\s+/).filter(Boolean);
}

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
}

/** Registers the identity provider's routes. */
export function registerIdentityRoutes(app: FastifyInstance, identity: Identity, origin: () => string): void {
  const oauthRoute = { config: { family: 'oauth' as const } };

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
      body.refresh_token = await identity.grants.issueRefreshToken({ userId: user.id, appId: client.appId, scope: rtScope });
      body.refresh_token_expires_in = refreshTokenLifetimeSeconds;
    }
    if (asked.includes('openid')) body.id_token = await identity.issueIdToken(user, client.appId, { nonce: o.nonce, withEmail: asked.includes('email') });
    if (o.clientInfo) body.client_info = clientInfo(user);
    return body;
  }

  const authorize = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    const q = { ...(req.query as Record<string, string>), ...((req.body as Record<string, string>) ?? {}) };
    for (const [k, v] of Object.entries(q)) if (typeof v !== 'string') q[k] = String(Array.isArray(v) ? v[0] : v);
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) return errorPage(reply, 400, 'invalid_tenant', `AADSTS90002: Tenant '${req.params.tenant}' not found.`);
    const clientId = q.client_id ?? '';
    const client = clientId ? await identity.directory.findApp(clientId) : undefined;
    if (!client || client.appId !== clientId.toLowerCase()) return errorPage(reply, 400, 'unauthorized_client', `AADSTS700016: Application with identifier '${clientId}' was not found in the directory '${req.params.tenant}'.`);
    const redirectUri = q.redirect_uri ?? client.redirectUris[0] ?? '';
    if (!redirectAllowed(client, redirectUri)) {
      return errorPage(reply, 400, 'invalid_request', `AADSTS50011: The redirect URI '${redirectUri}' specified in the request does not match the redirect URIs configured for the application '${clientId}'.`);
    }
    const types = responseTypes(q.response_type);
    const defaultMode = types?.has('code') && types.size === 1 ? 'query' : 'fragment';
    const mode = q.response_mode ?? defaultMode;
    // Errors go back the way asked when that way is valid, else the response type's default way.
    const modeUsable = ['query', 'fragment', 'form_post'].includes(mode) && !(mode === 'query' && defaultMode !== 'query');
    const fail = (code: string, description: string) => deliver(reply, modeUsable ? mode : defaultMode, redirectUri, { error: code, error_description: description, state: q.state });
    if (!types) return fail('unsupported_response_type', `AADSTS70005: response_type '${q.response_type ?? ''}' is not supported; use 'code', 'token', 'id_token' or 'id_token token'.`);
    if (!['query', 'fragment', 'form_post'].includes(mode)) return fail('invalid_request', `AADSTS90007: response_mode '${mode}' is not supported; use 'query', 'fragment' or 'form_post'.`);
    if (mode === 'query' && defaultMode !== 'query') return fail('invalid_request', "AADSTS900144: response_mode 'query' is not allowed when the response carries tokens; use 'fragment' or 'form_post'.");
    if (types.has('id_token') && !words(q.scope).includes('openid')) return fail('invalid_request', "AADSTS900144: response_type 'id_token' needs the 'openid' scope.");
    if (types.has('id_token') && !q.nonce) return fail('invalid_request', "AADSTS900144: The request body must contain the following parameter: 'nonce'.");
    let challengeMethod: string | undefined;
    if (q.code_challenge !== undefined) {
      challengeMethod = q.code_challenge_method ?? 'plain';
      const okChallenge = challengeMethod === 'S256' ? /^[A-Za-z0-9_-]{43}$/.test(q.code_challenge) : challengeMethod === 'plain' && /^[A-Za-z0-9._~-]{43,128}$/.test(q.code_challenge);
      if (!okChallenge) return fail('invalid_request', `AADSTS501471: The code_challenge '${q.code_challenge}' with code_challenge_method '${challengeMethod}' is not valid; use S256 (43 base64url characters) or plain (43–128 characters).`);
    } else if (q.code_challenge_method !== undefined) return fail('invalid_request', "AADSTS900144: The request body must contain the following parameter: 'code_challenge'.");
    let request: DelegatedRequest;
    try {
      request = delegatedRequest(q.scope, q.resource, origin(), identity.aliases);
    } catch (e) {
      const err = e as ApiError;
      return fail(err.code, err.message);
    }
    if (req.method === 'GET' || q.username === undefined) {
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(q, client.displayName));
    }
    const user = await identity.directory.checkPassword(q.username, q.password ?? '');
    if (!user || !inTenant(seg, user.tenantId)) {
      return reply.code(200).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(q, client.displayName, 'Your account or password is incorrect.'));
    }
    if (types.has('code')) {
      const code = await identity.grants.issueCode({ userId: user.id, appId: client.appId, redirectUri, scope: q.scope ?? '', resource: q.resource, nonce: q.nonce, codeChallenge: q.code_challenge, challengeMethod });
      return deliver(reply, mode, redirectUri, { code, state: q.state, client_info: clientInfo(user) });
    }
    const out: Record<string, string | undefined> = { state: q.state };
    if (types.has('token')) {
      const t = await identity.issueUserToken(user, client.appId, request.audience, request.scopes, request.aud);
      Object.assign(out, { access_token: t.accessToken, token_type: 'Bearer', expires_in: String(t.expiresIn), scope: t.scope });
    }
    if (types.has('id_token')) out.id_token = await identity.issueIdToken(user, client.appId, { nonce: q.nonce, withEmail: words(q.scope).includes('email') });
    return deliver(reply, mode, redirectUri, out);
  };
  for (const p of ['/:tenant/oauth2/authorize', '/:tenant/oauth2/v2.0/authorize']) {
    app.get(p, authorize);
    app.post(p, authorize);
  }

  /** Client authentication of the token and device endpoints: body or HTTP Basic. */
  function clientCredentials(req: FastifyRequest, b: Record<string, string>): { clientId?: string; clientSecret?: string } {
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (!basic) return { clientId: b.client_id, clientSecret: b.client_secret };
    const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
    return { clientId: decodeURIComponent(id ?? ''), clientSecret: decodeURIComponent(secret ?? '') };
  }

  /**
   * The client of a delegated grant: the registered app `clientId`; a client with a secret must
   * present it. @throws ApiError unauthorized_client / invalid_client.
   */
  async function delegatedClient(clientId: string | undefined, clientSecret: string | undefined, tenant: string): Promise<DirectoryApp> {
    const client = await identity.directory.findApp(clientId ?? devPublicClientId);
    if (!client || (clientId !== undefined && client.appId !== clientId.toLowerCase())) throw oauthError(400, 'unauthorized_client', `AADSTS700016: Application with identifier '${clientId}' was not found in the directory '${tenant}'.`);
    if (client.hasSecret && !(clientSecret && (await identity.directory.checkClientSecret(client.appId, clientSecret)))) {
      throw oauthError(401, 'invalid_client', clientSecret ? `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value for app '${client.appId}'.` : "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
    }
    return client;
  }

  const token = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    if (typeof req.body !== 'object' || req.body === null) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'grant_type'.");
    const b = req.body as Record<string, string>;
    for (const [k, v] of Object.entries(b)) if (typeof v !== 'string') throw oauthError(400, 'invalid_request', `AADSTS900144: The parameter '${k}' must be sent once.`);
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) throw oauthError(400, 'invalid_request', `AADSTS90002: Tenant '${req.params.tenant}' not found.`);
    const { clientId, clientSecret } = clientCredentials(req, b);
    const v1 = !req.url.includes('/v2.0/');
    const grant = b.grant_type;
    if (!grant) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'grant_type'.");
    const wantsClientInfo = b.client_info === '1';
    const send = (body: Record<string, unknown>) => reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(body);
    const need = (name: string) => {
      if (!b[name]) throw oauthError(400, 'invalid_request', `AADSTS900144: The request body must contain the following parameter: '${name}'.`);
      return b[name]!;
    };
    if (grant === 'client_credentials') {
      if (!clientId) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'client_id'.");
      if (!clientSecret) throw oauthError(401, 'invalid_client', "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
      const client = await identity.directory.checkClientSecret(clientId, clientSecret);
      if (!client) throw oauthError(401, 'invalid_client', `AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value for app '${clientId}'.`);
      if (!inTenant(seg, client.tenantId)) throw oauthError(400, 'unauthorized_client', `AADSTS700016: Application with identifier '${clientId}' was not found in the directory '${req.params.tenant}'.`);
      const viaResource = b.resource && !b.scope ? resolveResource(b.resource, origin(), identity.aliases) : undefined;
      const parsed = viaResource ? { ...viaResource, names: ['.default'], unknown: [] } : parseScopes(b.scope ?? '', origin(), identity.aliases);
      if (!parsed || parsed.unknown.length || parsed.names.length !== 1 || parsed.names[0] !== '.default') {
        throw oauthError(400, 'invalid_scope', `AADSTS1002012: The provided value for scope '${b.scope ?? ''}' is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`);
      }
      const issued = await identity.issueAppToken(client, parsed.audience, parsed.aud);
      return send({ token_type: 'Bearer', scope: issued.scope, expires_in: issued.expiresIn, ext_expires_in: issued.expiresIn, access_token: issued.accessToken });
    }
    if (grant === 'password') {
      const client = await delegatedClient(clientId, clientSecret, req.params.tenant);
      if (!b.username || !b.password) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameters: 'username' and 'password'.");
      const request = delegatedRequest(b.scope, b.resource, origin(), identity.aliases);
      const user = await identity.directory.checkPassword(b.username, b.password);
      if (!user || !inTenant(seg, user.tenantId)) throw oauthError(400, 'invalid_grant', 'AADSTS50126: Error validating credentials due to invalid username or password.');
      return send(await tokenBody(user, client, request, { scope: b.scope ?? '', resource: b.resource, clientInfo: wantsClientInfo, alwaysRefresh: v1 }));
    }
    if (grant === 'authorization_code') {
      const code = need('code');
      const client = await delegatedClient(need('client_id'), clientSecret, req.params.tenant);
      const g = await identity.grants.redeemCode(code);
      if (!g || g.appId !== client.appId) throw oauthError(400, 'invalid_grant', "AADSTS70000: The provided value for the 'code' parameter is not valid, or the code was already redeemed.");
      if (g.expired) throw oauthError(400, 'invalid_grant', 'AADSTS70008: The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization request for this user and resource.');
      if ((b.redirect_uri ?? '') !== g.redirectUri) throw oauthError(400, 'invalid_grant', `AADSTS50011: The redirect URI '${b.redirect_uri ?? ''}' does not match the redirect URI of the authorization request.`);
      if (g.codeChallenge !== undefined) {
        const verifier = b.code_verifier ?? '';
        const expected = g.challengeMethod === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
        if (!verifier || expected !== g.codeChallenge) throw oauthError(400, 'invalid_grant', 'AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request.');
      }
      const user = await identity.directory.findUser(g.userId);
      if (!user) throw oauthError(400, 'invalid_grant', 'AADSTS50034: The user account does not exist in the directory.');
      const request = delegatedRequest(g.scope, g.resource, origin(), identity.aliases);
      return send(await tokenBody(user, client, request, { scope: g.scope, resource: g.resource, nonce: g.nonce, clientInfo: wantsClientInfo, alwaysRefresh: v1 }));
    }
    if (grant === 'refresh_token') {
      const rt = need('refresh_token');
      const client = await delegatedClient(need('client_id'), clientSecret, req.params.tenant);
      const g = await identity.grants.redeemRefreshToken(rt);
      if (!g || g.appId !== client.appId) {
        throw oauthError(400, 'invalid_grant', 'AADSTS50173: The provided grant has expired due to it being revoked, already used or expired; a fresh auth token is needed. The user might have changed or reset their password.');
      }
      const user = await identity.directory.findUser(g.userId);
      if (!user || !inTenant(seg, user.tenantId)) throw oauthError(400, 'invalid_grant', 'AADSTS50034: The user account does not exist in the directory.');
      // v2 may name other scopes; v1 may name another resource; neither: what the token was issued with.
      const scope = b.scope || (b.resource ? '' : g.scope);
      const request = delegatedRequest(scope, b.resource, origin(), identity.aliases);
      return send(await tokenBody(user, client, request, { scope, resource: b.resource, clientInfo: wantsClientInfo, alwaysRefresh: true }));
    }
    if (grant === 'urn:ietf:params:oauth:grant-type:device_code' || grant === 'device_code') {
      const deviceCode = b.device_code ?? b.code ?? '';
      if (!deviceCode) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'device_code'.");
      const client = await delegatedClient(need('client_id'), clientSecret, req.params.tenant);
      const poll = await identity.grants.pollDevice(deviceCode, client.appId);
      switch (poll.state) {
        case 'unknown':
          throw oauthError(400, 'invalid_grant', "AADSTS70000: The provided value for the 'device_code' parameter is not valid.");
        case 'pending':
          throw oauthError(400, 'authorization_pending', 'AADSTS70016: OAuth 2.0 device flow error. Authorization is pending. Continue polling.');
        case 'slow_down':
          throw oauthError(400, 'slow_down', `AADSTS70016: Polled too often; wait ${deviceCodeIntervalSeconds} seconds between polls.`);
        case 'expired':
          throw oauthError(400, 'expired_token', 'AADSTS70019: Verification code expired.');
        case 'denied':
          throw oauthError(400, 'access_denied', 'AADSTS70018: The user declined the sign-in request.');
      }
      const user = await identity.directory.findUser(poll.grant.userId ?? '');
      if (!user) throw oauthError(400, 'invalid_grant', 'AADSTS50034: The user account does not exist in the directory.');
      const request = delegatedRequest(poll.grant.scope, poll.grant.resource, origin(), identity.aliases);
      return send(await tokenBody(user, client, request, { scope: poll.grant.scope, resource: poll.grant.resource, clientInfo: wantsClientInfo, alwaysRefresh: v1 }));
    }
    throw oauthError(400, 'unsupported_grant_type', `AADSTS70003: The app requested an unsupported grant type '${grant}'.`);
  };
  app.post('/:tenant/oauth2/v2.0/token', token);
  app.post('/:tenant/oauth2/token', token);

  /** Device authorization (RFC 8628 §3.1–3.2): `client_id`, `scope` (v2) or `resource` (v1). */
  const devicecode = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    const b = (typeof req.body === 'object' && req.body !== null ? req.body : {}) as Record<string, string>;
    for (const [k, v] of Object.entries(b)) if (typeof v !== 'string') throw oauthError(400, 'invalid_request', `AADSTS900144: The parameter '${k}' must be sent once.`);
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) throw oauthError(400, 'invalid_request', `AADSTS90002: Tenant '${req.params.tenant}' not found.`);
    const { clientId, clientSecret } = clientCredentials(req, b);
    if (!clientId) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'client_id'.");
    const client = await delegatedClient(clientId, clientSecret, req.params.tenant);
    delegatedRequest(b.scope, b.resource, origin(), identity.aliases); // invalid_scope now, not at the first poll
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

  /** The device-code page: enter the code, then sign in (or decline). */
  const deviceLogin = async (req: FastifyRequest, reply: FastifyReply) => {
    const f = { ...(req.query as Record<string, unknown>), ...((typeof req.body === 'object' && req.body ? req.body : {}) as Record<string, unknown>) };
    const str = (k: string) => (typeof f[k] === 'string' ? (f[k] as string) : Array.isArray(f[k]) ? String((f[k] as unknown[])[0]) : undefined);
    const html = (status: number, body: string) => reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
    const code = str('code') ?? str('otc');
    if (req.method === 'GET' && !code) return html(200, deviceCodePage());
    const pending = code ? await identity.grants.findUserCode(code) : undefined;
    if (!pending) return html(200, deviceCodePage(code ?? '', "That code didn't work. Check the code and try again."));
    const client = await identity.directory.findApp(pending.appId);
    const appName = client?.displayName ?? pending.appId;
    if (req.method === 'POST' && str('action') === 'deny') {
      await identity.grants.answerDevice(pending.codeHash, 'denied');
      return html(200, page('Sign-in declined — Stratus', `<h1>Sign-in declined</h1><p>You declined to sign in to <strong>${esc(appName)}</strong> on your device. You may now close this window.</p>`));
    }
    if (req.method === 'GET' || str('username') === undefined) return html(200, deviceSignInPage(pending.userCode, appName));
    const user = await identity.directory.checkPassword(str('username') ?? '', str('password') ?? '');
    if (!user || (pending.tenantId && pending.tenantId !== user.tenantId)) return html(200, deviceSignInPage(pending.userCode, appName, 'Your account or password is incorrect.', str('username')));
    await identity.grants.answerDevice(pending.codeHash, { userId: user.id });
    return html(200, page('Signed in — Stratus', `<h1>You're signed in</h1><p>You have signed in to the <strong>${esc(appName)}</strong> application on your device. You may now close this window.</p>`));
  };
  app.get('/devicelogin', oauthRoute, deviceLogin);
  app.post('/devicelogin', oauthRoute, deviceLogin);

  /** OpenID Connect userinfo (GET or POST, bearer token of any family issued to a user). */
  const userinfo = async (req: FastifyRequest, reply: FastifyReply) => {
    const challenge = (error: string, description: string) => reply.code(401).header('www-authenticate', `Bearer error="${error}", error_description="${description}"`).send({ error, error_description: description });
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) return challenge('invalid_request', 'A bearer token is required.');
    let p;
    try {
      p = await identity.verifyAnyFamily(m[1]!);
    } catch (e) {
      if (e instanceof TokenError) return challenge('invalid_token', e.message);
      throw e;
    }
    if (p.kind !== 'user') return challenge('invalid_token', 'The token was not issued to a user.');
    const user = await identity.directory.findUser(p.objectId);
    if (!user) return challenge('invalid_token', 'The user no longer exists.');
    const [given, ...rest] = user.displayName.split(' ');
    return reply.header('cache-control', 'no-store').send({
      sub: pairwiseSubject(user.id, p.appId),
      oid: user.id,
      tid: user.tenantId,
      name: user.displayName,
      given_name: given,
      family_name: rest.join(' ') || undefined,
      preferred_username: user.userPrincipalName,
      email: user.mail,
    });
  };
  for (const p of ['/oidc/userinfo', '/:tenant/openid/userinfo', '/:tenant/openid/v2.0/userinfo']) {
    app.get(p, oauthRoute, userinfo);
    app.post(p, oauthRoute, userinfo);
  }

  /** Sign-out: nothing is kept server-side, so it redirects to `post_logout_redirect_uri` or shows a page. */
  const logout = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as Record<string, string>;
    const target = typeof q.post_logout_redirect_uri === 'string' ? q.post_logout_redirect_uri : undefined;
    if (target && /^https?:\/\//i.test(target)) return reply.redirect(target + (q.state ? `${target.includes('?') ? '&' : '?'}state=${encodeURIComponent(q.state)}` : ''), 302);
    return reply.type('text/html; charset=utf-8').send(page('Signed out — Stratus', '<h1>You signed out of your account</h1><p>It\'s a good idea to close all browser windows.</p>'));
  };
  app.get('/:tenant/oauth2/v2.0/logout', oauthRoute, logout);
  app.get('/:tenant/oauth2/logout', oauthRoute, logout);

  const keys = async () => identity.jwks();
  app.get('/:tenant/discovery/v2.0/keys', keys);
  app.get('/:tenant/discovery/keys', keys);

  /**
   * Instance discovery (`GET /common/discovery/instance?api-version=1.1&authorization_endpoint=…`):
   * for an authorization endpoint on this host, the tenant's metadata document and this host as
   * the one alias (what credential libraries read: `tenant_discovery_endpoint`, `metadata[].aliases`).
   */
  app.get('/:tenant/discovery/instance', async (req: FastifyRequest<{ Params: { tenant: string } }>) => {
    const q = req.query as Record<string, string>;
    const ep = typeof q.authorization_endpoint === 'string' ? q.authorization_endpoint : '';
    if (!ep) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'authorization_endpoint'.");
    let url: URL;
    try {
      url = new URL(ep);
    } catch {
      throw oauthError(400, 'invalid_instance', `AADSTS50049: Unknown or invalid instance '${ep}'.`);
    }
    const own = new URL(origin());
    if (url.host.toLowerCase() !== own.host.toLowerCase()) throw oauthError(400, 'invalid_instance', `AADSTS50049: Unknown or invalid instance '${url.host}'.`);
    const tenant = url.pathname.split('/').filter(Boolean)[0] ?? 'common';
    return {
      tenant_discovery_endpoint: `${origin()}/${tenant}/v2.0/.well-known/openid-configuration`,
      'api-version': '1.1',
      metadata: [{ preferred_network: own.host, preferred_cache: own.host, aliases: [own.host] }],
    };
  });

  /** User realm discovery (`GET /common/userrealm/{upn}?api-version=1.0`): every tenant here is managed. */
  app.get('/:tenant/userrealm/:upn', oauthRoute, async (req: FastifyRequest<{ Params: { tenant: string; upn: string } }>) => {
    const domain = req.params.upn.includes('@') ? req.params.upn.slice(req.params.upn.lastIndexOf('@') + 1) : req.params.upn;
    const tenant = domain ? await identity.directory.findTenant(domain) : undefined;
    const host = new URL(origin()).host;
    if (!tenant) return { ver: '1.0', account_type: 'Unknown', cloud_instance_name: host };
    return { ver: '1.0', account_type: 'Managed', domain_name: tenant.domain, cloud_instance_name: host, cloud_audience_urn: 'urn:federation:Stratus' };
  });

  const metadata = (v2: boolean) => async (req: FastifyRequest<{ Params: { tenant: string } }>) => {
    const t = req.params.tenant;
    const seg = await resolveTenant(identity, t);
    if (!seg?.tenant) throw oauthError(400, 'invalid_tenant', `AADSTS90002: Tenant '${t}' not found.`);
    const tenant = seg.tenant;
    const common = seg.common;
    const base = `${origin()}/${common ? t : tenant.id}`;
    const v = v2 ? '/v2.0' : '';
    return {
      issuer: common ? `${origin()}/{tenantid}/v2.0` : identity.issuer(tenant.id),
      authorization_endpoint: `${base}/oauth2${v}/authorize`,
      token_endpoint: `${base}/oauth2${v}/token`,
      device_authorization_endpoint: `${base}/oauth2${v}/devicecode`,
      userinfo_endpoint: `${origin()}/oidc/userinfo`,
      end_session_endpoint: `${base}/oauth2${v}/logout`,
      jwks_uri: `${base}/discovery${v}/keys`,
      response_types_supported: ['code', 'id_token', 'token', 'id_token token'],
      response_modes_supported: ['query', 'fragment', 'form_post'],
      grant_types_supported: ['authorization_code', 'implicit', 'refresh_token', 'client_credentials', 'password', 'urn:ietf:params:oauth:grant-type:device_code'],
      code_challenge_methods_supported: ['S256', 'plain'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      scopes_supported: ['openid', 'profile', 'email', 'offline_access', ...Object.entries(delegatedScopes).flatMap(([f, s]) => s.map((n) => `${audienceUri(f as AudienceFamily)}/${n}`))],
      claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'ver', 'tid', 'oid', 'name', 'preferred_username', 'email', 'given_name', 'family_name', 'upn', 'scp', 'roles', 'appid', 'azp', 'wids', 'idtyp'],
      request_uri_parameter_supported: false,
      tenant_region_scope: 'NA',
      cloud_instance_name: new URL(origin()).host,
    };
  };
  app.get('/:tenant/v2.0/.well-known/openid-configuration', metadata(true));
  app.get('/:tenant/.well-known/openid-configuration', oauthRoute, metadata(false));
}
