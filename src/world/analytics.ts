/**
 * The analytics part of a world file: a tenant's `analyticsWorkspaces` (`id`, `name`) and its
 * `dataflows` (the admin dataflow's fields: `objectId`, `name`, `description`, `modelUrl`,
 * `configuredBy`, `workspaceId` — an analytics workspace of the tenant by id or name — and
 * `modifiedDateTime`), written to the area's tables `analytics_workspaces` and
 * `analytics_dataflows` (the area has no store functions for writes: its API only reads).
 */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { stableUuid } from '../core/ids.ts';
import type { Database } from '../store/database.ts';
import type { WorldFileData } from './schema.ts';
import type { DataContext } from './data.ts';

const strict = { additionalProperties: false } as const;
const guid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' });

/** An analytics workspace. */
export const WorldAnalyticsWorkspace = Type.Object({ id: Type.Optional(guid), name: Type.String({ minLength: 1, maxLength: 256 }) }, strict);

/** A dataflow (the admin dataflow resource). */
export const WorldDataflow = Type.Object(
  {
    objectId: Type.Optional(guid),
    name: Type.String({ minLength: 1, maxLength: 256 }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    modelUrl: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    configuredBy: Type.String({ minLength: 1, maxLength: 256, description: 'The owner (a UPN; need not be a user of the world).' }),
    workspaceId: Type.String({ minLength: 1, maxLength: 256, description: 'An analytics workspace of the tenant, by id or name.' }),
    modifiedDateTime: Type.Optional(Type.String({ format: 'date-time' })),
  },
  strict,
);

/** Tenant-level properties of the analytics kinds. */
export const analyticsTenantProperties = {
  analyticsWorkspaces: Type.Optional(Type.Array(WorldAnalyticsWorkspace, { maxItems: 10_000 })),
  dataflows: Type.Optional(Type.Array(WorldDataflow, { maxItems: 1_000_000 })),
};

/** Checks the tenant entry's analytics workspaces and dataflows and queues their writes. */
export function resolveAnalytics(c: DataContext): void {
  const t = c.tenant.id;
  const workspaces = (c.data.analyticsWorkspaces ?? []).map((w, i) => {
    const id = (w.id ?? stableUuid('world-analytics-workspace', t, w.name)).toLowerCase();
    c.unique('analytics workspace id', id, `/analyticsWorkspaces/${i}`);
    c.unique('analytics workspace name', `${t}/${w.name.toLowerCase()}`, `/analyticsWorkspaces/${i}/name`);
    return { tenant_id: t, id, name: w.name };
  });
  // Workspaces of other files of the same tenant count too: look them up when the writes are queued.
  const dataflows = (c.data.dataflows ?? []).flatMap((d, i) => {
    const ref = d.workspaceId.toLowerCase();
    const w = workspaces.find((x) => x.id === ref || x.name.toLowerCase() === ref);
    if (!w) return void c.problems.push(`${c.at(`/dataflows/${i}/workspaceId`)}: no analytics workspace '${d.workspaceId}' in this tenant entry`), [];
    const objectId = (d.objectId ?? stableUuid('world-dataflow', t, w.id, d.name)).toLowerCase();
    c.unique('dataflow objectId', objectId, `/dataflows/${i}`);
    return [{ tenant_id: t, object_id: objectId, workspace_id: w.id, name: d.name, description: d.description ?? '', model_url: d.modelUrl ?? `https://dataflows.${c.tenant.domain}/analytics/${w.id}/${objectId}/model.json`, configured_by: d.configuredBy, modified_at: new Date(d.modifiedDateTime ?? c.now).toISOString() }];
  });
  if (!workspaces.length && !dataflows.length) return;
  c.writes.push(async (_ctx, db) => {
    for (let i = 0; i < workspaces.length; i += 200) await db.insertInto('analytics_workspaces').values(workspaces.slice(i, i + 200)).execute();
    for (let i = 0; i < dataflows.length; i += 200) await db.insertInto('analytics_dataflows').values(dataflows.slice(i, i + 200)).execute();
  });
}

/** Adds the analytics workspaces and dataflows of the store to the exported tenants (dataflows by workspace, then object id). */
export async function exportAnalytics(db: Kysely<Database>, out: WorldFileData): Promise<void> {
  const [ws, dfs] = await Promise.all([
    db.selectFrom('analytics_workspaces').selectAll().orderBy('id').execute(),
    db.selectFrom('analytics_dataflows').selectAll().orderBy('workspace_id').orderBy('object_id').execute(),
  ]);
  for (const t of out.tenants ?? []) {
    const mine = ws.filter((w) => w.tenant_id === t.id);
    if (mine.length) t.analyticsWorkspaces = mine.map((w) => ({ id: w.id, name: w.name }));
    const flows = dfs.filter((d) => d.tenant_id === t.id);
    if (flows.length)
      t.dataflows = flows.map((d) => ({ objectId: d.object_id, name: d.name, ...(d.description ? { description: d.description } : {}), modelUrl: d.model_url, configuredBy: d.configured_by, workspaceId: d.workspace_id, modifiedDateTime: d.modified_at }));
  }
}
