/**
 * What every part of the app is handed: the configuration, the store, the logger, the
 * identity provider and the rate limiter; and the shape of one API area (a
 * {@link ServiceModule}) that `buildApp` registers (design: "Layout").
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Config } from './config.ts';
import type { Store, Migrations } from './store/db.ts';
import type { Database } from './store/database.ts';
import type { Identity } from './core/identity/identity.ts';
import type { RateLimiter } from './core/rate-limit.ts';
import type { CacheHub } from './core/cache.ts';
import type { RequestLog } from './core/request-log.ts';
import type { OutboundGuard } from './core/outbound.ts';
import type { FaultInjector } from './core/faults.ts';

/** Shared services of one running app. */
export interface AppContext {
  config: Config;
  store: Store<Database>;
  log: FastifyBaseLogger;
  identity: Identity;
  rateLimiter: RateLimiter;
  /** Every outbound call to a caller-chosen URL goes through this (never to Stratus itself; issue 11). */
  outbound: OutboundGuard;
  /** Per-instance read caches and their invalidation; `cache.bus` wakes background workers (core/cache.ts). */
  cache: CacheHub;
  /** The control-plane key (`STRATUS_CONTROL_KEY` or `<data dir>/control.key`). */
  controlKey: string;
  /** The last requests, for the console and `GET /_stratus/requests` (core/request-log.ts). */
  requestLog: RequestLog;
  /** Injected-fault rules of this instance (`/_stratus/faults`). */
  faults: FaultInjector;
  /**
   * The public origin (no trailing slash) written into next links, Location headers and
   * token issuers: `STRATUS_PUBLIC_URL`, else the HTTPS origin once listening, else the
   * HTTP origin.
   */
  origin(): string;
  /** Background tasks (notification delivery, …) register a stop function here; run at shutdown. */
  onClose(fn: () => Promise<void> | void): void;
}

/** The context a bulk generator of the CLI gets (the app context). */
export type SeedContext = AppContext;

/** One API area: its tables and routes (its demo data is in the demo world file, `src/world/worlds/demo.yaml`). */
export interface ServiceModule {
  /** Short area name (`compute`, `mail`, …). */
  name: string;
  /** The area's migrations; names `<area>_<NNNN>_<what>`, unique across areas. */
  migrations: Migrations;
  /** The area's data tables, children before parents: `POST /_stratus/reset` empties them before reseeding. */
  tables: (keyof Database & string)[];
  /** Registers the area's routes (and background workers) on the app. */
  register(app: FastifyInstance, ctx: AppContext): Promise<void> | void;
  /**
   * Removes every row the area keeps inside resource group `groupName` of `subscriptionId`
   * (names case-insensitive), in the resource-group delete's transaction `trx` (issue 27).
   * Called for every module in reverse registration order (children before parents: the `arm`
   * module, which removes `arm_resources`, the role assignments and the group row, runs last),
   * so an area whose rows hang below a resource group implements it or its rows outlive the group.
   * Caches need nothing: the triggers of the cached tables change their areas in `trx` (`core/cache-tables.ts`).
   */
  deleteResourceGroup?(ctx: AppContext, trx: Kysely<Database>, subscriptionId: string, groupName: string): Promise<void>;
  /**
   * The area's resources that are not rows of `arm_resources`, for the generic resource listing
   * (`GET …/resources`): a query over the area's table(s) giving {@link ListedResourceColumns},
   * narrowed through an index to the subscription (and group when given).
   */
  listedResources?(db: Kysely<Database>, subscriptionId: string, groupName?: string): ListedResourceQuery;
}

/** The columns every {@link ServiceModule.listedResources} query selects (strings; `body` the resource's JSON). */
export interface ListedResourceColumns {
  id: string;
  id_lower: string;
  type_lower: string;
  name: string;
  resource_group_lower: string;
  body: string;
  created_at: string;
  updated_at: string;
}

/** A query of listed resources (any select builder whose rows are {@link ListedResourceColumns}). */
export type ListedResourceQuery = import('kysely').SelectQueryBuilder<any, any, ListedResourceColumns>;
