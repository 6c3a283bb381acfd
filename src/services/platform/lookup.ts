/**
 * The platform's lookups (spec analytics-platform-mail-wopi §4.2; reference §3, §4): the
 * caller's workspaces, one workspace and its folders (discovery of the ids the item routes
 * need), and the state and result of a long-running operation.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { absoluteUrl, decodeToken, encodeToken } from '../../core/paging.ts';
import { readScopes, requireWorkspaceRole, writeScopes } from './access.ts';
import { readOperation } from './operations.ts';
import { getItemById, listFolders, listWorkspacesFor } from './store.ts';
import { ListQuery, OperationParams, WorkspaceParams } from './schemas.ts';
import { callerOf, eventstreamBody, itemNotFound, listPageSize, operationUrl, withSchema, type WsParams } from './items.ts';

/** Registers the workspace and operation routes on the platform's plugin `r`. */
export function registerLookupRoutes(r: FastifyInstance, ctx: AppContext): void {
  // Workspaces of the caller, one workspace, its folders (discovery of the ids the item routes need).
  r.get<{ Querystring: { continuationToken?: string } }>('/v1/workspaces', withSchema({ querystring: ListQuery }), async (req) => {
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
  });

  r.get<{ Params: WsParams }>('/v1/workspaces/:workspaceId', withSchema({ params: WorkspaceParams }), async (req) => {
    const p = await callerOf(req, ctx, readScopes);
    const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer');
    return { id: workspace.id, displayName: workspace.display_name, description: workspace.description, type: 'Workspace' };
  });

  r.get<{ Params: WsParams }>('/v1/workspaces/:workspaceId/folders', withSchema({ params: WorkspaceParams }), async (req) => {
    const p = await callerOf(req, ctx, readScopes);
    const { workspace } = await requireWorkspaceRole(ctx, p, req.params.workspaceId, 'Viewer');
    const rows = await listFolders(ctx.store.db, p.tenantId, workspace.id);
    return { value: rows.map((f) => ({ id: f.id, displayName: f.display_name, workspaceId: workspace.id, ...(f.parent_folder_id ? { parentFolderId: f.parent_folder_id } : {}) })) };
  });

  // Operation state (reference §3.2, §3.3).
  r.get<{ Params: { operationId: string } }>('/v1/operations/:operationId', withSchema({ params: OperationParams }), async (req, reply) => {
    const p = await callerOf(req, ctx, writeScopes);
    const op = await readOperation(ctx, p.tenantId, p.objectId, req.params.operationId);
    reply.header('x-vendor-operation-id', op.row.id);
    if (op.status === 'Running') {
      reply.header('Location', operationUrl(ctx, op.row.id)).header('Retry-After', String(op.retryAfterSeconds));
      reply.header('Access-Control-Expose-Headers', 'RequestId,Location,Retry-After,x-vendor-operation-id');
    } else if (op.status === 'Succeeded' && op.row.item_id) {
      reply.header('Location', `${operationUrl(ctx, op.row.id)}/result`);
      reply.header('Access-Control-Expose-Headers', 'RequestId,Location,x-vendor-operation-id');
    } else reply.header('Access-Control-Expose-Headers', 'RequestId,x-vendor-operation-id');
    return op.body;
  });

  // Operation result (reference §3.2, §3.3).
  r.get<{ Params: { operationId: string } }>('/v1/operations/:operationId/result', withSchema({ params: OperationParams }), async (req, reply) => {
    const p = await callerOf(req, ctx, writeScopes);
    const op = await readOperation(ctx, p.tenantId, p.objectId, req.params.operationId);
    if (op.status !== 'Succeeded' || !op.row.item_id) throw errors.platform.operationHasNoResult({}, { isRetriable: false });
    const item = await getItemById(ctx.store.db, p.tenantId, op.row.item_id);
    if (!item) throw itemNotFound(op.row.item_id);
    // Observed: `application/json` without a charset (a Buffer keeps the type as set).
    return reply.type('application/json').send(Buffer.from(JSON.stringify(eventstreamBody(item)), 'utf8'));
  });
}
