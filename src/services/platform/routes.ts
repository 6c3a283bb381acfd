/**
 * Routes of the data platform (spec analytics-platform-mail-wopi §2.2, §3, §4.2, §5, §7, §8;
 * reference §2, §3, §4, §5): create an eventstream (201 at once, or 202 and a long-running
 * operation), the operation state and result, and get / list / update / delete /
 * getDefinition / updateDefinition of eventstreams — on `/eventstreams` and on the generic
 * `/items` collection — plus read-only workspace and folder discovery.
 */
import type { FastifyInstance } from 'fastify';
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
  CreateEventstreamRequest,
  DeleteQuery,
  GetDefinitionQuery,
  ItemParams,
  ListQuery,
  UpdateDefinitionQuery,
  UpdateDefinitionRequest,
  UpdateEventstreamRequest,
  WorkspaceParams,
  platformValidator,
  invalidInput,
  type CreateEventstreamBody,
  type UpdateDefinitionBody,
  type UpdateEventstreamBody,
} from './schemas.ts';
import { registerLookupRoutes } from './lookup.ts';
import {
  activeItem,
  callerOf,
  collections,
  definitionParts,
  eventstreamBody,
  eventstreamType,
  itemTypes,
  listPageSize,
  itemNotFound,
  nameTaken,
  operationUrl,
  patchItem,
  withSchema,
  type ItemIds,
  type ItemPatch,
  type WsParams,
} from './items.ts';

export { eventstreamType, itemTypes, listPageSize, schemaBase } from './items.ts';

/** Registers the platform routes inside their own plugin (its hook sets the platform's cache headers). */
export async function registerPlatformRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(async (r) => {
    // Headers the service sends on every answer, errors included (reference §2.2, §3.3, §4.1).
    r.addHook('onSend', async (_req, reply, payload) => {
      reply.header('Cache-Control', 'no-store, must-revalidate, no-cache');
      reply.header('Pragma', 'no-cache');
      reply.header('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
      reply.header('X-Frame-Options', 'deny');
      reply.header('X-Content-Type-Options', 'nosniff');
      if (!reply.hasHeader('Access-Control-Expose-Headers')) reply.header('Access-Control-Expose-Headers', 'RequestId');
      return payload;
    });
    // Shapes are checked by the routes' TypeBox schemas, compiled by TypeBox (no coercion).
    r.setValidatorCompiler(platformValidator);
    const cfg = { config: { family: 'platform' as const }, attachValidation: true };
    const withSchema = <S extends object>(schema: S) => ({ ...cfg, schema });

    // Every eventstream route also answers on the generic items collection (reference §2.5;
    // clients such as command-line tools read eventstreams through `/items`).
    for (const coll of collections) {
      // Create (spec §4.2).
      r.post<{ Params: WsParams; Body: CreateEventstreamBody }>(`/v1/workspaces/:workspaceId/${coll}`, withSchema({ params: WorkspaceParams, body: CreateEventstreamRequest }), async (req, reply) => {
        const p = await callerOf(req, ctx, writeScopes, true);
        const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor');
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
            // Readers of this workspace (any instance) must look for due operations again.
            await ctx.cache.changed(trx, 'platform');
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
      });

      // List (reference §2.5).
      r.get<{ Params: WsParams; Querystring: { continuationToken?: string; type?: string } }>(`/v1/workspaces/:workspaceId/${coll}`, withSchema({ params: WorkspaceParams, querystring: ListQuery }), async (req) => {
        const p = await callerOf(req, ctx, readScopes);
        const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer');
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
      });

      // Get (reference §2.5).
      r.get<{ Params: ItemIds }>(`/v1/workspaces/:workspaceId/${coll}/:eventstreamId`, withSchema({ params: ItemParams }), async (req, reply) => {
        const p = await callerOf(req, ctx, readScopes);
        const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer');
        const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
        reply.header('ETag', '""').header('Access-Control-Expose-Headers', 'RequestId,ETag');
        return eventstreamBody(row);
      });

      // Update (reference §2.5).
      r.patch<{ Params: ItemIds; Body: UpdateEventstreamBody }>(`/v1/workspaces/:workspaceId/${coll}/:eventstreamId`, withSchema({ params: ItemParams, body: UpdateEventstreamRequest }), async (req, reply) => {
        const p = await callerOf(req, ctx, writeScopes, true);
        const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor');
        const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
        const u = checkUpdateRequest(req.body);
        const patch: ItemPatch = { updated_at: nowIso() };
        if (u.displayName !== undefined) patch.display_name = u.displayName;
        if (u.description !== undefined) patch.description = u.description;
        await patchItem(ctx, p, workspace.id, row, patch);
        const updated = (await getItem(ctx.store.db, p.tenantId, workspace.id, eventstreamType, row.id)) ?? row;
        reply.header('ETag', '""').header('Access-Control-Expose-Headers', 'RequestId,ETag');
        return eventstreamBody(updated);
      });

      // Delete (reference §2.5): 200 with an empty body; `hardDelete` accepted, deletion is always permanent.
      r.delete<{ Params: ItemIds; Querystring: { hardDelete?: string } }>(`/v1/workspaces/:workspaceId/${coll}/:eventstreamId`, withSchema({ params: ItemParams, querystring: DeleteQuery }), async (req, reply) => {
        const p = await callerOf(req, ctx, writeScopes);
        const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor');
        const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
        if (!(await deleteItem(ctx.store.db, p.tenantId, row.id))) throw itemNotFound(row.id);
        // Observed: an empty body typed application/octet-stream.
        return reply.code(200).type('application/octet-stream').send('');
      });

      // Get definition (reference §2.5, §5): synchronous 200, as observed on the service.
      r.post<{ Params: ItemIds; Querystring: { format?: string } }>(`/v1/workspaces/:workspaceId/${coll}/:eventstreamId/getDefinition`, withSchema({ params: ItemParams, querystring: GetDefinitionQuery }), async (req, reply) => {
        const p = await callerOf(req, ctx, writeScopes);
        const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor');
        const row = await activeItem(ctx, p, workspace.id, req.params.eventstreamId);
        const format = req.query.format;
        if (format !== undefined && !['eventstream', 'default'].includes(format.toLowerCase())) {
          throw errors.platform.invalidDefinitionFormat({ format: String(format) }, { isRetriable: false });
        }
        reply.header('Access-Control-Expose-Headers', 'RequestId');
        return { definition: { parts: definitionParts(row) } };
      });

      // Update definition (reference §2.5, §5): synchronous 200; `.platform` is honoured only with updateMetadata=true.
      const updateDefinitionSchema = withSchema({ params: ItemParams, querystring: UpdateDefinitionQuery, body: UpdateDefinitionRequest });
      r.post<{ Params: ItemIds; Querystring: { updateMetadata?: string }; Body: UpdateDefinitionBody }>(`/v1/workspaces/:workspaceId/${coll}/:eventstreamId/updateDefinition`, updateDefinitionSchema, async (req, reply) => {
        const p = await callerOf(req, ctx, writeScopes, true);
        const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Contributor');
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
      });
    }

    registerLookupRoutes(r, ctx);
  });
}
