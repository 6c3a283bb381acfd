/**
 * The authorize endpoint (`GET|POST /{tenant}/oauth2[/v2.0]/authorize`; spec: resource-manager
 * §5, RFC 6749 §4.1–4.2, OpenID Connect Core §3): the sign-in page, then the response the
 * client asked for — an authorization code (with PKCE S256/plain), an access token, an ID
 * token, or both — by `response_mode` `query`, `fragment` or `form_post`. Errors the client
 * can be told go back to its redirect URI (RFC 6749 §4.1.2.1); the others are an error page.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, type ApiError } from '../errors/index.ts';
import type { Identity } from './identity.ts';
import { clientInfo } from './scopes.ts';
import { delegatedRequest, inTenant, redirectAllowed, resolveTenant, words, type DelegatedRequest } from './delegation.ts';
import { accountSubject, type SignInThrottle } from './throttle.ts';
import { errorPage, esc, page, signInPage } from './pages.ts';

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

/** Registers the authorize endpoint (v1 and v2 paths, GET and POST). */
export function registerAuthorizeRoutes(app: FastifyInstance, identity: Identity, origin: () => string, throttle?: SignInThrottle): void {
  const authorize = async (req: FastifyRequest<{ Params: { tenant: string } }>, reply: FastifyReply) => {
    const q = { ...(req.query as Record<string, string>), ...((req.body as Record<string, string>) ?? {}) };
    for (const [k, v] of Object.entries(q)) if (typeof v !== 'string') q[k] = String(Array.isArray(v) ? v[0] : v);
    const seg = await resolveTenant(identity, req.params.tenant);
    if (!seg) return errorPage(reply, errors.oauth.tenantNotFound({ tenant: req.params.tenant }));
    const clientId = q.client_id ?? '';
    const client = clientId ? await identity.directory.findApp(clientId) : undefined;
    if (!client || client.appId !== clientId.toLowerCase()) return errorPage(reply, errors.oauth.appNotFound({ clientId, tenant: req.params.tenant }));
    const redirectUri = q.redirect_uri ?? client.redirectUris[0] ?? '';
    if (!redirectAllowed(client, redirectUri)) {
      return errorPage(reply, errors.oauth.redirectUriNotRegistered({ redirectUri, clientId }));
    }
    const types = responseTypes(q.response_type);
    const defaultMode = types?.has('code') && types.size === 1 ? 'query' : 'fragment';
    const mode = q.response_mode ?? defaultMode;
    // Errors go back the way asked when that way is valid, else the response type's default way.
    const modeUsable = ['query', 'fragment', 'form_post'].includes(mode) && !(mode === 'query' && defaultMode !== 'query');
    const fail = (err: ApiError) => deliver(reply, modeUsable ? mode : defaultMode, redirectUri, { error: err.code, error_description: err.message, state: q.state });
    if (!types) return fail(errors.oauth.unsupportedResponseType({ responseType: q.response_type ?? '' }));
    if (!['query', 'fragment', 'form_post'].includes(mode)) return fail(errors.oauth.unsupportedResponseMode({ mode }));
    if (mode === 'query' && defaultMode !== 'query') return fail(errors.oauth.queryModeWithTokens());
    if (types.has('id_token') && !words(q.scope).includes('openid')) return fail(errors.oauth.idTokenNeedsOpenid());
    if (types.has('id_token') && !q.nonce) return fail(errors.oauth.missingParameter({ name: 'nonce' }));
    let challengeMethod: string | undefined;
    if (q.code_challenge !== undefined) {
      challengeMethod = q.code_challenge_method ?? 'plain';
      const okChallenge = challengeMethod === 'S256' ? /^[A-Za-z0-9_-]{43}$/.test(q.code_challenge) : challengeMethod === 'plain' && /^[A-Za-z0-9._~-]{43,128}$/.test(q.code_challenge);
      if (!okChallenge) return fail(errors.oauth.invalidCodeChallenge({ challenge: q.code_challenge, method: challengeMethod }));
    } else if (q.code_challenge_method !== undefined) return fail(errors.oauth.missingParameter({ name: 'code_challenge' }));
    let request: DelegatedRequest;
    try {
      request = delegatedRequest(q.scope, q.resource, origin(), identity.aliases);
    } catch (e) {
      return fail(e as ApiError);
    }
    if (req.method === 'GET' || q.username === undefined) {
      return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(q, client.displayName));
    }
    // Smart lockout (issue 30 row 8): a locked account is told so, its password not checked.
    const locked = await throttle?.assertOpen(accountSubject(q.username)).then(
      () => undefined,
      (e: ApiError) => e,
    );
    if (locked) return reply.code(locked.status).headers(locked.options.headers ?? {}).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(q, client.displayName, locked.message));
    const user = await identity.directory.checkPassword(q.username, q.password ?? '');
    if (!user) await throttle?.failed(accountSubject(q.username));
    if (!user || !inTenant(seg, user.tenantId)) {
      return reply.code(200).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(signInPage(q, client.displayName, 'Your account or password is incorrect.'));
    }
    if (types.has('code')) {
      const code = await identity.grants.issueCode({ userId: user.id, appId: client.appId, redirectUri, scope: q.scope ?? '', resource: q.resource, nonce: q.nonce, codeChallenge: q.code_challenge, challengeMethod, tenantPath: seg.common ? user.tenantId : seg.tenant?.id });
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
}
