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
};
