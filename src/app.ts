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
import { Identity } from './core/identity/identity.ts';
import { directoryMigrations } from './core/identity/directory.ts';
import { registerIdentityRoutes } from './core/identity/routes.ts';
import { RateLimiter, rateLimitMigrations } from './core/rate-limit.ts';
import { ApiError, invalidBodyCode, notFoundCode, renderError, type Family } from './core/errors.ts';
import { familyOf, familyOfPath } from './core/family.ts';
import { nowIso } from './core/clock.ts';
import { newUuid } from './core/ids.ts';
import { loadTls, type TlsMaterial } from './core/tls.ts';
import { FaultInjector, faultError } from './core/faults.ts';
import { hasControlKey, isControlPath, isPublicControlRoute, loadControlKey, normalizePath } from './core/control-key.ts';
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
  const out: Migrations = { ...directoryMigrations, ...rateLimitMigrations };
  for (const m of mods) {
    for (const [name, mig] of Object.entries(m.migrations)) {
      if (out[name]) throw new Error(`duplicate migration name ${name}`);
      out[name] = mig;
    }
  }
  return out;
}

/** Sends `err` rendered in the envelope of `family` (status, headers, body or none). */
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
    // Long OData queries and tokens fit: 64 KiB of request line and headers (Node's default is 16 KiB).
    const maxHeaderSize = 64 * 1024;
    // Idle keep-alive sockets stay open 72 s (Fastify's own default; Node's 5 s applies to a
    // server made here): a client pausing a few seconds does not find its pooled socket closed.
    const keepAliveTimeout = 72_000;
    httpServer = http.createServer({ maxHeaderSize, keepAliveTimeout }, handler);
    return (tls ? https.createServer({ cert: tls.cert, key: tls.key, maxHeaderSize, keepAliveTimeout }, handler) : httpServer) as http.Server;
  };
  const app = Fastify({
    serverFactory,
    logger: { level: config.logLevel },
    // Fastify's two lines per request (incoming, completed) are replaced by one summary line (below).
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newUuid(),
    bodyLimit: 150 * 1024 * 1024,
    rewriteUrl: aliasUrlRewriter(config.providerNamespaceAliases),
    routerOptions: { ignoreDuplicateSlashes: true, ignoreTrailingSlash: true, caseSensitive: false, maxParamLength: 2000 },
    // Router-level failures (a malformed percent-encoding, an over-long path segment) in the family's envelope.
    frameworkErrors: (error: Error & { code?: string }, req: any, reply: any) => {
      const rawPath = String(req.raw?.url ?? req.url ?? '/').split('?')[0]!;
      const family = familyOfPath(rawPath);
      const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
      const code = family === 'mail' ? 'ErrorInvalidRequest' : family === 'oauth' ? 'invalid_request' : tooLong ? 'RequestUriTooLong' : 'BadRequest';
      const message = tooLong ? 'A path segment of the request URL is too long.' : 'The request URL is malformed (invalid percent-encoding).';
      return sendError(family, new ApiError(tooLong ? 414 : 400, code, message), req, reply);
    },
  } as any) as unknown as FastifyInstance;

  const store = await openStore({
    databaseUrl: config.databaseUrl,
    databaseSchema: config.databaseSchema,
    sqliteFile: path.join(config.dataDir, 'stratus.db'),
    sqliteSynchronous: config.sqliteSynchronous,
  });
  await store.migrate(allMigrations());

  let origin = config.publicUrl ?? '';
  const closers: (() => Promise<void> | void)[] = [];
  const identity = new Identity(store.db, () => origin, config.settings.tokenLifetimeSeconds, config.audienceAliases);
  const rateLimiter = new RateLimiter(store.db);
  closers.push(() => rateLimiter.close());
  const ctx: AppContext = {
    config,
    store,
    log: app.log,
    identity,
    rateLimiter,
    controlKey: loadControlKey(config.dataDir, config.controlKey),
    faults: new FaultInjector(),
    origin: () => origin,
    onClose: (fn) => closers.push(fn),
  };
  await identity.init();
  if (config.seed && !(await isSeeded(ctx))) await seedAll(ctx, modules);

  // The control plane needs the control key, whatever the spelling of its path (issue 11 item 2).
  // Fast path: a URL without '%', '\\' or "_stratus" cannot normalise to a control path.
  app.addHook('onRequest', async (req, reply) => {
    const url = req.raw.url ?? '/';
    if (!url.includes('%') && !url.includes('\\') && !/_stratus/i.test(url)) return;
    const p = normalizePath(url);
    if (!isControlPath(p) || isPublicControlRoute(req.method, p)) return;
    if (hasControlKey(ctx.controlKey, req.headers.authorization, req.headers.cookie)) return;
    return sendError(
      'control',
      new ApiError(401, 'Unauthorized', 'The control plane needs the control key: Authorization: Bearer <control key> (STRATUS_CONTROL_KEY or <data dir>/control.key).', {
        headers: { 'WWW-Authenticate': 'Bearer realm="stratus-control"' },
      }),
      req,
      reply,
    );
  });

  // Injected faults (issue 12 item 2): never on the control plane; nothing to do without rules.
  app.addHook('onRequest', async (req, reply) => {
    if (ctx.faults.empty) return;
    const family = familyOf(req);
    if (family === 'control') return;
    const hit = ctx.faults.pick(family, req.method, (req.raw.url ?? '/').split('?')[0]!);
    if (!hit) return;
    const e = hit.effect;
    if ('delayMs' in e) {
      await new Promise((resolve) => setTimeout(resolve, e.delayMs));
      return;
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
      return reply;
    }
    return sendError(family, faultError(family, e), req, reply);
  });

  // JSON bodies: empty means none; anything else must parse.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json/i, { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      const err = new Error(`The request content is not valid JSON: ${(e as Error).message}`) as Error & { statusCode: number; code: string };
      err.statusCode = 400;
      err.code = 'STRATUS_INVALID_JSON';
      done(err, undefined);
    }
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

  app.addHook('onSend', async (req, reply, payload) => {
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
    if (!reply.hasHeader('date')) reply.header('Date', new Date().toUTCString());
    return payload;
  });

  // Request logging (issue 9, item 6): at `info` one summary line per request (method, path,
  // status, ms; the request id is the line's `reqId`); at `debug` the request's headers and
  // query too. Nothing per request at `warn` and above (the hook is not even installed).
  const levelEnabled = (level: string) => (app.log as unknown as { isLevelEnabled(l: string): boolean }).isLevelEnabled(level);
  if (levelEnabled('info')) {
    const detailed = levelEnabled('debug');
    app.addHook('onResponse', (req, reply, done) => {
      const url = req.raw.url ?? req.url;
      const q = url.indexOf('?');
      const line = { method: req.method, path: q < 0 ? url : url.slice(0, q), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 100) / 100 };
      if (detailed) req.log.debug({ ...line, query: q < 0 ? undefined : url.slice(q + 1), headers: { ...req.headers, authorization: req.headers.authorization ? '[redacted]' : undefined } }, 'request');
      else req.log.info(line, 'request');
      done();
    });
  }

  const aliasHook = aliasBodyHook(config.providerNamespaceAliases);
  if (aliasHook) app.addHook('preValidation', aliasHook);

  app.setErrorHandler(async (error: any, req, reply) => {
    const family: Family = error instanceof ApiError && error.options.family ? error.options.family : familyOf(req);
    let apiError: ApiError;
    if (error instanceof ApiError) apiError = error;
    else if (error.validation || error.code === 'STRATUS_INVALID_JSON' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      const text = error.validation ? `The ${error.validationContext ?? 'request'} is invalid: ${error.message}` : error.message;
      apiError =
        family === 'platform'
          ? // The platform's malformed-input shape (reference §4.1; live bodies): InvalidInput with one InvalidParameter detail.
            new ApiError(400, 'InvalidInput', 'The request has an invalid input', { details: [{ code: 'InvalidParameter', message: text }], isRetriable: false })
          : new ApiError(400, invalidBodyCode[family], text);
    } else if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      apiError = new ApiError(415, family === 'arm' ? 'UnsupportedMediaType' : invalidBodyCode[family], `The content media type '${req.headers['content-type'] ?? ''}' is not supported.`);
    } else if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      apiError = new ApiError(413, family === 'mail' ? 'ErrorRequestEntityTooLarge' : 'RequestEntityTooLarge', 'The request body is too large.');
    } else if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      apiError = new ApiError(error.statusCode, invalidBodyCode[family], error.message);
    } else {
      req.log.error({ err: error }, 'unhandled error');
      apiError = new ApiError(500, family === 'mail' ? 'generalException' : family === 'oauth' ? 'server_error' : 'InternalServerError', 'An internal error occurred; the request was not completed.');
    }
    return sendError(family, apiError, req, reply);
  });

  app.setNotFoundHandler(async (req, reply) => {
    const family = familyOfPath(req.url.split('?')[0]!);
    const pathOnly = req.url.split('?')[0];
    const message =
      family === 'arm' || family === 'datashare'
        ? `The resource path '${pathOnly}' with method '${req.method}' was not found.`
        : family === 'mail'
          ? `Resource not found for the segment '${pathOnly!.split('/').filter(Boolean).pop() ?? ''}'.`
          : `No route matches ${req.method} ${pathOnly}.`;
    const status = family === 'mail' ? 400 : 404;
    return sendError(family, new ApiError(status, notFoundCode[family], message), req, reply);
  });

  registerIdentityRoutes(app, identity, () => origin);
  registerControlRoutes(app, ctx, modules);
  for (const m of modules) await m.register(app, ctx);

  app.addHook('onClose', async () => {
    for (const fn of closers) await fn();
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
