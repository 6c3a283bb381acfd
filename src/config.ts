/**
 * Settings: command-line flags and the environment → one typed, validated {@link Config}.
 *
 * Every setting has an environment variable (`STRATUS_*`) and most have a flag of the
 * `stratus serve` command; flags win over the environment, the environment over defaults.
 * The README lists them all.
 */
import path from 'node:path';

/** Per-area behaviour knobs (limits, windows, delays). Units are in the names. */
export interface Settings {
  /** Resource-manager subscription-read budget per window (x-vendor-ratelimit-remaining-subscription-reads). */
  armReadsPerWindow: number;
  /** Length of the resource-manager read window, seconds. */
  armReadWindowSeconds: number;
  /** Analytics admin dataflow listing: requests per window per caller (spec analytics §8: 200 per hour). */
  analyticsRequestsPerWindow: number;
  /** Analytics rate-limit window, seconds (3600). */
  analyticsWindowSeconds: number;
  /** Data platform: requests per window per caller before 429. */
  platformRequestsPerWindow: number;
  /** Data platform rate-limit window, seconds. */
  platformWindowSeconds: number;
  /** Extra provisioning time of an eventstream creation, seconds; non-zero makes every create a 202. */
  platformProvisioningDelaySeconds: number;
  /** Mail: requests per window per app and mailbox before ApplicationThrottled. */
  mailRequestsPerWindow: number;
  /** Mail rate-limit window, seconds. */
  mailWindowSeconds: number;
  /** Mail change-notification subscription: maximum lifetime, minutes. */
  mailSubscriptionMaxMinutes: number;
  /** Mail change notifications: how long the validation handshake may take, milliseconds (reference mail §7.2: 10 s). */
  mailSubscriptionValidationTimeoutMs: number;
  /** Mail change notifications: poll interval of the background delivery worker, milliseconds. */
  mailNotificationPollMs: number;
  /** Lifetime of issued access tokens, seconds. */
  tokenLifetimeSeconds: number;
  /** Console request log: requests kept in memory (ring buffer; 0 turns the log off). */
  requestLogSize: number;
  /** PostgreSQL: lease of a live instance, ms (renewed every third; 0: every turn reads the cache versions). See `src/core/cache-presence.ts`. */
  instanceLeaseMs: number;
  /** Identity provider smart lockout: failed passwords per account (or client secrets per client) within the window that lock it (the real service's default: 10). */
  signInLockoutThreshold: number;
  /** Identity provider smart lockout: how long a lock lasts, seconds (the real service's first lockout: 60); also the window failures are counted in. */
  signInLockoutSeconds: number;
  /** Identity provider: unauthenticated device-code starts per client per window. */
  deviceCodeStartsPerClient: number;
  /** Identity provider: unauthenticated device-code starts per caller address per window. */
  deviceCodeStartsPerAddress: number;
  /** Identity provider: the window of the device-code start limits, seconds. */
  deviceCodeStartWindowSeconds: number;
}

