/**
 * The benchmarks' scenarios (issue 9) and what they need from a running Stratus: a token per
 * kind, from the demo data set's development identities, and the id of a message of the
 * administrator's inbox (`{messageId}`). Shared by `bench/run.ts` and `bench/cpu.ts`.
 */
const tenant = '9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01';
const sub = '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25';
/** The demo resource group's path (its automation account holds the demo webhook). */
export const rg = `/subscriptions/${sub}/resourceGroups/stratus-rg`;
const ownerRole = '8e3af657-a8ff-443c-a75c-2fe8c4bcb635';
/** Which token a scenario's requests carry. */
export type TokenKind = 'arm' | 'armUser' | 'analytics' | 'mail';

/** One request of the benchmarks, repeated by the load generator. */
export interface Scenario {
  id: string;
  name: string;
  /** Path and query; `{messageId}` is replaced by the id of a message of the admin's inbox. */
  path: string;
  method?: 'GET' | 'POST';
  token?: TokenKind;
  https?: boolean;
}

const q = encodeURIComponent;
/** The scenarios of `npm run bench` (issue 9), also measured by `bench/cpu.ts`. */
export const scenarios: Scenario[] = [
  { id: 'health', name: '`/_stratus/health`', path: '/_stratus/health' },
  { id: 'webhook', name: 'webhook GET', path: `${rg}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`, token: 'arm' },
  { id: 'mail-get', name: 'mail message GET by id', path: '/v1.0/me/messages/{messageId}', token: 'mail' },
  { id: 'inbox', name: 'inbox `$top=10&$select=subject`', path: '/v1.0/me/mailFolders/inbox/messages?$top=10&$select=subject', token: 'mail' },
  {
    id: 'policies',
    name: 'role management policies, `$filter` one role',
    path: `/subscriptions/${sub}/providers/Vendor.Authorization/roleManagementPolicies?api-version=2020-10-01&$filter=${q(`roleDefinitionId eq '/subscriptions/${sub}/providers/Vendor.Authorization/roleDefinitions/${ownerRole}'`)}`,
    token: 'arm',
  },
  { id: 'dataflows', name: 'admin dataflows `$top=10`', path: '/v1.0/myorg/admin/dataflows?$top=10', token: 'analytics' },
  { id: 'syncs', name: 'share `listSynchronizations`', path: `${rg}/providers/Vendor.DataShare/accounts/stratus-share/shares/sales/listSynchronizations?api-version=2021-08-01`, method: 'POST', token: 'arm' },
  {
    id: 'invoice',
    name: 'invoice transactions `top=10`, filter + orderBy',
    path: `/providers/Vendor.Billing/billingAccounts/70000001/invoices/G000000001/transactions?api-version=2024-04-01&filter=${q("properties/transactionType eq 'Purchase'")}&orderBy=${q('properties/date desc')}&top=10`,
    token: 'armUser',
  },
  { id: 'skus', name: 'SKUs, location filter', path: `/subscriptions/${sub}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=${q("location eq 'westus'")}`, token: 'arm' },
  { id: 'webhook-https', name: 'webhook GET over HTTPS', path: `${rg}/providers/Vendor.Automation/automationAccounts/stratus-automation/webhooks/nightly-hook?api-version=2024-10-23`, token: 'arm', https: true },
];
/**
 * A token of `kind` from the server at `origin`: the demo data set's development identities, or
 * for a user kind the user `as` (the password grant of the demo public client).
 * @throws Error when none is issued.
 */
export async function token(origin: string, kind: TokenKind, as: { username: string; password: string } = { username: 'admin@stratus.test', password: 'Admin-Pass-1' }): Promise<string> {
  const form: Record<string, string> =
    kind === 'arm'
      ? { grant_type: 'client_credentials', client_id: '5a2f9c1e-8b3d-4f7a-9e6c-1d4b8a2f0c37', client_secret: 'stratus-dev-secret', scope: 'api://stratus/arm/.default' }
      : {
          grant_type: 'password',
          client_id: 'b7e4c2a1-6d3f-4a8e-9c5b-2f1d0e7a3c94',
          username: as.username,
          password: as.password,
          scope: kind === 'armUser' ? 'api://stratus/arm/user_impersonation' : kind === 'analytics' ? 'api://stratus/analytics/Tenant.Read.All' : 'api://stratus/mail/Mail.ReadWrite',
        };
  const res = await fetch(`${origin}/${tenant}/oauth2/v2.0/token`, { method: 'POST', body: new URLSearchParams(form) });
  const body = (await res.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`no token for ${kind}: ${JSON.stringify(body)}`);
  return body.access_token;
}

/** The id of a message of the administrator's inbox (`'none'` when it is empty); `authorization` is a mail token's header value. */
export async function inboxMessageId(origin: string, authorization: string): Promise<string> {
  const inbox = (await (await fetch(`${origin}/v1.0/me/mailFolders/inbox/messages?$top=1&$select=subject`, { headers: { authorization } })).json()) as { value?: { id: string }[] };
  return inbox.value?.[0]?.id ?? 'none';
}
