/**
 * Generic resource-manager resources in a world file: `resources` of a resource group, each a
 * resource of a type no area kind owns (`type` `Namespace/type`, e.g.
 * `Vendor.Storage/storageAccounts`; `name`; `location` — default the group's —; `kind`; `sku`;
 * `tags`; `identity`; `systemData`; `properties`, default `{}`) with its child resources nested
 * in `resources` (`type` one segment relative to the parent's, e.g. `blobServices`; no default
 * location), up to {@link childDepth} levels. Ids come from the path
 * (`<group id>/providers/<type>/<name>[/<child type>/<name>…]`); the stored body is exactly the
 * fields given (no `systemData` is made: the body is what the file says). Rows go to
 * `arm_resources` through `ArmStore.insertResources` (`data.ts`); the areas' own resources
 * (automation accounts, data share accounts and everything below them) are refused here and
 * left to their kinds. The export writes every stored resource of a group whose type is not
 * one of those families.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../store/database.ts';
import { fromJson } from '../store/db.ts';
import { automationTypes } from '../services/automation/rules.ts';
import type { WorldFileData } from './schema.ts';
import { byKey, exportedGroups, type DataContext } from './data.ts';
import { jsonObject, resourceFields, resourceTimes } from './resource.ts';

const strict = { additionalProperties: false } as const;

/** Levels of child resources below a top-level generic resource. */
export const childDepth = 4;

/** The top-level types owned by an area kind (they and every type below them are theirs). */
export const ownedResourceTypes = [automationTypes.account, 'Vendor.DataShare/accounts'];

/** True when the full type `type` belongs to a kind of its own (see {@link ownedResourceTypes}). */
export function isOwnedType(type: string): boolean {
  const t = type.toLowerCase();
  return ownedResourceTypes.some((o) => t === o.toLowerCase() || t.startsWith(`${o.toLowerCase()}/`));
}

/** A generic resource as the file gives it (`type` full at the top, one segment for a child). */
export interface FileGenericResource {
  type: string;
  name: string;
  location?: string;
  kind?: string;
  sku?: Record<string, unknown>;
  tags?: Record<string, string>;
  identity?: Record<string, unknown>;
  systemData?: Record<string, unknown>;
  properties?: Record<string, unknown>;
  resources?: FileGenericResource[];
}

/** The fields of a generic resource at nesting `level` (0: top) with its children below. */
function genericResource(level: number): TSchema {
  const type =
    level === 0
      ? Type.String({ pattern: '^[A-Za-z][\\w-]*(\\.[\\w-]+)+/[A-Za-z][\\w-]*$', maxLength: 256, description: "The full type 'Namespace/type', e.g. 'Vendor.Storage/storageAccounts' (not an area kind's own: automationAccounts, dataShareAccounts)." })
      : Type.String({ pattern: '^[A-Za-z][\\w-]*$', maxLength: 128, description: "The child's type relative to its parent's, e.g. 'blobServices'." });
  return Type.Object(
    {
      type,
      ...resourceFields,
      location: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      kind: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
      sku: Type.Optional(jsonObject),
      identity: Type.Optional(jsonObject),
      ...(level < childDepth ? { resources: Type.Optional(Type.Array(genericResource(level + 1), { maxItems: 10_000, description: 'Child resources.' })) } : {}),
    },
    { ...strict, description: level === 0 ? 'A resource-manager resource of a type no area kind owns, with its child resources.' : 'A child resource.' },
  );
}

/** A generic resource of a resource group (with its children). */
export const WorldGenericResource = genericResource(0);

/** Resource-group properties of the generic resources. */
export const genericResourceGroupProperties = { resources: Type.Optional(Type.Array(WorldGenericResource, { maxItems: 10_000 })) };

/** The optional fields of a generic resource, in the order of its stored body and of the file. */
const optionalFields = ['location', 'kind', 'sku', 'tags', 'identity', 'systemData'] as const;

/** The given optional fields of `r` (see {@link optionalFields}). */
function givenFields(r: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(optionalFields.filter((k) => r[k] !== undefined).map((k) => [k, r[k]]));
}

