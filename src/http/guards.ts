/**
 * The guards every request passes before a route sees it: the control key on the control
 * plane (issue 11 item 2), injected faults (issue 12 item 2), the size of the request head
 * (issue 11 item 4) — one callback-style `onRequest` hook, no promise per request — and the
 * input guards of `preValidation` (issue 11 item 3: repeated parameters; NUL and lone
 * surrogates for the identity provider).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { errors, type ApiError } from '../core/errors/index.ts';
import { familyOf, familyOfPath } from '../core/family.ts';
import { badTextPath, isBadText, repeatedParameter } from '../core/input.ts';
import { faultError } from '../core/faults.ts';
import { controlAuthority, fromOwnOrigin, isConsoleLogin, isControlPath, isPublicControlRoute, isStateChanging, normalizePath } from '../core/control-key.ts';
import { linkRequest } from '../core/request-log.ts';
import { maxRequestHeadBytes } from './raw.ts';
import { sendError } from './respond.ts';

/** Registers the `onRequest` guards of every request (see the file comment). */
export function registerRequestGuards(app: FastifyInstance, ctx: AppContext): void {
  // The app's one global onRequest hook, callback style (no promise per request), running in
  // order: the request log's link to the request, the control key check, injected faults, the
  // request-head size limit.
  app.addHook('onRequest', (req, reply, done) => {
    linkRequest(req);
    if (refusedControl(req, reply)) return;
    if (!ctx.faults.empty && injectedFault(req, reply, done)) return;
    const tooLarge = headTooLarge(req);
    if (tooLarge) return done(tooLarge);
    done();
  });

  // The control plane needs the control key, whatever the spelling of its path (issue 11 item 2).
  // Fast path: a path without '%', '\\' or "_stratus" cannot normalise to a control path.
  // Returns true when it answered (401).
  function refusedControl(req: FastifyRequest, reply: FastifyReply): boolean {
    const url = req.raw.url ?? '/';
    // Only the path can name the control plane (normalizePath drops the query): a percent-encoded
    // query needs no normalising. String searches, not a regular expression over the whole URL
    // (that cost about 2,000 instructions a request: bench/README.md, sixth pass).
    const query = url.indexOf('?');
    let end = query < 0 ? url.length : query;
    const hash = url.indexOf('#');
    if (hash >= 0 && hash < end) end = hash;
    // The first '%', '\\' or '_' of the URL is in the path exactly when the path has one.
    const inPath = (i: number) => i >= 0 && i < end;
    const underscore = url.indexOf('_');
    if (!inPath(url.indexOf('%')) && !inPath(url.indexOf('\\')) && (!inPath(underscore) || !/_stratus/i.test(url.slice(underscore, end)))) return false;
    const p = normalizePath(url);
    if (!isControlPath(p) || isPublicControlRoute(req.method, p)) return false;
    const authority = controlAuthority(ctx.controlKey, req.headers.authorization, req.headers.cookie);
    if (authority === 'bearer') return false;
    if (authority === 'cookie') {
      // The cookie rides along with any request the browser makes, from any page of the same
      // site: a state-changing call must come from this server's own origin (issue 30 row 1).
      if (!isStateChanging(req.method) || fromOwnOrigin(req.headers, ownOrigins(req))) return false;
      void sendError('control', errors.control.csrfCheckFailed(), req, reply);
      return true;
    }
    // The console link of the banner (`GET /_stratus/console?key=…`) signs the browser in.
    if (isConsoleLogin(ctx.controlKey, req.method, p, url)) return false;
    void sendError('control', errors.control.controlKeyRequired(), req, reply);
    return true;
  }

  // The origins this server answers as: the one the request was addressed to, and the public URL.
  function ownOrigins(req: FastifyRequest): string[] {
    const addressed = `${req.protocol}://${req.headers.host ?? ''}`.toLowerCase();
    const pub = ctx.origin().toLowerCase();
    return pub ? [addressed, pub] : [addressed];
  }

  // Injected faults (issue 12 item 2): never on the control plane. Returns true when the fault
  // took over the request (an answer, a reset, or a delay that calls `done` later).
  function injectedFault(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): boolean {
    const family = familyOf(req);
    if (family === 'control') return false;
    // Matched on the path as the control-key guard judges it: no spelling of a control route
    // (`/%5Fstratus/faults`) is ever faulted (issue 30 row 13), and rules see one spelling of each path.
    const path = normalizePath(req.raw.url ?? '/');
    if (isControlPath(path)) return false;
    const hit = ctx.faults.pick(family, req.method, path);
    if (!hit) return false;
    const e = hit.effect;
    if ('delayMs' in e) {
      setTimeout(() => done(), e.delayMs);
      return true;
    }
    if ('reset' in e) {
      reply.hijack();
      // A TCP reset where the socket is plain TCP; a TLS socket cannot reset (its handle is not
      // TCP), so it is closed without an answer.
      const socket = req.raw.socket;
      try {
        socket.resetAndDestroy();
      } catch {
        socket.destroy();
      }
      return true;
    }
    void sendError(family, faultError(family, e), req, reply);
    return true;
  }

  // Request line and headers over the limit: 414 / 431 in the family's envelope (issue 11, item 4).
  function headTooLarge(req: FastifyRequest): ApiError | undefined {
    const raw = req.raw;
    const url = raw.url ?? '';
    let size = url.length + raw.method!.length + 12;
    for (const h of raw.rawHeaders) size += h.length + 2;
    if (size <= maxRequestHeadBytes) return undefined;
    const family = familyOfPath(url.split('?')[0]!);
    const uriTooLong = url.length > maxRequestHeadBytes / 2;
    const options = { family, headers: { connection: 'close' } };
    return uriTooLong ? errors[family].uriTooLong({}, options) : errors[family].headTooLarge({ bytes: maxRequestHeadBytes }, options);
  }
}

/** Registers the `preValidation` input guards (see the file comment). */
export function registerInputGuards(app: FastifyInstance): void {
  // Core input guards before any route sees the request (issue 11, item 3): query parameters given
  // more than once where one value is expected, and — for the identity provider, which hands
  // path, query and form values straight to the directory — NUL characters and lone surrogates.
  app.addHook('preValidation', (req, _reply, done) => {
    try {
      inputGuards(req);
    } catch (e) {
      return done(e as Error);
    }
    done();
  });
  function inputGuards(req: FastifyRequest): void {
    const family = familyOf(req);
    const declared = (req.routeOptions?.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties;
    const repeated = repeatedParameter(req.query, declared, family === 'oauth');
    if (repeated !== undefined) throw errors[family].repeatedParameter({ name: repeated });
    if (family !== 'oauth') return;
    const body = req.body !== null && typeof req.body === 'object' && !Buffer.isBuffer(req.body) ? req.body : undefined;
    const formRepeated = body ? repeatedParameter(body, undefined, true) : undefined;
    if (formRepeated !== undefined) throw errors.oauth.repeatedFormParameter({ name: formRepeated });
    const bad = badTextPath(req.params) ?? badTextPath(req.query) ?? (body ? badTextPath(body) : undefined) ?? (typeof req.body === 'string' && isBadText(req.body) ? 'body' : undefined);
    if (bad !== undefined) throw errors.oauth.badText({ name: bad });
  }
}
