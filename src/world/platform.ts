/**
 * The data platform part of a world file: a tenant's `workspaces` (the workspace resource's
 * `id`, `displayName`, `description`) with their `roleAssignments` (a principal by UPN or
 * display name and one of Admin, Member, Contributor, Viewer) and `folders` (`id`,
 * `displayName`, `parentFolder` by display name or id) and `items` (eventstreams: the item's
 * fields, `folderId` and `sensitivityLabel` by id or name, `createdBy` for its `defaultIdentity`,
 * the definition parts but `.platform`, `logicalId`), and its `sensitivityLabels` (`id`,
 * `name`, `publishedTo`: principals that may apply it; omitted: everyone). Written to the
 * area's tables (`platform_workspaces`, `platform_role_assignments`, `platform_folders`,
 * `platform_sensitivity_labels`) with the area's `seedRows`, items with its `insertItem` (active
 * items only: one still provisioning is run-time state).
 */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { stableUuid } from '../core/ids.ts';
import type { Database } from '../store/database.ts';
import { fromJson, toJson } from '../store/db.ts';
import { insertItem, seedRows, type ItemRow, type StoredDefinition } from '../services/platform/store.ts';
import type { WorldFileData } from './schema.ts';
import { byKey, type DataContext } from './data.ts';

const guid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' });
const strict = { additionalProperties: false } as const;
const roles = ['Admin', 'Member', 'Contributor', 'Viewer'] as const;

/** An item of a workspace (an eventstream: the item resource's fields and its definition parts but `.platform`). */
export const WorldItem = Type.Object(
  {
    id: Type.Optional(guid),
    type: Type.Literal('Eventstream'),
    displayName: Type.String({ minLength: 1, maxLength: 256 }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    folderId: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "A folder of the workspace by id or display name." })),
    sensitivityLabel: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "A label of the tenant by id or name." })),
    createdBy: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "The principal of its defaultIdentity (UPN or application name; default: the workspace's first Admin)." })),
    tags: Type.Optional(Type.Array(Type.Object({ id: Type.String(), displayName: Type.String() }, strict), { maxItems: 100 })),
    definition: Type.Optional(Type.Object({ parts: Type.Array(Type.Object({ path: Type.Union([Type.Literal('eventstream.json'), Type.Literal('eventstreamProperties.json')]), payload: Type.String({ pattern: '^[A-Za-z0-9+/=]*$' }), payloadType: Type.Literal('InlineBase64') }, strict), { maxItems: 2 }) }, strict)),
    logicalId: Type.Optional(guid),
    createdDateTime: Type.Optional(Type.String({ format: 'date-time' })),
    lastModifiedDateTime: Type.Optional(Type.String({ format: 'date-time' })),
  },
  strict,
);

/** A workspace with its role assignments, folders and items. */
export const WorldWorkspace = Type.Object(
  {
    id: Type.Optional(guid),
    displayName: Type.String({ minLength: 1, maxLength: 256 }),
    description: Type.Optional(Type.String({ maxLength: 4000 })),
    roleAssignments: Type.Optional(
      Type.Array(Type.Object({ principal: Type.String({ minLength: 1, maxLength: 256, description: "A user's UPN or id, or an application's display name, appId or id." }), role: Type.Union(roles.map((r) => Type.Literal(r))) }, strict), { maxItems: 10_000 }),
    ),
    folders: Type.Optional(
      Type.Array(Type.Object({ id: Type.Optional(guid), displayName: Type.String({ minLength: 1, maxLength: 256 }), parentFolder: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "The parent folder's id or display name (omitted: the workspace's root)." })) }, strict), { maxItems: 10_000 }),
    ),
    items: Type.Optional(Type.Array(WorldItem, { maxItems: 100_000 })),
  },
  { ...strict, description: 'A data platform workspace (id made from the tenant and display name when omitted).' },
);

/** A sensitivity label of the tenant. */
export const WorldSensitivityLabel = Type.Object(
  {
    id: Type.Optional(guid),
    name: Type.String({ minLength: 1, maxLength: 256 }),
    publishedTo: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { maxItems: 10_000, description: 'Principals that may apply it (omitted: everyone).' })),
  },
  strict,
);

/** Tenant-level properties of the platform kinds (spread into the tenant's schema). */
export const platformTenantProperties = {
  workspaces: Type.Optional(Type.Array(WorldWorkspace, { maxItems: 10_000 })),
  sensitivityLabels: Type.Optional(Type.Array(WorldSensitivityLabel, { maxItems: 1000 })),
};

