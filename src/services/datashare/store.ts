/**
 * Tables and queries of the data share area (spec: resource-manager §2.4, §4.5; reference §5).
 *
 * Accounts, shares, invitations and share subscriptions are tracked ARM resources kept in
 * the shared `arm_resources` table (their JSON bodies are the public representation).
 * Two tables of our own:
 * - `datashare_invitations`: invitation id → the provider share it opens and whom it
 *   targets (looked up by id when a consumer creates a share subscription);
 * - `datashare_synchronizations`: one row per synchronization run of a provider share,
 *   each §2.4 field in its own column so `$filter` / `$orderby` compile to SQL; listed per
 *   share through the `(share_id_lower, start_time, seq)` index.
 *
 * A run is stored `InProgress` with its `due_at`; from then on it reads as `Succeeded`
 * (clock-driven, computed at read time: in the list's SQL when there is a `$filter` or an
 * `$orderby`, so they see it; in JavaScript for the default order, whose pages are kept as
 * stored — `pages.ts`): a read never writes.
 */
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { autoIncrementKey, type Migrations } from '../../store/db.ts';
import type { CompiledOrderBy, FieldMap } from '../../core/odata/index.ts';
import type { Database } from '../../store/database.ts';
import { cacheKey, type CacheHub } from '../../core/cache.ts';
import { groupResourceIds } from '../arm/groups.ts';
import { prepared, param } from '../../store/prepared.ts';
import type { DatashareDatabase } from './tables.ts';
import { storedRunColumns, SynchronizationPage, toSync, type StoredRun } from './pages.ts';

/** A synchronization run as listed (spec §2.4 ShareSynchronization). */
export interface ShareSynchronization {
  synchronizationId: string;
  synchronizationMode: 'Incremental' | 'FullSync';
  status: string;
  message?: string;
  startTime: string;
  endTime?: string;
  durationMs?: number;
  consumerName?: string;
  consumerEmail?: string;
  consumerTenantName?: string;
}

/** A row to insert into `datashare_synchronizations`. */
export interface NewSynchronization extends ShareSynchronization {
  tenantId: string;
  /** Provider share id, lower case. */
  shareIdLower: string;
  /** Consumer share subscription id (lower case), absent for demo rows. */
  shareSubscriptionIdLower?: string;
  /** When an `InProgress` run completes (ISO 8601 UTC). */
  dueAt?: string;
  /** Duration the run will have once it completes, in ms. */
  plannedDurationMs?: number;
}

/** An invitation's lookup row. */
export interface InvitationRow {
  invitationId: string;
  tenantId: string;
  invitationResourceId: string;
  shareIdLower: string;
  targetEmailLower?: string;
  targetTenantId?: string;
  targetObjectId?: string;
  status: string;
}

/** Tables of the area, children first. */
export const datashareTables: (keyof DatashareDatabase)[] = ['datashare_synchronizations', 'datashare_invitations'];

/** Migrations of the area. */
export const datashareMigrations: Migrations = {
  datashare_0001_tables: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('datashare_invitations')
        .addColumn('invitation_id', 'varchar(36)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('invitation_resource_id', 'text', (c) => c.notNull())
        .addColumn('share_id_lower', 'varchar(1024)', (c) => c.notNull())
        .addColumn('target_email_lower', 'varchar(320)')
        .addColumn('target_tenant_id', 'varchar(36)')
        .addColumn('target_object_id', 'varchar(36)')
        .addColumn('status', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('datashare_invitations_share').on('datashare_invitations').columns(['share_id_lower']).execute();
      await db.schema
        .createTable('datashare_synchronizations')
        .addColumn('seq', ...autoIncrementKey(db))
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('share_id_lower', 'varchar(1024)', (c) => c.notNull())
        .addColumn('share_subscription_id_lower', 'varchar(1024)')
        .addColumn('synchronization_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('synchronization_mode', 'varchar(16)', (c) => c.notNull())
        .addColumn('status', 'varchar(32)', (c) => c.notNull())
        .addColumn('message', 'text')
        .addColumn('start_time', 'varchar(32)', (c) => c.notNull())
        .addColumn('end_time', 'varchar(32)')
        .addColumn('duration_ms', 'integer')
        .addColumn('due_at', 'varchar(32)')
        .addColumn('planned_duration_ms', 'integer')
        .addColumn('consumer_name', 'text')
        .addColumn('consumer_email', 'text')
        .addColumn('consumer_tenant_name', 'text')
        .execute();
      await db.schema.createIndex('datashare_sync_share').on('datashare_synchronizations').columns(['share_id_lower', 'start_time', 'seq']).execute();
      await db.schema.createIndex('datashare_sync_due').on('datashare_synchronizations').columns(['share_id_lower', 'status', 'due_at']).execute();
    },
  },
  datashare_0002_consumer_index: {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('datashare_sync_consumer').on('datashare_synchronizations').columns(['share_subscription_id_lower', 'start_time', 'seq']).execute();
    },
  },
};

