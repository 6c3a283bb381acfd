/**
 * The programmatic start, the package's entry (`import { start } from 'stratus-cloud'`):
 * starts a Stratus server for a test suite and hands back what a test needs — origin, CA,
 * control key, the world's identities, tokens, and the control plane (reset, snapshots, clock,
 * fault rules).
 *
 * The server runs as a **child process** (`stratus serve --json --exit-with-stdin`), not in the
 * test process: it has its own event loop and memory (a test that blocks or leaks does not slow
 * the server, and the other way round); test runners that isolate files in workers or VMs
 * (Jest, Vitest) can share one server from a global setup; it works the same from any runner
 * or language (the pytest fixture starts the same command); and a crash of the test process
 * takes the server with it: the child stops when its standard input — a pipe from the parent —
 * closes, which the operating system does when the parent dies, however it dies.
 *
 * Calls from here go to the server's plain-HTTP loopback origin (no CA needed in this process);
 * tests use {@link Stratus.origin} (HTTPS) with {@link Stratus.caPath} (`NODE_EXTRA_CA_CERTS`).
 * Only Node built-ins are imported.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ReadyInfo, StratusIdentities, StratusTenant } from './api-types.ts';

export type { ReadyInfo, StratusApp, StratusIdentities, StratusTenant, StratusUser } from './api-types.ts';

/** Options of {@link start}. Every one is optional. */
export interface StartOptions {
  /** A world file (`--world` / `STRATUS_WORLD`) to seed instead of the demo world. */
  world?: string;
  /** `postgres://…` URL: use PostgreSQL instead of SQLite (kept after stop; pair with {@link StartOptions.databaseSchema}). */
  database?: string;
  /** PostgreSQL schema (created when missing). */
  databaseSchema?: string;
  /** `0` (default): free ports chosen by the system; or fixed ports. */
  ports?: 0 | { https: number; http: number };
  /** Data folder to use (and keep); implies `ephemeral: false` unless said otherwise. */
  dataDir?: string;
  /** Throwaway store removed at stop, TLS material from the per-user cache (default true without `dataDir`). */
  ephemeral?: boolean;
  /**
   * Server settings: the names of docs/settings.md in camel case without the prefix
   * (`tokenLifetimeSeconds: 60` → `STRATUS_TOKEN_LIFETIME_SECONDS=60`) or whole variable names
   * (`STRATUS_AUDIENCE_ALIASES`).
   */
  settings?: Record<string, string | number | boolean>;
  /** Server log level (default `warn`). */
  logLevel?: string;
  /** Each line the server writes (log lines, warnings); default: kept for error messages only. */
  onLog?: (line: string) => void;
  /** How long to wait for the server to listen, ms (default 60000). */
  startTimeoutMs?: number;
  /** Node executable (default: the one running this process). */
  node?: string;
}

/** What {@link Stratus.token} asks for. */
export interface TokenRequest {
  /** API family (`arm`, `analytics`, `platform`, `mail`, `wopi`); default `arm`. */
  family?: string;
  /** User principal name (delegated token, password grant); default the demo administrator. */
  user?: string;
  /** Password of {@link TokenRequest.user}; default: the demo user's, when it is one. */
  password?: string;
  /** Client id of an application (application token, client credentials) instead of a user. */
  app?: string;
  /** Client secret of {@link TokenRequest.app}; default: the demo application's, when it is it. */
  secret?: string;
  /**
   * Delegated scope names (`Mail.Read`) or whole scopes (`api://stratus/mail/Mail.Read`, an alias's
   * scope); default: all of the family's. Application tokens always ask for `<audience>/.default`.
   */
  scopes?: string[];
  /** Tenant id or domain; default the user's or application's. */
  tenant?: string;
}

/** A fault rule of `POST /_stratus/faults` (see docs/console.md). */
export type FaultRule = Record<string, unknown>;

