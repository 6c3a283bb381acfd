/**
 * Tables and queries of the automation area (spec: resource-manager §2.5, §4.6; reference §6).
 *
 * Automation accounts and runbooks are tracked ARM resources in the shared `arm_resources`
 * table. Two tables of our own:
 * - `automation_webhooks`: the webhook document (`body`, without `uri` and
 *   `lastInvokedTime`) plus the queryable properties in columns, and the SHA-256 of the
 *   webhook's URI token (`token_hash`, unique: invoking the URI looks the webhook up by it;
 *   the token itself is never stored);
 * - `automation_jobs`: one row per job a webhook started, listed per account newest first
 *   through the `(account_id_lower, seq)` index.
 */
import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { autoIncrementKey, fromJson, isPostgres, lazyJson, toJson, type Migrations } from '../../store/db.ts';
import { functionWithWriteMarker } from '../../core/cache-write-markers.ts';
import type { FieldMap } from '../../core/odata/index.ts';
import type { Database } from '../../store/database.ts';
import type { AutomationDatabase } from './tables.ts';
import { cachedTables } from '../../core/cache-tables.ts';
import { param, prepared } from '../../store/prepared.ts';
import { compiledOnce } from '../../store/compiled.ts';
import { rowInTurn, type RowRead } from '../../core/row-batch.ts';
import type { CacheHub } from '../../core/cache.ts';
import type { ListedResourceQuery } from '../../context.ts';
import { groupResourceIds } from '../arm/groups.ts';

/** A webhook by its lower-cased id (compiled once: the area's hottest read). */
const webhookById = prepared((db: Kysely<Database>) => db.selectFrom('automation_webhooks').selectAll().where('id_lower', '=', param(0)));

/** The stored columns of a webhook (`selectAll` order). */
const webhookColumns = ['id_lower', 'id', 'tenant_id', 'account_id_lower', 'name', 'runbook_name', 'is_enabled', 'expiry_time', 'creation_time', 'last_invoked_time', 'token_hash', 'body'] as const;

/** PostgreSQL: a webhook by lower-case id as a read of the turn's one statement (`core/row-batch.ts`). */
const webhookInTurn: RowRead = {
  name: 'webhook by id',
  keyParts: 1,
  lookup: sql`select ${sql.raw(webhookColumns.join(', '))} from automation_webhooks where id_lower = q.k1`,
  columns: webhookColumns,
};

/** A webhook's document and columns but its token and last invocation (compiled once per dialect: the PUT's write). */
const updateWebhookRow = compiledOnce((db: Kysely<Database>) =>
  db
    .updateTable('automation_webhooks')
    .set({ runbook_name: param<string>(0), is_enabled: param<number>(1), expiry_time: param<string>(2), body: param<string>(3) })
    .where('id_lower', '=', param<string>(4)),
);

/** The app's one cache of stored webhook rows by lower-case id: the keyed table's cache (`core/cache-tables.ts`), whose keys its writes drop. */
export const webhookCacheName = cachedTables.automation_webhooks!.keyed!.cache;

/** A stored webhook: its document and columns. */
export interface WebhookRow {
  id: string;
  tenantId: string;
  accountIdLower: string;
  name: string;
  runbookName: string;
  isEnabled: boolean;
  expiryTime: string;
  creationTime: string;
  lastInvokedTime: string | null;
  /** The webhook document without `properties.uri` / `properties.lastInvokedTime` (parsed on first read). */
  body: Record<string, any>;
  /** The cached stored row it was made from: one object per stored version (see {@link AutomationStore.webhook}). */
  readonly [webhookSource]?: object;
}

/** Key of {@link WebhookRow}'s stored row (set on rows read through the cache only). */
export const webhookSource = Symbol('automation.webhookSource');

/** A job a webhook started. */
export interface JobRow {
  jobId: string;
  tenantId: string;
  accountIdLower: string;
  runbookName: string;
  webhookName: string;
  runOn: string | null;
  parameters: Record<string, string>;
  creationTime: string;
  /** When the job completes (clock-driven), ISO 8601 UTC. */
  completesAt: string;
}

/** Tables of the area, children first. */
export const automationTables: (keyof AutomationDatabase)[] = ['automation_jobs', 'automation_webhooks'];

