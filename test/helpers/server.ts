/**
 * Starts a real Stratus server for a test file: HTTPS and HTTP on free ports, a fresh
 * SQLite file in a temp folder — or, when `STRATUS_TEST_DATABASE_URL` is set, a fresh
 * PostgreSQL schema — and the demo data set. Tests talk to it over real sockets.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { loadConfig, type Settings, type Config } from '../../src/config.ts';
import { start, type RunningServer } from '../../src/server.ts';

/** Drops PostgreSQL test schemas (no-op without a database URL); used by every test that makes its own. */
export async function dropSchemas(dbUrl: string | undefined, ...schemas: (string | undefined)[]): Promise<void> {
  const names = schemas.filter((n): n is string => !!n);
  if (!dbUrl || names.length === 0) return;
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  try {
    for (const n of names) await c.query(`DROP SCHEMA IF EXISTS ${n} CASCADE`);
  } finally {
    await c.end();
  }
}

/** A server under test. */
export interface TestServer {
  /** HTTPS origin, e.g. `https://localhost:41234` (also the public URL). */
  url: string;
  /** Plain HTTP origin. */
  httpUrl: string;
  server: RunningServer;
  config: Config;
  /** The control key (`Authorization: Bearer <key>` on `/_stratus/*` except health). */
  controlKey: string;
  /** `fetch` of a control-plane path (e.g. `/_stratus/clock`) on the HTTPS origin with the control key. */
  control(path: string, init?: RequestInit): Promise<Response>;
  /** Stops the server (keeping its data) and starts it again on the same store and ports. */
  restart(): Promise<void>;
  /** Stops the server and removes its data. */
  close(): Promise<void>;
}

const testTls = path.resolve('.stratus-test/tls');

// Every read that writes a cached table must mark its request (`src/core/cache-requests.ts`): the
// servers of the suite check it, and answer such a read with a 500 naming its path.
process.env.STRATUS_VERIFY_READ_WRITES ??= '1';

/** Options of {@link startTestServer}. */
export interface TestServerOptions {
  settings?: Partial<Settings>;
  /** Extra environment for {@link loadConfig}. */
  env?: Record<string, string>;
  /**
   * PostgreSQL only: run on the database schema of this server instead of a fresh one (a second
   * instance of the same deployment; its own ports and data folder). Closing it keeps the schema.
   */
  shareStoreWith?: TestServer;
}

/** Starts a server with its own store. */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-test-'));
  const dbUrl = process.env.STRATUS_TEST_DATABASE_URL;
  if (opts.shareStoreWith && !opts.shareStoreWith.config.databaseSchema) throw new Error('shareStoreWith needs PostgreSQL (STRATUS_TEST_DATABASE_URL)');
  const schema = opts.shareStoreWith ? opts.shareStoreWith.config.databaseSchema : dbUrl ? `t_${randomBytes(6).toString('hex')}` : undefined;
  const ownsSchema = !opts.shareStoreWith;
  const env: Record<string, string> = {
    STRATUS_DATA_DIR: dataDir,
    STRATUS_HTTP_PORT: '0',
    STRATUS_HTTPS_PORT: '0',
    STRATUS_LOG_LEVEL: process.env.STRATUS_TEST_LOG_LEVEL ?? 'silent',
    ...(fs.existsSync(path.join(testTls, 'server.pem')) ? { STRATUS_TLS_CERT: path.join(testTls, 'server.pem'), STRATUS_TLS_KEY: path.join(testTls, 'server-key.pem') } : {}),
    ...(dbUrl ? { STRATUS_DATABASE_URL: dbUrl, STRATUS_DATABASE_SCHEMA: schema! } : {}),
    ...(opts.env ?? {}),
  };
  const config = loadConfig({}, env);
  Object.assign(config.settings, opts.settings ?? {});
  let server = await start(config);
  // Later starts reuse the same ports and origin, so tokens and links stay valid.
  config.httpsPort = Number(new URL(server.httpsUrl!).port);
  config.httpPort = Number(new URL(server.httpUrl).port);
  config.publicUrl = server.ctx.origin();
  const t: TestServer = {
    url: server.httpsUrl!,
    httpUrl: server.httpUrl,
    server,
    config,
    controlKey: server.ctx.controlKey,
    control(p: string, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${t.controlKey}`);
      return fetch(`${t.url}${p}`, { ...init, headers });
    },
    async restart() {
      await server.close();
      server = await start(config);
      t.server = server;
      // Pooled keep-alive sockets to the old listener fail once; spend that failure here.
      await fetch(`${t.url}/_stratus/health`).catch(() => undefined);
      await fetch(`${t.httpUrl}/_stratus/health`).catch(() => undefined);
    },
    async close() {
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (ownsSchema) await dropSchemas(dbUrl, schema);
    },
  };
  return t;
}
