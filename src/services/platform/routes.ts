/**
 * Routes of the data platform (spec analytics-platform-mail-wopi §2.2, §3, §4.2, §5, §7, §8;
 * reference §2, §3, §4, §5): create an eventstream (201 at once, or 202 and a long-running
 * operation), the operation state and result, and get / list / update / delete /
 * getDefinition / updateDefinition of eventstreams — on `/eventstreams` and on the generic
 * `/items` collection — plus read-only workspace and folder discovery. A route table: what
 * each operation means is in `eventstreams.ts` and `lookup.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import {
  CreateEventstreamRequest,
  DeleteQuery,
  GetDefinitionQuery,
  ItemParams,
  ListQuery,
  OperationParams,
  UpdateDefinitionQuery,
  UpdateDefinitionRequest,
  UpdateEventstreamRequest,
  WorkspaceParams,
  platformValidator,
} from './schemas.ts';
import { collections, withSchema } from './items.ts';
import { eventstreamRules, type CreateRequest, type DeleteRequest, type GetDefinitionRequest, type ItemRequest, type ListRequest, type UpdateDefinitionRequest as UpdateDefinitionCall, type UpdateRequest } from './eventstreams.ts';
import { lookupRules, type OperationRequest, type WorkspaceRequest, type WorkspacesRequest } from './lookup.ts';

/** The route generic of a handler's request type (Fastify's `RouteGeneric` of `FastifyRequest<G>`). */
type G<R> = R extends { params: infer P; query: infer Q; body: infer B } ? { Params: P; Querystring: Q; Body: B } : never;

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

    // Every eventstream route also answers on the generic items collection (reference §2.5;
    // clients such as command-line tools read eventstreams through `/items`).
    for (const coll of collections) {
      const es = eventstreamRules(ctx, coll);
      const item = `/v1/workspaces/:workspaceId/${coll}/:eventstreamId`;
      r.post<G<CreateRequest>>(`/v1/workspaces/:workspaceId/${coll}`, withSchema({ params: WorkspaceParams, body: CreateEventstreamRequest }), es.create);
      r.get<G<ListRequest>>(`/v1/workspaces/:workspaceId/${coll}`, withSchema({ params: WorkspaceParams, querystring: ListQuery }), es.list);
      r.get<G<ItemRequest>>(item, withSchema({ params: ItemParams }), es.get);
      r.patch<G<UpdateRequest>>(item, withSchema({ params: ItemParams, body: UpdateEventstreamRequest }), es.update);
      r.delete<G<DeleteRequest>>(item, withSchema({ params: ItemParams, querystring: DeleteQuery }), es.remove);
      r.post<G<GetDefinitionRequest>>(`${item}/getDefinition`, withSchema({ params: ItemParams, querystring: GetDefinitionQuery }), es.getDefinition);
      r.post<G<UpdateDefinitionCall>>(`${item}/updateDefinition`, withSchema({ params: ItemParams, querystring: UpdateDefinitionQuery, body: UpdateDefinitionRequest }), es.updateDefinition);
    }

    // Workspaces of the caller, one workspace, its folders; the state and result of an operation.
    const lookup = lookupRules(ctx);
    r.get<G<WorkspacesRequest>>('/v1/workspaces', withSchema({ querystring: ListQuery }), lookup.listWorkspaces);
    r.get<G<WorkspaceRequest>>('/v1/workspaces/:workspaceId', withSchema({ params: WorkspaceParams }), lookup.getWorkspace);
    r.get<G<WorkspaceRequest>>('/v1/workspaces/:workspaceId/folders', withSchema({ params: WorkspaceParams }), lookup.listFolders);
    r.get<G<OperationRequest>>('/v1/operations/:operationId', withSchema({ params: OperationParams }), lookup.getOperation);
    r.get<G<OperationRequest>>('/v1/operations/:operationId/result', withSchema({ params: OperationParams }), lookup.getOperationResult);
  });
}
