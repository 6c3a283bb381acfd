/**
 * Shared helpers of the mail tests: the official client pointed at the test server (reference
 * mail.md §10: baseUrl without the version, `customHosts` so the bearer token is sent) and a
 * plain `fetch` wrapper for negative cases.
 */
import { Client } from '@microsoft/microsoft-graph-client';
import { userToken, identities, appToken } from './auth.ts';

export const mailScopes = ['api://stratus/mail/Mail.ReadWrite', 'api://stratus/mail/Mail.Send'];

/** The official client for a token. */
export function graphClient(baseUrl: string, token: string): Client {
  return Client.init({ baseUrl, customHosts: new Set([new URL(baseUrl).hostname]), authProvider: (done) => done(null, token) });
}

/** Tokens for the demo identities. */
export async function tokens(baseUrl: string) {
  return {
    user: await userToken(baseUrl, identities.user, mailScopes),
    admin: await userToken(baseUrl, identities.admin, mailScopes),
    userRead: await userToken(baseUrl, identities.user, ['api://stratus/mail/Mail.Read']),
    app: await appToken(baseUrl, 'mail'),
  };
}

/** A request with fetch: `{status, body, headers}` (body parsed when JSON). */
export async function call(baseUrl: string, token: string | undefined, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(baseUrl + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* text */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
