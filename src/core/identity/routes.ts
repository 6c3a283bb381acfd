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
 * Errors are OAuth 2.0 error bodies (RFC 6749 §5.2) with the statuses of the real service
 * (`errors.oauth`). The authorize endpoint is in `authorize.ts`, the token and device-code
 * endpoints in `token.ts`; the pages in `pages.ts`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, type ApiError } from '../errors/index.ts';
import type { Identity, AudienceFamily } from './identity.ts';
import { delegatedScopes, audienceUri, pairwiseSubject, TokenError } from './identity.ts';
import { asOauth, redirectAllowed, resolveTenant } from './delegation.ts';
import { deviceCodePage, deviceSignInPage, esc, page } from './pages.ts';
import { registerAuthorizeRoutes } from './authorize.ts';
import { registerTokenRoutes } from './token.ts';
import { accountSubject, type SignInThrottle } from './throttle.ts';

/** Registers the identity provider's routes. */
export function registerIdentityRoutes(app: FastifyInstance, identity: Identity, origin: () => string, throttle?: SignInThrottle): void {
  const oauthRoute = { config: { family: 'oauth' as const } };
  registerAuthorizeRoutes(app, identity, origin, throttle);
  registerTokenRoutes(app, identity, origin, throttle);

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
    // Smart lockout (issue 30 row 8): a locked account is told so, its password not checked.
    const subject = accountSubject(str('username') ?? '');
    const locked = await throttle?.assertOpen(subject).then(
      () => undefined,
      (e: ApiError) => e,
    );
    if (locked) return reply.code(locked.status).headers(locked.options.headers ?? {}).type('text/html; charset=utf-8').send(deviceSignInPage(pending.userCode, appName, locked.message, str('username')));
    const user = await identity.directory.checkPassword(str('username') ?? '', str('password') ?? '');
    if (!user) await throttle?.failed(subject);
    if (!user || (pending.tenantId && pending.tenantId !== user.tenantId)) return html(200, deviceSignInPage(pending.userCode, appName, 'Your account or password is incorrect.', str('username')));
    await identity.grants.answerDevice(pending.codeHash, { userId: user.id });
    return html(200, page('Signed in — Stratus', `<h1>You're signed in</h1><p>You have signed in to the <strong>${esc(appName)}</strong> application on your device. You may now close this window.</p>`));
  };
  app.get('/devicelogin', oauthRoute, deviceLogin);
  app.post('/devicelogin', oauthRoute, deviceLogin);

  /** OpenID Connect userinfo (GET or POST, bearer token of any family issued to a user). */
  const userinfo = async (req: FastifyRequest, reply: FastifyReply) => {
    const challenge = ({ status, code: error, message: description }: ApiError) => reply.code(status).header('www-authenticate', `Bearer error="${error}", error_description="${description}"`).send({ error, error_description: description });
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!m) return challenge(errors.oauth.bearerRequired());
    let p;
    try {
      p = await identity.verifyAnyFamily(m[1]!);
    } catch (e) {
      if (e instanceof TokenError) return challenge(errors.oauth.bearerInvalid({ message: e.message }));
      throw e;
    }
    if (p.kind !== 'user') return challenge(errors.oauth.bearerNotUser());
    const user = await identity.directory.findUser(p.objectId);
    if (!user) return challenge(errors.oauth.bearerUserGone());
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

  /**
   * Sign-out: nothing is kept server-side, so it shows a page — or redirects to
   * `post_logout_redirect_uri` when that is a registered redirect URI of the client named by
   * `client_id` or by the `aud` of `id_token_hint` (OpenID Connect RP-Initiated Logout §3: the
   * URI must have been registered; issue 30 row 4). Any other target is not followed.
   */
  const logout = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as Record<string, string>;
    const target = typeof q.post_logout_redirect_uri === 'string' ? q.post_logout_redirect_uri : undefined;
    const client = target ? await logoutClient(q) : undefined;
    if (target && client && /^https?:\/\//i.test(target) && redirectAllowed(client, target)) {
      return reply.redirect(target + (q.state ? `${target.includes('?') ? '&' : '?'}state=${encodeURIComponent(q.state)}` : ''), 302);
    }
    return reply.type('text/html; charset=utf-8').send(page('Signed out — Stratus', '<h1>You signed out of your account</h1><p>It\'s a good idea to close all browser windows.</p>'));
  };
  /** The client a sign-out names: `client_id`, else the audience of `id_token_hint` (read, not verified: it only picks whose registered URIs apply). */
  const logoutClient = async (q: Record<string, string>) => {
    let clientId = typeof q.client_id === 'string' ? q.client_id : undefined;
    if (!clientId && typeof q.id_token_hint === 'string') {
      try {
        const aud = JSON.parse(Buffer.from(q.id_token_hint.split('.')[1] ?? '', 'base64url').toString('utf8')).aud;
        clientId = typeof aud === 'string' ? aud : undefined;
      } catch {
        clientId = undefined;
      }
    }
    if (!clientId || clientId.length > 64) return undefined;
    const app = await identity.directory.findApp(clientId);
    return app && app.appId === clientId.toLowerCase() ? app : undefined;
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
    if (!ep) throw errors.oauth.missingParameter({ name: 'authorization_endpoint' }, asOauth);
    let url: URL;
    try {
      url = new URL(ep);
    } catch {
      throw errors.oauth.invalidInstance({ instance: ep }, asOauth);
    }
    const own = new URL(origin());
    if (url.host.toLowerCase() !== own.host.toLowerCase()) throw errors.oauth.invalidInstance({ instance: url.host }, asOauth);
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
    if (!seg?.tenant) throw errors.oauth.tenantNotFound({ tenant: t }, asOauth);
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
