/**
 * Outbound HTTP(S) calls that cannot be turned against Stratus itself (issue 11, item 1).
 *
 * Every call Stratus makes to a URL a caller chose (the mail subscription handshake, change and
 * lifecycle notifications, and any future one) goes through {@link OutboundGuard}:
 * - the host is resolved once (`dns.lookup`, all addresses; IP literals in any spelling the
 *   WHATWG URL parser normalises — decimal, hex, octal IPv4, `[::ffff:127.0.0.1]` — included);
 * - every address is checked: an address of this machine (loopback, unspecified, an own
 *   interface) on one of Stratus's own listening ports is always refused; with
 *   `allowLoopback` off, loopback, private, link-local, shared (100.64/10) and unique-local
 *   addresses are refused on any port;
 * - the connection goes to exactly the checked address (no second lookup, so DNS rebinding
 *   cannot swap it), redirects are never followed, and no credential of Stratus's is sent
 *   (no Authorization, no cookies, no client certificate).
 */
import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import ipaddr from 'ipaddr.js';

/** Thrown when a target is refused; `reason` says why (for logs, never shown verbatim to a caller). */
export class OutboundRefused extends Error {
  constructor(readonly reason: string) {
    super(`outbound call refused: ${reason}`);
  }
}

/** Options of {@link OutboundGuard}. */
export interface OutboundGuardOptions {
  /** The ports Stratus listens on right now (HTTP and HTTPS); read at every call. */
  ownPorts: () => number[];
  /** Loopback and private-range receivers on other ports are allowed (`STRATUS_ALLOW_LOOPBACK_RECEIVERS`, default true). */
  allowLoopback: boolean;
  /** Resolver (tests of the guard itself may pass one); default `dns.lookup(host, { all: true })`. */
  lookup?: (host: string) => Promise<{ address: string; family: number }[]>;
}

/** The answer of an outbound POST: status, lower-cased headers, and the body cut at `maxBytes` (undefined when longer). */
export interface OutboundResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string | undefined;
}

/** Ranges refused when loopback/private receivers are not allowed (ipaddr.js range names). */
const privateRanges = new Set(['loopback', 'unspecified', 'private', 'linkLocal', 'uniqueLocal', 'carrierGradeNat', 'broadcast']);
/** Ranges that can never be a receiver. */
const neverRanges = new Set(['multicast', 'reserved']);

/** An address parsed and with IPv4-mapped IPv6 turned into IPv4. @throws Error for text that is no IP address */
function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.process(text.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
}

/** Whether `ip` is an address of this machine: loopback, unspecified, or one of its interfaces. */
function isOwnAddress(ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  const range = ip.range();
  if (range === 'loopback' || range === 'unspecified') return true;
  const norm = ip.toNormalizedString();
  for (const list of Object.values(os.networkInterfaces())) {
    for (const i of list ?? []) {
      try {
        if (parseIp(i.address).toNormalizedString() === norm) return true;
      } catch {
        /* not an address */
      }
    }
  }
  return false;
}

/** The guard every outbound call goes through. */
export class OutboundGuard {
  constructor(private readonly opts: OutboundGuardOptions) {}

  /**
   * Resolves and checks `url`.
   * @returns the parsed URL, its port and the one address to connect to
   * @throws OutboundRefused for a scheme other than http/https, a name that does not resolve, or a refused address
   */
  async resolve(url: string): Promise<{ url: URL; port: number; address: string; family: 4 | 6 }> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new OutboundRefused('not an absolute URL');
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new OutboundRefused(`scheme ${u.protocol}`);
    if (u.username || u.password) throw new OutboundRefused('credentials in the URL');
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    const host = u.hostname.replace(/^\[|\]$/g, '');
    let addrs: { address: string; family: number }[];
    if (ipaddr.isValid(host)) addrs = [{ address: host, family: host.includes(':') ? 6 : 4 }];
    else {
      try {
        addrs = await (this.opts.lookup ?? ((h: string) => dns.lookup(h, { all: true, verbatim: true })))(host);
      } catch {
        throw new OutboundRefused(`the host ${host} does not resolve`);
      }
    }
    if (addrs.length === 0) throw new OutboundRefused(`the host ${host} does not resolve`);
    const own = new Set(this.opts.ownPorts());
    for (const a of addrs) {
      let ip: ipaddr.IPv4 | ipaddr.IPv6;
      try {
        ip = parseIp(a.address);
      } catch {
        throw new OutboundRefused(`unparseable address ${a.address}`);
      }
      const range = ip.range();
      if (neverRanges.has(range)) throw new OutboundRefused(`address ${a.address} is ${range}`);
      if (isOwnAddress(ip) && own.has(port)) throw new OutboundRefused(`address ${a.address}:${port} is Stratus itself`);
      if (!this.opts.allowLoopback && (privateRanges.has(range) || isOwnAddress(ip))) throw new OutboundRefused(`address ${a.address} is ${range} and loopback/private receivers are off`);
    }
    const first = parseIp(addrs[0]!.address);
    return { url: u, port, address: first.toString(), family: first.kind() === 'ipv6' ? 6 : 4 };
  }

  /**
   * POSTs `body` to `url` after {@link resolve}: one connection to the checked address, no
   * redirects followed (a 3xx is returned as is), no credentials, the response body read up to
   * `maxBytes` (undefined beyond, the rest discarded).
   * @throws OutboundRefused for a refused target; Error for a network failure or `signal` aborting
   */
  async post(url: string, init: { headers: Record<string, string>; body: string; signal: AbortSignal; maxBytes: number }): Promise<OutboundResponse> {
    const target = await this.resolve(url);
    init.signal.throwIfAborted();
    const u = target.url;
    const isIpHost = ipaddr.isValid(u.hostname.replace(/^\[|\]$/g, ''));
    const options: https.RequestOptions = {
      method: 'POST',
      host: target.address,
      family: target.family,
      port: target.port,
      path: `${u.pathname}${u.search}`,
      headers: { ...init.headers, host: u.host, 'content-length': String(Buffer.byteLength(init.body)) },
      signal: init.signal,
      agent: false,
      // TLS: the certificate is checked against the URL's host name, not the address.
      ...(u.protocol === 'https:' && !isIpHost ? { servername: u.hostname } : {}),
    };
    const mod = u.protocol === 'https:' ? https : http;
    return new Promise<OutboundResponse>((resolve, reject) => {
      const req = mod.request(options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let over = false;
        res.on('data', (c: Buffer) => {
          if (over) return;
          size += c.length;
          if (size > init.maxBytes) {
            over = true;
            res.destroy();
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: undefined });
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (e) => (over ? undefined : reject(e)));
      });
      req.on('error', reject);
      req.end(init.body);
    });
  }
}
