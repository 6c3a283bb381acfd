// node:test: one Stratus per test file, a clean store before each test.
// Run: NODE_EXTRA_CA_CERTS="$(npx stratus ca)" node --test
import { test, before, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { start } from 'stratus-cloud';

let stratus;
before(async () => {
  stratus = await start(); // ephemeral store, free ports
});
beforeEach(() => stratus.reset());
after(() => stratus?.stop());

const rg = () => `${stratus.origin}/subscriptions/${stratus.identities.subscription.id}/resourcegroups/recipe-rg?api-version=2021-04-01`;

test('creates a resource group', async () => {
  const token = await stratus.token({ family: 'arm' });
  const res = await fetch(rg(), { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ location: 'eastus' }) });
  assert.equal(res.status, 201);
});

test('starts from a clean store: the group of the test before is gone', async () => {
  const token = await stratus.token({ family: 'arm' });
  const res = await fetch(rg(), { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 404);
});