/** Migrations of the area. */
export const automationMigrations: Migrations = {
  automation_0001_tables: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('automation_webhooks')
        .addColumn('id_lower', 'varchar(1024)', (c) => c.primaryKey())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('account_id_lower', 'varchar(1024)', (c) => c.notNull())
        .addColumn('name', 'varchar(256)', (c) => c.notNull())
        .addColumn('runbook_name', 'varchar(256)', (c) => c.notNull())
        .addColumn('is_enabled', 'integer', (c) => c.notNull())
        .addColumn('expiry_time', 'varchar(32)', (c) => c.notNull())
        .addColumn('creation_time', 'varchar(32)', (c) => c.notNull())
        .addColumn('last_invoked_time', 'varchar(32)')
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('body', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('automation_webhooks_account').on('automation_webhooks').columns(['account_id_lower', 'id_lower']).execute();
      await db.schema
        .createTable('automation_jobs')
        .addColumn('seq', ...autoIncrementKey(db))
        .addColumn('job_id', 'varchar(36)', (c) => c.notNull().unique())
        .addColumn('tenant_id', 'varchar(36)', (c) => c.notNull())
        .addColumn('account_id_lower', 'varchar(1024)', (c) => c.notNull())
        .addColumn('runbook_name', 'varchar(256)', (c) => c.notNull())
        .addColumn('webhook_name', 'varchar(256)', (c) => c.notNull())
        .addColumn('run_on', 'varchar(256)')
        .addColumn('parameters', 'text', (c) => c.notNull())
        .addColumn('creation_time', 'varchar(32)', (c) => c.notNull())
        .addColumn('completes_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('automation_jobs_account').on('automation_jobs').columns(['account_id_lower', 'seq']).execute();
    },
  },
  automation_0002_update_function: {
    /**
     * PostgreSQL: a webhook's rewrite ({@link AutomationStore.updateWebhook}) as one function call
     * that, when given, notifies the writer's write marker after it (`core/cache-write-markers.ts`).
     * The update's row trigger fires when the update ends, inside the function, so the marker
     * follows the webhook's key notice in the queue; one round trip, as the update it replaces.
     */
    async up(db: Kysely<unknown>) {
      if (!isPostgres(db)) return;
      const signature = 'stratus_automation_update_webhook(p_runbook_name text, p_is_enabled integer, p_expiry_time text, p_body text, p_id_lower text, p_marker text)';
      const body = 'UPDATE automation_webhooks SET runbook_name = p_runbook_name, is_enabled = p_is_enabled, expiry_time = p_expiry_time, body = p_body WHERE id_lower = p_id_lower;';
      await sql.raw(functionWithWriteMarker(signature, body)).execute(db);
    },
  },
};

/** A webhook's rewrite carrying a write marker (`automation_0002_update_function`), its parameters those of {@link updateWebhookRow} and the marker. */
const updateWebhookWithMarker = 'select stratus_automation_update_webhook($1, $2, $3, $4, $5, $6)';

/** OData properties of a webhook usable in the list's `$filter` (reference §6.1). */
export const webhookFields: FieldMap = {
  name: { column: 'name', type: 'string' },
  'properties/runbook/name': { column: 'runbook_name', type: 'string' },
  'properties/isEnabled': { column: 'is_enabled', type: 'boolean' },
  'properties/expiryTime': { column: 'expiry_time', type: 'datetime' },
  'properties/creationTime': { column: 'creation_time', type: 'datetime' },
  'properties/lastInvokedTime': { column: 'last_invoked_time', type: 'datetime' },
};

/** SHA-256 (hex) of a webhook URI token. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function toWebhook(r: any, source?: object): WebhookRow {
  const w: WebhookRow = {
    id: r.id,
    tenantId: r.tenant_id,
    accountIdLower: r.account_id_lower,
    name: r.name,
    runbookName: r.runbook_name,
    isEnabled: Number(r.is_enabled) === 1,
    expiryTime: r.expiry_time,
    creationTime: r.creation_time,
    lastInvokedTime: r.last_invoked_time ?? null,
    ...(source ? { [webhookSource]: source } : {}),
  } as WebhookRow;
  return lazyJson(w, 'body', r.body);
}

function toJob(r: any): JobRow {
  return {
    jobId: r.job_id,
    tenantId: r.tenant_id,
    accountIdLower: r.account_id_lower,
    runbookName: r.runbook_name,
    webhookName: r.webhook_name,
    runOn: r.run_on ?? null,
    parameters: fromJson(r.parameters) ?? {},
    creationTime: r.creation_time,
    completesAt: r.completes_at,
  };
}

/**
 * Queries of the automation area. With the app's cache hub, webhooks by id are served from the
 * `resources` cache area; every write of the tables bumps that area by trigger (`core/cache-tables.ts`).
 */
