/**
 * The identity provider's endpoints (spec: resource-manager §5, `{auth_url}`):
 * - `GET|POST /{tenant}/oauth2/authorize` — implicit grant (`response_type=token`) with a
 *   small sign-in page; the redirect carries the token in the fragment;
 * - `POST /{tenant}/oauth2/v2.0/token` (also `/oauth2/token`) — `client_credentials` and `password`;
 * - `GET /{tenant}/discovery/v2.0/keys` — the JWKS;
 * - `GET /{tenant}/v2.0/.well-known/openid-configuration` — metadata.
 * `{tenant}` is `common`, `organizations`, the tenant id or its domain.
 * Errors are OAuth 2.0 error bodies (RFC 6749 §5.2) with the statuses of the real service.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.ts';
import type { Identity, AudienceFamily } from './identity.ts';
import { delegatedScopes, parseScopes, audienceUri, resolveResource, openIdScopes } from './identity.ts';
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
  const hidden = ['client_id', 'redirect_uri', 'response_type', 'scope', 'resource', 'state', 'nonce', 'response_mode']
    .filter((k) => params[k] !== undefined)
    .map((k) => `<input type="hidden" name="${k}" value="${esc(params[k]!)}">`)
    .join('');
  return page(
    'Sign in — Stratus',
    `<h1>Sign in</h1><p>to continue to <strong>${esc(appName)}</strong></p>${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post">${hidden}<label for="username">User name</label><input id="username" name="username" type="email" autocomplete="username" required value="${esc(params.username ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required><button type="submit">Sign in</button></form>`,
  );
}

function errorPage(reply: FastifyReply, status: number, code: string, description: string) {
  return reply.code(status).type('text/html; charset=utf-8').send(page('Sign-in error — Stratus', `<h1>Sorry, but we're having trouble signing you in.</h1><p class="error"><strong>${esc(code)}</strong>: ${esc(description)}</p>`));
}

function fragmentRedirect(reply: FastifyReply, redirectUri: string, values: Record<string, string | undefined>) {
  const frag = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) frag.set(k, v);
  return reply.redirect(`${redirectUri}#${frag.toString()}`, 302);
}

/** Registers the identity provider's routes. */
export function registerIdentityRoutes(app: FastifyInstance, identity: Identity, origin: () => string): void {
  const authorize = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    const q = { ...(req.query as Record<string, string>), ...((req.body as Record<string, string>) ?? {}) };
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) return errorPage(reply, 400, 'invalid_tenant', `AADSTS90002: Tenant '${req.params.tenant}' not found.`);
    const clientId = q.client_id ?? '';
    const client = clientId ? await identity.directory.findApp(clientId) : undefined;
    if (!client || client.appId !== clientId.toLowerCase()) return errorPage(reply, 400, 'unauthorized_client', `AADSTS700016: Application with identifier '${clientId}' was not found in the directory '${req.params.tenant}'.`);
    const redirectUri = q.redirect_uri ?? client.redirectUris[0] ?? '';
    if (!redirectAllowed(client, redirectUri)) {
      return errorPage(reply, 400, 'invalid_request', `AADSTS50011: The redirect URI '${redirectUri}' specified in the request does not match the redirect URIs configured for the application '${clientId}'.`);
    }
    if (q.response_type !== 'token') {
      return fragmentRedirect(reply, redirectUri, { error: 'unsupported_response_type', error_description: `AADSTS70005: response_type '${q.response_type ?? ''}' is not supported; use 'token'.`, state: q.state });
    }
    let request: DelegatedRequest;
    try {
      request = delegatedRequest(q.scope, q.resource, origin(), identity.aliases);
    } catch (e) {
      const err = e as ApiError;
      return fragmentRedirect(reply, redirectUri, { error: err.code, error_description: err.message, state: q.state });
    }
    if (req.method === 'GET' || q.username === undefined) {
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(q, client.displayName));
    }
    const user = await identity.directory.checkPassword(q.username, q.password ?? '');
    if (!user || !inTenant(seg, user.tenantId)) {
      return reply.code(200).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(q, client.displayName, 'Your account or password is incorrect.'));
    }
    const t = await identity.issueUserToken(user, client.appId, request.audience, request.scopes, request.aud);
    return fragmentRedirect(reply, redirectUri, {
      access_token: t.accessToken,
      token_type: 'Bearer',
      expires_in: String(t.expiresIn),
      scope: t.scope,
      state: q.state,
      session_state: undefined,
    });
  };
  app.get('/:tenant/oauth2/authorize', authorize);
  app.post('/:tenant/oauth2/authorize', authorize);
  app.get('/:tenant/oauth2/v2.0/authorize', authorize);
  app.post('/:tenant/oauth2/v2.0/authorize', authorize);

  const token = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    if (typeof req.body !== 'object' || req.body === null) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'grant_type'.");
    const b = req.body as Record<string, string>;
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) throw oauthError(400, 'invalid_request', `AADSTS90002: Tenant '${req.params.tenant}' not found.`);
    let clientId = b.client_id;
    let clientSecret = b.client_secret;
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (basic) {
      const [id, secret] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':');
      clientId = decodeURIComponent(id ?? '');
      clientSecret = decodeURIComponent(secret ?? '');
    }
    const grant = b.grant_type;
    if (!grant) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameter: 'grant_type'.");
    let issued;
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
      issued = await identity.issueAppToken(client, parsed.audience, parsed.aud);
    } else if (grant === 'password') {
      const client = await identity.directory.findApp(clientId ?? devPublicClientId);
      if (!client) throw oauthError(400, 'unauthorized_client', `AADSTS700016: Application with identifier '${clientId}' was not found in the directory '${req.params.tenant}'.`);
      if (client.hasSecret && !(clientSecret && (await identity.directory.checkClientSecret(client.appId, clientSecret)))) {
        throw oauthError(401, 'invalid_client', "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or 'client_secret'.");
      }
      if (!b.username || !b.password) throw oauthError(400, 'invalid_request', "AADSTS900144: The request body must contain the following parameters: 'username' and 'password'.");
      const request = delegatedRequest(b.scope, b.resource, origin(), identity.aliases);
      const user = await identity.directory.checkPassword(b.username, b.password);
      if (!user || !inTenant(seg, user.tenantId)) throw oauthError(400, 'invalid_grant', 'AADSTS50126: Error validating credentials due to invalid username or password.');
      issued = await identity.issueUserToken(user as DirectoryUser, client.appId, request.audience, request.scopes, request.aud);
    } else {
      throw oauthError(400, 'unsupported_grant_type', `AADSTS70003: The app requested an unsupported grant type '${grant}'.`);
    }
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({
      token_type: 'Bearer',
      scope: issued.scope,
      expires_in: issued.expiresIn,
      ext_expires_in: issued.expiresIn,
      access_token: issued.accessToken,
    });
  };
  app.post('/:tenant/oauth2/v2.0/token', token);
  app.post('/:tenant/oauth2/token', token);

  const keys = async () => identity.jwks();
  app.get('/:tenant/discovery/v2.0/keys', keys);
  app.get('/:tenant/discovery/keys', keys);

  app.get('/:tenant/v2.0/.well-known/openid-configuration', async (req: FastifyRequest<{ Params: { tenant: string } }>) => {
    const t = req.params.tenant;
    const seg = await resolveTenant(identity, t);
    if (!seg?.tenant) throw oauthError(400, 'invalid_tenant', `AADSTS90002: Tenant '${t}' not found.`);
    const tenant = seg.tenant;
    const common = seg.common;
    const base = `${origin()}/${common ? t : tenant.id}`;
    return {
      issuer: common ? `${origin()}/{tenantid}/v2.0` : identity.issuer(tenant.id),
      authorization_endpoint: `${base}/oauth2/v2.0/authorize`,
      token_endpoint: `${base}/oauth2/v2.0/token`,
      jwks_uri: `${base}/discovery/v2.0/keys`,
      response_types_supported: ['token'],
      response_modes_supported: ['fragment'],
      grant_types_supported: ['implicit', 'client_credentials', 'password'],
      subject_types_supported: ['pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      scopes_supported: Object.entries(delegatedScopes).flatMap(([f, s]) => s.map((n) => `${audienceUri(f as AudienceFamily)}/${n}`)),
      claims_supported: ['iss', 'aud', 'tid', 'oid', 'sub', 'iat', 'nbf', 'exp', 'scp', 'roles', 'upn', 'name', 'appid', 'wids'],
      tenant_region_scope: 'NA',
    };
  });
}
