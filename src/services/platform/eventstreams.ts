/**
 * What the eventstream operations mean (spec analytics-platform-mail-wopi §2.2, §3, §4.2, §5;
 * reference §2, §3, §5): create (201 at once, or 202 and a long-running operation), list,
 * get, update, delete, getDefinition and updateDefinition, on `/eventstreams` and on the
 * generic `/items` collection. Every error is `errors.platform`'s. The routes are in
 * `routes.ts`; the workspace and operation lookups in `lookup.ts`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors, type ApiError } from '../../core/errors/index.ts';
import { newUuid } from '../../core/ids.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { fromJson, toJson } from '../../store/db.ts';
import { principalOf, readScopes, requireWorkspaceRole, writeScopes } from './access.ts';
import { isUniqueViolation } from '../../store/db.ts';
import {
  deleteItem,
  folderExists,
  getItem,
  getLabel,
  insertItem,
  insertOperation,
  listItems,
  nameInUse,
  type ItemRow,
  type StoredDefinition,
} from './store.ts';
import {
  checkCreateRequest,
  checkDefinition,
  checkDescription,
  checkDisplayName,
  checkUpdateRequest,
} from './validate.ts';
import {
  invalidInput,
  type CreateEventstreamBody,
  type UpdateDefinitionBody,
  type UpdateEventstreamBody,
} from './schemas.ts';
import {
  activeItem,
  type collections,
  callerOf,
  definitionParts,
  eventstreamBody,
  eventstreamType,
  itemTypes,
  listPageSize,
  itemNotFound,
  nameTaken,
  operationUrl,
  patchItem,
  type ItemIds,
  type ItemPatch,
  type WsParams,
} from './items.ts';

/** The request of a create: the workspace and the new eventstream. */
export type CreateRequest = FastifyRequest<{ Params: WsParams; Body: CreateEventstreamBody }>;
/** The request of a list: the workspace, a continuation token and (on `/items`) a type. */
export type ListRequest = FastifyRequest<{ Params: WsParams; Querystring: { continuationToken?: string; type?: string } }>;
/** The request of a get: the workspace and the item. */
export type ItemRequest = FastifyRequest<{ Params: ItemIds }>;
/** The request of an update: the item and the new display name / description. */
export type UpdateRequest = FastifyRequest<{ Params: ItemIds; Body: UpdateEventstreamBody }>;
/** The request of a delete: the item and `hardDelete`. */
export type DeleteRequest = FastifyRequest<{ Params: ItemIds; Querystring: { hardDelete?: string } }>;
/** The request of a getDefinition: the item and `format`. */
export type GetDefinitionRequest = FastifyRequest<{ Params: ItemIds; Querystring: { format?: string } }>;
/** The request of an updateDefinition: the item, `updateMetadata` and the new definition. */
export type UpdateDefinitionRequest = FastifyRequest<{ Params: ItemIds; Querystring: { updateMetadata?: string }; Body: UpdateDefinitionBody }>;

/**
 * The eventstream operations as answered on the collection `coll` (`eventstreams`, or the
 * generic `items`, which also checks and filters by item type).
 */