/** Checks the tenant entry's workspaces and labels and queues their writes. */
export function resolvePlatform(c: DataContext): void {
  const t = c.tenant.id;
  const workspaces: { tenant_id: string; id: string; display_name: string; description: string }[] = [];
  const assignments: { tenant_id: string; workspace_id: string; principal_id: string; principal_type: string; role: string }[] = [];
  const folders: { tenant_id: string; id: string; workspace_id: string; display_name: string; parent_folder_id: string | null }[] = [];
  const labels: { tenant_id: string; id: string; name: string; published_to: string | null }[] = [];
  const items: ItemRow[] = [];
  (c.data.sensitivityLabels ?? []).forEach((l, i) => {
    const id = (l.id ?? stableUuid('world-label', t, l.name)).toLowerCase();
    c.unique('sensitivity label id', id, `/sensitivityLabels/${i}`);
    const to = (l.publishedTo ?? []).map((n, j) => {
      const p = c.principal(n);
      if (!p) c.problems.push(`${c.at(`/sensitivityLabels/${i}/publishedTo/${j}`)}: no user or application '${n}' in tenant ${c.tenant.domain}`);
      return p?.id ?? '';
    });
    labels.push({ tenant_id: t, id, name: l.name, published_to: l.publishedTo === undefined ? null : toJson(to) });
  });
  (c.data.workspaces ?? []).forEach((w, i) => {
    const id = (w.id ?? stableUuid('world-workspace', t, w.displayName)).toLowerCase();
    c.unique('workspace id', id, `/workspaces/${i}`);
    c.unique('workspace name', `${t}/${w.displayName.toLowerCase()}`, `/workspaces/${i}/displayName`);
    workspaces.push({ tenant_id: t, id, display_name: w.displayName, description: w.description ?? '' });
    const seen = new Set<string>();
    (w.roleAssignments ?? []).forEach((r, j) => {
      const p = c.principal(r.principal);
      if (!p) return c.problems.push(`${c.at(`/workspaces/${i}/roleAssignments/${j}/principal`)}: no user or application '${r.principal}' in tenant ${c.tenant.domain}`);
      if (seen.has(p.id)) return c.problems.push(`${c.at(`/workspaces/${i}/roleAssignments/${j}`)}: '${r.principal}' already has a role in workspace ${w.displayName}`);
      seen.add(p.id);
      assignments.push({ tenant_id: t, workspace_id: id, principal_id: p.id, principal_type: p.type, role: r.role });
    });
    const mine: typeof folders = [];
    (w.folders ?? []).forEach((f, j) => {
      const fid = (f.id ?? stableUuid('world-folder', id, f.displayName)).toLowerCase();
      c.unique('folder id', fid, `/workspaces/${i}/folders/${j}`);
      mine.push({ tenant_id: t, id: fid, workspace_id: id, display_name: f.displayName, parent_folder_id: null });
    });
    (w.folders ?? []).forEach((f, j) => {
      if (f.parentFolder === undefined) return;
      const parent = mine.find((x) => x.id === f.parentFolder!.toLowerCase() || x.display_name === f.parentFolder);
      if (!parent || parent === mine[j]) c.problems.push(`${c.at(`/workspaces/${i}/folders/${j}/parentFolder`)}: no other folder '${f.parentFolder}' in workspace ${w.displayName}`);
      else mine[j]!.parent_folder_id = parent.id;
    });
    // Parents first (a cycle is refused).
    const placed = new Set<string | null>([null]);
    for (let progress = true; progress; ) {
      progress = false;
      for (const f of mine) if (!placed.has(f.id) && placed.has(f.parent_folder_id)) (placed.add(f.id), folders.push(f), (progress = true));
    }
    if (mine.some((f) => !placed.has(f.id))) c.problems.push(`${c.at(`/workspaces/${i}/folders`)}: folders of workspace ${w.displayName} are in a cycle of parents`);
    (w.items ?? []).forEach((it, j) => {
      const rel = `/workspaces/${i}/items/${j}`;
      const itemId = (it.id ?? stableUuid('world-item', id, it.type, it.displayName)).toLowerCase();
      c.unique('item id', itemId, rel);
      c.unique('item name', `${id}/${it.type}/${it.displayName.toLowerCase()}`, `${rel}/displayName`);
      const folder = it.folderId === undefined ? undefined : mine.find((f) => f.id === it.folderId!.toLowerCase() || f.display_name === it.folderId);
      if (it.folderId !== undefined && !folder) c.problems.push(`${c.at(`${rel}/folderId`)}: no folder '${it.folderId}' in workspace ${w.displayName}`);
      const label = it.sensitivityLabel === undefined ? undefined : labels.find((l) => l.id === it.sensitivityLabel!.toLowerCase() || l.name === it.sensitivityLabel);
      if (it.sensitivityLabel !== undefined && !label) c.problems.push(`${c.at(`${rel}/sensitivityLabel`)}: no sensitivity label '${it.sensitivityLabel}' in tenant ${c.tenant.domain}`);
      const admin = assignments.find((a) => a.workspace_id === id && a.role === 'Admin');
      const creator = it.createdBy !== undefined ? c.principal(it.createdBy) : admin && { id: admin.principal_id };
      if (!creator) return void c.problems.push(`${c.at(it.createdBy !== undefined ? `${rel}/createdBy` : rel)}: ${it.createdBy !== undefined ? `no user or application '${it.createdBy}' in tenant ${c.tenant.domain}` : `give createdBy (workspace ${w.displayName} has no Admin)`}`);
      const user = c.tenant.users.find((u) => u.id === creator.id);
      const app = c.tenant.apps.find((a) => a.objectId === creator.id);
      const identity = user ? { id: user.id, displayName: user.displayName, type: 'User', userDetails: { userPrincipalName: user.upn } } : { id: creator.id, displayName: app?.displayName ?? '', type: 'ServicePrincipal', servicePrincipalDetails: { idpAppId: app?.appId } };
      const created = new Date(it.createdDateTime ?? c.now).toISOString();
      const definition: StoredDefinition = { parts: it.definition?.parts ?? [], logicalId: (it.logicalId ?? stableUuid('world-item-logical', itemId)).toLowerCase() };
      items.push({ tenant_id: t, id: itemId, workspace_id: id, type: it.type, display_name: it.displayName, name_key: it.displayName.toLowerCase(), description: it.description ?? null, folder_id: folder?.id ?? null, sensitivity_label_id: label?.id ?? null, tags: toJson(it.tags ?? []), default_identity: toJson(identity), definition: toJson(definition), state: 'Active', created_at: created, updated_at: new Date(it.lastModifiedDateTime ?? created).toISOString() });
    });
  });
  if (workspaces.length + labels.length === 0) return;
  c.writes.push(async (_ctx, db) => {
    await seedRows(db, 'platform_workspaces', workspaces);
    await seedRows(db, 'platform_role_assignments', assignments);
    await seedRows(db, 'platform_folders', folders);
    await seedRows(db, 'platform_sensitivity_labels', labels);
    for (const it of items) await insertItem(db, it);
  });
}

