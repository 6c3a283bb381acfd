/**
 * The request log of the console (issue 12 item 1, "Requests"): the last N requests in
 * memory, a ring buffer (setting `requestLogSize`, env `STRATUS_REQUEST_LOG_SIZE`, default
 * 1,000; 0 turns it off). Recorded when the response ends ({@link loggedResponseClass}: the
 * servers' `ServerResponse` records in `end`, after Node wrote the head, so the entry holds the
 * head exactly as sent, every plugin's headers included) — no Fastify hook and no `finish`
 * listener per request. No copies of large bodies (bodies are kept only when small,
 * {@link maxLoggedBodyBytes}), secrets redacted before anything is shown (bearer tokens,
 * `client_secret`, `password`, `access_token`, `refresh_token`, `id_token`, `assertion`,
 * `code`, cookies, the control key).
 *
 * The console's own requests (`/_stratus/console…`, `/_stratus/requests…`) and requests the
 * console makes in-process (header {@link consoleInternalHeader}) are not recorded.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { familyOf, familyOfPath } from './family.ts';
import { ByteRing } from './byte-ring.ts';
import { bodyText, callerOf, headerRecord, headTextRecord, maxLoggedBodyBytes, rawHeaderRecord, redactUrl } from './request-log-text.ts';
import { newRequestUuid } from './ids.ts';

export { maxLoggedBodyBytes };


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

/** True for paths of the console and the request log itself (not recorded). */
export function isConsolePath(path: string): boolean {
  const p = path.toLowerCase();
  return p.startsWith('/_stratus/console') || p.startsWith('/_stratus/requests');
}

/** Byte lengths of a record's fields, in this order, in {@link RequestLog}'s `lengths` (six a slot). */
const enum Field {
  Id,
  Url,
  RequestHead,
  ResponseHead,
  RequestBody,
  ResponseBody,
}
const fieldCount = 6;

/** How a record's request or response body was kept. */
const enum BodyKind {
  None,
  Text,
  Binary,
  /** A note said instead of the body (too large, or of unknown size). */
  Note,
  /** A body held by reference: a string or buffer a cache keeps anyway ({@link RequestLog.heldBody}). */
  Held,
}

/**
 * The ring buffer and its live subscribers.
 *
 * What the request path keeps of a finished request is numbers and bytes: the numbers in typed
 * arrays, and the request id, URL, request head (Node's `rawHeaders`), response head (the head
 * text Node wrote) and small bodies copied into one preallocated {@link ByteRing} of
 * `size` × {@link bytesPerEntry} bytes. No string or array made for the request is held past
 * it, so all of them die young. Measured (bench/README.md, fifth pass): holding the header
 * arrays and body strings by reference cost a webhook GET about 10 µs of CPU, mostly in
 * garbage collection. Redaction, JWT decoding, header records and body text are made when the
 * entry is first read ({@link RequestLog.list}, {@link RequestLog.get}, a live subscriber). An
 * entry whose bytes were overwritten (requests with large heads or bodies use more than their
 * share of the ring) is no longer listed.
 */
export class RequestLog {
  private next = 0;
  private seq = 0;
  private readonly ring: ByteRing;
  private readonly seqs: Float64Array;
  private readonly times: Float64Array;
  private readonly durations: Float64Array;
  private readonly statuses: Uint16Array;
  /** Absolute start of each slot's record in {@link ring}. */
  private readonly starts: Float64Array;
  /** Byte length of each field ({@link Field}) of each slot's record. */
  private readonly lengths: Uint32Array;
  /** Per slot: the response head's kind (0 head text, 1 header record as JSON), then the two {@link BodyKind}s. */
  private readonly kinds: Uint8Array;
  private readonly families: string[];
  private readonly methods: string[];
  /** The entry made from a slot (once), until the slot is reused. */
  private readonly entries: (RequestEntry | undefined)[];
  /** The response body of a slot held by reference ({@link BodyKind.Held}), else undefined. */
  private readonly heldBodies: (string | Buffer | undefined)[];
  private readonly listeners = new Set<(e: RequestEntry) => void>();
  /** Called when an entry could not be recorded (the app logs a warning); the request is unaffected. */
  onError: (e: Error, requestId: string) => void = () => undefined;
  /** Value of {@link consoleInternalHeader} on the console's in-process requests (random per process). */
  readonly internalToken = randomBytes(16).toString('base64url');

