/**
 * Shapes shared by the programmatic start (src/api.ts, the package's entry) and the server's
 * `serve --json` line (src/ready.ts). Types only: this file imports nothing, so the package's
 * type declarations stand alone.
 */

/** A user of the world, with the password the token endpoint accepts (password grant). */
export interface StratusUser {
  userPrincipalName: string;
  password: string;
  /** Tenant id of the user's home tenant. */
  tenant: string;
}

/** An application (service principal) and its client secret (client-credentials grant). */
export interface StratusApp {
  clientId: string;
  clientSecret: string;
  /** Tenant id the application lives in. */
  tenant: string;
}

/** A tenant of the world. */
export interface StratusTenant {
  id: string;
  /** Verified domain, e.g. `stratus.test`. */
  domain: string;
}

/** Identities of the demo world the server seeded: what tests sign in as. */
export interface StratusIdentities {
  /** The default tenant (the first of {@link StratusIdentities.tenants}). */
  tenant: StratusTenant;
  tenants: StratusTenant[];
  /** Tenant administrator (Owner of the default subscription). */
  admin: StratusUser;
  /** A user without roles. */
  user: StratusUser;
  /** The development service principal. */
  app: StratusApp;
  /** Public client id for interactive and password flows. */
  publicClientId: string;
  /** Default subscription and its resource group. */
  subscription: { id: string; resourceGroup: string };
}

/** The one JSON line `stratus serve --json` prints once it listens. */
export interface ReadyInfo {
  /** Always `"ready"`: tells the line from log lines. */
  stratus: 'ready';
  version: string;
  /** Public origin (HTTPS when on): token issuers, links, the base of every API. */
  origin: string;
  httpsUrl?: string;
  /** Plain-HTTP origin. */
  httpUrl: string;
  /** CA certificate file clients trust (undefined with a given certificate). */
  caFile?: string;
  /** Control key: `Authorization: Bearer <key>` on `/_stratus/*`. */
  controlKey: string;
  dataDir: string;
  /** Whether the store is thrown away at stop. */
  ephemeral: boolean;
  pid: number;
  /** World files the server loaded (`--world`/`STRATUS_WORLD`); empty for the demo world. */
  world: string[];
  /** The demo world's identities (with a world file, the credentials are the file's own). */
  identities: StratusIdentities;
}
