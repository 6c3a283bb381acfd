import net from 'node:net';
import { startTestServer } from '/work/wt-hardening/test/helpers/server.ts';
const s = await startTestServer();
const u = new URL(s.httpUrl);
function raw(req: string): Promise<string> { return new Promise((res) => { const c = net.connect(Number(u.port), u.hostname, () => c.end(req)); const ch: Buffer[] = []; c.on('data', (d) => ch.push(d)); c.on('close', () => res(Buffer.concat(ch).toString('latin1'))); c.on('error', () => {}); }); }
for (const r of [`GET /v1.0/me/messages HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70 * 1024)}\r\n\r\n`, `GET /v1/workspaces?x=${'a'.repeat(70 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`, 'GET /v1/%FF%00/x HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /v1.0/me/messages?$filter=%FF HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /v1.0/me/mess\x01ages HTTP/1.1\r\nHost: x\r\n\r\n']) console.log(JSON.stringify((await raw(r)).slice(0, 600)));
await s.close();
