/**
 * The `stratus` command: `serve` (default), `token`, `reset`, `console`, `requests`, `seed`.

 * The `stratus` command: `serve` (default), `token`, `reset`, `console`, `seed` (bulk data).
 * Settings come from flags and the environment (see `config.ts` and the README); each
 * subcommand lists only the flags it uses.
 */
import { Command } from 'commander';
import { loadConfig, ConfigError, type ConfigFlags } from './config.ts';
import { start, banner } from './server.ts';
import { buildApp } from './app.ts';
import { audienceFamilies, type AudienceFamily } from './core/identity/identity.ts';
import { delegatedScopes } from './core/identity/identity.ts';
import { loadControlKey } from './core/control-key.ts';
import { readRuntimeInfo } from './runtime-info.ts';
import { resetAll } from './seed/index.ts';
import { modules } from './services/index.ts';
import { demoPublicClient } from './seed/demo.ts';
import { addSeedCommand } from './seed/command.ts';

const program = new Command();
program.name('stratus').description('Self-hosted cloud REST APIs for development and testing.');

/** Flags that name the store: every command that opens it. */
function storeFlags(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'data folder (STRATUS_DATA_DIR, default ./.stratus)')
    .option('--database-url <url>', 'postgres:// URL (STRATUS_DATABASE_URL); default SQLite in the data folder');
}

/** Flags of the server itself. */
function serverFlags(cmd: Command): Command {
  return storeFlags(cmd)
    .option('--host <host>', 'interface to bind (STRATUS_HOST, default 127.0.0.1)')
    .option('--http-port <port>', 'plain HTTP port (STRATUS_HTTP_PORT, default 8080)')
    .option('--https-port <port>', 'HTTPS port, -1 disables (STRATUS_HTTPS_PORT, default 8443)')
    .option('--public-url <url>', 'origin written into links and token issuers (STRATUS_PUBLIC_URL)')
    .option('--tls-cert <file>', 'PEM certificate to serve instead of the local CA (STRATUS_TLS_CERT)')
    .option('--tls-key <file>', 'PEM key of --tls-cert (STRATUS_TLS_KEY)')
    .option('--log-level <level>', 'pino log level (STRATUS_LOG_LEVEL, default info)');
}

/**
 * The origin of the server a client command is meant for: `--public-url`, else
 * `STRATUS_PUBLIC_URL`, else what the server last started on this data folder recorded,
 * else the default HTTPS origin.
 */
function targetOrigin(flags: ConfigFlags): string {
  const config = loadConfig(flags);
  return config.publicUrl ?? readRuntimeInfo(config.dataDir)?.origin ?? `https://localhost:${config.httpsPort >= 0 ? config.httpsPort : config.httpPort}`;
}

serverFlags(program.command('serve', { isDefault: true }).description('start the server')).action(async (flags: ConfigFlags) => {
  const config = loadConfig(flags);
  const server = await start(config);
  process.stdout.write(banner(server) + '\n');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.ctx.log.info({ signal }, 'shutting down');
    await server.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
});

storeFlags(program.command('token').description('print an access token for a development identity, for the server on this data folder'))
  .option('--public-url <url>', 'origin of the server the token is for (default: the one the server on --data-dir recorded)')
  .option('--user <upn>', 'user principal name (delegated token)', 'admin@stratus.test')
  .option('--app <clientId>', 'client id of an application (application token) instead of --user')
  .option('--audience <family>', `audience: ${audienceFamilies.join(', ')}`, 'arm')
  .option('--scopes <scopes>', 'space-separated delegated scopes (default: all of the audience)')
  .action(async (flags: ConfigFlags & { user: string; app?: string; audience: string; scopes?: string }) => {
    const config = loadConfig(flags);
    if (!(audienceFamilies as readonly string[]).includes(flags.audience)) throw new ConfigError(`unknown audience '${flags.audience}'`);
    const aud = flags.audience as AudienceFamily;
    const built = await buildApp({ ...config, httpsPort: -1, logLevel: 'silent' });
    built.setListeningOrigin(targetOrigin(flags));
    try {
      const d = built.ctx.identity.directory;
      let token: string;
      if (flags.app) {
        const app = await d.findApp(flags.app);
        if (!app) throw new ConfigError(`no application '${flags.app}'`);
        token = (await built.ctx.identity.issueAppToken(app, aud)).accessToken;
      } else {
        const user = await d.findUser(flags.user);
        if (!user) throw new ConfigError(`no user '${flags.user}'`);
        const scopes = flags.scopes ? flags.scopes.split(/\s+/) : delegatedScopes[aud];
        token = (await built.ctx.identity.issueUserToken(user, demoPublicClient.appId, aud, scopes)).accessToken;
      }
      process.stdout.write(token + '\n');
    } finally {
      await built.app.close();
    }
  });

