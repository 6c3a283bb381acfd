/**
 * `buildApp(config)`: the Fastify instance with every API family registered, the store
 * open and migrated, the demo data seeded into an empty store — and nothing listening
 * (`server.ts` listens). Tests build it with port 0.
 */
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerFactory } from 'fastify';
import formbody from '@fastify/formbody';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { Config } from './config.ts';
import type { AppContext, ServiceModule } from './context.ts';
import { openStore, type Migrations } from './store/db.ts';
import type { Database } from './store/database.ts';
import { Identity } from './core/identity/identity.ts';
import { CacheHub, cacheMigrations } from './core/cache.ts';
import { directoryMigrations } from './core/identity/directory.ts';
import { registerIdentityRoutes } from './core/identity/routes.ts';
import { RateLimiter, rateLimitMigrations } from './core/rate-limit.ts';
import { ApiError, errors, invalidInputDetail, renderError, withStatus, type Family } from './core/errors/index.ts';
import { familyOf, familyOfPath } from './core/family.ts';
import { badTextPath, isBadText, surrogatePath, jsonDepthExceeds, maxJsonDepth, repeatedParameter } from './core/input.ts';
import { nowIso } from './core/clock.ts';
import { newUuid } from './core/ids.ts';
import { loadTls, type TlsMaterial } from './core/tls.ts';
import { OutboundGuard } from './core/outbound.ts';
import { FaultInjector, faultError } from './core/faults.ts';
import { hasControlKey, isConsoleLogin, isControlPath, isPublicControlRoute, loadControlKey, normalizePath } from './core/control-key.ts';
import { RequestLog, registerRequestLog } from './core/request-log.ts';
import { seedAll, isSeeded } from './seed/index.ts';
import { modules } from './services/index.ts';
import { registerControlRoutes } from './services/control/routes.ts';
import { aliasBodyHook, aliasUrlRewriter } from './services/arm/aliases.ts';

/** A built app: the Fastify instance, its context, the plain-HTTP server and the TLS material. */
export interface BuiltApp {
  app: FastifyInstance;
  ctx: AppContext;
  /** The plain-HTTP server sharing the app's handler (the Fastify server is HTTPS when TLS is on). */
  httpServer: http.Server;
  tls?: TlsMaterial;
  /** Sets the origin once the listeners know their ports (unless STRATUS_PUBLIC_URL fixes it). */
  setListeningOrigin(origin: string): void;
}

/** Every migration of the core and the areas. */
export function allMigrations(mods: ServiceModule[] = modules): Migrations {
  const out: Migrations = { ...directoryMigrations, ...rateLimitMigrations, ...cacheMigrations };
  for (const m of mods) {
    for (const [name, mig] of Object.entries(m.migrations)) {
      if (out[name]) throw new Error(`duplicate migration name ${name}`);
      out[name] = mig;
    }
  }
  return out;
}

/** Most bytes of request line and headers a request may have (64 KiB). */
const maxRequestHeadBytes = 64 * 1024;

