/**
 * The data kinds of a world file (issue 28 item 1): what every area's part of a tenant shares —
 * the resolution context (principals by name, the tenant's users, subscriptions and resource
 * groups, one duplicate check per kind across the whole world, the problems list) and the glue
 * `load.ts` and `export.ts` call: {@link resolveTenantData} (after every file's principals are
 * known; returns the writes to run once the directory and hierarchy are written) and
 * {@link exportData}. Each kind lives in its own file (`platform.ts`, `automation.ts`,
 * `datashare.ts`, `resources.ts`, `mail.ts`, `billing.ts`, `analytics.ts`) with its schema, resolution, load through the area's store functions, and
 * export.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.ts';
import { stableUuid } from '../core/ids.ts';
import { nowIso } from '../core/clock.ts';
import { ArmStore } from '../services/arm/store.ts';
import type { Database } from '../store/database.ts';
import type { World } from './file.ts';
import type { ResolvedTenant } from './load.ts';
import type { WorldFileData, WorldTenantData } from './schema.ts';
import { exportPlatform, resolvePlatform } from './platform.ts';
import { exportAutomation, resolveAutomation } from './automation.ts';
import { exportDataShare, resolveDataShare } from './datashare.ts';
import { exportResources, resolveResources } from './resources.ts';
import { exportMail, resolveMail } from './mail.ts';
import { exportBilling, resolveBilling } from './billing.ts';
import { exportAnalytics, resolveAnalytics } from './analytics.ts';

/** A principal of the tenant as a reference names it. */
export interface DataPrincipal {
  id: string;
  type: 'User' | 'ServicePrincipal';
}

/** A write of resolved data, run after the directory and the hierarchy are written. */
export type DataWrite = (ctx: AppContext) => Promise<void>;

/** A kind's write of resolved data, in the transaction `db` that writes the whole tenant's data. */
export type KindWrite = (ctx: AppContext, db: Kysely<Database>) => Promise<void>;

/** A resource group of the tenant, as the nested resource kinds need it. */
export interface DataGroup {
  subscriptionId: string;
  name: string;
  location: string;
  /** `/subscriptions/<id>/resourceGroups/<name>`. */
  id: string;
  /** Path of the group in the file (`/tenants/0/subscriptions/1/resourceGroups/0`). */
  path: string;
  data: NonNullable<WorldTenantData['subscriptions']>[number]['resourceGroups'] extends (infer G)[] | undefined ? G : never;
}

/** What a kind's resolver gets for one tenant entry of one file. */
export interface DataContext {
  tenant: ResolvedTenant;
  /** The tenant entry of the file. */
  data: WorldTenantData;
  /** `file:line:col: /tenants/<i><p>` of a path below the tenant entry. */
  at(p: string): string;
  problems: string[];
  /** A user or application by UPN, display name or id (lower case is not needed). */
  principal(name: string): DataPrincipal | undefined;
  /** A user of the tenant by UPN or id. */
  user(name: string): ResolvedTenant['users'][number] | undefined;
  /** The resource groups of this tenant entry. */
  groups: DataGroup[];
  /**
   * Records `key` of `kind` as seen at `path` (below the tenant entry); notes a duplicate (with
   * the first place) and returns false when it was seen before anywhere in the world. Positions
   * are looked up only for a duplicate (a large JSON world has tens of thousands of keys).
   */
  unique(kind: string, key: string, path: string): boolean;
  /** The writes to run, in order (in one transaction per tenant entry). */
  writes: KindWrite[];
  /** The world's time (ISO; its clock, else the time of the load): the default of created and modified times. */
  now: string;
  /** The world file the tenant entry is in (`request body` for a `PUT /_stratus/world`): files it names are relative to it. */
  file: string;
  /** Resource-manager resources of the data kinds, written first in batches (`ArmStore.insertResources`). */
  resources: Parameters<ArmStore['insertResources']>[0];
}

/** Duplicate checks per resolution (keyed by its problems list, one per `resolveWorld` call): kind → key → first place. */
const seenByWorld = new WeakMap<string[], Map<string, Map<string, { path: string; at: (p: string) => string }>>>();

