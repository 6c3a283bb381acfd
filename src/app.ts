/**
 * `buildApp(config)`: the Fastify instance with every API family registered, the store
 * open and migrated, the demo data seeded into an empty store — and nothing listening
 * (`server.ts` listens). Tests build it with port 0.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import { pino } from 'pino';
import { defaultSettings, type Config } from './config.ts';
import type { AppContext, ServiceModule } from './context.ts';
import { openStore, type Migrations } from './store/db.ts';
import type { Database } from './store/database.ts';
import { Identity, newSigningKeyPair } from './core/identity/identity.ts';
import { CacheHub } from './core/cache.ts';
import { cacheKeyMigrations, cacheMigrations, presenceMigrations } from './core/cache-migrations.ts';
import { installCacheTriggers } from './core/cache-tables.ts';
import { directoryMigrations } from './core/identity/directory.ts';
import { registerIdentityRoutes } from './core/identity/routes.ts';
import { SignInThrottle } from './core/identity/throttle.ts';
import { RateLimiter, rateLimitMigrations } from './core/rate-limit.ts';
import { errors } from './core/errors/index.ts';
import { familyOfPath } from './core/family.ts';
import { loadTls, type TlsMaterial } from './core/tls.ts';
import { OutboundGuard } from './core/outbound.ts';
import { FaultInjector } from './core/faults.ts';
import { loadControlKey } from './core/control-key.ts';
import { RequestLog, loggedResponseClass, newRequestId } from './core/request-log.ts';
import { worldMigrations } from './world/tables.ts';
import { startWorld } from './world/start.ts';
import { modules } from './services/index.ts';
import { registerControlRoutes } from './services/control/routes.ts';
import { aliasBodyHook, aliasUrlRewriter } from './services/arm/aliases.ts';
import { answerClientError, answerConnect, maxRequestHeadBytes, pathOfTarget } from './http/raw.ts';
import { sendError } from './http/respond.ts';
import { registerInputGuards, registerRequestGuards } from './http/guards.ts';
import { registerBodyParsing } from './http/body.ts';
import { registerErrorHandler, registerNotFound, registerResponseHeaders } from './http/answers.ts';

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
  const out: Migrations = { ...directoryMigrations, ...rateLimitMigrations, ...cacheMigrations, ...presenceMigrations, ...cacheKeyMigrations, ...worldMigrations };
  for (const m of mods) {
    for (const [name, mig] of Object.entries(m.migrations)) {
      if (out[name]) throw new Error(`duplicate migration name ${name}`);
      out[name] = mig;
    }
  }
  return out;
}

/**
 * Builds the app.
 * @throws Error when the store cannot be opened or migrated, or TLS material cannot be made.
 */
