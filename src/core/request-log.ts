/**
 * The request log of the console (issue 12 item 1, "Requests"): the last N requests in
 * memory, a ring buffer (setting `requestLogSize`, env `STRATUS_REQUEST_LOG_SIZE`, default
 * 1,000; 0 turns it off). Recorded in an `onResponse` hook: no copies of large bodies (bodies
 * are kept only when small, {@link maxLoggedBodyBytes}), secrets redacted before anything is
 * stored (bearer tokens, `client_secret`, `password`, `access_token`, `refresh_token`,
 * `id_token`, `assertion`, `code`, cookies, the control key).
 *
 * The console's own requests (`/_stratus/console…`, `/_stratus/requests…`) and requests the
 * console makes in-process (header {@link consoleInternalHeader}) are not recorded.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { familyOf } from './family.ts';

/** Bodies larger than this (bytes) are not kept; the entry says how large they were. */
export const maxLoggedBodyBytes = 8 * 1024;

/** Header the console sets on its in-process requests (`app.inject`) so they stay out of the log. */
export const consoleInternalHeader = 'x-stratus-console-internal';

/** One logged request. Times are ISO 8601 UTC (wall clock, not the test clock). */
export interface RequestEntry {
  /** Sequence number, increasing from 1 for the life of the process. */
  seq: number;
  /** The request id (the `request-id` / `x-vendor-request-id` / `RequestId` header of the answer). */
  id: string;
  time: string;
  family: string;
  method: string;
  /** Path and query as sent. Query values named like secrets are redacted. */
  url: string;
  /** Path without the query. */
  path: string;
  status: number;
  /** Duration in milliseconds (two decimals). */
  durationMs: number;
  /** `appid`/`azp` of the bearer token, when it carries one (decoded, not verified: for display only). */
  appId?: string;
  /** `upn`/`preferred_username` of the bearer token, when it carries one. */
  upn?: string;
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string>;
  /** The request body as text (redacted), when small and textual; else a note. */
  requestBody?: string;
  /** The response body as text (redacted), when small and textual; else a note. */
  responseBody?: string;
}

/** Filters of {@link RequestLog.list}. */
export interface RequestFilter {
  family?: string;
  /** `403`, or a class: `4xx`, `5xx`. */
  status?: string;
  /** Case-insensitive text searched in method, path, caller and request id. */
  q?: string;
  /** At most this many entries (newest first). */
  limit?: number;
}

const secretNames = /^(client_secret|password|access_token|refresh_token|id_token|assertion|client_assertion|code|code_verifier|key|token|secret|sig|signature)$/i;
const secretHeaders = new Set(['authorization', 'cookie', 'set-cookie', 'proxy-authorization', 'x-vendor-control-key']);