/**
 * Resolves the data kinds of one tenant entry (called by `resolveWorld` once every file's
 * principals are known) and returns the writes that load them.
 */
export function resolveTenantData(world: World, t: WorldTenantData, tenant: ResolvedTenant, at: (p: string) => string, problems: string[], principals: Map<string, DataPrincipal>): DataWrite[] {
  let seen = seenByWorld.get(problems);
  if (!seen) seenByWorld.set(problems, (seen = new Map()));
  const groups: DataGroup[] = [];
  (t.subscriptions ?? []).forEach((s, i) => {
    const sid = (s.subscriptionId ?? stableUuid('world-subscription', tenant.id, s.displayName)).toLowerCase();
    (s.resourceGroups ?? []).forEach((g, j) => groups.push({ subscriptionId: sid, name: g.name, location: g.location, id: `/subscriptions/${sid}/resourceGroups/${g.name}`, path: `/subscriptions/${i}/resourceGroups/${j}`, data: g }));
  });
  const c: DataContext = {
    tenant,
    data: t,
    at,
    problems,
    principal: (name) => principals.get(name.toLowerCase()),
    user: (name) => tenant.users.find((u) => u.upn.toLowerCase() === name.toLowerCase() || u.id === name.toLowerCase()),
    groups,
    unique(kind, key, path) {
      let m = seen.get(kind);
      if (!m) seen.set(kind, (m = new Map()));
      const first = m.get(key);
      if (first !== undefined) {
        problems.push(`${at(path)}: duplicate ${kind} ${key} (first at ${first.at(first.path).split(': ')[0]})`);
        return false;
      }
      m.set(key, { path, at });
      return true;
    },
    writes: [],
    now: world.clock !== undefined ? new Date(world.clock).toISOString() : nowIso(),
    resources: [],
    file: (t as World['tenants'][number]).from?.file ?? 'request body',
  };
  resolveMail(c);
  resolvePlatform(c);
  resolveAutomation(c);
  resolveDataShare(c);
  resolveResources(c);
  resolveBilling(c);
  resolveAnalytics(c);
  if (!c.writes.length && !c.resources.length) return [];
  return [
    (ctx) =>
      ctx.store.transaction(async (trx) => {
        await new ArmStore(trx, ctx.cache).insertResources(c.resources);
        for (const w of c.writes) await w(ctx, trx);
      }),
  ];
}

/** Names of the tenant's principals by id (users by UPN, service principals by display name), for exports. */
export async function principalNames(db: Kysely<Database>): Promise<Map<string, string>> {
  const [users, apps] = await Promise.all([db.selectFrom('directory_users').select(['id', 'upn']).execute(), db.selectFrom('directory_apps').select(['object_id', 'display_name']).execute()]);
  const out = new Map<string, string>();
  for (const u of users) out.set(u.id.toLowerCase(), u.upn);
  for (const a of apps) out.set(a.object_id.toLowerCase(), a.display_name);
  return out;
}

/** Adds every data kind of the store to the exported document `out` (its tenants and resource groups already written). */
export async function exportData(db: Kysely<Database>, out: WorldFileData): Promise<void> {
  const names = await principalNames(db);
  await exportMail(db, out, names);
  await exportPlatform(db, out, names);
  await exportAutomation(db, out);
  await exportDataShare(db, out);
  await exportResources(db, out);
  await exportBilling(db, out, names);
  await exportAnalytics(db, out);
}

/** Sorts by a string key (code-unit order: the same on every machine). */
export const byKey = <T>(key: (x: T) => string) => (a: T, b: T) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** The exported resource groups of `out` by lower-case group id. */
export function exportedGroups(out: WorldFileData): Map<string, NonNullable<NonNullable<NonNullable<WorldFileData['tenants']>[number]['subscriptions']>[number]['resourceGroups']>[number]> {
  const m = new Map();
  for (const t of out.tenants ?? []) for (const s of t.subscriptions ?? []) for (const g of s.resourceGroups ?? []) m.set(`/subscriptions/${s.subscriptionId}/resourcegroups/${g.name}`.toLowerCase(), g);
  return m;
}
