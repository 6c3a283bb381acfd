/**
 * The well-known development identities and names of the demo data set. The README
 * documents them; tests and users rely on them, the way storage emulators document their
 * development account.
 */

/** The demo tenant. */
export const demoTenant = { id: '9f3e1c2a-5b7d-4e8f-a1c3-0d2b4f6a8e01', domain: 'stratus.test', displayName: 'Stratus Demo' } as const;

/** The tenant administrator (Owner of the default subscription). */
export const demoAdmin = {
  id: 'a1d0e5c3-2f4b-4c6d-8e9f-1a2b3c4d5e01',
  userPrincipalName: 'admin@stratus.test',
  displayName: 'Stratus Administrator',
  password: 'Admin-Pass-1',
} as const;

/** A user with no roles. */
export const demoUser = {
  id: 'b2e1f6d4-3a5c-4d7e-9fa0-2b3c4d5e6f02',
  userPrincipalName: 'user@stratus.test',
  displayName: 'Stratus User',
  password: 'User-Pass-1',
} as const;

/** The service principal (Contributor on the default subscription). */
export const demoServicePrincipal = {
  appId: '5a2f9c1e-8b3d-4f7a-9e6c-1d4b8a2f0c37',
  objectId: 'c3f2a7e5-4b6d-4e8f-a0b1-3c4d5e6f7a03',
  secret: 'stratus-dev-secret',
  displayName: 'Stratus Development App',
} as const;

/** A managed identity (an app principal with a secret, for tests of the managed-identity variants). */
export const demoManagedIdentity = {
  appId: 'd4a3b8f6-5c7e-4f90-b1c2-4d5e6f7a8b04',
  objectId: 'e5b4c9a7-6d8f-4a01-82d3-5e6f7a8b9c05',
  secret: 'stratus-mi-secret',
  displayName: 'stratus-managed-identity',
} as const;

/** The development public client used by the sign-in page and the password grant. */
export const demoPublicClient = {
  appId: 'b7e4c2a1-6d3f-4a8e-9c5b-2f1d0e7a3c94',
  objectId: 'f6c5dab8-7e9a-4b12-93e4-6f7a8b9c0d06',
  displayName: 'Stratus Development Client',
  redirectUris: ['http://localhost/callback', 'http://127.0.0.1/callback', 'https://localhost/callback', 'http://localhost', 'http://127.0.0.1'],
} as const;

/** A second tenant, to prove that one tenant never sees another's data. */
export const otherTenant = { id: '0c4d8e2f-6a1b-4c3d-9e5f-7a8b9c0d1e02', domain: 'other.test', displayName: 'Other Tenant' } as const;

/** A user of the second tenant. */
export const otherUser = {
  id: '17a9c3e5-0b2d-4f4a-86c8-9d0e1f2a3b07',
  userPrincipalName: 'eve@other.test',
  displayName: 'Eve Other',
  password: 'Eve-Pass-1',
} as const;

/** The default subscription and resource group of the demo tenant. */
export const demoSubscription = { id: '3c9a6f1e-2b8d-4e5a-9f7c-6d1e0a4b8c25', displayName: 'Stratus Default Subscription', resourceGroup: 'stratus-rg', location: 'eastus' } as const;

/**
 * The demo storage account (a generic resource of the demo world, `src/world/worlds/demo.yaml`), used
 * as a resource scope (docs/coverage/authorization.md); its child `blobServices/default` too.
 */
export const demoStorageAccount = {
  name: 'stratusdata',
  type: 'Vendor.Storage/storageAccounts',
  id: `/subscriptions/${demoSubscription.id}/resourceGroups/${demoSubscription.resourceGroup}/providers/Vendor.Storage/storageAccounts/stratusdata`,
} as const;

/** A subscription of the second tenant. */
export const otherSubscription = { id: '8e2b4d6f-1a3c-4e5f-8a9b-0c1d2e3f4a5b', displayName: 'Other Subscription', resourceGroup: 'other-rg', location: 'westeurope' } as const;

/**
 * `hashSecret` values (`scrypt$<salt>$<hash>`) of the demo passwords and client secrets above,
 * computed once: these credentials are published, so a fixed salt hides nothing, and loading
 * the demo data set (first start, every `POST /_stratus/reset`) skips five scrypt runs
 * (~250 ms). A secret missing here is hashed at load; test/identity.test.ts checks each hash
 * against its secret.
 */
