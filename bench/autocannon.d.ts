/** The slice of autocannon's API the benchmark uses (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    /** One target, or several spread round-robin over the connections. */
    url: string | string[];
    connections?: number;
    duration?: number;
    /** Stop after this many requests (instead of `duration`). */
    amount?: number;
    headers?: Record<string, string>;
    method?: string;
    body?: string;
    /** Requests sent in turn on each connection (each may rebuild itself per request with `setupRequest`). */
    requests?: Request[];
  }
  /** One entry of `requests`. */
  export interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Called before each send with the request's defaults; returns the request to send. */
    setupRequest?: (req: Request & Record<string, unknown>, context: Record<string, unknown>) => Request & Record<string, unknown>;
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    /** The run's sum (requests: answers counted; throughput: bytes received). */
    total: number;
  }
  interface Result {
    requests: Histogram;
    throughput: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