  /** @param size entries kept (0: nothing recorded). */
  constructor(
    readonly size: number,
    private readonly controlKey: string,
  ) {
    this.ring = new ByteRing(size === 0 ? 0 : Math.max(size * bytesPerEntry, 1024 * 1024));
    this.seqs = new Float64Array(size);
    this.times = new Float64Array(size);
    this.durations = new Float64Array(size);
    this.statuses = new Uint16Array(size);
    this.starts = new Float64Array(size);
    this.lengths = new Uint32Array(size * fieldCount);
    this.kinds = new Uint8Array(size * 3);
    this.families = new Array(size);
    this.methods = new Array(size);
    this.entries = new Array(size);
    this.heldBodies = new Array(size);
  }

  /**
   * Tells the log that `raw`'s response body will be `body`, which a cache keeps anyway (a kept
   * mail or resource-manager answer): the entry then holds it by reference instead of copying it
   * into the ring. Holding a body made for one request would move it to the old generation (the
   * reason for the ring, see the class note); a kept one is there already, or off the heap. At
   * most {@link size} such bodies are held past their cache's eviction (1,000 by default, each at
   * most 64 KiB).
   */
  heldBody(raw: http.IncomingMessage, body: string | Buffer): void {
    if (this.size > 0) (raw as unknown as RequestMarks)[heldKey] = body;
  }