/** The whole configuration of one Stratus process. */
export interface Config {
  /** Interface both listeners bind to (default 127.0.0.1). */
  host: string;
  /** Plain HTTP port; 0 picks a free one (tests). */
  httpPort: number;
  /** HTTPS port; 0 picks a free one; -1 disables HTTPS. */
  httpsPort: number;
  /** Data folder: `stratus.db` (SQLite) and `tls/`. */
  dataDir: string;
  /** `postgres://…` switches the store to PostgreSQL; unset means SQLite in the data folder. */
  databaseUrl?: string;
  /** PostgreSQL schema to use (created when missing); tests give each run its own. */
  databaseSchema?: string;
  /** SQLite `synchronous` mode (`STRATUS_SQLITE_SYNCHRONOUS`, default `NORMAL`; see `SqliteSynchronous` in src/store/db.ts). */
  sqliteSynchronous: 'OFF' | 'NORMAL' | 'FULL' | 'EXTRA';
  /** Origin written into next links, Location headers and token issuers; default: the HTTPS origin. */
  publicUrl?: string;
  /**
   * `STRATUS_PROVIDER_NAMESPACE_ALIASES`: provider-namespace prefixes (each ending in `.`) the
   * resource manager serves as `Vendor.` in paths, filters and bodies (src/services/arm/aliases.ts).
   */
  providerNamespaceAliases: string[];
  /** PEM files of a given certificate and key (instead of the generated local CA). */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** pino level. */
  logLevel: string;
  /** Seed the demo data set into an empty store (default true). */
  seed: boolean;
  /**
   * World files to load instead of the demo data set (`--world`, repeatable; `STRATUS_WORLD`,
   * several separated by the path delimiter `:`), merged in order (docs/worlds.md).
   */
  world: string[];
  /**
   * Outbound calls (mail notifications) may go to loopback and private-range receivers on ports
   * other than Stratus's own (`STRATUS_ALLOW_LOOPBACK_RECEIVERS`, default true; issue 11).
   */
  allowLoopbackReceivers: boolean;
  /**
   * `STRATUS_AUDIENCE_ALIASES`: extra audience URIs per API family (`family=uri,…`), e.g. the
   * default audience an official client asks for; tokens asked for `<uri>/.default` carry `<uri>` as `aud`.
   */
  audienceAliases: AudienceAlias[];
  /**
   * Control key from `STRATUS_CONTROL_KEY`; when unset the key is generated into
   * `<dataDir>/control.key` on first start (see core/control-key.ts).
   */
  controlKey?: string;
  settings: Settings;
}

/** One `family=uri` pair of `STRATUS_AUDIENCE_ALIASES`. */
export interface AudienceAlias {
  /** API family name (`arm`, `analytics`, `platform`, `mail`, `wopi`). */
  family: string;
  /** Audience URI as given (e.g. `https://management.example/`). */
  uri: string;
}

const aliasFamilies = ['arm', 'analytics', 'platform', 'mail', 'wopi'];

/**
 * Parses `STRATUS_AUDIENCE_ALIASES` (`family=uri` pairs separated by commas; blanks ignored).
 * @throws ConfigError for an unknown family or a value that is not an absolute URI.
 */
export function parseAudienceAliases(raw: string | undefined): AudienceAlias[] {
  const out: AudienceAlias[] = [];
  for (const part of (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    const family = eq > 0 ? part.slice(0, eq).trim().toLowerCase() : '';
    const uri = eq > 0 ? part.slice(eq + 1).trim() : '';
    if (!aliasFamilies.includes(family)) throw new ConfigError(`STRATUS_AUDIENCE_ALIASES: '${part}' must be family=uri with family one of ${aliasFamilies.join(', ')}`);
    if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(uri)) throw new ConfigError(`STRATUS_AUDIENCE_ALIASES: '${uri}' is not an absolute URI`);
    const clash = out.find((o) => o.uri.replace(/\/+$/, '') === uri.replace(/\/+$/, '') && o.family !== family);
    if (clash) throw new ConfigError(`STRATUS_AUDIENCE_ALIASES: '${uri}' is given for both ${clash.family} and ${family}`);
    out.push({ family, uri });
  }
  return out;
}

/** Defaults of {@link Settings}. */
export const defaultSettings: Settings = {
  armReadsPerWindow: 15000,
  armReadWindowSeconds: 3600,
  analyticsRequestsPerWindow: 200,
  analyticsWindowSeconds: 3600,
  platformRequestsPerWindow: 1000,
  platformWindowSeconds: 60,
  platformProvisioningDelaySeconds: 0,
  mailRequestsPerWindow: 10000,
  mailWindowSeconds: 600,
  mailSubscriptionMaxMinutes: 10080,
  mailSubscriptionValidationTimeoutMs: 10000,
  mailNotificationPollMs: 250,
  tokenLifetimeSeconds: 3600,
  requestLogSize: 1000,
  instanceLeaseMs: 3000,
  signInLockoutThreshold: 10,
  signInLockoutSeconds: 60,
  deviceCodeStartsPerClient: 120,
  deviceCodeStartsPerAddress: 30,
  deviceCodeStartWindowSeconds: 60,
};

