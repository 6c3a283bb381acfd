/**
 * The identity provider's HTML pages: sign-in, device code, and the error page of a sign-in
 * request that cannot be answered to the client's redirect URI.
 */
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../errors/index.ts';

/** `s` escaped for HTML text and attribute values. */
export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A whole HTML page of the identity provider. */
export function page(title: string, inner: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=email],input[type=password]{width:100%;padding:.4rem}button{margin-top:1rem;padding:.5rem 1.2rem}.error{color:#a00}</style>
</head><body>${inner}</body></html>`;
}

/** The sign-in form of the authorize endpoint, carrying the request's parameters; `error` above the form. */
export function signInPage(params: Record<string, string>, appName: string, error?: string): string {
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

/** The device-code page: the form that asks for the user code (RFC 8628 §3.3). */
export function deviceCodePage(code = '', error?: string): string {
  return page(
    'Enter code — Stratus',
    `<h1>Enter code</h1><p>Enter the code displayed on your app or device.</p>${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post"><label for="code">Code</label><input id="code" name="code" type="text" autocomplete="off" required value="${esc(code)}"><button type="submit">Next</button></form>`,
  );
}

/** The sign-in form for a device code, with a button to decline. */
export function deviceSignInPage(code: string, appName: string, error?: string, username = ''): string {
  return page(
    'Sign in — Stratus',
    `<h1>Sign in</h1><p>You're signing in to <strong>${esc(appName)}</strong> on another device. Only continue if you started this sign-in yourself.</p>${error ? `<p class="error" role="alert">${esc(error)}</p>` : ''}
<form method="post"><input type="hidden" name="code" value="${esc(code)}"><label for="username">User name</label><input id="username" name="username" type="email" autocomplete="username" required value="${esc(username)}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required><button type="submit" name="action" value="approve">Sign in</button></form>
<form method="post"><input type="hidden" name="code" value="${esc(code)}"><button type="submit" name="action" value="deny">Cancel</button></form>`,
  );
}

/** Answers `err` as an HTML error page (for sign-in errors that cannot go back to the client). */
export function errorPage(reply: FastifyReply, err: ApiError) {
  return reply.code(err.status).type('text/html; charset=utf-8').send(page('Sign-in error — Stratus', `<h1>Sorry, but we're having trouble signing you in.</h1><p class="error"><strong>${esc(err.code)}</strong>: ${esc(err.message)}</p>`));
}