  /** Entries newest first, filtered. */
  list(f: RequestFilter = {}): RequestEntry[] {
    const out: RequestEntry[] = [];
    const limit = f.limit ?? this.size;
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const slot = (this.next - i + this.size * 2) % this.size;
      if (this.seqs[slot] === 0) break;
      const e = this.materialise(slot);
      if (!e) break;
      if (matches(e, f)) out.push(e);
    }
    return out;
  }

  /** The entry with this request id, while it is still in the buffer. */
  get(id: string): RequestEntry | undefined {
    for (let slot = 0; slot < this.size; slot++) {
      if (this.seqs[slot] === 0 || !this.ring.intact(this.starts[slot]!)) continue;
      const made = this.entries[slot];
      if (made ? made.id === id : this.lengths[slot * fieldCount] === id.length && this.ring.readLatin1(this.starts[slot]!, id.length) === id) return this.materialise(slot);
    }
    return undefined;
  }

  /** Calls `fn` for every new entry until the returned function is called. */
  subscribe(fn: (e: RequestEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Copies what a finished request's entry is made of into the ring (no redaction yet),
   * overwriting the oldest when full. `id` is the request id; `req` is the Fastify request when
   * the request reached the hooks (else the entry is made from the raw request alone: no
   * body); `res` has ended; `responseBody` is the small body it ended with, if any.
   */
  record(raw: http.IncomingMessage, id: string, req: FastifyRequest | undefined, res: http.ServerResponse, responseBody: unknown): void {
    if (this.size === 0) return;
    const slot = this.next;
    this.next = (slot + 1) % this.size;
    // A body is kept only when it is known to be small; else only a note of its size.
    const body = req?.body;
    let requestBody: string | Buffer | undefined;
    let requestKind = BodyKind.None;
    if (typeof body === 'string' || Buffer.isBuffer(body)) {
      if (body.length <= maxLoggedBodyBytes) [requestBody, requestKind] = [body, typeof body === 'string' ? BodyKind.Text : BodyKind.Binary];
      else [requestBody, requestKind] = [`[${body.length} ${typeof body === 'string' ? 'characters' : 'bytes'}, not kept]`, BodyKind.Note];
    } else if (body !== undefined && body !== null) {
      const declared = raw.headers['content-length'];
      const reqLen = declared !== undefined ? Number(declared) : undefined;
      if (reqLen !== undefined && reqLen <= maxLoggedBodyBytes) [requestBody, requestKind] = [parsedBodyText(body, raw.headers['content-type'] ?? ''), BodyKind.Text];
      else [requestBody, requestKind] = [reqLen !== undefined ? `[${reqLen} bytes, not kept]` : '[body of unknown size, not kept]', BodyKind.Note];
    }
    const marks = raw as unknown as RequestMarks;
    const held = marks[heldKey];
    const kind = typeof responseBody === 'string' ? BodyKind.Text : Buffer.isBuffer(responseBody) ? BodyKind.Binary : BodyKind.None;
    const responseKind = held !== undefined && responseBody === held ? BodyKind.Held : kind;
    this.heldBodies[slot] = responseKind === BodyKind.Held ? held : undefined;
    const written = (res as unknown as { _header?: unknown })._header;
    const head = typeof written === 'string' ? written : JSON.stringify(res.getHeaders());
    const url = raw.url ?? '/';
    const rawHeaders = raw.rawHeaders.join('\n');
    const bodySize = (b: string | Buffer | undefined) => (b === undefined ? 0 : typeof b === 'string' ? 3 * b.length : b.length);
    const ring = this.ring;
    const start = ring.begin(id.length + url.length + rawHeaders.length + (typeof written === 'string' ? 1 : 3) * head.length + bodySize(requestBody) + (responseKind === BodyKind.Held ? 0 : bodySize(responseBody as string | Buffer | undefined)));
    const f = slot * fieldCount;
    this.starts[slot] = start;
    if (start >= 0) {
      // Id, URL and request head are Latin-1 text (one byte a character), and so is a head Node
      // wrote: written in one call (each call into the buffer costs more than the copy).
      this.lengths[f + Field.Id] = id.length;
      this.lengths[f + Field.Url] = url.length;
      this.lengths[f + Field.RequestHead] = rawHeaders.length;
      if (typeof written === 'string') {
        ring.latin1(id + url + rawHeaders + head);
        this.lengths[f + Field.ResponseHead] = head.length;
      } else {
        ring.latin1(id + url + rawHeaders);
        this.lengths[f + Field.ResponseHead] = ring.utf8(head);
      }
      this.lengths[f + Field.RequestBody] = requestBody === undefined ? 0 : typeof requestBody === 'string' ? ring.utf8(requestBody) : ring.bytes(requestBody);
      this.lengths[f + Field.ResponseBody] = responseKind === BodyKind.Text ? ring.utf8(responseBody as string) : responseKind === BodyKind.Binary ? ring.bytes(responseBody as Buffer) : 0;
    }
    this.kinds[slot * 3] = typeof written === 'string' ? 0 : 1;
    this.kinds[slot * 3 + 1] = requestKind;
    this.kinds[slot * 3 + 2] = responseKind;
    this.seqs[slot] = ++this.seq;
    this.times[slot] = Date.now();
    this.durations[slot] = Math.round((performance.now() - (marks[startKey] ?? performance.now())) * 100) / 100;
    this.statuses[slot] = res.statusCode;
    this.families[slot] = req ? familyOf(req) : familyOfPath(url.split('?')[0]!);
    this.methods[slot] = raw.method ?? 'GET';
    this.entries[slot] = undefined;
    if (this.listeners.size) {
      const entry = this.materialise(slot);
      if (entry) for (const l of this.listeners) l(entry);
    }
  }

  /** The redacted entry of a slot, made once; undefined when its bytes were overwritten. */
  private materialise(slot: number): RequestEntry | undefined {
    const made = this.entries[slot];
    if (made) return made;
    const start = this.starts[slot]!;
    if (!this.ring.intact(start)) return undefined;
    const ring = this.ring;
    const f = slot * fieldCount;
    const at: number[] = [];
    for (let i = 0, p = start; i < fieldCount; p += this.lengths[f + i]!, i++) at.push(p);
    const len = (i: Field) => this.lengths[f + i]!;
    const body = (i: Field, kind: number): string | Buffer | undefined =>
      kind === BodyKind.Held ? this.heldBodies[slot] : kind === BodyKind.Binary ? ring.readBytes(at[i]!, len(i)) : kind !== BodyKind.None ? ring.readUtf8(at[i]!, len(i)) : undefined;
    const k = this.controlKey;
    const url = ring.readLatin1(at[Field.Url]!, len(Field.Url));
    const path = url.split('?')[0]!;
    const rawHeaders = ring.readLatin1(at[Field.RequestHead]!, len(Field.RequestHead));
    const requestHeaders = rawHeaderRecord(rawHeaders === '' ? [] : rawHeaders.split('\n'));
    const responseHeaders =
      this.kinds[slot * 3] === 0 ? headTextRecord(ring.readLatin1(at[Field.ResponseHead]!, len(Field.ResponseHead))) : headerRecord(JSON.parse(ring.readUtf8(at[Field.ResponseHead]!, len(Field.ResponseHead))), '');
    const length = (v: string | undefined) => (v !== undefined && v !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);
    const requestKind = this.kinds[slot * 3 + 1]!;
    const requestBody = body(Field.RequestBody, requestKind);
    const entry: RequestEntry = {
      seq: this.seqs[slot]!,
      id: ring.readLatin1(at[Field.Id]!, len(Field.Id)),
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
      requestBody: requestKind === BodyKind.Note ? (requestBody as string) : bodyText(requestBody, requestHeaders['content-type'] ?? '', length(requestHeaders['content-length']), k),
      responseBody: bodyText(body(Field.ResponseBody, this.kinds[slot * 3 + 2]!), responseHeaders['content-type'] ?? '', length(responseHeaders['content-length']), k),
    };
    this.entries[slot] = entry;
    return entry;
  }
}

/** Ring bytes per entry of the request log: room for a typical request and answer with small bodies (larger ones take several entries' share). */
const bytesPerEntry = 8 * 1024;

/** A parsed request body as text (form fields as a query string, else JSON); a note when it cannot be written. */
function parsedBodyText(body: unknown, contentType: string): string {
  try {
    return /form/i.test(contentType) ? new URLSearchParams(body as Record<string, string>).toString() : (JSON.stringify(body) ?? '');
  } catch {
    return '[body not kept]';
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

/** What the request log marks on a raw request: its id and start (set by {@link newRequestId}), its Fastify request ({@link linkRequest}) and a held body ({@link RequestLog.heldBody}). */
type RequestMarks = { [idKey]?: string; [startKey]?: number; [requestKey]?: FastifyRequest; [heldKey]?: string | Buffer };
const idKey = Symbol('stratus.requestId');
const startKey = Symbol('stratus.requestStart');
const heldKey = Symbol('stratus.heldBody');
const requestKey = Symbol('stratus.request');

/**
 * The app's `genReqId`: a new request id (a UUID), marked on the raw request with the time the
 * request was routed (the request log's id and duration).
 */
export function newRequestId(raw: http.IncomingMessage): string {
  const marks = raw as unknown as RequestMarks;
  marks[startKey] = performance.now();
  // Set on every request (see RequestLog.heldBody), so that the raw requests keep one shape.
  marks[heldKey] = undefined;
  return (marks[idKey] = newRequestUuid());
}

/**
 * Links a request to its raw request, so that the log's entry has its body and family: called
 * first by the app's one `onRequest` hook (http/guards.ts). A request that never reaches the
 * hooks (the router refused its URL) is still recorded, from the raw request alone.
 */
export function linkRequest(req: FastifyRequest): void {
  (req.raw as unknown as RequestMarks)[requestKey] = req;
}

/**
 * The `ServerResponse` class of the app's servers when the log is on: `end` records the
 * request after Node wrote the head. Nothing is recorded for the console's own requests.
 */
export function loggedResponseClass(log: RequestLog): typeof http.ServerResponse {
  class LoggedResponse extends http.ServerResponse {
    override end(...args: unknown[]): this {
      const out = (super.end as (...a: unknown[]) => this)(...args);
      const raw = this.req as http.IncomingMessage & RequestMarks;
      const id = raw[idKey];
      if (id === undefined) return out;
      const req = raw[requestKey];
      raw[idKey] = undefined;
      raw[requestKey] = undefined;
      const url = raw.url ?? '/';
      if (raw.headers[consoleInternalHeader] === log.internalToken || isConsolePath(url.split('?')[0]!)) return out;
      const body = typeof args[0] === 'function' ? undefined : args[0];
      try {
        log.record(raw, id, req, this, (typeof body === 'string' || Buffer.isBuffer(body)) && body.length <= maxLoggedBodyBytes ? body : undefined);
      } catch (e) {
        log.onError(e as Error, id);
      }
      raw[heldKey] = undefined;
      return out;
    }
  }
  return LoggedResponse as unknown as typeof http.ServerResponse;
}
