/**
 * Answers on the raw socket, before any request object exists (issue 11, item 4): Node's
 * parser failures (`clientError`) and `CONNECT`, rendered in the envelope of the family the
 * request line names; and the request-target helpers the app's URL rewriting shares.
 */
import http from 'node:http';
import { errors, renderError, type ApiError, type Family } from '../core/errors/index.ts';
import { familyOfPath } from '../core/family.ts';
import { isControlPath, isPublicControlRoute, normalizePath } from '../core/control-key.ts';
import { nowIso } from '../core/clock.ts';
import { newUuid } from '../core/ids.ts';

/** Most bytes of request line and headers a request may have (64 KiB). */
export const maxRequestHeadBytes = 64 * 1024;

/** The methods some route of some family answers; any other method is a 405 in the family's envelope. */
export const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The path of a request target in origin form (`/a?b`) or absolute form (`http://host/a?b`); `/` for anything else. */
export function pathOfTarget(target: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(.*)$/i.exec(target);
  const p = m ? m[1]! : target;
  return p.startsWith('/') ? p : '/';
}

/** The family of a raw request (no request object): a locked control route under any spelling is the control plane's, else by path. */
function familyOfRaw(method: string, target: string): Family {
  const p = pathOfTarget(target);
  const n = normalizePath(p);
  if (isControlPath(n) && !isPublicControlRoute(method, n)) return 'control';
  return familyOfPath(p.split('?')[0]!);
}

/** The request line (method and target) at the start of raw request bytes, as far as it arrived. */
function requestLineOf(raw: Buffer | undefined): { method: string; target: string; complete: boolean } {
  const text = raw ? raw.subarray(0, 8192).toString('latin1') : '';
  const end = text.indexOf('\n');
  const line = end >= 0 ? text.slice(0, end).replace(/\r$/, '') : text;
  const [method = '', target = '/'] = line.split(' ');
  return { method, target: pathOfTarget(target), complete: end >= 0 || (raw !== undefined && raw.length < 8192) };
}

/**
 * Writes a whole HTTP/1.1 response rendered in `family`'s envelope on a raw socket and closes it:
 * for failures Node's parser reports before any request object exists (issue 11, item 4).
 */
function writeRawError(socket: import('node:stream').Duplex, family: Family, err: ApiError): void {
  if (!socket.writable || (socket as { _stratusAnswered?: boolean })._stratusAnswered) {
    socket.destroy();
    return;
  }
  (socket as { _stratusAnswered?: boolean })._stratusAnswered = true;
  const requestId = newUuid();
  const r = renderError(family, err, { requestId, date: nowIso() });
  const body = r.body === undefined ? '' : JSON.stringify(r.body);
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...r.headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close', date: new Date().toUTCString() };
  if (family === 'arm' || family === 'datashare') headers['x-vendor-request-id'] = requestId;
  if (r.body === undefined) delete headers['content-type'];
  const head = [`HTTP/1.1 ${r.status} ${http.STATUS_CODES[r.status] ?? 'Error'}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join('\r\n');
  socket.end(`${head}\r\n\r\n${body}`);
  // Read and drop what the client still sends (the rest of a body), so closing does not reset the
  // connection before the client has read the answer; then close for good.
  socket.on('data', () => undefined);
  socket.resume();
  setTimeout(() => socket.destroy(), 2000).unref();
}

/**
 * Node's `clientError` (the request could not be parsed): the family is found from the raw
 * request line; over-long headers are 431 (414 when the request line itself did not fit),
 * an unknown method 405 (like the router's answer to a method no route has), anything else malformed (bad chunking, invalid header or URL bytes) 400.
 * A socket already answering a request, or closed, is just destroyed.
 */
export function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: import('node:stream').Duplex): void {
  const res = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
  if (res?.headersSent && !res.writableFinished && socket.writable) {
    // An answer is already on its way (the route answered before the broken body arrived): let it finish, then close.
    res.once('finish', () => socket.end());
    setTimeout(() => socket.destroy(), 2000).unref();
    return;
  }
  if (err.code === 'ECONNRESET' || !socket.writable || res?.headersSent) {
    socket.destroy();
    return;
  }
  // A request already dispatched (a bad chunk in its body) names its family by its URL; otherwise the raw request line does.
  const inFlight = res?.req;
  const line = requestLineOf(err.rawPacket);
  const family = inFlight?.url ? familyOfRaw(inFlight.method ?? 'GET', inFlight.url) : familyOfRaw(line.method, line.target);
  const e = errors[family];
  let apiError: ApiError;
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    apiError = line.complete ? e.headersTooLarge() : e.uriTooLong();
  } else if (err.code === 'HPE_INVALID_METHOD') apiError = e.methodNotAllowed({ method: line.method.slice(0, 32) });
  else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT' || err.code === 'HPE_HEADERS_TIMEOUT') apiError = e.requestTimeout();
  else apiError = e.malformedRequest();
  writeRawError(socket, family, apiError);
}

/** `CONNECT`: Stratus is no proxy; answered 405 in the envelope of the target's family instead of a silent close. */
export function answerConnect(req: http.IncomingMessage, socket: import('node:stream').Duplex): void {
  const family = familyOfRaw('CONNECT', String(req.url ?? '/'));
  writeRawError(socket, family, errors[family].proxyNotSupported());
}
