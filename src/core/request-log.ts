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

/**
 * What the request path keeps of a finished request: references and numbers only. Redaction,
 * JWT decoding, header copies and body text are made when the entry is first read
 * ({@link RequestLog.list}, {@link RequestLog.get}, a live subscriber), so a request nobody
 * looks at costs a few field copies.
 */
interface RawEntry {
  seq: number;
  id: string;
  timeMs: number;
  family: string;
  method: string;
  url: string;
  status: number;
  durationMs: number;
  requestHeaders: Record<string, unknown>;
  responseHeaders: Record<string, unknown>;
  requestBody: unknown;
  /** Said instead of the body when it was not kept (too large, or of unknown size). */
  requestNote: string | undefined;
  requestType: string;
  requestLength: number | undefined;
  responseBody: unknown;
  responseType: string;
  responseLength: number | undefined;
  entry?: RequestEntry;
}

/** The ring buffer and its live subscribers. */
export class RequestLog {
  private readonly ring: (RawEntry | undefined)[];
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
  private add(raw: RawEntry): void {
    if (this.size === 0) return;
    this.ring[this.next] = raw;
    this.next = (this.next + 1) % this.size;
    if (this.listeners.size) {
      const entry = this.materialise(raw);
      for (const l of this.listeners) l(entry);
    }
  }

  /** Entries newest first, filtered. */
  list(f: RequestFilter = {}): RequestEntry[] {
    const out: RequestEntry[] = [];
    const limit = f.limit ?? this.size;
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const raw = this.ring[(this.next - i + this.size * 2) % this.size];
      if (!raw) break;
      const e = this.materialise(raw);
      if (matches(e, f)) out.push(e);
    }
    return out;
  }

  /** The entry with this request id, while it is still in the buffer. */
  get(id: string): RequestEntry | undefined {
    for (const raw of this.ring) if (raw && raw.id === id) return this.materialise(raw);
    return undefined;
  }

  /** Calls `fn` for every new entry until the returned function is called. */
  subscribe(fn: (e: RequestEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Keeps what a finished request's entry is made of (no redaction or copies of text yet). */
  record(req: FastifyRequest, reply: FastifyReply, responseBody: unknown): void {
    if (this.size === 0) return;
    const reqLen = req.headers['content-length'] !== undefined ? Number(req.headers['content-length']) : undefined;
    const resLenHeader = reply.getHeader('content-length');
    // A body is kept by reference only when it is known to be small; else only a note of its size.
    const body = req.body;
    let requestBody: unknown;
    let requestNote: string | undefined;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      if (body.length <= maxLoggedBodyBytes) requestBody = body;
      else requestNote = `[${body.length} ${typeof body === 'string' ? 'characters' : 'bytes'}, not kept]`;
    } else if (body !== undefined && body !== null) {
      if (reqLen !== undefined && reqLen <= maxLoggedBodyBytes) requestBody = body;
      else requestNote = reqLen !== undefined ? `[${reqLen} bytes, not kept]` : '[body of unknown size, not kept]';
    }
    this.add({
      seq: ++this.seq,
      id: req.id,
      timeMs: Date.now(),
      family: familyOf(req),
      method: req.method,
      url: req.raw.url ?? req.url,
      status: reply.statusCode,
      durationMs: Math.round(reply.elapsedTime * 100) / 100,
      requestHeaders: req.headers as Record<string, unknown>,
      responseHeaders: reply.getHeaders() as Record<string, unknown>,
      requestBody,
      requestNote,
      requestType: String(req.headers['content-type'] ?? ''),
      requestLength: reqLen,
      responseBody,
      responseType: String(reply.getHeader('content-type') ?? ''),
      responseLength: resLenHeader !== undefined ? Number(resLenHeader) : undefined,
    });
  }

  /** The redacted entry of a raw record, made once. */
  private materialise(raw: RawEntry): RequestEntry {
    if (raw.entry) return raw.entry;
    const k = this.controlKey;
    const path = raw.url.split('?')[0]!;
    const auth = raw.requestHeaders.authorization;
    raw.entry = {
      seq: raw.seq,
      id: raw.id,
      time: new Date(raw.timeMs).toISOString(),
      family: raw.family,
      method: raw.method,
      url: redactUrl(raw.url, k),
      path: redactUrl(path, k),
      status: raw.status,
      durationMs: raw.durationMs,
      ...callerOf(typeof auth === 'string' ? auth : undefined),
      requestHeaders: headerRecord(raw.requestHeaders, k),
      responseHeaders: headerRecord(raw.responseHeaders, k),
      requestBody: raw.requestNote ?? bodyText(raw.requestBody, raw.requestType, raw.requestLength, k),
      responseBody: bodyText(raw.responseBody, raw.responseType, raw.responseLength, k),
    };
    // The references are no longer needed once the entry is made.
    raw.requestHeaders = raw.responseHeaders = {};
    raw.requestBody = raw.responseBody = undefined;
    return raw.entry;
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
  // The small response payload rides on the request (a symbol property: cheaper than a WeakMap).
  const keptKey = Symbol('stratus.loggedPayload');
  type Kept = { [keptKey]?: unknown };
  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onSend', (req, _reply, payload, done) => {
    if ((typeof payload === 'string' || Buffer.isBuffer(payload)) && payload.length <= maxLoggedBodyBytes) (req as unknown as Kept)[keptKey] = payload;
    done(null, payload);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const path = (req.raw.url ?? req.url).split('?')[0]!;
    if (req.headers[consoleInternalHeader] !== log.internalToken && !isConsolePath(path)) {
      try {
        log.record(req, reply, (req as unknown as Kept)[keptKey]);
      } catch (e) {
        req.log.warn({ err: e, reqId: req.id }, 'request log entry failed');
      }
    }
    done();
  });
}