export class AutomationStore {
  constructor(
    readonly db: Kysely<Database>,
    readonly cache?: CacheHub,
  ) {}

  /** A webhook by id (case-insensitive); the stored row is cached, every caller gets its own row object. */
  async webhook(id: string): Promise<WebhookRow | undefined> {
    const key = id.toLowerCase();
    const load = async () => {
      // PostgreSQL: in the turn's one statement with the other misses of the turn (`core/row-batch.ts`).
      const batched = rowInTurn(this.db, webhookInTurn, [key]);
      const r = batched ? await batched : (await webhookById(this.db, key))[0];
      return r ? Object.freeze(r as Record<string, unknown>) : undefined;
    };
    // The app's one cache of stored webhook rows by lower-case id (`resources` area).
    const cache = this.cache?.shared<Readonly<Record<string, unknown>> | undefined>(webhookCacheName, 'resources', 50_000);
    const r = cache ? await cache.get(key, load) : await load();
    // A cached row is one frozen object per stored version: readers may keep what they derive from it by it.
    return r ? toWebhook(r, cache ? r : undefined) : undefined;
  }

  /** A webhook by the hash of its URI token. */
  async webhookByTokenHash(hash: string): Promise<WebhookRow | undefined> {
    const r = await this.db.selectFrom('automation_webhooks').selectAll().where('token_hash', '=', hash).executeTakeFirst();
    return r ? toWebhook(r) : undefined;
  }

  /** Whether a token hash is already in use. */
  async tokenInUse(hash: string): Promise<boolean> {
    return (await this.db.selectFrom('automation_webhooks').select('id_lower').where('token_hash', '=', hash).executeTakeFirst()) !== undefined;
  }

  /** Inserts a webhook with the hash of its token. */
  async insertWebhook(w: WebhookRow, hash: string, db: Kysely<Database> = this.db): Promise<void> {
    await db
      .insertInto('automation_webhooks')
      .values({
        id_lower: w.id.toLowerCase(),
        id: w.id,
        tenant_id: w.tenantId,
        account_id_lower: w.accountIdLower,
        name: w.name,
        runbook_name: w.runbookName,
        is_enabled: w.isEnabled ? 1 : 0,
        expiry_time: w.expiryTime,
        creation_time: w.creationTime,
        last_invoked_time: w.lastInvokedTime,
        token_hash: hash,
        body: toJson(w.body),
      })
      .execute();
  }

  /**
   * Rewrites a webhook's document and columns (token and last invocation kept). With `raw` (the
   * Node request it is written for) on a live PostgreSQL instance alone, the write carries its
   * own marker (`core/cache-write-markers.ts`): the request is answered once it came back, with
   * no marker statement after the write.
   * @throws the database error of the write
   */
  async updateWebhook(w: WebhookRow, raw?: object): Promise<void> {
    const args = [w.runbookName, w.isEnabled ? 1 : 0, w.expiryTime, toJson(w.body), w.id.toLowerCase()] as const;
    const plain = () => updateWebhookRow(this.db, ...args);
    if (!raw || !this.cache) return void (await plain());
    // Without a marker, the plain update: the statement watch sees it.
    await this.cache.withWriteMarker(raw, 'automation_webhooks', (marker) => (marker === undefined ? plain() : this.db.executeQuery(CompiledQuery.raw(updateWebhookWithMarker, [...args, marker]))));
  }

