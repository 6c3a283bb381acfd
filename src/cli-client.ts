/**
 * The `stratus` commands that talk to a server started earlier on a data folder (`requests`,
 * and the checks `token` and `console` make first): how they find it (`<data dir>/server.json`,
 * written at every start, or `--public-url`), and what they say when there is none — which
 * folder and origin they looked for and how to start a server there.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { loadConfig, ConfigError, type ConfigFlags } from './config.ts';
import { loadControlKey } from './core/control-key.ts';
import { readRuntimeInfo } from './runtime-info.ts';
import { errorSummary } from './core/request-log-text.ts';

/** Where a client command looked for its server, for its messages. */
export interface ServerTarget {
  /** The data folder (absolute). */
  dataDir: string;
  /** Origin the command will call. */
  origin: string;
  /** Where the origin came from, in words. */
  source: string;
}

/**
 * The server a client command is meant for: `--public-url`, else `STRATUS_PUBLIC_URL`, else what
 * the server last started on this data folder recorded, else the default HTTPS origin.
 */
export function serverTarget(flags: ConfigFlags): ServerTarget {
  const config = loadConfig(flags);
  if (config.publicUrl) return { dataDir: config.dataDir, origin: config.publicUrl, source: flags.publicUrl ? '--public-url' : 'STRATUS_PUBLIC_URL' };
  const info = readRuntimeInfo(config.dataDir);
  if (info) return { dataDir: config.dataDir, origin: info.origin, source: `${path.join(config.dataDir, 'server.json')}` };
  const origin = `https://localhost:${config.httpsPort >= 0 ? config.httpsPort : config.httpPort}`;
  return { dataDir: config.dataDir, origin, source: `the default (no ${path.join(config.dataDir, 'server.json')})` };
}

/** How to start a server on `dataDir`, for messages. */
export function startHint(dataDir: string): string {
  return `start one with \`stratus serve --data-dir ${dataDir}\` (or \`npm start\` in a checkout), or give --data-dir / --public-url of a running one`;
}

/**
 * Refuses when the data folder holds no store yet: a command that reads the store (`token`,
 * `console`) must not make a new one, whose keys no running server knows.
 * @throws ConfigError naming the folder.
 */
export function requireDataDir(flags: ConfigFlags, what: string): void {
  const config = loadConfig(flags);
  if (config.databaseUrl) return;
  if (!fs.existsSync(path.join(config.dataDir, 'stratus.db'))) {
    throw new ConfigError(`no Stratus data folder at ${config.dataDir} (no stratus.db): ${what} reads the store of a server started there; ${startHint(config.dataDir)}`);
  }
}

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
  /** Error answers: code and message (the event feed sets it). */
  error?: { code: string; message?: string };
  responseBody?: string;
}

function requestLine(e: LoggedRequest, error = e.error): string {
  const caller = e.upn ?? e.appId ?? '-';
  const err = error ? `  ${error.code}${error.message ? `: ${error.message}` : ''}` : '';
  return `${e.time}  ${e.family.padEnd(9)} ${e.method.padEnd(6)} ${String(e.status).padEnd(3)} ${String(Math.round(e.durationMs)).padStart(5)} ms  ${e.url}  ${caller}  ${e.id}${err}`;
}

/** The code and message of a listed entry's error body (the list has the body, the feed the summary). */
function listedError(e: LoggedRequest): LoggedRequest['error'] {
  return e.status >= 400 ? errorSummary(e.responseBody) : undefined;
}

/** `fetch` that turns "no server there" into a message naming the folder, the origin and how to start one. */
async function reach(url: string, init: RequestInit, target: ServerTarget): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(
      `no Stratus server answered at ${new URL(url).origin} (${cause?.code ?? cause?.message ?? (e as Error).message}); ` +
        `looked for the server of data folder ${target.dataDir}, origin from ${target.source}: ${startHint(target.dataDir)}`,
    );
  }
}

/** Adds `stratus requests`. */
export function addRequestsCommand(program: Command): void {
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
      const target = serverTarget(flags);
      if (!config.controlKey && !fs.existsSync(path.join(config.dataDir, 'control.key'))) {
        throw new ConfigError(`no control key: neither STRATUS_CONTROL_KEY nor ${path.join(config.dataDir, 'control.key')}; looked for the server of data folder ${config.dataDir} at ${target.origin} (from ${target.source}): ${startHint(config.dataDir)}`);
      }
      const key = loadControlKey(config.dataDir, config.controlKey);
      // A local CLI reads the plain-HTTP listener the server recorded (no CA to trust); else the origin.
      const base = flags.publicUrl ?? readRuntimeInfo(config.dataDir)?.httpUrl ?? target.origin;
      const query = new URLSearchParams();
      for (const k of ['family', 'status', 'q'] as const) if (flags[k]) query.set(k, flags[k]!);
      const headers = { authorization: `Bearer ${key}` };
      if (flags.limit !== '0') {
        const list = await reach(`${base}/_stratus/requests?${query}&limit=${encodeURIComponent(flags.limit)}`, { headers }, target);
        if (!list.ok) throw new Error(`${base}/_stratus/requests answered ${list.status}: ${await list.text()}`);
        const entries = ((await list.json()) as { value: LoggedRequest[] }).value;
        for (const e of entries.reverse()) process.stdout.write(requestLine(e, listedError(e)) + '\n');
      }
      if (!flags.follow) return;
      const feed = await reach(`${base}/_stratus/requests/events?${query}`, { headers }, target);
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
}
