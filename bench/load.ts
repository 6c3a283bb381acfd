/**
 * The load generator of the benchmarks (`bench/harness.ts`), in its own process: runs autocannon
 * once with the options given as JSON in argv[2] (`urls` — several are spread round-robin over
 * the connections —, `connections`, `seconds`, `method`, `headers`, `body`, `pool`) and prints
 * the result as one JSON line: `{ rps, p50, p99, non2xx, errors, loadCpu, bytes }` (`loadCpu`: this
 * process's own CPU time in µs an answer, `bytes`: bytes received an answer, headers included).
 *
 * `pool` names a JSON file of requests, `{ tokens: string[], requests: { method, path, token?,
 * body? }[] }` (`token`: an index into `tokens`, sent as a bearer token; `body`: JSON text): each
 * request the connections send is the pool's next one, in order, wrapping around, so every
 * request differs from the last and the pool's mix is kept however fast each connection is.
 * In a body, `{seq}` becomes the request's sequence number in this run and `{bool}` its parity
 * (`true`/`false`), so repeated writes change what they write.
 */
import fs from 'node:fs';
import autocannon, { type Request as CannonRequest } from 'autocannon';

/** A request pool's file (see the module note). */
export interface PoolFile {
  tokens: string[];
  requests: { method: string; path: string; token?: number; body?: string }[];
}

const o = JSON.parse(process.argv[2]!) as { urls: string[]; connections: number; seconds: number; method?: string; headers?: Record<string, string>; body?: string; pool?: string };
let requests: CannonRequest[] | undefined;
if (o.pool) {
  const file = JSON.parse(fs.readFileSync(o.pool, 'utf8')) as PoolFile;
  // Headers built once per token (and body kind), so a request costs the generator one object spread.
  const plain: Record<string, string>[] = file.tokens.map((t) => ({ authorization: `Bearer ${t}` }));
  const json: Record<string, string>[] = file.tokens.map((t) => ({ authorization: `Bearer ${t}`, 'content-type': 'application/json' }));
  const pool: CannonRequest[] = file.requests.map((r) => ({
    method: r.method,
    path: r.path,
    headers: r.body !== undefined ? (r.token !== undefined ? json[r.token]! : { 'content-type': 'application/json' }) : r.token !== undefined ? plain[r.token]! : {},
    ...(r.body !== undefined ? { body: r.body } : {}),
  }));
  // Bodies with `{seq}` / `{bool}` get the request's sequence number / its parity at each send.
  const templated = pool.map((r) => r.body !== undefined && /\{(seq|bool)\}/.test(r.body));
  let next = 0;
  let seq = 0;
  requests = [
    {
      setupRequest: (req) => {
        const i = next;
        next = next + 1 === pool.length ? 0 : next + 1;
        seq++;
        if (!templated[i]) return { ...req, ...pool[i]! };
        return { ...req, ...pool[i]!, body: pool[i]!.body!.replaceAll('{seq}', String(seq)).replaceAll('{bool}', seq % 2 ? 'true' : 'false') };
      },
    },
  ];
}
const cpu0 = process.cpuUsage();
const r = await autocannon({
  url: o.urls.length === 1 ? o.urls[0]! : o.urls,
  connections: o.connections,
  duration: o.seconds,
  method: o.method ?? 'GET',
  ...(o.headers ? { headers: o.headers } : {}),
  ...(o.body !== undefined ? { body: o.body } : {}),
  ...(requests ? { requests } : {}),
});
// This process's own CPU (user + system) and the bytes it received, per answer of the run.
const used = process.cpuUsage(cpu0);
const answers = Math.max(1, r.requests.total);
process.stdout.write(
  JSON.stringify({
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    loadCpu: (used.user + used.system) / answers,
    bytes: r.throughput.total / answers,
  }) + '\n',
);
