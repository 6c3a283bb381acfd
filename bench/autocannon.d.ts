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
  }
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  function autocannon(opts: Options): Promise<Result>;
  export default autocannon;
}
