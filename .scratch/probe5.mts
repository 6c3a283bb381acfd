import { startTestServer } from '/work/wt-hardening/test/helpers/server.ts';
import { appToken } from '/work/wt-hardening/test/helpers/auth.ts';
import { demoSubscription } from '/work/wt-hardening/src/seed/demo.ts';
const s = await startTestServer();
const token = await appToken(s.url, 'arm');
console.log('token ok');
const url = `${s.url}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=location eq 'westus'`;
const r = await s.control('/_stratus/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ match: { family: 'arm' }, effect: { status: 500 }, probability: 0.5, seed: 12345 }) });
console.log('rule', r.status);
for (let i = 0; i < 4; i++) { const t = Date.now(); const x = await fetch(url, { headers: { authorization: `Bearer ${token}` } }); console.log(i, x.status, Date.now() - t); }
await s.close();
