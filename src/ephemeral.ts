/**
 * The throwaway store of `stratus serve --ephemeral` (and of the programmatic `start()`):
 * a data folder made under the system's temporary folder and removed when the server stops,
 * with SQLite's `synchronous` off (nothing is kept, so nothing needs flushing), and HTTPS
 * material made once per machine and user in {@link machineTlsDir} and copied in, so a start
 * makes no key pair for TLS.
 *
 * The bundle (dist/stratus.mjs) also keeps a seeded template of the demo world per build in
 * `<machine cache>/templates/` (SQLite, made by the first ephemeral start of that build with
 * `VACUUM INTO`): later starts copy it instead of migrating and seeding (the seed is
 * deterministic; the template also holds the token signing key, so it is private to the user,
 * mode 0600). Not with a world file or PostgreSQL, nor when running the sources through tsx.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql, type Kysely } from 'kysely';
import type { Database } from './store/database.ts';
import { loadTls } from './core/tls.ts';

/**
 * The per-user cache folder that holds the machine's local CA and server certificate:
 * `STRATUS_CACHE_DIR`, else `$XDG_CACHE_HOME/stratus`, else `~/.cache/stratus`; the files are in
 * its `tls/` folder (`ca.pem` is the file clients trust).
 */
export function machineCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.STRATUS_CACHE_DIR) return path.resolve(env.STRATUS_CACHE_DIR);
  const base = env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), '.cache');
  return path.join(base, 'stratus');
}

/** `<machine cache>/tls`: `ca.pem`, `server.pem`, `server-key.pem` (and the CA's key). */
export function machineTlsDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(machineCacheDir(env), 'tls');
}

/**
 * The machine's TLS material, made on first use. Two first starts at once each make a set in a
 * folder of their own and rename it into place; the loser uses the winner's (a rename of a
 * folder onto a non-empty one fails), so the certificate and key always match.
 * @returns the folder that holds the material.
 */
export async function ensureMachineTls(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const dir = machineTlsDir(env);
  if (['ca.pem', 'server.pem', 'server-key.pem'].every((f) => fs.existsSync(path.join(dir, f)))) return dir;
  const parent = path.dirname(dir);
  fs.mkdirSync(parent, { recursive: true, mode: 0o700 });
  const partial = fs.mkdtempSync(path.join(parent, 'partial-'));
  try {
    await loadTls(partial);
    try {
      fs.renameSync(path.join(partial, 'tls'), dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e;
    }
  } finally {
    fs.rmSync(partial, { recursive: true, force: true });
  }
  return dir;
}

/**
 * The seeded-template file of this build, or undefined when none applies: only the bundle (its
 * path, size and modification time name the build), without a world file or PostgreSQL.
 */
export function templateFile(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const self = fileURLToPath(import.meta.url);
  if (!self.endsWith('.mjs') || env.STRATUS_WORLD || env.STRATUS_DATABASE_URL || env.STRATUS_SEED === 'false') return undefined;
  let stat: fs.Stats;
  try {
    stat = fs.statSync(self);
  } catch {
    return undefined;
  }
  const key = createHash('sha256').update(`${self}\0${stat.size}\0${stat.mtimeMs}`).digest('hex').slice(0, 16);
  return path.join(machineCacheDir(env), 'templates', `demo-${key}.db`);
}

/** A throwaway data folder and how to remove it. */
export interface EphemeralStore {
  /** The temporary data folder (`stratus.db`, `control.key`, `server.json`, `tls/`). */
  dataDir: string;
  /** The machine's CA file (stays after {@link EphemeralStore.remove}). */
  caFile: string;
  /** Whether the store was copied from the seeded template (no seeding needed). */
  fromTemplate: boolean;
  /**
   * Saves the freshly seeded store as this build's template (when one applies and none was used);
   * call once the store is seeded and before anyone writes to it. Never throws: a failure only
   * costs the next start its seeding.
   */
  saveTemplate(db: Kysely<Database>): Promise<void>;
  /** Removes the data folder; safe to call more than once. Synchronous, so it runs in an `exit` handler. */
  remove(): void;
}

/**
 * Makes a temporary data folder holding a copy of the machine's TLS material (made when missing)
 * and, when `opts.template` is not false and one applies, of this build's seeded template (the
 * caller says false for a `--world` or `--database-url` flag, which the environment does not show).
 * @throws Error when the temporary or cache folder cannot be written.
 */
export async function makeEphemeralStore(env: NodeJS.ProcessEnv = process.env, opts: { template?: boolean } = {}): Promise<EphemeralStore> {
  const tlsDir = await ensureMachineTls(env);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'stratus-ephemeral-'));
  fs.mkdirSync(path.join(dataDir, 'tls'));
  for (const f of ['ca.pem', 'server.pem', 'server-key.pem']) fs.copyFileSync(path.join(tlsDir, f), path.join(dataDir, 'tls', f));
  const template = opts.template === false ? undefined : templateFile(env);
  let fromTemplate = false;
  if (template && fs.existsSync(template)) {
    try {
      fs.copyFileSync(template, path.join(dataDir, 'stratus.db'));
      fromTemplate = true;
    } catch {
      fs.rmSync(path.join(dataDir, 'stratus.db'), { force: true });
    }
  }
  let removed = false;
  return {
    dataDir,
    caFile: path.join(tlsDir, 'ca.pem'),
    fromTemplate,
    async saveTemplate(db: Kysely<Database>) {
      if (!template || fromTemplate) return;
      const partial = `${template}.${process.pid}.partial`;
      try {
        fs.mkdirSync(path.dirname(template), { recursive: true, mode: 0o700 });
        fs.rmSync(partial, { force: true });
        await sql`VACUUM INTO ${sql.lit(partial)}`.execute(db);
        fs.chmodSync(partial, 0o600);
        fs.renameSync(partial, template);
      } catch {
        fs.rmSync(partial, { force: true });
      }
    },
    remove() {
      if (removed) return;
      removed = true;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
