import { test, expect, inject } from 'vitest';

const stratus = inject('stratus');
const rg = `${stratus.origin}/subscriptions/${stratus.identities.subscription.id}/resourcegroups/recipe-rg?api-version=2021-04-01`;

async function armToken() {
  const { userPrincipalName, password, tenant } = stratus.identities.admin;
  const res = await fetch(`${stratus.origin}/${tenant}/oauth2/v2.0/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: stratus.identities.publicClientId, username: userPrincipalName, password, scope: 'api://stratus/arm/user_impersonation' }),
  });
  return (await res.json()).access_token;
}

test('creates a resource group', async () => {
  const res = await fetch(rg, { method: 'PUT', headers: { authorization: `Bearer ${await armToken()}`, 'content-type': 'application/json' }, body: JSON.stringify({ location: 'eastus' }) });
  expect(res.status).toBe(201);
});

test('starts from a clean store: the group of the test before is gone', async () => {
  const res = await fetch(rg, { headers: { authorization: `Bearer ${await armToken()}` } });
  expect(res.status).toBe(404);
});