/** The OData properties of a ShareSynchronization and their columns (spec §2.4). */
export const synchronizationFields: FieldMap = {
  synchronizationId: { column: 'synchronization_id', type: 'string' },
  synchronizationMode: { column: 'synchronization_mode', type: 'enum', values: ['Incremental', 'FullSync'] },
  status: { column: 'status', type: 'string' },
  message: { column: 'message', type: 'string' },
  startTime: { column: 'start_time', type: 'datetime' },
  endTime: { column: 'end_time', type: 'datetime' },
  durationMs: { column: 'duration_ms', type: 'number' },
  consumerName: { column: 'consumer_name', type: 'string' },
  consumerEmail: { column: 'consumer_email', type: 'string' },
  consumerTenantName: { column: 'consumer_tenant_name', type: 'string' },
};

/** The OData properties of a consumer's ShareSubscriptionSynchronization (no consumer fields). */
export const consumerSynchronizationFields: FieldMap = Object.fromEntries(Object.entries(synchronizationFields).filter(([k]) => !k.startsWith('consumer')));

/** A scope of runs: a consumer share subscription when `shareSubscriptionIdLower` is given, else a provider share (scoped by its tenant). */
export interface RunScope {
  shareSubscriptionIdLower?: string;
  shareIdLower?: string;
  tenantId?: string;
}

/** A default-ordered page of a share's runs as stored (arguments: tenant, share id lower, limit, offset). */
const runsOfShare = prepared((db: Kysely<Database>) =>
  db
    .selectFrom('datashare_synchronizations')
    .select(storedRunColumns)
    .where('tenant_id', '=', param(0))
    .where('share_id_lower', '=', param(1))
    .orderBy('start_time', 'desc')
    .orderBy('seq', 'desc')
    .limit(param<number>(2))
    .offset(param<number>(3)),
);
/** A default-ordered page of a share subscription's runs as stored (arguments: share subscription id lower, limit, offset). */
const runsOfShareSubscription = prepared((db: Kysely<Database>) =>
  db
    .selectFrom('datashare_synchronizations')
    .select(storedRunColumns)
    .where('share_subscription_id_lower', '=', param(0))
    .orderBy('start_time', 'desc')
    .orderBy('seq', 'desc')
    .limit(param<number>(1))
    .offset(param<number>(2)),
);

/**
 * Queries of the data share area. With the app's cache hub, the default-ordered pages of
 * synchronization rows ({@link SynchronizationPage}, with the answer texts made from them) are
 * kept in the `resources` cache area; every write of synchronizations
 * (a run added, a share or account deleted) changes that area in its transaction, by trigger
 * (`core/cache-tables.ts`).
 */
export class DataShareStore {
  constructor(
    readonly db: Kysely<Database>,
    private readonly cache?: CacheHub,
  ) {}

  /** Records an invitation's lookup row. */
  async addInvitation(i: InvitationRow, db: Kysely<Database> = this.db): Promise<void> {
    await db
      .insertInto('datashare_invitations')
      .values({
        invitation_id: i.invitationId.toLowerCase(),
        tenant_id: i.tenantId,
        invitation_resource_id: i.invitationResourceId,
        share_id_lower: i.shareIdLower,
        target_email_lower: i.targetEmailLower ?? null,
        target_tenant_id: i.targetTenantId ?? null,
        target_object_id: i.targetObjectId ?? null,
        status: i.status,
      })
      .execute();
  }