export async function buildApp(config: Config): Promise<BuiltApp> {
  // A first start makes its certificates on the thread pool while the store opens and seeds.
  const tlsReady = config.httpsPort >= 0 ? loadTls(config.dataDir, config.tlsCertFile, config.tlsKeyFile) : undefined;
  tlsReady?.catch(() => undefined);
  let tls: TlsMaterial | undefined;
  const log = appLogger(config.logLevel);
  const controlKey = loadControlKey(config.dataDir, config.controlKey);
  const requestLog = new RequestLog(config.settings.requestLogSize, controlKey);
  requestLog.onError = (e, reqId) => log.warn({ err: e, reqId }, 'request log entry failed');
  // The request log records in the servers' ServerResponse (core/request-log.ts): no hook per request.
  const ServerResponse = requestLog.size > 0 ? loggedResponseClass(requestLog) : http.ServerResponse;
  let httpServer!: http.Server;
  const serverFactory: FastifyServerFactory = (handler) => {
    // Long OData queries and tokens fit: 64 KiB of request line and headers (Node's default is
    // 16 KiB), enforced by the onRequest hook below so the answer is in the family's envelope;
    // Node's parser stops at 16× that (1 MiB) (beyond, the family may be unknown: see answerClientError).
    const maxHeaderSize = 16 * maxRequestHeadBytes;
    // Idle keep-alive sockets stay open 72 s (Fastify's own default; Node's 5 s applies to a
    // server made here): a client pausing a few seconds does not find its pooled socket closed.
    const keepAliveTimeout = 72_000;
    httpServer = http.createServer({ maxHeaderSize, keepAliveTimeout, ServerResponse }, handler);
    const main = (tls ? https.createServer({ cert: tls.cert, key: tls.key, maxHeaderSize, keepAliveTimeout, ServerResponse }, handler) : httpServer) as http.Server;
    // Parser-level failures and CONNECT, in the family's envelope (Fastify attaches the same
    // clientErrorHandler to the server it is given; the plain-HTTP sibling gets it here).
    for (const srv of new Set([httpServer, main])) srv.on('connect', answerConnect);
    if (main !== httpServer) httpServer.on('clientError', answerClientError);
    return main;
  };

  // A new SQLite store needs its first signing key (an RSA key pair, 70–460 ms on the thread
  // pool): it is made from now on, while the store opens, migrates and seeds.
  const sqliteFile = path.join(config.dataDir, 'stratus.db');
  const firstKey = !config.databaseUrl && !fs.existsSync(sqliteFile) ? newSigningKeyPair() : undefined;
  const store = await openStore<Database>({
    databaseUrl: config.databaseUrl,
    databaseSchema: config.databaseSchema,
    sqliteFile,
    sqliteSynchronous: config.sqliteSynchronous,
  });
  await store.migrate(allMigrations());
  // Every write of a cached table bumps its area's version, by trigger (`core/cache-tables.ts`).
  await installCacheTriggers(store.db);

  let origin = config.publicUrl ?? '';
  const closers: (() => Promise<void> | void)[] = [];
  const cache = new CacheHub(store);
  const leaseMs = config.settings.instanceLeaseMs;
  // PostgreSQL with live instances: their connection carries the signal bus's notifications too
  // (one listening connection an instance, `cache-bus.ts`).
  const relayed = !!config.databaseUrl && leaseMs > 0;
  await cache.bus.start({ databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema, relayed, onError: (e) => log.warn({ err: e }, 'signal listener connection lost') });
  if (config.databaseUrl) await cache.startPresence({ databaseUrl: config.databaseUrl, databaseSchema: config.databaseSchema, leaseMs, signals: relayed ? cache.bus.relay() : undefined, onError: (e) => log.warn({ err: e }, 'cache presence connection lost') });
  const identity = new Identity(store.db, () => origin, config.settings.tokenLifetimeSeconds, config.audienceAliases, cache);
  const rateLimiter = new RateLimiter(store.db);
  closers.push(() => rateLimiter.close());
  /** Closes what the app opened: the areas' closers, the cache's connections, the store. */
  const release = async () => {
    for (const fn of closers) await fn();
    await cache.stopPresence();
    await cache.bus.close();
    await store.close();
  };
  const ctx: AppContext = {
    config,
    store,
    log,
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
    requestLog,
    faults: new FaultInjector(),
    origin: () => origin,
    onClose: (fn) => closers.push(fn),
  };
  // The first signing key of a new store (an RSA key pair, made on the thread pool) is made
  // while the demo data set loads: nothing in the seed signs a token.
  const keysReady = identity.init(firstKey);
  keysReady.catch(() => undefined);
  try {
    await startWorld(ctx, modules);
  } catch (e) {
    await keysReady.catch(() => undefined);
    await release();
    throw e;
  }
  // The Fastify instance is made once the certificates are there: its server factory creates the HTTPS server.
  try {
    tls = await tlsReady;
  } catch (e) {
    await keysReady.catch(() => undefined);
    await release();
    throw e;
  }

  const aliasRewrite = aliasUrlRewriter(config.providerNamespaceAliases);
  const app = Fastify({
    serverFactory,
    // Stratus's own pino logger (`log`), not Fastify's: with a Fastify logger every request gets
    // `finish` listeners and logger work even with request logging off (bench/README.md, sixth
    // pass: together with the request log leaving Fastify's hooks, 321k → 308k instructions a
    // webhook GET). Nothing is logged per request at `info`; request-scoped lines name their
    // request id themselves (Fastify's per-request logger is `log` itself, no child).
    logger: false,
    childLoggerFactory: () => log,
    // Fastify's two lines per request (incoming, completed) are not written at any level.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: newRequestId,
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

  registerRequestGuards(app, ctx);

  await registerBodyParsing(app);

  registerResponseHeaders(app, log, controlKey);
  // PostgreSQL: a request that wrote answers once every live instance applied the write (`cache-presence.ts`, `kept-versions.ts`).
  if (config.databaseUrl) {
    // Which requests wrote (`cache-requests.ts`): a read that wrote nothing does not wait. The
    // check of the marks (the test suite) runs each request in a context of its own.
    if (cache.requests.verifying) app.addHook('onRequest', (req, _reply, done) => cache.requests.run(req.raw, done));
    app.addHook('onSend', (req, _reply, payload, done) => {
      const read = req.method === 'GET' || req.method === 'HEAD';
      if (read && cache.requests.unmarkedWrite(req.raw)) {
        log.error({ method: req.method, url: req.url }, 'a read wrote a cached table without marking its request (cache-requests.ts)');
        return done(new Error(`${req.method} ${req.url.split('?')[0]} wrote a cached table without marking its request (src/core/cache-requests.ts)`));
      }
      // A request that may write mailbox rows (their notifications carry no sequence number)
      // sends a marker and waits for it (`CacheHub.settle`).
      const marker = cache.isMarked(req.raw);
      if (!marker && !cache.unsettled()) return done(null, payload);
      if (!marker && read && !cache.requests.wrote(req.raw)) {
        cache.requests.readsNotWaited++;
        return done(null, payload);
      }
      cache.settle(leaseMs || defaultSettings.instanceLeaseMs, marker, req.raw).then(
        () => done(null, payload),
        (e) => {
          log.warn({ err: e }, 'could not confirm that every instance applied a write');
          done(null, payload);
        },
      );
    });
  }

  const aliasHook = aliasBodyHook(config.providerNamespaceAliases);
  if (aliasHook) app.addHook('preValidation', aliasHook);

  registerErrorHandler(app, log);

  registerInputGuards(app);
  registerNotFound(app);

  registerIdentityRoutes(app, identity, () => origin, new SignInThrottle(store.db, rateLimiter, config.settings));
  registerControlRoutes(app, ctx, modules);
  for (const m of modules) await m.register(app, ctx);
  // The routes were registered while the first signing key was being made (a fresh start waited
  // for it idle: 130 ms in one profile); nothing is served before it is there.
  try {
    await keysReady;
  } catch (e) {
    await release();
    throw e;
  }

  app.addHook('onClose', async () => {
    await release();
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

/**
 * The app's logger: pino at `level` (`trace` … `fatal`, `silent`), JSON lines on stdout, errors
 * under `err` serialised with their stack. Fastify is given no logger of its own.
 */
export function appLogger(level: string): FastifyBaseLogger {
  return pino({ level, serializers: { err: pino.stdSerializers.err } }) as unknown as FastifyBaseLogger;
}