  /** Deletes a webhook; returns whether it existed. */
  async deleteWebhook(id: string): Promise<boolean> {
    const r = await this.db.deleteFrom('automation_webhooks').where('id_lower', '=', id.toLowerCase()).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Deletes the webhooks (and, with `jobs`, the jobs) of an account, or only those of one runbook. */
  async deleteForAccount(accountIdLower: string, opts: { runbookName?: string; jobs: boolean }, db: Kysely<Database> = this.db): Promise<void> {
    let q = db.deleteFrom('automation_webhooks').where('account_id_lower', '=', accountIdLower);
    if (opts.runbookName !== undefined) q = q.where('runbook_name', '=', opts.runbookName);
    await q.execute();
    if (opts.jobs) await db.deleteFrom('automation_jobs').where('account_id_lower', '=', accountIdLower).execute();
  }

  /** Deletes the webhooks and jobs of every automation account of a resource group (the group delete's transaction `db`). */
  async deleteForGroup(subscriptionId: string, groupName: string, db: Kysely<Database>): Promise<void> {
    const accounts = groupResourceIds(db, subscriptionId, groupName, 'Vendor.Automation/automationAccounts');
    await db.deleteFrom('automation_webhooks').where('account_id_lower', 'in', accounts).execute();
    await db.deleteFrom('automation_jobs').where('account_id_lower', 'in', accounts).execute();
  }

  /** A page of an account's webhooks in id order after `afterIdLower`, narrowed by `filter`. */
  async listWebhooks(accountIdLower: string, limit: number, afterIdLower?: string, filter?: Expression<SqlBool>): Promise<WebhookRow[]> {
    let q = this.db.selectFrom('automation_webhooks').selectAll().where('account_id_lower', '=', accountIdLower);
    if (afterIdLower !== undefined) q = q.where('id_lower', '>', afterIdLower);
    if (filter) q = q.where(filter);
    return (await q.orderBy('id_lower').limit(limit).execute()).map((r) => toWebhook(r));
  }

  /** Records an invocation: the job row and the webhook's `lastInvokedTime`, together. */
  async recordInvocation(webhookIdLower: string, job: JobRow): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      await tx.updateTable('automation_webhooks').set({ last_invoked_time: job.creationTime }).where('id_lower', '=', webhookIdLower).execute();
      await tx
        .insertInto('automation_jobs')
        .values({
          job_id: job.jobId,
          tenant_id: job.tenantId,
          account_id_lower: job.accountIdLower,
          runbook_name: job.runbookName,
          webhook_name: job.webhookName,
          run_on: job.runOn,
          parameters: toJson(job.parameters),
          creation_time: job.creationTime,
          completes_at: job.completesAt,
        })
        .execute();
    });
  }

  /** A job of an account by id. */
  async job(accountIdLower: string, jobId: string): Promise<JobRow | undefined> {
    const r = await this.db.selectFrom('automation_jobs').selectAll().where('account_id_lower', '=', accountIdLower).where('job_id', '=', jobId.toLowerCase()).executeTakeFirst();
    return r ? toJob(r) : undefined;
  }

  /** A page of an account's jobs, newest first, before sequence number `beforeSeq`; returns rows with their `seq`. */
  async listJobs(accountIdLower: string, limit: number, beforeSeq?: number): Promise<(JobRow & { seq: number })[]> {
    let q = this.db.selectFrom('automation_jobs').selectAll().where('account_id_lower', '=', accountIdLower);
    if (beforeSeq !== undefined) q = q.where('seq', '<', beforeSeq);
    return (await q.orderBy('seq', 'desc').limit(limit).execute()).map((r) => ({ ...toJob(r), seq: Number(r.seq) }));
  }
}

/**
 * The webhooks of the automation accounts of a subscription (or of one of its groups) as
 * resources of the generic listing (their rows are not in `arm_resources`), through the
 * account index.
 */
export function listedWebhooks(db: Kysely<Database>, subscriptionId: string, groupName?: string): ListedResourceQuery {
  let accounts = db.selectFrom('arm_resources').select('id_lower').where('subscription_id', '=', subscriptionId.toLowerCase()).where('type_lower', '=', 'vendor.automation/automationaccounts');
  if (groupName !== undefined) accounts = accounts.where('resource_group_lower', '=', groupName.toLowerCase());
  return db
    .selectFrom('automation_webhooks as w')
    .innerJoin('arm_resources as a', 'a.id_lower', 'w.account_id_lower')
    .where('w.account_id_lower', 'in', accounts)
    .select(['w.id as id', 'w.id_lower as id_lower', sql<string>`'vendor.automation/automationaccounts/webhooks'`.as('type_lower'), 'w.name as name', 'a.resource_group_lower as resource_group_lower', 'w.body as body', 'w.creation_time as created_at', 'w.creation_time as updated_at']);
}