/** Adds the workspaces and labels of the store to the exported tenants. */
export async function exportPlatform(db: Kysely<Database>, out: WorldFileData, names: Map<string, string>): Promise<void> {
  const [ws, ras, fs, ls, its] = await Promise.all([
    db.selectFrom('platform_workspaces').selectAll().orderBy('id').execute(),
    db.selectFrom('platform_role_assignments').selectAll().orderBy('workspace_id').orderBy('principal_id').execute(),
    db.selectFrom('platform_folders').selectAll().orderBy('id').execute(),
    db.selectFrom('platform_sensitivity_labels').selectAll().orderBy('id').execute(),
    db.selectFrom('platform_items').selectAll().where('state', '=', 'Active').orderBy('id').execute(),
  ]);
  const name = (id: string) => names.get(id.toLowerCase()) ?? id;
  for (const t of out.tenants ?? []) {
    const mine = ws.filter((w) => w.tenant_id === t.id);
    if (mine.length)
      t.workspaces = mine.map((w) => {
        const f = fs.filter((x) => x.workspace_id === w.id);
        const it = its.filter((x) => x.workspace_id === w.id).map((x) => exportItem(x as ItemRow, name));
        const r = ras.filter((x) => x.workspace_id === w.id).map((x) => ({ principal: name(x.principal_id), role: x.role as 'Admin' })).sort(byKey((x) => x.principal));
        return {
          id: w.id,
          displayName: w.display_name,
          ...(w.description ? { description: w.description } : {}),
          ...(r.length ? { roleAssignments: r } : {}),
          ...(f.length ? { folders: f.map((x) => ({ id: x.id, displayName: x.display_name, ...(x.parent_folder_id ? { parentFolder: x.parent_folder_id } : {}) })) } : {}),
          ...(it.length ? { items: it } : {}),
        };
      });
    const labels = ls.filter((l) => l.tenant_id === t.id);
    if (labels.length) t.sensitivityLabels = labels.map((l) => ({ id: l.id, name: l.name, ...(l.published_to === null ? {} : { publishedTo: (fromJson<string[]>(l.published_to) ?? []).map(name) }) }));
  }
}

/** An item row as the file writes it. */
function exportItem(x: ItemRow, name: (id: string) => string) {
  const d = fromJson<StoredDefinition>(x.definition)!;
  const tags = fromJson<{ id: string; displayName: string }[]>(x.tags) ?? [];
  return {
    id: x.id,
    type: x.type as 'Eventstream',
    displayName: x.display_name,
    ...(x.description !== null ? { description: x.description } : {}),
    ...(x.folder_id ? { folderId: x.folder_id } : {}),
    ...(x.sensitivity_label_id ? { sensitivityLabel: x.sensitivity_label_id } : {}),
    createdBy: name(String((fromJson<{ id?: string }>(x.default_identity) ?? {}).id ?? '')),
    ...(tags.length ? { tags } : {}),
    ...(d.parts.length ? { definition: { parts: d.parts as { path: 'eventstream.json'; payload: string; payloadType: 'InlineBase64' }[] } } : {}),
    logicalId: d.logicalId,
    createdDateTime: x.created_at,
    lastModifiedDateTime: x.updated_at,
  };
}