/** The methods some route of some family answers; any other method is a 405 in the family's envelope. */
const knownMethods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The path of a request target in origin form (`/a?b`) or absolute form (`http://host/a?b`); `/` for anything else. */
function pathOfTarget(target: string): string {
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
function answerClientError(err: Error & { code?: string; rawPacket?: Buffer }, socket: import('node:stream').Duplex): void {
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
function answerConnect(req: http.IncomingMessage, socket: import('node:stream').Duplex): void {
  const family = familyOfRaw('CONNECT', String(req.url ?? '/'));
  writeRawError(socket, family, errors[family].proxyNotSupported());
}

/** Sends `err` rendered in the envelope of `family` (status, headers, body or none). */
let dateSecond = -1;
let dateText = '';
/** The `Date` header value (RFC 9110 IMF-fixdate), made once per second of the wall clock. */
function httpDate(): string {
  const ms = Date.now();
  const second = Math.floor(ms / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

function sendError(family: Family, err: ApiError, req: FastifyRequest, reply: FastifyReply) {
  const client = req.headers?.['client-request-id'];
  const r = renderError(family, err, { requestId: req.id ?? newUuid(), clientRequestId: typeof client === 'string' && client ? client : undefined, date: nowIso() });
  reply.code(r.status).headers(r.headers);
  return r.body === undefined ? reply.send() : reply.send(r.body);
}

/**
 * Builds the app.
 * @throws Error when the store cannot be opened or migrated, or TLS material cannot be made.
 */
export async function buildApp(config: Config): Promise<BuiltApp> {
  const tls = config.httpsPort >= 0 ? loadTls(config.dataDir, config.tlsCertFile, config.tlsKeyFile) : undefined;
  let httpServer!: http.Server;
  const serverFactory: FastifyServerFactory = (handler) => {
    // Long OData queries and tokens fit: 64 KiB of request line and headers (Node's default is
    // 16 KiB), enforced by the onRequest hook below so the answer is in the family's envelope;
    // Node's parser stops at 16× that (1 MiB) (beyond, the family may be unknown: see answerClientError).
    const maxHeaderSize = 16 * maxRequestHeadBytes;
    // Idle keep-alive sockets stay open 72 s (Fastify's own default; Node's 5 s applies to a
    // server made here): a client pausing a few seconds does not find its pooled socket closed.
    const keepAliveTimeout = 72_000;
    httpServer = http.createServer({ maxHeaderSize, keepAliveTimeout }, handler);
    const main = (tls ? https.createServer({ cert: tls.cert, key: tls.key, maxHeaderSize, keepAliveTimeout }, handler) : httpServer) as http.Server;
    // Parser-level failures and CONNECT, in the family's envelope (Fastify attaches the same
    // clientErrorHandler to the server it is given; the plain-HTTP sibling gets it here).
    for (const srv of new Set([httpServer, main])) srv.on('connect', answerConnect);
    if (main !== httpServer) httpServer.on('clientError', answerClientError);
    return main;
  };
  const aliasRewrite = aliasUrlRewriter(config.providerNamespaceAliases);
  const app = Fastify({
    serverFactory,
    logger: { level: config.logLevel },
    // Fastify's two lines per request (incoming, completed) are replaced by one summary line (below).
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newUuid(),
    // No child logger per request (pino's child costs a few microseconds on every request):
    // request-scoped lines name their request id themselves.
    childLoggerFactory: (logger: unknown) => logger,
    bodyLimit: 150 * 1024 * 1024,
    clientErrorHandler: answerClientError,
    // A request target in absolute form (`GET http://host/path`, RFC 9112 §3.2.2) is routed by its
    // path; then provider-namespace aliases are rewritten.
    rewriteUrl: (req: http.IncomingMessage) => {
      const url = req.url ?? '/';
      return aliasRewrite({ url: url.startsWith('/') ? url : pathOfTarget(url) });
    },
    routerOptions: { ignoreDuplicateSlashes: true, ignoreTrailingSlash: true, caseSensitive: false, maxParamLength: 2000 },
    // Router-level failures (a malformed percent-encoding, an over-long path segment) in the family's envelope.
    frameworkErrors: (error: Error & { code?: string }, req: any, reply: any) => {
      const rawPath = String(req.raw?.url ?? req.url ?? '/').split('?')[0]!;
      const family = familyOfPath(rawPath);
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      return sendError(family, tooLong ? errors[family].pathSegmentTooLong() : errors[family].malformedUrl(), req, reply);
    },
  } as any) as unknown as FastifyInstance;

  const store = await openStore<Database>({
    databaseUrl: config.databaseUrl,
    databaseSchema: config.databaseSchema,
    sqliteFile: path.join(config.dataDir, 'stratus.db'),
    sqliteSynchronous: config.sqliteSynchronous,
  });
  await store.migrate(allMigrations());

  let origin = config.publicUrl ?? '';
  const closers: (() => Promise<void> | void)[] = [];
  const cache = new CacheHub(store);
  await cache.bus.start({ databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema, onError: (e) => app.log.warn({ err: e }, 'signal listener connection lost') });
  const identity = new Identity(store.db, () => origin, config.settings.tokenLifetimeSeconds, config.audienceAliases, cache);
  const controlKey = loadControlKey(config.dataDir, config.controlKey);
  const rateLimiter = new RateLimiter(store.db);
  closers.push(() => rateLimiter.close());
  const ctx: AppContext = {
    config,
    store,
    log: app.log,
    identity,
    rateLimiter,
    outbound: new OutboundGuard({
      allowLoopback: config.allowLoopbackReceivers,
      ownPorts: () => {
        const ports = [config.httpPort, config.httpsPort].filter((p) => p > 0);
        for (const s of [app.server, httpServer]) {
          const a = s?.address();
          if (a && typeof a === 'object') ports.push(a.port);
        }
        if (origin) {
          const o = new URL(origin);
          ports.push(o.port ? Number(o.port) : o.protocol === 'https:' ? 443 : 80);
        }
        return ports;
      },
    }),
    cache,
    controlKey,
    requestLog: new RequestLog(config.settings.requestLogSize, controlKey),
    faults: new FaultInjector(),
    origin: () => origin,
    onClose: (fn) => closers.push(fn),
  };
  await identity.init();
  if (config.seed && !(await isSeeded(ctx))) await seedAll(ctx, modules);

  // One onRequest hook, callback style (no promise per request), running in order: the control
  // key check, injected faults, the request-head size limit.
  app.addHook('onRequest', (req, reply, done) => {
    if (refusedControl(req, reply)) return;
    if (!ctx.faults.empty && injectedFault(req, reply, done)) return;
    const tooLarge = headTooLarge(req);
    if (tooLarge) return done(tooLarge);
    done();
  });

  // The control plane needs the control key, whatever the spelling of its path (issue 11 item 2).
  // Fast path: a URL without '%', '\\' or "_stratus" cannot normalise to a control path.
  // Returns true when it answered (401).
  function refusedControl(req: FastifyRequest, reply: FastifyReply): boolean {
    const url = req.raw.url ?? '/';
    if (!url.includes('%') && !url.includes('\\') && !/_stratus/i.test(url)) return false;
    const p = normalizePath(url);
    if (!isControlPath(p) || isPublicControlRoute(req.method, p)) return false;
    if (hasControlKey(ctx.controlKey, req.headers.authorization, req.headers.cookie)) return false;
    // The console link of the banner (`GET /_stratus/console?key=…`) signs the browser in.
    if (isConsoleLogin(ctx.controlKey, req.method, p, url)) return false;
    void sendError('control', errors.control.controlKeyRequired(), req, reply);
    return true;
  }

  // Injected faults (issue 12 item 2): never on the control plane. Returns true when the fault
  // took over the request (an answer, a reset, or a delay that calls `done` later).
  function injectedFault(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): boolean {
    const family = familyOf(req);
    if (family === 'control') return false;
    const hit = ctx.faults.pick(family, req.method, (req.raw.url ?? '/').split('?')[0]!);
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

  registerRequestLog(app, ctx.requestLog);

  // JSON bodies: empty means none; anything else must parse.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/i, { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    // One depth guard for every family, before anything parses or walks the document (issue 11).
    if (jsonDepthExceeds(text, maxJsonDepth)) {
      const err = new Error(`The request body is nested more than ${maxJsonDepth} levels deep.`) as Error & { statusCode: number; code: string };
      err.statusCode = 400;
      err.code = 'STRATUS_JSON_TOO_DEEP';
      return done(err, undefined);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      const err = new Error(`The request content is not valid JSON: ${(e as Error).message}`) as Error & { statusCode: number; code: string };
      err.statusCode = 400;
      err.code = 'STRATUS_INVALID_JSON';
      return done(err, undefined);
    }
    // A lone surrogate (only an escape can make one: decoded UTF-8 never holds one) is text no store keeps as sent.
    if (/\\u[dD][89a-fA-F]/.test(text)) {
      const at = surrogatePath(parsed);
      if (at !== undefined) {
        const err = new Error(`The request content is not valid text: the value at '${at || '(root)'}' contains lone surrogates (invalid UTF-16).`) as Error & { statusCode: number; code: string };
        err.statusCode = 400;
        err.code = 'STRATUS_INVALID_JSON';
        return done(err, undefined);
      }
    }
    done(null, parsed);
  });
  // Query strings and path parameters are text, so their schemas coerce ("5" → 5, one value →
  // [value]); bodies are JSON and are validated as sent: {"displayName": 42} is not a string.
  const ajvText = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
  const ajvBody = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false });
  addFormats.default(ajvText);
  addFormats.default(ajvBody);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? ajvBody : ajvText).compile(schema as object) as any);
  await app.register(formbody);
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Callback style: no promise per request.
  app.addHook('onSend', (req, reply, payload, done) => {
    const family = familyOf(req);
    if (family === 'arm' || family === 'datashare') {
      const corr = req.headers['x-vendor-correlation-request-id'];
      reply.header('x-vendor-request-id', req.id);
      reply.header('x-vendor-correlation-request-id', typeof corr === 'string' && corr ? corr : req.id);
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('Cache-Control', reply.getHeader('Cache-Control') ?? 'no-cache');
    } else if (family === 'platform' || family === 'analytics') {
      reply.header('RequestId', req.id);
    } else if (family === 'mail') {
      const client = req.headers['client-request-id'];
      reply.header('request-id', req.id);
      reply.header('client-request-id', typeof client === 'string' && client ? client : req.id);
    }
    if (!reply.hasHeader('date')) reply.header('Date', httpDate());
    done(null, payload);
  });

  // One line per request at `debug` (method, path, status, ms, request id, query and headers);
  // nothing per request at `info` and above: measured, the line cost about 40 % of the
  // throughput of the lightest routes (bench/README.md). The console and `stratus requests`
  // show every request instead.
  if ((app.log as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled('debug')) {
    app.addHook('onResponse', (req, reply, done) => {
      const url = req.raw.url ?? req.url;
      const q = url.indexOf('?');
      req.log.debug(
        {
          reqId: req.id,
          method: req.method,
          path: q < 0 ? url : url.slice(0, q),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime * 100) / 100,
          query: q < 0 ? undefined : url.slice(q + 1),
          headers: { ...req.headers, authorization: req.headers.authorization ? '[redacted]' : undefined },
        },
        'request',
      );
      done();
    });
  }

  const aliasHook = aliasBodyHook(config.providerNamespaceAliases);
  if (aliasHook) app.addHook('preValidation', aliasHook);

  app.setErrorHandler(async (error: any, req, reply) => {
    const family: Family = error instanceof ApiError && error.options.family ? error.options.family : familyOf(req);
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if (error.code === 'STRATUS_JSON_TOO_DEEP') {
      apiError = family === 'platform' ? invalidInputDetail(error.message) : errors[family].bodyTooDeep({ message: error.message });
    } else if (error.code === '22021' || error.code === '22P05') {
      // Last line behind the input guards: text PostgreSQL cannot store (NUL, bad encoding) is the caller's 400, not a 500.
      apiError = errors[family].unstorableText();
    } else if (error.validation || error.code === 'STRATUS_INVALID_JSON' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      const text = error.validation ? `The ${error.validationContext ?? 'request'} is invalid: ${error.message}` : error.message;
      apiError =
        family === 'platform'
          ? // The platform's malformed-input shape (reference §4.1; live bodies): InvalidInput with one InvalidParameter detail.
            invalidInputDetail(text)
          : errors[family].invalidBody({ message: text });
    } else if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      apiError = errors[family].unsupportedMediaType({ contentType: req.headers['content-type'] ?? '' });
    } else if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      apiError = errors[family].bodyTooLarge();
    } else if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      apiError = withStatus(errors[family].requestRejected({ message: error.message }), error.statusCode);
    } else {
      req.log.error({ err: error, reqId: req.id }, 'unhandled error');
      apiError = errors[family].internalError();
    }
    return sendError(family, apiError, req, reply);
  });

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

  app.setNotFoundHandler(async (req, reply) => {
    const family = familyOfPath(req.url.split('?')[0]!);
    if (!knownMethods.has(req.method)) return sendError(family, errors[family].methodNotAllowed({ method: req.method }, { headers: { allow: [...knownMethods].join(', ') } }), req, reply);
    const pathOnly = req.url.split('?')[0];
    const message =
      family === 'arm' || family === 'datashare'
        ? `The resource path '${pathOnly}' with method '${req.method}' was not found.`
        : family === 'mail'
          ? `Resource not found for the segment '${pathOnly!.split('/').filter(Boolean).pop() ?? ''}'.`
          : `No route matches ${req.method} ${pathOnly}.`;
    const status = family === 'mail' ? 400 : 404;
    return sendError(family, withStatus(errors[family].routeNotFound({ message }), status), req, reply);
  });

  registerIdentityRoutes(app, identity, () => origin);
  registerControlRoutes(app, ctx, modules);
  for (const m of modules) await m.register(app, ctx);

  app.addHook('onClose', async () => {
    for (const fn of closers) await fn();
    await cache.bus.close();
    await store.close();
    if (tls && httpServer.listening) await new Promise<void>((resolve) => httpServer.close(() => resolve()));
  });

  return {
    app,
    ctx,
    httpServer,
    tls,
    setListeningOrigin(o: string) {
      if (!config.publicUrl) origin = o;
    },
  };
}
