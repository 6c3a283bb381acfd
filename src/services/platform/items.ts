/**
 * What the platform's routes share (spec analytics-platform-mail-wopi §2.2, §4.2; reference
 * §2, §5): the item types, the eventstream body of an item row, its definition parts, the
 * item lookups and writes with their errors, and the caller check every route starts with.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors, type ApiError } from '../../core/errors/index.ts';
import { isUuid } from '../../core/ids.ts';
import { fromJson } from '../../store/db.ts';
import { isUniqueViolation } from '../../store/db.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { platformCaller } from './access.ts';
import { getItem, nameInUse, updateItem, type ItemRow, type StoredDefinition } from './store.ts';
import { defaultPropertiesPayload, defaultTopologyPayload, partPaths, platformFilePayload } from './validate.ts';
import { requireJsonContent, throwIfInvalid } from './schemas.ts';

/** The item type this area serves. */
export const eventstreamType = 'Eventstream';
/** The item types of spec §2.2 (valid values of the `type` filter of `/items`). */
export const itemTypes = 'Dashboard Report SemanticModel PaginatedReport Datamart Lakehouse Eventhouse Environment KQLDatabase KQLQueryset KQLDashboard DataPipeline Notebook SparkJobDefinition MLExperiment MLModel Warehouse Eventstream SQLEndpoint MirroredWarehouse MirroredDatabase Reflex GraphQLApi MountedVendorDataFactory SQLDatabase CopyJob VariableLibrary Dataflow ApacheAirflowJob WarehouseSnapshot DigitalTwinBuilder DigitalTwinBuilderFlow MirroredPartnerACatalog Map AnomalyDetector UserDataFunction GraphModel GraphQuerySet PartnerBDatabase OperationsAgent PartnerCDatabase Ontology EventSchemaSet DataAgent MirroredCatalog AppBackend OrgApp OrgAppAudience DataBuildToolJob PartnerAStorage'.split(' ');
/** Items per page of a list (the server chooses; `continuationToken` carries on). */
export const listPageSize = 100;
/** Base of the `$schema` written into `.platform` (the real value is omitted in the reference). */
export const schemaBase = 'https://developer.vendor.example/json-schemas/platform';

/** The `Eventstream` body of an item row (spec §2.2; reference §2.3: absent optional fields are omitted). */
export function eventstreamBody(r: ItemRow): Record<string, unknown> {
  const out: Record<string, unknown> = { id: r.id, type: r.type, displayName: r.display_name };
  if (r.description !== null) out.description = r.description;
  out.workspaceId = r.workspace_id;
  if (r.folder_id !== null) out.folderId = r.folder_id;
  if (r.sensitivity_label_id !== null) out.sensitivityLabel = { id: r.sensitivity_label_id };
  const tags = fromJson<{ id: string; displayName: string }[]>(r.tags);
  if (tags.length) out.tags = tags;
  out.defaultIdentity = fromJson(r.default_identity);
  return out;
}

/** The platform 404 of an item (not retriable, naming the item). */
export function itemNotFound(id: string): ApiError {
  return errors.platform.itemNotFound({}, { isRetriable: false, relatedResource: { resourceId: id, resourceType: 'Item' } });
}

/** The platform 409 of a display name already in use. */
export function nameTaken(name: string): ApiError {
  return errors.platform.itemNameInUse({ name }, { isRetriable: false });
}

/** The URL of an operation's state. */
export function operationUrl(ctx: AppContext, id: string): string {
  return `${ctx.origin()}/v1/operations/${id}`;
}

/** The active eventstream `itemId` of the workspace. @throws ApiError 404 `ItemNotFound` (also for a malformed id). */
export async function activeItem(ctx: AppContext, p: Principal, workspaceId: string, itemId: string): Promise<ItemRow> {
  const row = isUuid(itemId) ? await getItem(ctx.store.db, p.tenantId, workspaceId, eventstreamType, itemId.toLowerCase()) : undefined;
  if (!row) throw itemNotFound(itemId);
  return row;
}

/** The columns a PATCH or updateDefinition may change (`name_key` follows `display_name`). */
export type ItemPatch = { display_name?: string; description?: string; definition?: string; updated_at: string };

/**
 * Writes a change of an active item: a new name must be free among the workspace's
 * eventstreams (also when another request takes it meanwhile).
 * @throws ApiError 409 `ItemDisplayNameAlreadyInUse`; 404 `ItemNotFound` when the item is gone.
 */
export async function patchItem(ctx: AppContext, p: Principal, workspaceId: string, row: ItemRow, patch: ItemPatch): Promise<void> {
  const db = ctx.store.db;
  const name = patch.display_name;
  if (name !== undefined && (await nameInUse(db, p.tenantId, workspaceId, eventstreamType, name, row.id))) throw nameTaken(name);
  try {
    if (!(await updateItem(db, p.tenantId, row.id, name === undefined ? patch : { ...patch, name_key: name.toLowerCase() }))) throw itemNotFound(row.id);
  } catch (e) {
    if (isUniqueViolation(e)) throw nameTaken(name ?? row.display_name);
    throw e;
  }
}

/** The definition parts of an item as getDefinition returns them (reference §5: the three parts, `.platform` current). */
export function definitionParts(r: ItemRow): { path: string; payload: string; payloadType: 'InlineBase64' }[] {
  const d = fromJson<StoredDefinition>(r.definition);
  const out: { path: string; payload: string; payloadType: 'InlineBase64' }[] = [];
  for (const path of partPaths) {
    if (path === '.platform') out.push({ path, payload: platformFilePayload(schemaBase, { displayName: r.display_name, description: r.description }, d.logicalId), payloadType: 'InlineBase64' });
    else {
      const given = d.parts.find((x) => x.path === path);
      out.push({ path, payload: given?.payload ?? (path === 'eventstream.json' ? defaultTopologyPayload() : defaultPropertiesPayload()), payloadType: 'InlineBase64' });
    }
  }
  return out;
}

/** Path parameters of a workspace route. */
export type WsParams = { workspaceId: string };
/** Path parameters of an item route. */
export type ItemIds = { workspaceId: string; eventstreamId: string };
/** The collections the eventstream routes answer on. */
export const collections = ['eventstreams', 'items'] as const;

/**
 * The caller of a platform route: the bearer token and the request budget first, then —
 * for a route that takes a body — the JSON media type, then the route's schema validation
 * (attached, so that a caller without a token gets 401 rather than 400).
 */
export async function callerOf(req: FastifyRequest, ctx: AppContext, scopes: string[], takesBody = false): Promise<Principal> {
  const p = await platformCaller(req, ctx, scopes);
  if (takesBody) requireJsonContent(req);
  throwIfInvalid(req);
  return p;
}

/** Route options of the platform: its family, schemas validated by the route (attached) so that 401 comes before 400. */
export const withSchema = <S extends object>(schema: S) => ({ config: { family: 'platform' as const }, attachValidation: true, schema });
