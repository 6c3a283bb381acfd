const identities = JSON.parse(process.env.STRATUS_IDENTITIES);
const origin = process.env.STRATUS_URL;
const rg = `${origin}/subscriptions/${identities.subscription.id}/resourcegroups/recipe-rg?api-version=2021-04-01`;

// A clean store before each test: the control plane's reset.
beforeEach(async () => {
  const res = await fetch(`${process.env.STRATUS_HTTP_URL}/_stratus/reset`, { method: 'POST', headers: { authorization: `Bearer ${process.env.STRATUS_CONTROL_KEY}` } });
  expect(res.status).toBeLessThan(300);
});

async function armToken() {
  const { userPrincipalName, password, tenant } = identities.admin;
  const res = await fetch(`${origin}/${tenant}/oauth2/v2.0/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'password', client_id: identities.publicClientId, username: userPrincipalName, password, scope: 'api://stratus/arm/user_impersonation' }),
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
