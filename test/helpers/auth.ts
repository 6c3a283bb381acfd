/**
 * Tokens for tests, fetched from the server's own token endpoint over HTTPS, and a
 * `TokenCredential` for the official SDK clients.
 */
import { demoAdmin, demoServicePrincipal, demoTenant, demoUser } from '../../src/seed/demo.ts';

/** The development identities the tests sign in as. */
export const identities = {
  admin: { username: demoAdmin.userPrincipalName, password: demoAdmin.password },
  user: { username: demoUser.userPrincipalName, password: demoUser.password },
  eve: { username: 'eve@other.test', password: 'Eve-Pass-1', tenant: 'other.test' },
  sp: { clientId: demoServicePrincipal.appId, clientSecret: demoServicePrincipal.secret },
  mi: { clientId: 'd4a3b8f6-5c7e-4f90-b1c2-4d5e6f7a8b04', clientSecret: 'stratus-mi-secret' },
} as const;

/** Posts a form to the token endpoint and returns the parsed JSON and status. */
export async function tokenRequest(baseUrl: string, form: Record<string, string>, tenant: string = demoTenant.id): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}/${tenant}/oauth2/v2.0/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: await res.json() };
}

/** A delegated token for a user: `scopes` are full scope strings (`api://stratus/mail/Mail.Read`). */
export async function userToken(baseUrl: string, user: { username: string; password: string; tenant?: string }, scopes: string[]): Promise<string> {
  const r = await tokenRequest(baseUrl, { grant_type: 'password', username: user.username, password: user.password, scope: scopes.join(' ') }, user.tenant ?? demoTenant.id);
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token as string;
}

/** An application token (client credentials) for `family` (`arm`, `mail`, …). */
export async function appToken(baseUrl: string, family: string, app: { clientId: string; clientSecret: string } = identities.sp): Promise<string> {
  const r = await tokenRequest(baseUrl, { grant_type: 'client_credentials', client_id: app.clientId, client_secret: app.clientSecret, scope: `api://stratus/${family}/.default` });
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.access_token as string;
}

/** A `TokenCredential` (the SDK's interface) that returns a token fetched once by `fetchToken`. */
export function staticCredential(fetchToken: () => Promise<string>) {
  let cached: string | undefined;
  return {
    async getToken() {
      cached ??= await fetchToken();
      return { token: cached, expiresOnTimestamp: Date.now() + 3_000_000 };
    },
  };
}