const settingEnv: Record<keyof Settings, string> = {
  armReadsPerWindow: 'STRATUS_ARM_READS_PER_WINDOW',
  armReadWindowSeconds: 'STRATUS_ARM_READ_WINDOW_SECONDS',
  analyticsRequestsPerWindow: 'STRATUS_ANALYTICS_REQUESTS_PER_WINDOW',
  analyticsWindowSeconds: 'STRATUS_ANALYTICS_WINDOW_SECONDS',
  platformRequestsPerWindow: 'STRATUS_PLATFORM_REQUESTS_PER_WINDOW',
  platformWindowSeconds: 'STRATUS_PLATFORM_WINDOW_SECONDS',
  platformProvisioningDelaySeconds: 'STRATUS_PLATFORM_PROVISIONING_DELAY_SECONDS',
  mailRequestsPerWindow: 'STRATUS_MAIL_REQUESTS_PER_WINDOW',
  mailWindowSeconds: 'STRATUS_MAIL_WINDOW_SECONDS',
  mailSubscriptionMaxMinutes: 'STRATUS_MAIL_SUBSCRIPTION_MAX_MINUTES',
  mailSubscriptionValidationTimeoutMs: 'STRATUS_MAIL_SUBSCRIPTION_VALIDATION_TIMEOUT_MS',
  mailNotificationPollMs: 'STRATUS_MAIL_NOTIFICATION_POLL_MS',
  tokenLifetimeSeconds: 'STRATUS_TOKEN_LIFETIME_SECONDS',
  requestLogSize: 'STRATUS_REQUEST_LOG_SIZE',
  instanceLeaseMs: 'STRATUS_INSTANCE_LEASE_MS',
  signInLockoutThreshold: 'STRATUS_SIGNIN_LOCKOUT_THRESHOLD',
  signInLockoutSeconds: 'STRATUS_SIGNIN_LOCKOUT_SECONDS',
  deviceCodeStartsPerClient: 'STRATUS_DEVICE_CODE_STARTS_PER_CLIENT',
  deviceCodeStartsPerAddress: 'STRATUS_DEVICE_CODE_STARTS_PER_ADDRESS',
  deviceCodeStartWindowSeconds: 'STRATUS_DEVICE_CODE_START_WINDOW_SECONDS',
};

/** Names of the environment variables of every setting, for the README and `--help`. */
export const settingEnvironment = settingEnv;

/** Flags given on the command line (already parsed by the CLI library). */
export interface ConfigFlags {
  host?: string;
  httpPort?: string | number;
  httpsPort?: string | number;
  dataDir?: string;
  databaseUrl?: string;
  publicUrl?: string;
  tlsCert?: string;
  tlsKey?: string;
  logLevel?: string;
  /** `--world <file>`, repeatable. */
  world?: string[];
}

/** Thrown for a setting that does not parse; the CLI prints its message and exits 2. */
export class ConfigError extends Error {}

function int(name: string, raw: string | number | undefined, fallback: number, min = 0): number {
  if (raw === undefined || raw === '') return fallback;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer ≥ ${min}, got '${raw}'`);
  return n;
}

function bool(name: string, raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  if (/^(true|1|yes|on)$/i.test(raw)) return true;
  if (/^(false|0|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got '${raw}'`);
}

/**
 * Builds the configuration from flags, then `env`, then defaults.
 * @throws ConfigError when a value does not parse (ports, numbers, URLs).
 */
