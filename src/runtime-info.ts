/**
 * What a running server records in its data folder (`<data dir>/server.json`) so that the
 * CLI's other commands (`stratus token`, `console`, `requests`) talk to — and sign tokens
 * for — that server: its public origin (the token issuer's base), its listener URLs and
 * its process id. Written at every start (the last server started on a data folder wins).
 */
import fs from 'node:fs';
import path from 'node:path';

/** The recorded settings of a running server. */
export interface RuntimeInfo {
  /** Public origin: token issuers are `{origin}/{tenant}/v2.0`. */
  origin: string;
  httpsUrl?: string;
  httpUrl: string;
  pid: number;
  /** ISO 8601 UTC. */
  startedAt: string;
}

const fileName = 'server.json';

/** Records `info` in the data folder (mode 0600). Never throws: a read-only folder only loses the record. */
export function writeRuntimeInfo(dataDir: string, info: RuntimeInfo): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(path.join(dataDir, fileName), JSON.stringify(info, null, 2) + '\n', { mode: 0o600 });
  } catch {
    // best effort
  }
}

/** The recorded settings, or undefined when no server recorded any (or the file is unreadable). */
export function readRuntimeInfo(dataDir: string): RuntimeInfo | undefined {
  try {
    const v = JSON.parse(fs.readFileSync(path.join(dataDir, fileName), 'utf8')) as RuntimeInfo;
    return typeof v.origin === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}