/** A running server. */
export interface Stratus {
  /** HTTPS origin, e.g. `https://localhost:41234`: every API family, token issuer base. */
  origin: string;
  /** Plain-HTTP loopback origin (no CA needed). */
  httpOrigin: string;
  /** CA file to trust (`NODE_EXTRA_CA_CERTS`, `REQUESTS_CA_BUNDLE`); per machine for an ephemeral store. */
  caPath: string;
  /** Contents of {@link Stratus.caPath}. */
  caPem: string;
  /** Control key: `Authorization: Bearer <key>` on `/_stratus/*`. */
  controlKey: string;
  /** The data folder (removed at stop when ephemeral). */
  dataDir: string;
  /** The server's process id. */
  pid: number;
  version: string;
  /** Tenants of the world (the first is the default). */
  tenants: StratusTenant[];
  /** The world's development identities and their credentials. */
  identities: StratusIdentities;
  /** Environment a child process (SDK, other language) needs to trust the server. */
  env: Record<string, string>;
  /** `fetch` of a control-plane path (`/_stratus/…`) with the control key. */
  control(path: string, init?: RequestInit): Promise<Response>;
  /** An access token from the server's token endpoint. @throws Error with the endpoint's error code. */
  token(req?: TokenRequest): Promise<string>;
  /** Empties the store and seeds the world again (`POST /_stratus/reset`). */
  reset(): Promise<void>;
  /** Saves the store under `name` (`POST /_stratus/snapshots`). */
  snapshot(name: string): Promise<void>;
  /** Puts the store back to snapshot `name`. */
  restore(name: string): Promise<void>;
  /** Deletes snapshot `name`. */
  deleteSnapshot(name: string): Promise<void>;
  /** The server's clock (all server time comes from it). */
  clock: {
    now(): Promise<Date>;
    /** Moves the clock forward by `seconds`; answers the new time. */
    advance(seconds: number): Promise<Date>;
    /** Sets the clock to `time` (may be in the past); answers the new time. */
    set(time: Date | string): Promise<Date>;
  };
  /** Fault rules. */
  faults: {
    /** Adds a rule; answers it as stored (with its `id`). */
    add(rule: FaultRule): Promise<FaultRule & { id: string }>;
    list(): Promise<FaultRule[]>;
    clear(): Promise<void>;
  };
  /** Stops the server (and removes an ephemeral store); waits until the process has exited. */
  stop(): Promise<void>;
}

const userScopes: Record<string, string[]> = {
  arm: ['user_impersonation'],
  analytics: ['Tenant.ReadWrite.All'],
  platform: ['Eventstream.ReadWrite.All', 'Item.ReadWrite.All'],
  mail: ['Mail.ReadWrite', 'Mail.Send'],
  wopi: ['user_impersonation'],
};

