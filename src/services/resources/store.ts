/**
 * Queries and migrations of the resources area (issue 27): provider registrations (read
 * through the `arm` cache area: every namespaced PUT asks), resource-group deletes, the tags of
 * subscriptions, the resource-group listing and the generic resource listing (the union of
 * every area's `listedResources` query, keyset-paged by id).
 */
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import { fromJson, isPostgres, toJson } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';
import type { CacheHub } from '../../core/cache.ts';
import type { ListedResourceColumns, ListedResourceQuery } from '../../context.ts';
import type { ResourcesDatabase } from './tables.ts';

/** Tables of the area, children first. */
export const resourcesTables: (keyof ResourcesDatabase)[] = ['resources_subscription_tags', 'resources_group_deletions', 'resources_registrations'];

/** Migrations of the area. */
export const resourcesMigrations: Migrations = {
  resources_0001_tables: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('resources_registrations')
        .addColumn('subscription_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('namespace_lower', 'varchar(128)', (c) => c.notNull())
        .addColumn('state', 'varchar(32)', (c) => c.notNull())
        .addColumn('changed_at', 'varchar(32)', (c) => c.notNull())
        .addPrimaryKeyConstraint('resources_registrations_pk', ['subscription_id', 'namespace_lower'])
        .execute();
      await db.schema
        .createTable('resources_group_deletions')
        .addColumn('operation_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('subscription_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('name_lower', 'varchar(90)', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('api_version', 'varchar(32)', (c) => c.notNull())
        .addColumn('started_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('completes_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('resources_group_deletions_group').on('resources_group_deletions').columns(['subscription_id', 'name_lower', 'completes_at']).execute();
      await db.schema
        .createTable('resources_subscription_tags')
        .addColumn('subscription_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tags', 'text', (c) => c.notNull())
        .execute();
    },
  },
};

/** A stored registration (absent: the namespace is registered, the default of every subscription). */
export interface Registration {
  state: 'Registered' | 'NotRegistered';
  changedAt: string;
}

/** A resource-group delete. */
export interface GroupDeletion {
  operationId: string;
  tenantId: string;
  subscriptionId: string;
  nameLower: string;
  body: Record<string, unknown>;
  apiVersion: string;
  startedAt: string;
  completesAt: string;
}

function toDeletion(r: any): GroupDeletion {
  return {
    operationId: r.operation_id,
    tenantId: r.tenant_id,
    subscriptionId: r.subscription_id,
    nameLower: r.name_lower,
    body: fromJson(r.body),
    apiVersion: r.api_version,
    startedAt: r.started_at,
    completesAt: r.completes_at,
  };
}

/** A JSON member of a TEXT column as text, on either dialect (`member` a plain key). */
export function jsonMember(db: Kysely<Database>, column: string, ...path: string[]) {
  if (isPostgres(db)) return sql<string | null>`(${sql.ref(column)}::jsonb #>> ${sql.val(`{${path.map((p) => `"${p.replace(/["\\]/g, '\\$&')}"`).join(',')}}`)})`;
  return sql<string | null>`json_extract(${sql.ref(column)}, ${sql.val('$' + path.map((p) => `."${p.replace(/["\\]/g, '\\$&')}"`).join(''))})`;
}

/** Queries of the area. Writes that decide later requests (registrations) change the `arm` cache area in their transaction. */
export class ResourcesStore {
  constructor(
    readonly db: Kysely<Database>,
    private readonly cache?: CacheHub,
  ) {}

  /** The stored registration of `namespace` in a subscription, read through the `arm` cache area. */
  async registration(subscriptionId: string, namespace: string): Promise<Registration | undefined> {
    const key = `${subscriptionId.toLowerCase()}|${namespace.toLowerCase()}`;
    const load = async (): Promise<Registration | undefined> => {
      const r = await this.db
        .selectFrom('resources_registrations')
        .select(['state', 'changed_at'])
        .where('subscription_id', '=', subscriptionId.toLowerCase())
        .where('namespace_lower', '=', namespace.toLowerCase())
        .executeTakeFirst();
      return r ? Object.freeze({ state: r.state as Registration['state'], changedAt: r.changed_at }) : undefined;
    };
    const kept = this.cache?.shared<Registration | undefined>('resources.registrations', 'arm', 10_000);
    return kept ? kept.get(key, load) : load();
  }

  /** The stored registrations of a subscription, by lower-case namespace. */
  async registrations(subscriptionId: string): Promise<Map<string, Registration>> {
    const rows = await this.db.selectFrom('resources_registrations').selectAll().where('subscription_id', '=', subscriptionId.toLowerCase()).execute();
    return new Map(rows.map((r) => [r.namespace_lower, { state: r.state as Registration['state'], changedAt: r.changed_at }]));
  }

