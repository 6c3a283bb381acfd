/**
 * The resource-manager hierarchy every ARM operation shares: management groups,
 * subscriptions, resource groups, role definitions, role assignments and a generic table
 * of tracked resources (`arm_resources`) that areas use for their plain ARM resources
 * (data share accounts, automation accounts, webhooks, …).
 */
import { sql, type Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import type { AreaCache, CacheHub } from '../../core/cache.ts';
import { fromJson, lazyJson, toJson } from '../../store/db.ts';
import type { Database } from '../../store/database.ts';
import type { ArmDatabase } from './tables.ts';
import { param, prepared } from '../../store/prepared.ts';
import { roleMigrations, roleStore } from './role-store.ts';
import type { RoleDefinition } from './roles.ts';
import { groupMigrations } from './groups.ts';

/** A tracked resource by its lower-cased id (the request path's hottest read, compiled once). */
const resourceById = prepared((db: Kysely<Database>) => db.selectFrom('arm_resources').selectAll().where('id_lower', '=', param(0)));

/** A management group; `parentId` is the parent's name (undefined for the tenant root). */
export interface ManagementGroup {
  name: string;
  tenantId: string;
  displayName: string;
  parentName?: string;
}

/** A subscription row. */
export interface Subscription {
  subscriptionId: string;
  tenantId: string;
  displayName: string;
  state: string;
  managementGroup: string;
}

/** A resource group row. */
export interface ResourceGroup {
  subscriptionId: string;
  name: string;
  location: string;
  tags: Record<string, string>;
  /** The id of the resource managing the group (`managedBy`), when set. */
  managedBy?: string;
}

/** A role assignment: `principalId` holds `roleDefinitionId` (a GUID) at `scope`. */
export interface RoleAssignment {
  id: string;
  tenantId: string;
  scope: string;
  roleDefinitionId: string;
  principalId: string;
  principalType: 'User' | 'ServicePrincipal' | 'Group';
}

/** A tracked ARM resource: the full JSON document plus indexed columns. */
export interface ArmResourceRow {
  /** Fully qualified id in its original casing. */
  id: string;
  tenantId: string;
  subscriptionId: string;
  resourceGroup: string;
  /** Full type, e.g. `Vendor.DataShare/accounts/shares`. */
  type: string;
  name: string;
  /** Parent resource id (children of accounts), or the resource group id. */
  parentId: string;
  body: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Migrations of the ARM hierarchy tables. */
export const armMigrations: Migrations = {
  arm_0001_hierarchy: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('arm_management_groups')
        .addColumn('name_lower', 'varchar(128)', (c) => c.primaryKey())
        .addColumn('name', 'varchar(128)', (c) => c.notNull())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('parent_name_lower', 'varchar(128)')
        .execute();
      await db.schema
        .createTable('arm_subscriptions')
        .addColumn('subscription_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('state', 'varchar(32)', (c) => c.notNull())
        .addColumn('management_group_lower', 'varchar(128)', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('arm_resource_groups')
        .addColumn('subscription_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('name_lower', 'varchar(90)', (c) => c.notNull())
        .addColumn('name', 'varchar(90)', (c) => c.notNull())
        .addColumn('location', 'varchar(64)', (c) => c.notNull())
        .addColumn('tags', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('arm_resource_groups_pk', ['subscription_id', 'name_lower'])
        .execute();
      await db.schema
        .createTable('arm_role_assignments')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('scope_lower', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('role_definition_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('principal_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('principal_type', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('arm_role_assignments_principal').on('arm_role_assignments').columns(['principal_id']).execute();
      await db.schema
        .createTable('arm_resources')
        .addColumn('id_lower', 'varchar(1024)', (c) => c.primaryKey())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('subscription_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('resource_group_lower', 'varchar(90)', (c) => c.notNull())
        .addColumn('type_lower', 'varchar(256)', (c) => c.notNull())
        .addColumn('name', 'varchar(256)', (c) => c.notNull())
        .addColumn('parent_id_lower', 'varchar(1024)', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('updated_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('arm_resources_parent').on('arm_resources').columns(['parent_id_lower', 'type_lower', 'id_lower']).execute();
    },
  },
  arm_0002_resources_by_subscription: {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('arm_resources_subscription').on('arm_resources').columns(['tenant_id', 'subscription_id', 'type_lower', 'id_lower']).execute();
    },
  },
  ...groupMigrations,
  ...roleMigrations,
};

/** ARM tables cleared by a reset, children first. */
export const armTables: (keyof ArmDatabase)[] = ['arm_resources', 'arm_role_assignments', 'arm_role_definitions', 'arm_resource_groups', 'arm_subscriptions', 'arm_management_groups'];

function toRow(r: any): ArmResourceRow {
  const row = {
    id: r.id,
    tenantId: r.tenant_id,
    subscriptionId: r.subscription_id,
    resourceGroup: r.resource_group_lower,
    type: r.type_lower,
    name: r.name,
    parentId: r.parent_id_lower,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  } as ArmResourceRow;
  // The stored document is parsed when first read: most look-ups of a resource only check that
  // it exists (the parent of a child resource).
  lazyJson(row, 'body', r.body);
  return row;
}

/** The `arm_resources` columns of a resource a put writes (all but `id_lower` and `created_at`). */
function resourceValues(row: Omit<ArmResourceRow, 'resourceGroup'> & { resourceGroup: string }) {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    subscription_id: row.subscriptionId.toLowerCase(),
    resource_group_lower: row.resourceGroup.toLowerCase(),
    type_lower: row.type.toLowerCase(),
    name: row.name,
    parent_id_lower: row.parentId.toLowerCase(),
    body: toJson(row.body),
    updated_at: row.updatedAt,
  };
}

/** Queries over the ARM hierarchy. */
export class ArmStore {
  /**
   * @param cache when given, reads of tracked resources and scope ancestors are kept in the
   * app's caches. Writes need nothing for them: the tables' triggers change the `arm` and
   * `resources` areas in the write's transaction (`core/cache-tables.ts`).
   */
  constructor(
    readonly db: Kysely<Database>,
    readonly cache?: CacheHub,
  ) {}

  /** The app's one cache of stored resource rows by lower-case id (`resources` area), when this store has the hub. */
  private get resourceCache(): AreaCache<Readonly<Record<string, unknown>> | undefined> | undefined {
    return this.cache?.shared('arm.resources', 'resources', 50_000);
  }

  /** A subscription by id (case-insensitive). */
  async subscription(id: string): Promise<Subscription | undefined> {
    const r = await this.db.selectFrom('arm_subscriptions').selectAll().where('subscription_id', '=', id.toLowerCase()).executeTakeFirst();
    return r ? { subscriptionId: r.subscription_id, tenantId: r.tenant_id, displayName: r.display_name, state: r.state, managementGroup: r.management_group_lower } : undefined;
  }

  /** A resource group of a subscription (name case-insensitive). */
  async resourceGroup(subscriptionId: string, name: string): Promise<ResourceGroup | undefined> {
    const r = await this.db.selectFrom('arm_resource_groups').selectAll().where('subscription_id', '=', subscriptionId.toLowerCase()).where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
    return r ? { subscriptionId: r.subscription_id, name: r.name, location: r.location, tags: fromJson(r.tags) ?? {}, ...(r.managed_by ? { managedBy: r.managed_by } : {}) } : undefined;
  }

  /** A management group by name (case-insensitive). */
  async managementGroup(name: string): Promise<ManagementGroup | undefined> {
    const r = await this.db.selectFrom('arm_management_groups').selectAll().where('name_lower', '=', name.toLowerCase()).executeTakeFirst();
    return r ? { name: r.name, tenantId: r.tenant_id, displayName: r.display_name, parentName: r.parent_name_lower ?? undefined } : undefined;
  }

  /** The management group chain from `name` up to the tenant root (names, lower case). */
  async managementGroupChain(name: string): Promise<string[]> {
    const chain: string[] = [];
    let cur: string | undefined = name.toLowerCase();
    while (cur && !chain.includes(cur) && chain.length < 10) {
      chain.push(cur);
      const mg = await this.managementGroup(cur);
      cur = mg?.parentName;
    }
    return chain;
  }

  /** A custom role definition by id (`role-store.ts`; built-ins are in `roles.ts`). */
  async customRole(id: string): Promise<RoleDefinition | undefined> {
    return roleStore.definition(this.db, id);
  }

  /** Role assignments held by a principal. */
  async assignmentsOf(principalId: string): Promise<RoleAssignment[]> {
    const rows = await this.db.selectFrom('arm_role_assignments').selectAll().where('principal_id', '=', principalId.toLowerCase()).execute();
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, scope: r.scope, roleDefinitionId: r.role_definition_id, principalId: r.principal_id, principalType: r.principal_type }));
  }

  /** Adds a management group. */
  async addManagementGroup(mg: ManagementGroup): Promise<void> {
    await this.db.insertInto('arm_management_groups').values({ name_lower: mg.name.toLowerCase(), name: mg.name, tenant_id: mg.tenantId, display_name: mg.displayName, parent_name_lower: mg.parentName?.toLowerCase() ?? null }).execute();
  }

  /** Adds a subscription. */
  async addSubscription(s: Subscription): Promise<void> {
    await this.db.insertInto('arm_subscriptions').values({ subscription_id: s.subscriptionId.toLowerCase(), tenant_id: s.tenantId, display_name: s.displayName, state: s.state, management_group_lower: s.managementGroup.toLowerCase() }).execute();
  }

  /** Adds a resource group (with `managedBy` when given). */
  async addResourceGroup(g: ResourceGroup): Promise<void> {
    await this.db.insertInto('arm_resource_groups').values({ subscription_id: g.subscriptionId.toLowerCase(), name_lower: g.name.toLowerCase(), name: g.name, location: g.location, tags: toJson(g.tags), managed_by: g.managedBy ?? null }).execute();
  }

  /** Creates or replaces a resource group (name casing of an existing group kept); returns whether it was created. */
  async putResourceGroup(g: ResourceGroup): Promise<boolean> {
    const key = { subscription_id: g.subscriptionId.toLowerCase(), name_lower: g.name.toLowerCase() };
    const values = { location: g.location, tags: toJson(g.tags), managed_by: g.managedBy ?? null };
    const r = await this.db.updateTable('arm_resource_groups').set(values).where('subscription_id', '=', key.subscription_id).where('name_lower', '=', key.name_lower).executeTakeFirst();
    const created = Number(r.numUpdatedRows) === 0;
    if (created) await this.db.insertInto('arm_resource_groups').values({ ...key, name: g.name, ...values }).execute();
    return created;
  }

  /**
   * Removes a resource group's own rows: its tracked resources (through the group index), the
   * role assignments at or below it and the group; run in the group delete's transaction (this
   * store made on it). Returns whether the group existed.
   */
  async deleteResourceGroupRows(subscriptionId: string, name: string): Promise<boolean> {
    const sub = subscriptionId.toLowerCase();
    const rg = name.toLowerCase();
    await this.db.deleteFrom('arm_resources').where('subscription_id', '=', sub).where('resource_group_lower', '=', rg).execute();
    const scope = `/subscriptions/${sub}/resourcegroups/${rg}`;
    // substr, not LIKE: a group name may hold `_`, a LIKE wildcard.
    await this.db.deleteFrom('arm_role_assignments').where((eb) => eb.or([eb('scope_lower', '=', scope), eb(sql`substr(scope_lower, 1, ${scope.length + 1})`, '=', `${scope}/`)])).execute();
    const r = await this.db.deleteFrom('arm_resource_groups').where('subscription_id', '=', sub).where('name_lower', '=', rg).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Adds a role assignment. */
  async addAssignment(a: RoleAssignment): Promise<void> {
    await this.db
      .insertInto('arm_role_assignments')
      .values({ id: a.id, tenant_id: a.tenantId, scope_lower: a.scope.toLowerCase(), scope: a.scope, role_definition_id: a.roleDefinitionId.toLowerCase(), principal_id: a.principalId.toLowerCase(), principal_type: a.principalType })
      .execute();
  }

  /** Removes a role assignment by id; returns whether it existed. */
  async deleteAssignment(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('arm_role_assignments').where('id', '=', id).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Removes a subscription with its resource groups, tracked resources and role assignments at or below it; returns whether it existed. */
  async deleteSubscription(id: string): Promise<boolean> {
    const sub = id.toLowerCase();
    await this.db.deleteFrom('arm_resources').where('subscription_id', '=', sub).execute();
    await this.db.deleteFrom('arm_resource_groups').where('subscription_id', '=', sub).execute();
    const scope = `/subscriptions/${sub}`;
    await this.db.deleteFrom('arm_role_assignments').where((eb) => eb.or([eb('scope_lower', '=', scope), eb('scope_lower', 'like', `${scope}/%`)])).execute();
    const r = await this.db.deleteFrom('arm_subscriptions').where('subscription_id', '=', sub).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** A tracked resource by id (case-insensitive). */
  async getResource(id: string): Promise<ArmResourceRow | undefined> {
    const key = id.toLowerCase();
    const load = async () => {
      const [r] = await resourceById(this.db, key);
      return r ? Object.freeze(r as Record<string, unknown>) : undefined;
    };
    // The stored row (strings) is what is cached; every caller gets its own row object.
    const r = this.resourceCache ? await this.resourceCache.get(key, load) : await load();
    return r ? toRow(r) : undefined;
  }

  /**
   * Children of `parentId` of `type` (case-insensitive), in id order, after `afterIdLower`
   * (keyset paging), at most `limit`.
   */
  async listResources(parentId: string, type: string, limit = 1000, afterIdLower?: string): Promise<ArmResourceRow[]> {
    let q = this.db.selectFrom('arm_resources').selectAll().where('parent_id_lower', '=', parentId.toLowerCase()).where('type_lower', '=', type.toLowerCase());
    if (afterIdLower) q = q.where('id_lower', '>', afterIdLower);
    const rows = await q.orderBy('id_lower').limit(limit).execute();
    return rows.map(toRow);
  }

  /**
   * Tracked resources of one type anywhere in a subscription (every resource group), by id,
   * keyset-paged after `afterIdLower`; through the (tenant, subscription, type, id) index.
   */
  async listResourcesInSubscription(tenantId: string, subscriptionId: string, type: string, limit = 1000, afterIdLower?: string): Promise<ArmResourceRow[]> {
    let q = this.db
      .selectFrom('arm_resources')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('subscription_id', '=', subscriptionId.toLowerCase())
      .where('type_lower', '=', type.toLowerCase());
    if (afterIdLower) q = q.where('id_lower', '>', afterIdLower);
    const rows = await q.orderBy('id_lower').limit(limit).execute();
    return rows.map(toRow);
  }

  /** Inserts or replaces a tracked resource; returns whether it was created. */
  async putResource(row: Omit<ArmResourceRow, 'resourceGroup'> & { resourceGroup: string }, db: Kysely<Database> = this.db): Promise<boolean> {
    const existing = await db.selectFrom('arm_resources').select('id_lower').where('id_lower', '=', row.id.toLowerCase()).executeTakeFirst();
    const values = resourceValues(row);
    if (existing) {
      await db.updateTable('arm_resources').set(values).where('id_lower', '=', row.id.toLowerCase()).execute();
    } else {
      await db.insertInto('arm_resources').values({ ...values, id_lower: row.id.toLowerCase(), created_at: row.createdAt }).execute();
    }
    return !existing;
  }

  /**
   * Inserts new tracked resources in batches, without {@link putResource}'s look-up (a world
   * load into emptied tables). @throws the driver's unique-constraint error for an id already stored
   */
  async insertResources(rows: (Omit<ArmResourceRow, 'resourceGroup'> & { resourceGroup: string })[], db: Kysely<Database> = this.db): Promise<void> {
    const values = rows.map((row) => ({ ...resourceValues(row), id_lower: row.id.toLowerCase(), created_at: row.createdAt }));
    for (let i = 0; i < values.length; i += 200) await db.insertInto('arm_resources').values(values.slice(i, i + 200)).execute();
  }

  /** Deletes a tracked resource and every resource below it; returns whether it existed. */
  async deleteResource(id: string, db: Kysely<Database> = this.db): Promise<boolean> {
    const lower = id.toLowerCase();
    const r = await db.deleteFrom('arm_resources').where('id_lower', '=', lower).executeTakeFirst();
    // Descendants level by level through the parent index (never a scan of the table).
    let level = [lower];
    while (level.length > 0) {
      const children: string[] = [];
      for (let i = 0; i < level.length; i += 500) {
        const rows = await db.selectFrom('arm_resources').select('id_lower').where('parent_id_lower', 'in', level.slice(i, i + 500)).execute();
        children.push(...rows.map((c: any) => String(c.id_lower)));
      }
      for (let i = 0; i < children.length; i += 500) await db.deleteFrom('arm_resources').where('id_lower', 'in', children.slice(i, i + 500)).execute();
      level = children;
    }
    return Number(r.numDeletedRows) > 0;
  }
}