/** `tokenLifetimeSeconds` → `STRATUS_TOKEN_LIFETIME_SECONDS`; whole names pass unchanged. */
function settingVariable(name: string): string {
  return /^[A-Z0-9_]+$/.test(name) ? name : `STRATUS_${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/** The command that runs the server: bin/stratus.mjs, one folder up from both src/ and dist/. */
const binPath = fileURLToPath(new URL('../bin/stratus.mjs', import.meta.url));

/**
 * Starts a server and resolves once it listens.
 * @throws Error when it does not start within `startTimeoutMs` or exits first (the message holds its last output).
 */
export async function start(opts: StartOptions = {}): Promise<Stratus> {
  const ephemeral = opts.ephemeral ?? opts.dataDir === undefined;
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  // The test process's settings must not leak into the server's.
  for (const k of Object.keys(env)) if (k.startsWith('STRATUS_') && !['STRATUS_CACHE_DIR'].includes(k)) delete env[k];
  env.STRATUS_LOG_LEVEL = opts.logLevel ?? 'warn';
  if (opts.world) env.STRATUS_WORLD = opts.world;
  if (opts.database) env.STRATUS_DATABASE_URL = opts.database;
  if (opts.databaseSchema) env.STRATUS_DATABASE_SCHEMA = opts.databaseSchema;
  if (opts.dataDir) env.STRATUS_DATA_DIR = opts.dataDir;
  for (const [k, v] of Object.entries(opts.settings ?? {})) env[settingVariable(k)] = String(v);
  const ports = opts.ports || { https: 0, http: 0 };
  const args = [binPath, 'serve', '--json', '--exit-with-stdin', '--https-port', String(ports.https), '--http-port', String(ports.http), ...(ephemeral ? ['--ephemeral'] : [])];
  const child = spawn(opts.node ?? process.execPath, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const recent: string[] = [];
  const keep = (line: string) => {
    if (!line) return;
    recent.push(line);
    if (recent.length > 40) recent.shift();
    opts.onLog?.(line);
  };
  let exited: { code: number | null; signal: string | null } | undefined;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    }),
  );
  const info = await new Promise<ReadyInfo>((resolve, reject) => {
    const timeoutMs = opts.startTimeoutMs ?? 60_000;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`Stratus did not start within ${timeoutMs} ms; its last output:\n${recent.join('\n')}`));
    }, timeoutMs);
    let ready = false;
    lines(child, 'stdout', (line) => {
      if (!ready && line.startsWith('{"stratus":"ready"')) {
        ready = true;
        clearTimeout(timer);
        resolve(JSON.parse(line) as ReadyInfo);
      } else keep(line);
    });
    lines(child, 'stderr', keep);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`Stratus exited (${signal ?? `code ${code}`}) before it listened; its last output:\n${recent.join('\n')}`));
    });
  });
  return handle(info, child, exit, () => exited !== undefined);
}

/** Calls `onLine` for each line of the child's `stream`. */
function lines(child: ChildProcess, stream: 'stdout' | 'stderr', onLine: (line: string) => void): void {
  let buf = '';
  child[stream]!.setEncoding('utf8');
  child[stream]!.on('data', (d: string) => {
    buf += d;
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
}

/** The {@link Stratus} of a started child. */
function handle(info: ReadyInfo, child: ChildProcess, exit: Promise<void>, hasExited: () => boolean): Stratus {
  const http = info.httpUrl;
  const control = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${info.controlKey}`);
    if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    return fetch(`${http}${path}`, { ...init, headers });
  };
  /** A control call that must succeed; answers the parsed body (or undefined for an empty one). */
  const call = async (what: string, path: string, init: RequestInit = {}): Promise<any> => {
    const res = await control(path, init);
    const text = await res.text();
    if (!res.ok) throw new Error(`${what}: ${init.method ?? 'GET'} ${path} answered ${res.status}${text ? `: ${text.slice(0, 500)}` : ''}`);
    return text ? JSON.parse(text) : undefined;
  };
  const post = (what: string, path: string, body?: unknown) => call(what, path, { method: 'POST', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const ids = info.identities;
  const caPath = info.caFile ?? '';
  const s: Stratus = {
    origin: info.origin,
    httpOrigin: http,
    caPath,
    caPem: caPath ? fs.readFileSync(caPath, 'utf8') : '',
    controlKey: info.controlKey,
    dataDir: info.dataDir,
    pid: info.pid,
    version: info.version,
    tenants: ids.tenants,
    identities: ids,
    env: { STRATUS_URL: info.origin, ...(caPath ? { NODE_EXTRA_CA_CERTS: caPath, REQUESTS_CA_BUNDLE: caPath, SSL_CERT_FILE: caPath } : {}) },
    control,
    async token(req: TokenRequest = {}) {
      const family = req.family ?? 'arm';
      const form: Record<string, string> = {};
      let tenant = req.tenant;
      if (req.app) {
        const known = req.app === ids.app.clientId ? ids.app : undefined;
        const secret = req.secret ?? known?.clientSecret;
        if (!secret) throw new Error(`token: no secret for application ${req.app} (give secret)`);
        tenant ??= known?.tenant ?? ids.tenant.id;
        Object.assign(form, { grant_type: 'client_credentials', client_id: req.app, client_secret: secret, scope: `api://stratus/${family}/.default` });
      } else {
        const upn = req.user ?? ids.admin.userPrincipalName;
        const known = [ids.admin, ids.user].find((u) => u.userPrincipalName.toLowerCase() === upn.toLowerCase());
        const password = req.password ?? known?.password;
        if (!password) throw new Error(`token: no password for user ${upn} (give password)`);
        tenant ??= known?.tenant ?? upn.split('@')[1] ?? ids.tenant.id;
        const scopes = (req.scopes ?? userScopes[family] ?? []).map((n) => (n.includes('/') ? n : `api://stratus/${family}/${n}`));
        Object.assign(form, { grant_type: 'password', client_id: ids.publicClientId, username: upn, password, scope: scopes.join(' ') });
      }
      const res = await fetch(`${http}/${tenant}/oauth2/v2.0/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
      const body = (await res.json().catch(() => ({}))) as { access_token?: string; error?: string; error_description?: string };
      if (res.status !== 200 || !body.access_token) throw new Error(`token: ${res.status} ${body.error ?? ''}: ${body.error_description ?? ''}`);
      return body.access_token;
    },
    async reset() {
      await post('reset', '/_stratus/reset');
    },
    async snapshot(name: string) {
      await post('snapshot', '/_stratus/snapshots', { name });
    },
    async restore(name: string) {
      await post('restore', `/_stratus/snapshots/${encodeURIComponent(name)}/restore`);
    },
    async deleteSnapshot(name: string) {
      await call('deleteSnapshot', `/_stratus/snapshots/${encodeURIComponent(name)}`, { method: 'DELETE' });
    },
    clock: {
      async now() {
        return new Date((await call('clock.now', '/_stratus/clock')).now);
      },
      async advance(seconds: number) {
        return new Date((await post('clock.advance', '/_stratus/clock', { advanceSeconds: seconds })).now);
      },
      async set(time: Date | string) {
        const now = typeof time === 'string' ? new Date(time) : time;
        if (Number.isNaN(now.getTime())) throw new Error(`clock.set: '${String(time)}' is not a time`);
        return new Date((await post('clock.set', '/_stratus/clock', { now: now.toISOString() })).now);
      },
    },
    faults: {
      add: (rule: FaultRule) => post('faults.add', '/_stratus/faults', rule),
      async list() {
        return (await call('faults.list', '/_stratus/faults')).value as FaultRule[];
      },
      async clear() {
        await call('faults.clear', '/_stratus/faults', { method: 'DELETE' });
      },
    },
    async stop() {
      if (hasExited()) return;
      // Closing standard input stops the server cleanly (as the parent's death would); SIGKILL after 10 s.
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    },
  };
  return s;
}