/** The stored body of `r` with id `id` and full type `type` (the given fields only; `properties` default `{}`). */
function genericBody(id: string, type: string, r: FileGenericResource, location: string | undefined): Record<string, unknown> {
  return { id, name: r.name, type, ...givenFields({ ...r, location }), properties: r.properties ?? {} };
}

/** Checks the generic resources of the tenant entry's groups and queues their rows. */
export function resolveResources(c: DataContext): void {
  for (const g of c.groups) {
    const common = { tenantId: c.tenant.id, subscriptionId: g.subscriptionId, resourceGroup: g.name };
    const add = (r: FileGenericResource, parentId: string, parentType: string | undefined, rel: string): void => {
      const type = parentType === undefined ? r.type : `${parentType}/${r.type}`;
      const id = parentType === undefined ? `${g.id}/providers/${type}/${r.name}` : `${parentId}/${r.type}/${r.name}`;
      if (isOwnedType(type)) {
        c.problems.push(`${c.at(`${rel}/type`)}: ${type} is an area kind's own resource (automationAccounts, dataShareAccounts)`);
        return;
      }
      if (!c.unique('resource', id.toLowerCase(), rel)) return;
      const body = genericBody(id, type, r, parentType === undefined ? (r.location ?? g.location) : r.location);
      c.resources.push({ ...common, id, type, name: r.name, parentId, body, ...resourceTimes(body, c.now) });
      (r.resources ?? []).forEach((child, i) => add(child, id, type, `${rel}/resources/${i}`));
    };
    ((g.data as { resources?: FileGenericResource[] }).resources ?? []).forEach((r, i) => add(r, g.id, undefined, `${g.path}/resources/${i}`));
  }
}

/** A stored body as the file writes it (`type` given by the caller: full at the top, relative below). */
function fileGeneric(type: string, body: Record<string, any>, children: FileGenericResource[]): FileGenericResource {
  return { type, name: body.name, ...givenFields(body), properties: body.properties ?? {}, ...(children.length ? { resources: children } : {}) };
}

/** Adds the stored resources of no area kind to the exported resource groups (children nested below their parents). */
export async function exportResources(db: Kysely<Database>, out: WorldFileData): Promise<void> {
  const rows = (await db.selectFrom('arm_resources').select(['id_lower', 'parent_id_lower', 'type_lower', 'body']).orderBy('id_lower').execute()).filter((r) => !isOwnedType(r.type_lower));
  const byParent = new Map<string, typeof rows>();
  for (const r of rows) {
    const list = byParent.get(r.parent_id_lower) ?? [];
    list.push(r);
    byParent.set(r.parent_id_lower, list);
  }
  const tree = (parentLower: string, parentType: string, level: number): FileGenericResource[] =>
    level > childDepth
      ? []
      : (byParent.get(parentLower) ?? [])
          .map((r) => {
            const body = fromJson<Record<string, any>>(r.body)!;
            const type = String(body.type ?? '');
            if (!type.toLowerCase().startsWith(`${parentType.toLowerCase()}/`) || type.slice(parentType.length + 1).includes('/')) return undefined;
            return fileGeneric(type.slice(parentType.length + 1), body, tree(r.id_lower, type, level + 1));
          })
          .filter((x): x is FileGenericResource => x !== undefined)
          .sort(byKey((x) => `${x.type.toLowerCase()}/${x.name.toLowerCase()}`));
  for (const [groupLower, g] of exportedGroups(out)) {
    const top = (byParent.get(groupLower) ?? [])
      .map((r) => {
        const body = fromJson<Record<string, any>>(r.body)!;
        const type = String(body.type ?? '');
        if (type.split('/').length !== 2) return undefined;
        return fileGeneric(type, body, tree(r.id_lower, type, 1));
      })
      .filter((x): x is FileGenericResource => x !== undefined)
      .sort(byKey((x) => `${x.type.toLowerCase()}/${x.name.toLowerCase()}`));
    if (top.length) (g as { resources?: FileGenericResource[] }).resources = top;
  }
}