  /** Records a registration state (upsert); its table's triggers change the `arm` cache area (`core/cache-tables.ts`). */
  async setRegistration(subscriptionId: string, namespace: string, state: Registration['state'], at: string): Promise<void> {
    await this.db.transaction().execute(async (t) => {
      const trx: Kysely<Database> = t;
      const key = { subscription_id: subscriptionId.toLowerCase(), namespace_lower: namespace.toLowerCase() };
      const r = await trx.updateTable('resources_registrations').set({ state, changed_at: at }).where('subscription_id', '=', key.subscription_id).where('namespace_lower', '=', key.namespace_lower).executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) await trx.insertInto('resources_registrations').values({ ...key, state, changed_at: at }).execute();
    });
  }

  /** The latest delete of a group still running at `now` (ISO), if any. */
  async runningDeletion(subscriptionId: string, name: string, now: string, db: Kysely<Database> = this.db): Promise<GroupDeletion | undefined> {
    const r = await db
      .selectFrom('resources_group_deletions')
      .selectAll()
      .where('subscription_id', '=', subscriptionId.toLowerCase())
      .where('name_lower', '=', name.toLowerCase())
      .where('completes_at', '>', now)
      .orderBy('completes_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return r ? toDeletion(r) : undefined;
  }

  /** A delete by its operation id. */
  async deletion(operationId: string): Promise<GroupDeletion | undefined> {
    const r = await this.db.selectFrom('resources_group_deletions').selectAll().where('operation_id', '=', operationId).executeTakeFirst();
    return r ? toDeletion(r) : undefined;
  }

  /** Records a delete (in the delete's transaction). */
  async addDeletion(d: GroupDeletion, db: Kysely<Database>): Promise<void> {
    await db
      .insertInto('resources_group_deletions')
      .values({
        operation_id: d.operationId,
        tenant_id: d.tenantId,
        subscription_id: d.subscriptionId.toLowerCase(),
        name_lower: d.nameLower,
        body: toJson(d.body),
        api_version: d.apiVersion,
        started_at: d.startedAt,
        completes_at: d.completesAt,
      })
      .execute();
  }

  /**
   * A page of a subscription's resource groups in name order after `afterLower`, narrowed to a
   * tag name (and value) and to some names (lower case; the groups a caller may read) when given.
   */
  async listGroups(subscriptionId: string, limit: number, afterLower?: string, tag?: { name: string; value?: string }, namesLower?: readonly string[]) {
    let q = this.db.selectFrom('arm_resource_groups').selectAll().where('subscription_id', '=', subscriptionId.toLowerCase());
    if (namesLower !== undefined) q = q.where('name_lower', 'in', namesLower.length ? [...namesLower] : ['']);
    if (afterLower !== undefined) q = q.where('name_lower', '>', afterLower);
    if (tag) {
      const v = jsonMember(this.db, 'tags', tag.name);
      q = tag.value === undefined ? q.where(v, 'is not', null) : q.where(v, '=', tag.value);
    }
    return q.orderBy('name_lower').limit(limit).execute();
  }

  /** The tags of a subscription (`{}` when none were set). */
  async subscriptionTags(subscriptionId: string): Promise<Record<string, string>> {
    const r = await this.db.selectFrom('resources_subscription_tags').select('tags').where('subscription_id', '=', subscriptionId.toLowerCase()).executeTakeFirst();
    return r ? fromJson(r.tags) : {};
  }

  /** Replaces the tags of a subscription. */
  async setSubscriptionTags(subscriptionId: string, tags: Record<string, string>): Promise<void> {
    const id = subscriptionId.toLowerCase();
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('resources_subscription_tags').where('subscription_id', '=', id).execute();
      if (Object.keys(tags).length > 0) await trx.insertInto('resources_subscription_tags').values({ subscription_id: id, tags: toJson(tags) }).execute();
    });
  }

  /**
   * A page of listed resources: the union of the areas' queries (each narrowed through its
   * index to the subscription and group), after `afterLower` in id order, filtered by `where`
   * (built on the union's columns), at most `limit`.
   */
  async listResources(parts: ListedResourceQuery[], limit: number, afterLower: string | undefined, where: ((db: Kysely<Database>) => Expression<SqlBool>) | undefined): Promise<ListedResourceColumns[]> {
    if (parts.length === 0) return [];
    let union = parts[0]!;
    for (const p of parts.slice(1)) union = union.unionAll(p);
    let q = this.db.selectFrom(union.as('u')).selectAll();
    if (afterLower !== undefined) q = q.where('u.id_lower', '>', afterLower);
    if (where) q = q.where(where(this.db));
    return (await q.orderBy('u.id_lower').limit(limit).execute()) as ListedResourceColumns[];
  }
}