  /** An invitation by its `invitationId` (any tenant: invitations cross tenants). */
  async invitation(invitationId: string): Promise<InvitationRow | undefined> {
    const r = await this.db.selectFrom('datashare_invitations').selectAll().where('invitation_id', '=', invitationId.toLowerCase()).executeTakeFirst();
    return r
      ? {
          invitationId: r.invitation_id,
          tenantId: r.tenant_id,
          invitationResourceId: r.invitation_resource_id,
          shareIdLower: r.share_id_lower,
          targetEmailLower: r.target_email_lower ?? undefined,
          targetTenantId: r.target_tenant_id ?? undefined,
          targetObjectId: r.target_object_id ?? undefined,
          status: r.status,
        }
      : undefined;
  }

  /** Marks a `Pending` invitation `Accepted`; false when it was no longer pending (a concurrent acceptance won). */
  async acceptInvitation(invitationId: string, db: Kysely<Database> = this.db): Promise<boolean> {
    const r = await db.updateTable('datashare_invitations').set({ status: 'Accepted' }).where('invitation_id', '=', invitationId.toLowerCase()).where('status', '=', 'Pending').executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Removes the invitations and synchronizations of shares at or below `idLower` (a share or an account). */
  async deleteBelow(idLower: string, db: Kysely<Database> = this.db): Promise<void> {
    const prefix = `${idLower}/`;
    for (const t of ['datashare_synchronizations', 'datashare_invitations'] as const) {
      await db.deleteFrom(t).where((eb) => eb.or([eb('share_id_lower', '=', idLower), eb(sql`substr(share_id_lower, 1, ${prefix.length})`, '=', prefix)])).execute();
    }
  }

  /** Removes the invitations and synchronizations of the shares and share subscriptions of a resource group (the group delete's transaction `db`). */
  async deleteForGroup(subscriptionId: string, groupName: string, db: Kysely<Database>): Promise<void> {
    const ids = () => groupResourceIds(db, subscriptionId, groupName);
    await db.deleteFrom('datashare_synchronizations').where('share_id_lower', 'in', ids()).execute();
    await db.deleteFrom('datashare_synchronizations').where('share_subscription_id_lower', 'in', ids()).execute();
    await db.deleteFrom('datashare_invitations').where('share_id_lower', 'in', ids()).execute();
  }

  /** Inserts a synchronization run (in `db`'s transaction when given, else in one of its own). */
  async addSynchronization(s: NewSynchronization, db?: Kysely<Database>): Promise<void> {
    if (!db) return this.db.transaction().execute((trx) => this.addSynchronization(s, trx));
    await db
      .insertInto('datashare_synchronizations')
      .values({
        tenant_id: s.tenantId,
        share_id_lower: s.shareIdLower,
        share_subscription_id_lower: s.shareSubscriptionIdLower ?? null,
        synchronization_id: s.synchronizationId,
        synchronization_mode: s.synchronizationMode,
        status: s.status,
        message: s.message ?? null,
        start_time: s.startTime,
        end_time: s.endTime ?? null,
        duration_ms: s.durationMs ?? null,
        due_at: s.dueAt ?? null,
        planned_duration_ms: s.plannedDurationMs ?? null,
        consumer_name: s.consumerName ?? null,
        consumer_email: s.consumerEmail ?? null,
        consumer_tenant_name: s.consumerTenantName ?? null,
      })
      .execute();
  }

  /**
   * One page of a share's runs: `filter` (compiled OData), `orderBy` (compiled; default
   * `startTime desc`; nulls last ascending, first descending), ties broken by insertion order; `offset` rows skipped, up to `limit`.
   * Returns one extra row's worth of knowledge as `more`.
   */
  async listSynchronizations(opts: {
    /** Now (ISO 8601 UTC, the movable clock): an `InProgress` run due by then lists as `Succeeded`, with its planned end and duration. */
    now: string;
    /** The provider share's runs (scoped by the provider tenant) … */
    shareIdLower?: string;
    tenantId?: string;
    /** … or a consumer share subscription's runs (its id is bound to the consumer's subscription). */
    shareSubscriptionIdLower?: string;
    filter?: Expression<SqlBool>;
    orderBy: CompiledOrderBy[];
    offset: number;
    limit: number;
  }): Promise<{ value: ShareSynchronization[]; more: boolean }> {
    if (!opts.filter && opts.orderBy.length === 0) return this.listSynchronizationsByStart(opts);
    // The runs of the share (or share subscription) as of `now`: a due InProgress run reads as completed.
    const due = sql<SqlBool>`(status = 'InProgress' and due_at <= ${opts.now})`;
    let runs = this.db
      .selectFrom('datashare_synchronizations')
      .select([
        'seq',
        'synchronization_id',
        'synchronization_mode',
        'start_time',
        'consumer_name',
        'consumer_email',
        'consumer_tenant_name',
        sql<string>`case when ${due} then 'Succeeded' else status end`.as('status'),
        sql<string>`case when ${due} then 'Synchronization completed.' else message end`.as('message'),
        sql<string>`case when ${due} then due_at else end_time end`.as('end_time'),
        sql<number>`case when ${due} then planned_duration_ms else duration_ms end`.as('duration_ms'),
      ]);
    if (opts.shareSubscriptionIdLower !== undefined) runs = runs.where('share_subscription_id_lower', '=', opts.shareSubscriptionIdLower);
    else runs = runs.where('tenant_id', '=', opts.tenantId!).where('share_id_lower', '=', opts.shareIdLower!);
    let q = this.db.selectFrom(runs.as('runs')).selectAll();
    if (opts.filter) q = q.where(opts.filter);
    if (opts.orderBy.length === 0) q = q.orderBy('start_time', 'desc').orderBy('seq', 'desc');
    else {
      // Nulls last ascending and first descending, on both dialects.
      for (const o of opts.orderBy) q = q.orderBy(sql`case when ${sql.ref(o.column)} is null then 1 else 0 end`, o.direction).orderBy(sql.ref(o.column), o.direction);
      q = q.orderBy('seq', 'asc');
    }
    const rows = await q.limit(opts.limit + 1).offset(opts.offset).execute();
    return { value: rows.slice(0, opts.limit).map((r) => toSync(r)), more: rows.length > opts.limit };
  }

  /**
   * {@link listSynchronizations} without `$filter` and `$orderby` (newest start first): the
   * page as stored ({@link synchronizationPage}), a due run completed in JavaScript.
   */
  private async listSynchronizationsByStart(opts: RunScope & { now: string; offset: number; limit: number }): Promise<{ value: ShareSynchronization[]; more: boolean }> {
    const page = await this.synchronizationPage(opts, opts.offset, opts.limit);
    return { value: page.value(opts.now), more: page.more };
  }

  /**
   * One page of the runs of `scope` in the default order (newest start first, ties by
   * insertion, newest first), `offset` rows skipped, up to `limit`: the stored columns read as
   * they are (measured: completing due runs in SQL costs as much as the rest of the read), a
   * due run completed by {@link SynchronizationPage.value}. The stored rows do not change with
   * the clock, so with the app's cache hub the page is kept in the `resources` cache area until
   * a write of runs, shares or accounts.
   */
  async synchronizationPage(scope: RunScope, offset: number, limit: number): Promise<SynchronizationPage> {
    const read = async () =>
      new SynchronizationPage(
        (scope.shareSubscriptionIdLower !== undefined
          ? await runsOfShareSubscription(this.db, scope.shareSubscriptionIdLower, limit + 1, offset)
          : await runsOfShare(this.db, scope.tenantId!, scope.shareIdLower!, limit + 1, offset)) as StoredRun[],
        limit,
      );
    const kept = this.cache?.shared<SynchronizationPage>('datashare.synchronizationPages', 'resources', 1000);
    return kept ? kept.get(cacheKey(scope.shareSubscriptionIdLower, scope.tenantId, scope.shareIdLower, offset, limit), read) : read();
  }
}
