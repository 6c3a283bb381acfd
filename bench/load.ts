/**
 * The load generator of `bench/run.ts`, in its own process: runs autocannon once with the
 * options given as JSON in argv[2] (`urls` — several are spread round-robin over the
 * connections —, `connections`, `seconds`, `method`, `headers`, `body`) and prints the
 * result as one JSON line: `{ rps, p50, p99, non2xx, errors }`.
 */
import autocannon from 'autocannon';

const o = JSON.parse(process.argv[2]!) as { urls: string[]; connections: number; seconds: number; method?: string; headers?: Record<string, string>; body?: string };
const r = await autocannon({ url: o.urls.length === 1 ? o.urls[0]! : (o.urls as any), connections: o.connections, duration: o.seconds, method: o.method as any, headers: o.headers, body: o.body });
process.stdout.write(
  JSON.stringify({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts }) + '\n',
);
