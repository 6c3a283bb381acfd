/**
 * The platform's lookups (spec analytics-platform-mail-wopi §4.2; reference §3, §4): the
 * caller's workspaces, one workspace and its folders (discovery of the ids the item routes
 * need), and the state and result of a long-running operation. The routes are in `routes.ts`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { readScopes, requireWorkspaceRole, writeScopes } from './access.ts';
import { readOperation } from './operations.ts';
import { getItemById, listFolders, listWorkspacesFor } from './store.ts';
import { callerOf, eventstreamBody, itemNotFound, listPageSize, operationUrl, type WsParams } from './items.ts';
/** The request of the workspaces list: a continuation token. */
export type WorkspacesRequest = FastifyRequest<{ Querystring: { continuationToken?: string } }>;
/** A request naming a workspace. */
export type WorkspaceRequest = FastifyRequest<{ Params: WsParams }>;
/** A request naming a long-running operation. */
export type OperationRequest = FastifyRequest<{ Params: { operationId: string } }>;

/** The workspace, folder and operation lookups of the platform. */
export function lookupRules(ctx: AppContext) {
  return {
    /**
     * The caller's workspaces, {@link listPageSize} a page with a continuation token (reference §4).
     * @throws ApiError 400 `InvalidContinuationToken`, 401/403 from the access checks.
     */
    async listWorkspaces(req: WorkspacesRequest) {
      const p = await callerOf(req, ctx, readScopes);
      const raw = req.query.continuationToken;
      let afterId: string | undefined;
      if (raw !== undefined) {
        const t = decodeToken<{ ws?: unknown }>(raw);
        if (!t || typeof t.ws !== 'string') throw errors.platform.invalidContinuationToken({}, { isRetriable: false });
        afterId = t.ws;
      }
      const rows = await listWorkspacesFor(ctx.store.db, p.tenantId, p.objectId, listPageSize, afterId);
      const page = rows.slice(0, listPageSize);
      const out: Record<string, unknown> = { value: page.map((w) => ({ id: w.id, displayName: w.display_name, description: w.description, type: 'Workspace' })) };
      if (rows.length > listPageSize) {
        const token = encodeToken({ ws: page[page.length - 1]!.id });
        out.continuationToken = token;
        out.continuationUri = absoluteUrl(ctx.origin(), '/v1/workspaces', { continuationToken: token });
      }
      return out;
    },

    /**
     * One workspace the caller holds a role in.
     * @throws ApiError 404 `WorkspaceNotFound`, 401/403 from the access checks.
     */
    async getWorkspace(req: WorkspaceRequest) {
      const p = await callerOf(req, ctx, readScopes);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer', req.raw);
      return { id: workspace.id, displayName: workspace.display_name, description: workspace.description, type: 'Workspace' };
    },

    /**
     * The folders of a workspace (discovery of the ids the item routes need).
     * @throws ApiError 404 `WorkspaceNotFound`, 401/403 from the access checks.
     */
    async listFolders(req: WorkspaceRequest) {
      const p = await callerOf(req, ctx, readScopes);
      const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer', req.raw);
      const rows = await listFolders(ctx.store.db, p.tenantId, workspace.id);
      return { value: rows.map((f) => ({ id: f.id, displayName: f.display_name, workspaceId: workspace.id, ...(f.parent_folder_id ? { parentFolderId: f.parent_folder_id } : {}) })) };
    },

    /**
     * Operation state (reference §3.2, §3.3): `Location` and `Retry-After` while running, `Location` of the result once succeeded.
     * @throws ApiError 404 `OperationNotFound`, 401/403 from the access checks.
     */
    async getOperation(req: OperationRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, writeScopes);
      const op = await readOperation(ctx, p.tenantId, p.objectId, req.params.operationId, req.raw);
      reply.header('x-vendor-operation-id', op.row.id);
      if (op.status === 'Running') {
        reply.header('Location', operationUrl(ctx, op.row.id)).header('Retry-After', String(op.retryAfterSeconds));
        reply.header('Access-Control-Expose-Headers', 'RequestId,Location,Retry-After,x-vendor-operation-id');
      } else if (op.status === 'Succeeded' && op.row.item_id) {
        reply.header('Location', `${operationUrl(ctx, op.row.id)}/result`);
        reply.header('Access-Control-Expose-Headers', 'RequestId,Location,x-vendor-operation-id');
      } else reply.header('Access-Control-Expose-Headers', 'RequestId,x-vendor-operation-id');
      return op.body;
    },

    /**
     * Operation result (reference §3.2, §3.3): the created eventstream, typed `application/json` without a charset.
     * @throws ApiError 400 `OperationHasNoResult`, 404 `OperationNotFound` / `ItemNotFound`, 401/403 from the access checks.
     */
    async getOperationResult(req: OperationRequest, reply: FastifyReply) {
      const p = await callerOf(req, ctx, writeScopes);
      const op = await readOperation(ctx, p.tenantId, p.objectId, req.params.operationId, req.raw);
      if (op.status !== 'Succeeded' || !op.row.item_id) throw errors.platform.operationHasNoResult({}, { isRetriable: false });
      const item = await getItemById(ctx.store.db, p.tenantId, op.row.item_id);
      if (!item) throw itemNotFound(op.row.item_id);
      // Observed: `application/json` without a charset (a Buffer keeps the type as set).
      return reply.type('application/json').send(Buffer.from(JSON.stringify(eventstreamBody(item)), 'utf8'));
    },
  };
}
