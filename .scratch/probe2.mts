import net from 'node:net';
import { startTestServer } from '/work/wt-hardening/test/helpers/server.ts';
const s = await startTestServer();
const u = new URL(s.httpUrl);
function raw(req: string): Promise<string> { return new Promise((res) => { const c = net.connect(Number(u.port), u.hostname, () => c.end(req)); const ch: Buffer[] = []; c.on('data', (d) => ch.push(d)); c.on('close', () => res(Buffer.concat(ch).toString('latin1'))); c.on('error', () => {}); setTimeout(() => { c.destroy(); }, 3000); }); }
for (const r of [
 'PUT /v1.0/me/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
 'PUT /v1.0/me/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
 'CONNECT /v1/workspaces?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
]) { const t = Date.now(); const out = await raw(r); console.log(Date.now() - t, JSON.stringify(out.slice(0, 400))); }
await s.close();
