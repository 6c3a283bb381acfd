/**
 * Role definitions and role assignments through Debian's Python `azure-mgmt-authorization`
 * (2022-04-01) with azure-identity (test/python/roles.py, run from here): the built-ins, a
 * custom role, assignments created/listed with each filter/deleted by name and by id, a
 * non-owner refused, and the user's access changing on its next call. Both databases.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
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
  const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const probe = spawnSync(python, ['-c', 'import azure.mgmt.authorization, azure.identity'], { encoding: 'utf8' });
  assert.equal(probe.status, 0, `python3-azure is needed: ${probe.stderr}`);
  const r = await promisify(execFile)(python, [path.resolve('test/python/roles.py')], {
    encoding: 'utf8',
    timeout: 240_000,
    env: {
      ...process.env,
      REQUESTS_CA_BUNDLE: path.resolve('.stratus-test/tls/ca.pem'),
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
    },
  });
  const results = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
  for (const op of ['role_definitions.list', 'role_definitions.create_or_update/delete', 'role_assignments.create', 'role_assignments.list_*', 'role_assignments.delete']) assert.ok(op in results, `${op} missing from ${JSON.stringify(results)}`);
  assert.ok((results['role_definitions.list'] as number) >= 5);
});
