/**
 * The document host's bootstrapper and the ecosystem and container endpoints its URLs point
 * to (spec analytics §2.4, §4.4, §5, §7; reference §6):
 *
 * - `GET /wopibootstrapper` — Bootstrap;
 * - `POST /wopibootstrapper` with `X-WOPI-EcosystemOperation`: `GET_ROOT_CONTAINER`
 *   (Bootstrap + RootContainerInfo), `GET_NEW_ACCESS_TOKEN` (Bootstrap + AccessTokenInfo
 *   for the container named by `X-WOPI-WopiSrc`), `GET_WOPI_SRC_WITH_ACCESS_TOKEN` (reserved:
 *   answered as a plain Bootstrap, the shortcut rule), anything else or none → 501;
 * - `GET /wopi/ecosystem` (CheckEcosystem), `GET /wopi/ecosystem/root_container_pointer`
 *   (GetRootContainer), `GET /wopi/containers/{id}` (CheckContainerInfo),
 *   `GET /wopi/containers/{id}/ecosystem_pointer`, `…/children`, `…/ancestry`, each
 *   authorised by the WOPI `access_token` the bootstrapper handed out.
 *
 * The bootstrapper takes a delegated OAuth 2.0 token of the `wopi` audience with the
 * `user_impersonation` scope (`Bearer <token>` or `Bearer: <token>`; the token itself or its
 * Base64 encoding). Without one: 401 with `WWW-Authenticate: Bearer authorization_uri="…",
 * tokenIssuance_uri="…"` naming Stratus's identity provider, and no body (spec §7).
 *
 * A route table: what each operation means is in `rules.ts`.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.ts';
import { wopiRules, type ContainerRequest } from './rules.ts';

/**
 * Registers the bootstrapper and the ecosystem and container endpoints inside their own
 * plugin, whose content-type parser drains and ignores every request body: no body is
 * documented for any of these operations (reference §6.2), so a body of any type, well-formed
 * or not, changes nothing and a request without a token still gets the 401 challenge.
 */
export async function registerWopiRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  await root.register(async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, payload, done) => {
      payload.resume();
      done(null, undefined);
    });
    registerWopiRoutesIn(app, ctx);
  });
}

function registerWopiRoutesIn(app: FastifyInstance, ctx: AppContext): void {
  const config = { family: 'wopi' as const };
  const rules = wopiRules(ctx);

  app.get('/wopibootstrapper', { config }, rules.getBootstrap);
  app.post('/wopibootstrapper', { config }, rules.postBootstrap);
  app.get('/wopi/ecosystem', { config }, rules.checkEcosystem);
  app.get('/wopi/ecosystem/root_container_pointer', { config }, rules.rootContainerPointer);
  app.get<{ Params: ContainerRequest['params'] }>('/wopi/containers/:id', { config }, rules.checkContainerInfo);
  app.get<{ Params: ContainerRequest['params'] }>('/wopi/containers/:id/ecosystem_pointer', { config }, rules.ecosystemPointer);
  app.get<{ Params: ContainerRequest['params'] }>('/wopi/containers/:id/children', { config }, rules.children);
  app.get<{ Params: ContainerRequest['params'] }>('/wopi/containers/:id/ancestry', { config }, rules.ancestry);
}
