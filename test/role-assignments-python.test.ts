/**
 * Role definitions and role assignments through Debian's Python `azure-mgmt-authorization`
 * (2022-04-01) with azure-identity (test/python/roles.py, run from here): the built-ins, a
 * custom role, assignments created/listed with each filter/deleted by name and by id, a
 * non-owner refused, and the user's access changing on its next call. Both databases.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertOperations, runPythonScript } from './helpers/python.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';
import { demoAdmin, demoPublicClient, demoSubscription, demoTenant, demoUser } from '../src/seed/demo.ts';

let s: TestServer;

before(async () => {
  s = await startTestServer({ env: { STRATUS_AUDIENCE_ALIASES: 'arm=https://management.azure.com', STRATUS_PROVIDER_NAMESPACE_ALIASES: 'Microsoft.' } });
});
after(async () => {
  await s?.close();
});

test('Python azure-mgmt-authorization: role definitions and role assignments', async () => {
  const results = await runPythonScript('roles.py', ['azure.mgmt.authorization', 'azure.identity'], {
    STRATUS_URL: s.url,
    STRATUS_TENANT: demoTenant.domain,
    STRATUS_SUBSCRIPTION: demoSubscription.id,
    STRATUS_RESOURCE_GROUP: demoSubscription.resourceGroup,
    STRATUS_PUBLIC_CLIENT_ID: demoPublicClient.appId,
    STRATUS_ADMIN_USER: demoAdmin.userPrincipalName,
    STRATUS_ADMIN_PASSWORD: demoAdmin.password,
    STRATUS_USER: demoUser.userPrincipalName,
    STRATUS_USER_PASSWORD: demoUser.password,
    STRATUS_USER_ID: demoUser.id,
  });
  assertOperations(results, ['role_definitions.list', 'role_definitions.create_or_update/delete', 'role_assignments.create', 'role_assignments.list_*', 'role_assignments.delete']);
  assert.ok((results['role_definitions.list'] as number) >= 5);
});