/** Redacts secret-named fields in JSON or form text and the control key anywhere in it. */
export function redactText(text: string, controlKey: string, contentType = ''): string {
  let out = text;
  if (/json/i.test(contentType) || /^\s*[[{]/.test(text)) {
    out = out.replace(/("(?:client_secret|password|access_token|refresh_token|id_token|assertion|client_assertion|code_verifier|secret)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi, '$1"[redacted]"');
  }
  if (/x-www-form-urlencoded/i.test(contentType) || (!/json/i.test(contentType) && /^[\w.%-]+=[^&]*(&[\w.%-]+=[^&]*)*$/.test(text.trim()))) {
    out = out.replace(/(^|&)([^=&]+)=([^&]*)/g, (m, sep: string, name: string) => (secretNames.test(safeDecode(name)) ? `${sep}${name}=[redacted]` : m));
  }
  if (controlKey) out = out.split(controlKey).join('[control key]');
  return out.replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '[token]');
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** Redacts secret-named query values of a URL (path and query). */
export function redactUrl(url: string, controlKey: string): string {
  const i = url.indexOf('?');
  if (i < 0) return url;
  const query = url.slice(i + 1).replace(/(^|&)([^=&]+)=([^&]*)/g, (m, sep: string, name: string) => (secretNames.test(safeDecode(name)) ? `${sep}${name}=[redacted]` : m));
  return redactText(url.slice(0, i + 1) + query, controlKey, 'text/plain');
}

function headerRecord(h: Record<string, unknown>, controlKey: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    const name = k.toLowerCase();
    const value = Array.isArray(v) ? v.join(', ') : String(v);
    if (secretHeaders.has(name)) out[name] = name === 'authorization' ? value.replace(/^(\w+)\s.*$/s, '$1 [redacted]') : '[redacted]';
    else out[name] = controlKey ? value.split(controlKey).join('[control key]') : value;
  }
  return out;
}

/** `appid`/`upn` of a bearer token's payload, decoded without verification (display only). */
export function callerOf(authorization: string | undefined): { appId?: string; upn?: string } {
  if (!authorization) return {};
  const m = /^Bearer\s+[\w-]+\.([\w-]+)\.[\w-]*\s*$/i.exec(authorization);
  if (!m) return {};
  try {
    const p = JSON.parse(Buffer.from(m[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
    return { appId: str(p.appid) ?? str(p.azp), upn: str(p.upn) ?? str(p.preferred_username) ?? str(p.unique_name) };
  } catch {
    return {};
  }
}

function bodyText(body: unknown, contentType: string, length: number | undefined, controlKey: string): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (length !== undefined && length > maxLoggedBodyBytes) return `[${length} bytes, not kept]`;
  if (typeof body === 'string') return body.length > maxLoggedBodyBytes ? `[${body.length} characters, not kept]` : redactText(body, controlKey, contentType);
  if (Buffer.isBuffer(body)) {
    if (body.length > maxLoggedBodyBytes) return `[${body.length} bytes, not kept]`;
    return /json|text|xml|form/i.test(contentType) ? redactText(body.toString('utf8'), controlKey, contentType) : `[${body.length} bytes of ${contentType || 'binary'}]`;
  }
  if (typeof body === 'object') {
    // A parsed body whose size is known small (content-length checked above): serialising it is cheap.
    if (length === undefined) return '[body of unknown size, not kept]';
    const text = /form/i.test(contentType) ? new URLSearchParams(body as Record<string, string>).toString() : JSON.stringify(body);
    return redactText(text, controlKey, contentType);
  }
  return undefined;
}

/** True for paths of the console and the request log itself (not recorded). */
export function isConsolePath(path: string): boolean {
  const p = path.toLowerCase();
  return p.startsWith('/_stratus/console') || p.startsWith('/_stratus/requests');
}

/** The ring buffer and its live subscribers. */
export class RequestLog {
  private readonly ring: (RequestEntry | undefined)[];
  private next = 0;
  private seq = 0;
  private readonly listeners = new Set<(e: RequestEntry) => void>();
  /** Value of {@link consoleInternalHeader} on the console's in-process requests (random per process). */
  readonly internalToken = randomBytes(16).toString('base64url');

  /** @param size entries kept (0: nothing recorded). */
  constructor(
    readonly size: number,
    private readonly controlKey: string,
  ) {
    this.ring = new Array(size);
  }

  /** Adds an entry (overwriting the oldest when full) and tells the subscribers. */
  add(e: Omit<RequestEntry, 'seq'>): RequestEntry {
    const entry = { seq: ++this.seq, ...e };
    if (this.size === 0) return entry;
    this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.size;
    for (const l of this.listeners) l(entry);
    return entry;
  }

  /** Entries newest first, filtered. */
  list(f: RequestFilter = {}): RequestEntry[] {
    const out: RequestEntry[] = [];
    const limit = f.limit ?? this.size;
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const e = this.ring[(this.next - i + this.size * 2) % this.size];
      if (!e) break;
      if (matches(e, f)) out.push(e);
    }
    return out;
  }

  /** The entry with this request id, while it is still in the buffer. */
  get(id: string): RequestEntry | undefined {
    for (const e of this.ring) if (e && e.id === id) return e;
    return undefined;
  }

  /** Calls `fn` for every new entry until the returned function is called. */
  subscribe(fn: (e: RequestEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Builds the entry of a finished request (redacted). */
  record(req: FastifyRequest, reply: FastifyReply, responseBody: unknown): void {
    const url = req.raw.url ?? req.url;
    const path = url.split('?')[0]!;
    const reqType = String(req.headers['content-type'] ?? '');
    const resType = String(reply.getHeader('content-type') ?? '');
    const reqLen = req.headers['content-length'] !== undefined ? Number(req.headers['content-length']) : undefined;
    const resLenHeader = reply.getHeader('content-length');
    this.add({
      id: req.id,
      time: new Date().toISOString(),
      family: familyOf(req),
      method: req.method,
      url: redactUrl(url, this.controlKey),
      path: redactUrl(path, this.controlKey),
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      ...callerOf(req.headers.authorization),
      requestHeaders: headerRecord(req.headers as Record<string, unknown>, this.controlKey),
      responseHeaders: headerRecord(reply.getHeaders() as Record<string, unknown>, this.controlKey),
      requestBody: bodyText(req.body, reqType, reqLen, this.controlKey),
      responseBody: bodyText(responseBody, resType, resLenHeader !== undefined ? Number(resLenHeader) : undefined, this.controlKey),
    });
  }
}

function matches(e: RequestEntry, f: RequestFilter): boolean {
  if (f.family && e.family !== f.family) return false;
  if (f.status) {
    const s = f.status.toLowerCase();
    if (/^\dxx$/.test(s)) {
      if (Math.floor(e.status / 100) !== Number(s[0])) return false;
    } else if (String(e.status) !== s) return false;
  }
  if (f.q) {
    const q = f.q.toLowerCase();
    const hay = `${e.method} ${e.url} ${e.appId ?? ''} ${e.upn ?? ''} ${e.id} ${e.status}`.toLowerCase();
    if (!hay.includes(q)) return false;
  }
  return true;
}

/**
 * Registers the hooks that fill `log`: `onSend` keeps a small textual response payload,
 * `onResponse` records the entry. Nothing is recorded when the log's size is 0.
 */
export function registerRequestLog(app: FastifyInstance, log: RequestLog): void {
  if (log.size === 0) return;
  const kept = new WeakMap<FastifyRequest, unknown>();
  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onSend', (req, _reply, payload, done) => {
    if ((typeof payload === 'string' || Buffer.isBuffer(payload)) && payload.length <= maxLoggedBodyBytes) kept.set(req, payload);
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const path = (req.raw.url ?? req.url).split('?')[0]!;
    if (req.headers[consoleInternalHeader] !== log.internalToken && !isConsolePath(path)) {
      try {
        log.record(req, reply, kept.get(req));
      } catch (e) {
        req.log.warn({ err: e }, 'request log entry failed');
      }
    }
    done();
  });
}