export const demoSecretHashes: Readonly<Record<string, string>> = {
  'Admin-Pass-1': 'scrypt$hNb7qwPmuL6IMqfeNOsyjQ==$OD4oyHPuFkindQSy9ZLAXEMmhUXMor4azUYwslirAkQ=',
  'User-Pass-1': 'scrypt$Zl8qyZ+WT5bUQ1NJITGhSg==$lGiyu+JQsdoH7ATAvGalLPL5OKPnMO9Ov5OHMNMkme4=',
  'Eve-Pass-1': 'scrypt$bg+wqWeYfDRrxWLGyQTwug==$I3bLEU+4Ik+ukE9MyLEzAuT48w5P/RMA1Sf5jKU3Zp0=',
  'stratus-dev-secret': 'scrypt$5InNWfFZYcoU+OPo8whfeQ==$pN/DP3CXkgE6b9T694d7wGCT9tEw///yqUiI+V0N4QA=',
  'stratus-mi-secret': 'scrypt$qkv5AMFKgEgyH8bdY2QYrQ==$TY4Usqz5fDe5CURC6o516aGq4nJ2M0zKVxEUjBsqjDU=',
  'stratus-tenant-reader-secret': 'scrypt$JJPf26PIPbewgUjuQz6AFg==$LQKm2y/wKAqxdaZY6HY4xCGVBAD4sUe2JpD4aRUHjS8=',
};

/** Names of the demo automation resources (in `stratus-rg` of the default subscription; `src/world/worlds/demo.yaml`). */
export const demoAutomation = { account: 'stratus-automation', runbook: 'nightly-report', webhook: 'nightly-hook', location: 'eastus' } as const;
/** The demo webhook's URI token (development only): `POST {origin}/automation/webhooks?token=<demoWebhookToken>`. */
export const demoWebhookToken = 'stratus-demo-nightly-hook-token-0000000000000000';

/** Names of the demo data share account and share (in `stratus-rg`), and the number of demo runs of `sales`. */
export const demoDataShare = { account: 'stratus-share', share: 'sales', location: 'eastus' } as const;
/** Number of demo synchronization runs of the share `sales` (listed in the demo world file). */
export const demoSynchronizationCount = 45;

/** The demo data platform workspace (same id and name as the analytics area's). */
export const platformDemoWorkspace = { id: '7d0c6f2e-3a1b-4c5d-8e9f-0a1b2c3d4e5f', displayName: 'Stratus Demo' } as const;
/** The folder `Streams` of the demo workspace. */
export const platformDemoFolder = { id: '2f8c4a6e-1b3d-4e5f-9a7b-6c8d0e2f4a61', displayName: 'Streams' } as const;
/** A second workspace where the demo user is Contributor and the administrator Admin. */
export const platformSandboxWorkspace = { id: '5e1a7c3b-9d2f-4a6e-8b0c-3d5f7a9b1c82', displayName: 'Stratus Sandbox' } as const;
/** A folder of the sandbox workspace (not a folder of the demo workspace). */
export const platformSandboxFolder = { id: '6a2b8d4c-0e3f-4b7a-9c1d-4e6a8b0c2d93', displayName: 'Drafts' } as const;
/** A workspace of the second tenant, where its user is Admin. */
export const platformOtherWorkspace = { id: '9b3c5d7e-2f4a-4c6b-8d0e-5f7a9b1c3d04', displayName: 'Other Workspace' } as const;
/** The demo sensitivity labels (`Highly Confidential` is published only to the administrator). */
export const platformLabels = {
  confidential: { id: '4e1c9a2b-7f3d-4b8e-9c6a-5d2f0e1b3a47', name: 'Confidential' },
  general: { id: '8a5d2c7f-3e1b-4f9a-b6c0-7d4e1f2a9b58', name: 'General' },
  highlyConfidential: { id: 'c7e3f1a9-5b2d-4c8e-a0f6-9b1d3e5f7a26', name: 'Highly Confidential' },
} as const;

/**
 * A service principal that holds the analytics application role `Tenant.Read.All`: the admin
 * dataflow listing refuses its app token (spec §5: those permissions "must not be present" with
 * service principal authentication). In the demo world file.
 */
export const tenantReaderApp = {
  appId: '2b6e0d4f-9a1c-4e7b-8d3f-5c0a9e1b7d62',
  objectId: '8f1d3b5a-7c9e-4a2b-b6d8-0e2f4a6c8b73',
  secret: 'stratus-tenant-reader-secret',
  displayName: 'Stratus Tenant Reader App',
} as const;

/** The demo analytics workspace shared with the data platform area (same id as {@link platformDemoWorkspace}). */
export const demoWorkspace = { id: '7d0c6f2e-3a1b-4c5d-8e9f-0a1b2c3d4e5f', name: 'Stratus Demo' } as const;
