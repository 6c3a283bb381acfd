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

/** The request headers of Node's `rawHeaders` (names lower-cased, repeated names joined with `, `). */
function rawHeaderRecord(raw: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    out[name] = out[name] === undefined ? raw[i + 1]! : `${out[name]}, ${raw[i + 1]}`;
  }
  return out;
}

/** The headers of a response head as written (`HTTP/1.1 200 OK\r\nName: value\r\n…`). */
function headTextRecord(head: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  }
  return out;
}

/**
 * The ring buffer and its live subscribers.
 *
 * What the request path keeps of a finished request is references and numbers only, in one
 * column per field (typed arrays for the numbers, arrays of references for the rest): no object
 * is made per request. Measured (bench/README.md, fourth pass), one retained entry object and a
 * copy of the response headers per request cost about a sixth of `/_stratus/health`'s throughput,
 * mostly in garbage collection. The request headers are Node's `rawHeaders` array and the response headers the
 * head text Node wrote; redaction, JWT decoding, header records and body text are made when the
 * entry is first read ({@link RequestLog.list}, {@link RequestLog.get}, a live subscriber).
 */
export class RequestLog {
  private next = 0;
  private seq = 0;
  private readonly seqs: Float64Array;
  private readonly times: Float64Array;
  private readonly durations: Float64Array;
  private readonly statuses: Uint16Array;
  private readonly ids: (string | undefined)[];
  private readonly families: string[];
  private readonly methods: string[];
  private readonly urls: string[];
  /** Node's `rawHeaders` of the request. */
  private readonly requestHeads: (readonly string[])[];
  /** The response head as written, or the reply's header record when the head text is not at hand. */
  private readonly responseHeads: (string | Record<string, unknown>)[];
  private readonly requestBodies: unknown[];
  /** Said instead of the request body when it was not kept (too large, or of unknown size). */
  private readonly requestNotes: (string | undefined)[];
  private readonly responseBodies: unknown[];
  /** The entry made from a slot (once), until the slot is reused. */
  private readonly entries: (RequestEntry | undefined)[];
  private readonly listeners = new Set<(e: RequestEntry) => void>();
  /** Value of {@link consoleInternalHeader} on the console's in-process requests (random per process). */
  readonly internalToken = randomBytes(16).toString('base64url');

  /** @param size entries kept (0: nothing recorded). */
  constructor(
    readonly size: number,
    private readonly controlKey: string,
  ) {
    this.seqs = new Float64Array(size);
    this.times = new Float64Array(size);
    this.durations = new Float64Array(size);
    this.statuses = new Uint16Array(size);
    this.ids = new Array(size);
    this.families = new Array(size);
    this.methods = new Array(size);
    this.urls = new Array(size);
    this.requestHeads = new Array(size);
    this.responseHeads = new Array(size);
    this.requestBodies = new Array(size);
    this.requestNotes = new Array(size);
    this.responseBodies = new Array(size);
    this.entries = new Array(size);
  }

  /** Entries newest first, filtered. */
  list(f: RequestFilter = {}): RequestEntry[] {
    const out: RequestEntry[] = [];
    const limit = f.limit ?? this.size;
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const slot = (this.next - i + this.size * 2) % this.size;
      if (this.ids[slot] === undefined) break;
      const e = this.materialise(slot);
      if (matches(e, f)) out.push(e);
    }
    return out;
  }

  /** The entry with this request id, while it is still in the buffer. */
  get(id: string): RequestEntry | undefined {
    const slot = this.ids.indexOf(id);
    return slot < 0 ? undefined : this.materialise(slot);
  }

  /** Calls `fn` for every new entry until the returned function is called. */
  subscribe(fn: (e: RequestEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Keeps what a finished request's entry is made of (no redaction or copies of text yet), overwriting the oldest when full. */
  record(req: FastifyRequest, reply: FastifyReply, responseBody: unknown): void {
    if (this.size === 0) return;
    const slot = this.next;
    this.next = (slot + 1) % this.size;
    // A body is kept by reference only when it is known to be small; else only a note of its size.
    const body = req.body;
    let requestBody: unknown;
    let requestNote: string | undefined;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      if (body.length <= maxLoggedBodyBytes) requestBody = body;
      else requestNote = `[${body.length} ${typeof body === 'string' ? 'characters' : 'bytes'}, not kept]`;
    } else if (body !== undefined && body !== null) {
      const declared = req.headers['content-length'];
      const reqLen = declared !== undefined ? Number(declared) : undefined;
      if (reqLen !== undefined && reqLen <= maxLoggedBodyBytes) requestBody = body;
      else requestNote = reqLen !== undefined ? `[${reqLen} bytes, not kept]` : '[body of unknown size, not kept]';
    }
    const head = (reply.raw as unknown as { _header?: unknown })._header;
    this.seqs[slot] = ++this.seq;
    this.times[slot] = Date.now();
    this.durations[slot] = Math.round(reply.elapsedTime * 100) / 100;
    this.statuses[slot] = reply.statusCode;
    this.ids[slot] = req.id;
    this.families[slot] = familyOf(req);
    this.methods[slot] = req.method;
    this.urls[slot] = req.raw.url ?? req.url;
    this.requestHeads[slot] = req.raw.rawHeaders;
    this.responseHeads[slot] = typeof head === 'string' ? head : (reply.getHeaders() as Record<string, unknown>);
    this.requestBodies[slot] = requestBody;
    this.requestNotes[slot] = requestNote;
    this.responseBodies[slot] = responseBody;
    this.entries[slot] = undefined;
    if (this.listeners.size) {
      const entry = this.materialise(slot);
      for (const l of this.listeners) l(entry);
    }
  }

  /** The redacted entry of a slot, made once. */
  private materialise(slot: number): RequestEntry {
    const made = this.entries[slot];
    if (made) return made;
    const k = this.controlKey;
    const url = this.urls[slot]!;
    const path = url.split('?')[0]!;
    const requestHeaders = rawHeaderRecord(this.requestHeads[slot]!);
    const head = this.responseHeads[slot]!;
    const responseHeaders = typeof head === 'string' ? headTextRecord(head) : headerRecord(head, '');
    const length = (v: string | undefined) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
    const entry: RequestEntry = {
      seq: this.seqs[slot]!,
      id: this.ids[slot]!,
      time: new Date(this.times[slot]!).toISOString(),
      family: this.families[slot]!,
      method: this.methods[slot]!,
      url: redactUrl(url, k),
      path: redactUrl(path, k),
      status: this.statuses[slot]!,
      durationMs: this.durations[slot]!,
      ...callerOf(requestHeaders.authorization),
      requestHeaders: headerRecord(requestHeaders, k),
      responseHeaders: headerRecord(responseHeaders, k),
      requestBody: this.requestNotes[slot] ?? bodyText(this.requestBodies[slot], requestHeaders['content-type'] ?? '', length(requestHeaders['content-length']), k),
      responseBody: bodyText(this.responseBodies[slot], responseHeaders['content-type'] ?? '', length(responseHeaders['content-length']), k),
    };
    this.entries[slot] = entry;
    // The references are no longer needed once the entry is made.
    this.requestHeads[slot] = [];
    this.responseHeads[slot] = '';
    this.requestBodies[slot] = this.responseBodies[slot] = undefined;
    return entry;
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