storeFlags(program.command('reset').description('empty the store and load the demo data set again')).action(async (flags: ConfigFlags) => {
  const config = loadConfig(flags);
  const built = await buildApp({ ...config, httpsPort: -1, logLevel: 'silent' });
  try {
    await resetAll(built.ctx, modules);
    process.stdout.write('store reset to the demo data set\n');
  } finally {
    await built.app.close();
  }
});

program
  .command('console')
  .description('print the link that opens the console (it carries the control key)')
  .option('--data-dir <dir>', 'data folder (STRATUS_DATA_DIR, default ./.stratus)')
  .option('--public-url <url>', 'origin of the server (default: the one the server on --data-dir recorded)')
  .action((flags: ConfigFlags) => {
    const config = loadConfig(flags);
    const key = loadControlKey(config.dataDir, config.controlKey);
    process.stdout.write(`${targetOrigin(flags)}/_stratus/console?key=${encodeURIComponent(key)}\n`);
  });

/** One request-log entry as `GET /_stratus/requests` and its event feed give it (fields used here). */
interface LoggedRequest {
  time: string;
  family: string;
  method: string;
  url: string;
  status: number;
  durationMs: number;
  appId?: string;
  upn?: string;
  id: string;
}

function requestLine(e: LoggedRequest): string {
  const caller = e.upn ?? e.appId ?? '-';
  return `${e.time}  ${e.family.padEnd(9)} ${e.method.padEnd(6)} ${String(e.status).padEnd(3)} ${String(Math.round(e.durationMs)).padStart(5)} ms  ${e.url}  ${caller}  ${e.id}`;
}

program
  .command('requests')
  .description("print the server's recent requests (oldest first); --follow keeps printing new ones")
  .option('--data-dir <dir>', 'data folder (STRATUS_DATA_DIR, default ./.stratus)')
  .option('--public-url <url>', 'origin of the server (default: the one the server on --data-dir recorded)')
  .option('--family <family>', 'only this API family (arm, datashare, analytics, platform, mail, wopi, oauth)')
  .option('--status <status>', 'only this status, or a class such as 4xx')
  .option('--q <text>', 'only requests whose method, URL, caller or id contain the text')
  .option('--limit <n>', 'how many recent requests to print first (0: none)', '50')
  .option('-f, --follow', 'keep printing requests as they arrive (Ctrl-C stops)')
  .action(async (flags: ConfigFlags & { family?: string; status?: string; q?: string; limit: string; follow?: boolean }) => {
    const config = loadConfig(flags);
    const key = loadControlKey(config.dataDir, config.controlKey);
    // A local CLI reads the plain-HTTP listener the server recorded (no CA to trust); else the origin.
    const base = flags.publicUrl ?? readRuntimeInfo(config.dataDir)?.httpUrl ?? targetOrigin(flags);
    const query = new URLSearchParams();
    for (const k of ['family', 'status', 'q'] as const) if (flags[k]) query.set(k, flags[k]!);
    const headers = { authorization: `Bearer ${key}` };
    if (flags.limit !== '0') {
      const list = await fetch(`${base}/_stratus/requests?${query}&limit=${encodeURIComponent(flags.limit)}`, { headers });
      if (!list.ok) throw new Error(`${base}/_stratus/requests answered ${list.status}: ${await list.text()}`);
      const entries = ((await list.json()) as { value: LoggedRequest[] }).value;
      for (const e of entries.reverse()) process.stdout.write(requestLine(e) + '\n');
    }
    if (!flags.follow) return;
    const feed = await fetch(`${base}/_stratus/requests/events?${query}`, { headers });
    if (!feed.ok || !feed.body) throw new Error(`${base}/_stratus/requests/events answered ${feed.status}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of feed.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event.split('\n').find((l) => l.startsWith('data: '));
        if (data) process.stdout.write(requestLine(JSON.parse(data.slice(6)) as LoggedRequest) + '\n');
      }
    }
  });
addSeedCommand(program, storeFlags);

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`stratus: ${(e as Error).message}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
});
