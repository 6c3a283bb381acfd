/**
 * The `stratus` command: `serve` (default), `token`, `reset`, `console`, `requests`, `seed`
 * (bulk data), and `--version`. Settings come from flags and the environment (see `config.ts`
 * and docs/settings.md); each subcommand lists only the flags it uses. `serve --ephemeral`
 * runs on a throwaway store (src/ephemeral.ts); `serve --json` prints one machine-readable
 * line once it listens, and `serve --exit-with-stdin` stops when its parent goes away (both
 * for the programmatic start, src/api.ts, and the test-runner recipes).
 */
import { Command } from 'commander';
import { loadConfig, ConfigError, type ConfigFlags } from './config.ts';
import { start, banner } from './server.ts';
import { buildApp } from './app.ts';
import { audienceFamilies, type AudienceFamily } from './core/identity/identity.ts';
import { delegatedScopes } from './core/identity/identity.ts';
import { loadControlKey } from './core/control-key.ts';
import { addRequestsCommand, requireDataDir, serverTarget } from './cli-client.ts';
import { ensureMachineTls, makeEphemeralStore, type EphemeralStore } from './ephemeral.ts';
import path from 'node:path';
import { packageVersion } from './version.ts';
import { readyLine } from './ready.ts';
import { resetWorld } from './world/shared.ts';
import { addSnapshotCommand, addWorldCommand } from './world/command.ts';
import { modules } from './services/index.ts';
import { demoPublicClient } from './seed/demo.ts';
import { addSeedCommand, settleOutsideWrite } from './seed/command.ts';

const program = new Command();
program.name('stratus').description('Self-hosted cloud REST APIs for development and testing.').version(packageVersion(), '-V, --version', 'print the version');

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
    .option('--log-level <level>', 'pino log level (STRATUS_LOG_LEVEL, default info)')
    .option('--world <file>', 'world file (YAML or JSON) to load instead of the demo data set (STRATUS_WORLD); repeatable, merged in order', (v: string, prev: string[] = []) => [...prev, v]);
}

/** The origin of the server a client command is meant for (see {@link serverTarget}). */
function targetOrigin(flags: ConfigFlags): string {
  return serverTarget(flags).origin;
}

serverFlags(program.command('serve', { isDefault: true }).description('start the server'))
  .option('--ephemeral', 'throwaway store: a temporary data folder removed when the server stops; TLS from the per-user cache (STRATUS_EPHEMERAL)')
  .option('--json', 'once listening, print one JSON line (origin, CA file, control key, identities) instead of the banner')
  .option('--exit-with-stdin', 'stop when standard input closes (a parent that started the server and died takes it along)')
  .action(async (flags: ConfigFlags & { ephemeral?: boolean; json?: boolean; exitWithStdin?: boolean }) => {
    let ephemeral: EphemeralStore | undefined;
    if (flags.ephemeral || /^(1|true|yes|on)$/i.test(process.env.STRATUS_EPHEMERAL ?? '')) {
      // The seeded template is the demo world's, on SQLite.
      ephemeral = await makeEphemeralStore(process.env, { template: !flags.world?.length && !flags.databaseUrl });
      process.on('exit', () => ephemeral!.remove());
    }
    const config = loadConfig(ephemeral ? { ...flags, dataDir: ephemeral.dataDir } : flags);
    // Nothing of a throwaway store is kept, so nothing needs flushing.
    if (ephemeral) config.sqliteSynchronous = 'OFF';
    let server: Awaited<ReturnType<typeof start>>;
    try {
      server = await start(config);
    } catch (e) {
      ephemeral?.remove();
      throw e;
    }
    if (ephemeral) {
      // A first ephemeral start of this build keeps its freshly seeded store for the next ones.
      if (server.ctx.store.dialect === 'sqlite') await ephemeral.saveTemplate(server.ctx.store.db);
      // The machine's CA file outlives the temporary folder: name it.
      if (server.tls) server.tls.caFile = ephemeral.caFile;
    }
    process.stdout.write((flags.json ? JSON.stringify(readyLine(server, ephemeral?.caFile)) : banner(server)) + '\n');
    let stopping = false;
    const stop = async (signal: string) => {
      if (stopping) return;
      stopping = true;
      server.ctx.log.info({ signal }, 'shutting down');
      await server.close();
      ephemeral?.remove();
      process.exit(0);
    };
    process.on('SIGINT', () => void stop('SIGINT'));
    process.on('SIGTERM', () => void stop('SIGTERM'));
    if (flags.exitWithStdin) {
      process.stdin.on('end', () => void stop('stdin closed'));
      process.stdin.on('close', () => void stop('stdin closed'));
      process.stdin.resume();
    }
  });

storeFlags(program.command('token').description('print an access token for a development identity, for the server on this data folder'))
  .option('--public-url <url>', 'origin of the server the token is for (default: the one the server on --data-dir recorded)')
  .option('--user <upn>', 'user principal name (delegated token)', 'admin@stratus.test')
  .option('--app <clientId>', 'client id of an application (application token) instead of --user')
  .option('--audience <family>', `audience: ${audienceFamilies.join(', ')}`, 'arm')
  .option('--scopes <scopes>', 'space-separated delegated scopes (default: all of the audience)')
  .action(async (flags: ConfigFlags & { user: string; app?: string; audience: string; scopes?: string }) => {
    requireDataDir(flags, '`stratus token`');
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

storeFlags(program.command('reset').description('put back the world the store was loaded with (rows, clock, caches of every instance)')).action(async (flags: ConfigFlags) => {
  const config = loadConfig(flags);
  const built = await buildApp({ ...config, httpsPort: -1, logLevel: 'silent' });
  try {
    await resetWorld(built.ctx, modules);
    // A server running on the same PostgreSQL store serves the reset state once this returns.
    await settleOutsideWrite(built);
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
    if (!config.controlKey) requireDataDir(flags, '`stratus console`');
    const key = loadControlKey(config.dataDir, config.controlKey);
    process.stdout.write(`${targetOrigin(flags)}/_stratus/console?key=${encodeURIComponent(key)}\n`);
  });

program
  .command('ca')
  .description("print the path of this machine's CA file (made on first use), the one --ephemeral servers use: NODE_EXTRA_CA_CERTS=$(stratus ca)")
  .action(async () => {
    process.stdout.write(path.join(await ensureMachineTls(), 'ca.pem') + '\n');
  });

addRequestsCommand(program);
addSeedCommand(program, storeFlags);
addSnapshotCommand(program, storeFlags);
addWorldCommand(program, storeFlags);

program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`stratus: ${(e as Error).message}\n`);
  process.exit(e instanceof ConfigError ? 2 : 1);
});
