import { startTestServer } from '/work/wt-hardening/test/helpers/server.ts';
import { appToken } from '/work/wt-hardening/test/helpers/auth.ts';
import { demoSubscription } from '/work/wt-hardening/src/seed/demo.ts';
const s = await startTestServer();
const token = await appToken(s.url, 'arm');
const url = `${s.url}/subscriptions/${demoSubscription.id}/providers/Vendor.Compute/skus?api-version=2021-07-01&$filter=location eq 'westus'`;
const add = async (rule: unknown) => { const r = await s.control('/_stratus/faults', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rule) }); console.log('rule', r.status); return r.json() as any; };
for (let k = 0; k < 2; k++) { const rule = await add({ match: { family: 'arm' }, effect: { status: 500 }, probability: 0.5, seed: 12345 }); const out = []; for (let i = 0; i < 16; i++) out.push((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status); console.log(out.join(',')); await s.control(`/_stratus/faults/${rule.id}`, { method: 'DELETE' }); }
await add({ match: { family: 'arm' }, effect: { delayMs: 300 }, count: 1 });
console.log('delay', (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status);
await add({ match: { family: 'arm' }, effect: { reset: true }, count: 1 });
console.log('reset', await fetch(url, { headers: { authorization: `Bearer ${token}`, connection: 'close' } }).then((r) => r.status, (e) => 'rejected ' + e.message));
console.log('after', (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status);
await s.close();
console.log('closed');