export function eventstreamRules(ctx: AppContext, coll: (typeof collections)[number]) {
  return {
    /**
     * Create (spec §4.2): 201 at once, or 202 and a long-running operation when a definition is given or provisioning takes time; a sensitivity label that is unknown or not published to the caller fails the request or the provisioning under `ApplyOrFail`.
     * @throws ApiError 400 (`InvalidInput`, `UnsupportedItemType`, `SensitivityLabelNotFound`), 404 `FolderNotFound`, 409 `ItemDisplayNameAlreadyInUse`, 401/403 from the access checks.
     */
    async create(req: CreateRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, writeScopes, true);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor', req.raw);
      if (coll === 'items') {
        const type = req.body.type;
        if (type === undefined || type === null) throw invalidInput("The property 'type' is required when creating through /items.");
        if (type !== eventstreamType) throw errors.platform.unsupportedItemType({ type: String(type) }, { isRetriable: false });
      }
      const body = checkCreateRequest(req.body);
      const db = ctx.store.db;
      if (body.folderId && !(await folderExists(db, p.tenantId, workspace.id, body.folderId))) {
        throw errors.platform.folderNotFound({}, { isRetriable: false, relatedResource: { resourceId: body.folderId, resourceType: 'Folder' } });
      }
      // Sensitivity label (spec §2.2): an unknown label fails the request under ApplyOrFail;
      // a label not published to the caller fails the provisioning (ApplyOrFail) or is skipped (Ignore).
      let labelId: string | null = null;
      let failure: ApiError | undefined;
      const ls = body.sensitivityLabelSettings;
      if (ls) {
        const label = await getLabel(db, p.tenantId, ls.labelId);
        if (!label) {
          if (ls.sensitivityLabelApplyStrategy === 'ApplyOrFail') {
            throw errors.platform.labelNotFound({ labelId: ls.labelId }, { isRetriable: false, relatedResource: { resourceId: ls.labelId, resourceType: 'SensitivityLabel' } });
          }
        } else if (label.publishedTo && !label.publishedTo.includes(p.objectId)) {
          if (ls.sensitivityLabelApplyStrategy === 'ApplyOrFail') {
            failure = errors.platform.labelNotPublished({ name: label.name }, { isRetriable: false, relatedResource: { resourceId: label.id, resourceType: 'SensitivityLabel' } });
          }
        } else labelId = label.id;
      }
      if (await nameInUse(db, p.tenantId, workspace.id, eventstreamType, body.displayName)) throw nameTaken(body.displayName);

      const platformPart = body.definition?.parts.find((x) => x.path === '.platform');
      const definition: StoredDefinition = {
        parts: (body.definition?.parts ?? []).filter((x) => x.path !== '.platform').map((x) => ({ path: x.path, payload: x.payload, payloadType: x.payloadType })),
        logicalId: (platformPart?.json?.config?.logicalId as string | undefined)?.toLowerCase() ?? newUuid(),
      };
      const at = nowIso();
      const row: ItemRow = {
        tenant_id: p.tenantId,
        id: newUuid(),
        workspace_id: workspace.id,
        type: eventstreamType,
        display_name: body.displayName,
        name_key: body.displayName.toLowerCase(),
        description: body.description ?? null,
        folder_id: body.folderId ?? null,
        sensitivity_label_id: labelId,
        tags: toJson([]),
        default_identity: toJson(principalOf(p)),
        definition: toJson(definition),
        state: 'Active',
        created_at: at,
        updated_at: at,
      };
      const delay = Math.max(0, ctx.config.settings.platformProvisioningDelaySeconds);
      const longRunning = body.definition !== undefined || delay > 0;

      if (!longRunning) {
        if (failure) throw failure;
        try {
          await insertItem(db, row);
        } catch (e) {
          if (isUniqueViolation(e)) throw nameTaken(body.displayName);
          throw e;
        }
        return reply.code(201).header('ETag', '""').header('Location', `${ctx.origin()}/v1/workspaces/${workspace.id}/eventstreams/${row.id}`).send(eventstreamBody(row));
      }

      const opId = newUuid();
      const start = nowMs();
      try {
        await ctx.store.transaction(async (trx) => {
          if (!failure) await insertItem(trx, { ...row, state: 'Provisioning' });
          await insertOperation(trx, {
            tenant_id: p.tenantId,
            id: opId,
            caller_id: p.objectId,
            kind: 'CreateEventstream',
            workspace_id: workspace.id,
            item_id: failure ? null : row.id,
            created_ms: start,
            complete_ms: start + delay * 1000,
            outcome: failure ? 'Failed' : 'Succeeded',
            // The operation's error, as the platform body says it (reference §4.1).
            error: failure ? toJson({ requestId: req.id, errorCode: failure.code, message: failure.message, relatedResource: failure.options.relatedResource, isRetriable: false }) : null,
            status: null,
          });
        });
      } catch (e) {
        if (isUniqueViolation(e)) throw nameTaken(body.displayName);
        throw e;
      }
      return reply
        .code(202)
        .header('Location', operationUrl(ctx, opId))
        .header('x-vendor-operation-id', opId)
        .header('Retry-After', String(Math.max(1, delay)))
        .header('ETag', '""')
        .header('Access-Control-Expose-Headers', 'RequestId,Location,Retry-After,ETag,x-vendor-operation-id')
        .type('application/json; charset=utf-8')
        .send('null');
    },

    /**
     * List (reference §2.5): a page of {@link listPageSize} eventstreams with a continuation token; on `/items` an optional `type` filter.
     * @throws ApiError 400 `InvalidContinuationToken` / `InvalidItemType`, 401/403 from the access checks.
     */
    async list(req: ListRequest) {
      const p = await callerOf(req, ctx, readScopes);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer', req.raw);
      const raw = req.query.continuationToken;
      let after: { k: string; id: string } | undefined;
      if (raw !== undefined) {
        const t = decodeToken<{ k?: unknown; id?: unknown; w?: unknown }>(raw);
        if (!t || typeof t.k !== 'string' || typeof t.id !== 'string' || t.w !== workspace.id) throw errors.platform.invalidContinuationToken({}, { isRetriable: false });
        after = { k: t.k, id: t.id };
      }
      const typeFilter = coll === 'items' ? req.query.type : undefined;
      if (typeFilter !== undefined) {
        if (!itemTypes.includes(typeFilter)) throw errors.platform.invalidItemType({ type: typeFilter }, { isRetriable: false });
        if (typeFilter !== eventstreamType) return { value: [] };
      }
      const rows = await listItems(ctx.store.db, p.tenantId, workspace.id, eventstreamType, listPageSize, after);
      const page = rows.slice(0, listPageSize);
      const out: Record<string, unknown> = { value: page.map(eventstreamBody) };
      if (rows.length > listPageSize) {
        const last = page[page.length - 1]!;
        const token = encodeToken({ w: workspace.id, k: last.name_key, id: last.id });
        out.continuationToken = token;
        out.continuationUri = absoluteUrl(ctx.origin(), `/v1/workspaces/${workspace.id}/${coll}`, { continuationToken: token, ...(typeFilter !== undefined ? { type: typeFilter } : {}) });
      }
      return out;
    },

    /**
     * Get (reference §2.5), with `ETag: ""`.
     * @throws ApiError 404 `ItemNotFound`, 401/403 from the access checks.
     */
    async get(req: ItemRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, readScopes);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer', req.raw);
      const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
      reply.header('ETag', '""').header('Access-Control-Expose-Headers', 'RequestId,ETag');
      return eventstreamBody(row);
    },

    /**
     * Update (reference §2.5): display name and description.
     * @throws ApiError 400 `InvalidInput`, 404 `ItemNotFound`, 409 `ItemDisplayNameAlreadyInUse`, 401/403 from the access checks.
     */
    async update(req: UpdateRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, writeScopes, true);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor', req.raw);
      const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
      const u = checkUpdateRequest(req.body);
      const patch: ItemPatch = { updated_at: nowIso() };
      if (u.displayName !== undefined) patch.display_name = u.displayName;
      if (u.description !== undefined) patch.description = u.description;
      await patchItem(ctx, p, workspace.id, row, patch);
      const updated = (await getItem(ctx.store.db, p.tenantId, workspace.id, eventstreamType, row.id)) ?? row;
      reply.header('ETag', '""').header('Access-Control-Expose-Headers', 'RequestId,ETag');
      return eventstreamBody(updated);
    },

    /**
     * Delete (reference §2.5): 200 with an empty body; `hardDelete` accepted, deletion is always permanent.
     * @throws ApiError 404 `ItemNotFound`, 401/403 from the access checks.
     */
    async remove(req: DeleteRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, writeScopes);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor', req.raw);
      const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
      if (!(await deleteItem(ctx.store.db, p.tenantId, row.id))) throw itemNotFound(row.id);
      // Observed: an empty body typed application/octet-stream.
      return reply.code(200).type('application/octet-stream').send('');
    },

    /**
     * Get definition (reference §2.5, §5): synchronous 200, as observed on the service.
     * @throws ApiError 400 `InvalidDefinitionFormat`, 404 `ItemNotFound`, 401/403 from the access checks.
     */
    async getDefinition(req: GetDefinitionRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, writeScopes);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor', req.raw);
      const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
      const format = req.query.format;
      if (format !== undefined && !['eventstream', 'default'].includes(format.toLowerCase())) {
        throw errors.platform.invalidDefinitionFormat({ format: String(format) }, { isRetriable: false });
      }
      reply.header('Access-Control-Expose-Headers', 'RequestId');
      return { definition: { parts: definitionParts(row) } };
    },

    /**
     * Update definition (reference §2.5, §5): synchronous 200; `.platform` is honoured only with `updateMetadata=true`.
     * @throws ApiError 400 `InvalidInput` / `CorruptedPayload`, 404 `ItemNotFound`, 401/403 from the access checks.
     */
    async updateDefinition(req: UpdateDefinitionRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, writeScopes, true);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor', req.raw);
      const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
      const def = checkDefinition(req.body.definition);
      const old = fromJson<StoredDefinition>(row.definition);
      const platformPart = def.parts.find((x) => x.path === '.platform');
      const stored: StoredDefinition = { parts: def.parts.filter((x) => x.path !== '.platform').map((x) => ({ path: x.path, payload: x.payload, payloadType: x.payloadType })), logicalId: old.logicalId };
      const patch: ItemPatch = { definition: toJson(stored), updated_at: nowIso() };
      if (req.query.updateMetadata?.toLowerCase() === 'true' && platformPart) {
        const md = platformPart.json?.metadata ?? {};
        if (typeof md.displayName === 'string' && md.displayName !== row.display_name) patch.display_name = checkDisplayName(md.displayName);
        if (typeof md.description === 'string') patch.description = checkDescription(md.description) ?? '';
      }
      await patchItem(ctx, p, workspace.id, row, patch);
      return reply.code(200).send();
    },
  };
}