export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const settings = { ...defaultSettings };
  for (const key of Object.keys(settingEnv) as (keyof Settings)[]) {
    settings[key] = int(settingEnv[key], env[settingEnv[key]], defaultSettings[key]);
  }
  const publicUrl = flags.publicUrl ?? env.STRATUS_PUBLIC_URL;
  if (publicUrl !== undefined && publicUrl !== '') {
    try {
      new URL(publicUrl);
    } catch {
      throw new ConfigError(`STRATUS_PUBLIC_URL must be an absolute URL, got '${publicUrl}'`);
    }
  }
  const databaseUrl = flags.databaseUrl ?? env.STRATUS_DATABASE_URL;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`STRATUS_DATABASE_URL must be a postgres:// URL, got '${databaseUrl}'`);
  }
  const sqliteSynchronous = (env.STRATUS_SQLITE_SYNCHRONOUS || 'NORMAL').toUpperCase();
  if (!['OFF', 'NORMAL', 'FULL', 'EXTRA'].includes(sqliteSynchronous)) {
    throw new ConfigError(`STRATUS_SQLITE_SYNCHRONOUS must be one of OFF, NORMAL, FULL, EXTRA, got '${env.STRATUS_SQLITE_SYNCHRONOUS}'`);
  }
  return {
    host: flags.host ?? env.STRATUS_HOST ?? '127.0.0.1',
    httpPort: int('STRATUS_HTTP_PORT', flags.httpPort ?? env.STRATUS_HTTP_PORT, 8080),
    httpsPort: int('STRATUS_HTTPS_PORT', flags.httpsPort ?? env.STRATUS_HTTPS_PORT, 8443, -1),
    dataDir: path.resolve(flags.dataDir ?? env.STRATUS_DATA_DIR ?? './.stratus'),
    databaseUrl: databaseUrl || undefined,
    databaseSchema: env.STRATUS_DATABASE_SCHEMA || undefined,
    sqliteSynchronous: sqliteSynchronous as Config['sqliteSynchronous'],
    publicUrl: publicUrl ? publicUrl.replace(/\/+$/, '') : undefined,
    providerNamespaceAliases: parseNamespaceAliases(env.STRATUS_PROVIDER_NAMESPACE_ALIASES),
    tlsCertFile: flags.tlsCert ?? env.STRATUS_TLS_CERT,
    tlsKeyFile: flags.tlsKey ?? env.STRATUS_TLS_KEY,
    logLevel: flags.logLevel ?? env.STRATUS_LOG_LEVEL ?? 'info',
    seed: (env.STRATUS_SEED ?? 'true') !== 'false',
    world: flags.world?.length ? [...flags.world] : (env.STRATUS_WORLD ?? '').split(path.delimiter).filter((f) => f.trim() !== ''),
    allowLoopbackReceivers: bool('STRATUS_ALLOW_LOOPBACK_RECEIVERS', env.STRATUS_ALLOW_LOOPBACK_RECEIVERS, true),
    audienceAliases: parseAudienceAliases(env.STRATUS_AUDIENCE_ALIASES),
    controlKey: env.STRATUS_CONTROL_KEY || undefined,
    settings,
  };
}

/**
 * Parses `STRATUS_PROVIDER_NAMESPACE_ALIASES`: comma-separated namespace prefixes such as
 * `Acme.` (the trailing dot is added when missing; blanks ignored; `Vendor.` itself is dropped).
 * @throws ConfigError for a prefix that is not letters and digits.
 */
export function parseNamespaceAliases(raw: string | undefined): string[] {
  const out: string[] = [];
  for (const part of (raw ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    if (!/^[A-Za-z][A-Za-z0-9]*\.?$/.test(part)) throw new ConfigError(`STRATUS_PROVIDER_NAMESPACE_ALIASES: '${part}' must be a namespace prefix such as 'Acme.'`);
    const prefix = part.endsWith('.') ? part : `${part}.`;
    if (prefix.toLowerCase() !== 'vendor.') out.push(prefix);
  }
  return out;
}
