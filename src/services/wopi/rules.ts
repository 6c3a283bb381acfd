/**
 * What the document host's bootstrapper and the ecosystem and container endpoints mean
 * (spec analytics §2.4, §4.4, §5, §7; reference §6): the bootstrapper's bearer check and its
 * 401 challenge, the `X-WOPI-EcosystemOperation` values, the WOPI access tokens it hands
 * out and checks, and the Bootstrap, RootContainerInfo and CheckContainerInfo bodies. Every
 * error is `errors.wopi`'s. The routes are in `routes.ts`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors, type ApiError } from '../../core/errors/index.ts';
import { AuthFailure, bearerToken, verifyToken } from '../../core/auth.ts';
import type { Principal } from '../../core/identity/identity.ts';
import { ensureRootContainer, findContainer, issueWopiToken, verifyWopiToken, type RootContainer, type WopiGrant } from './store.ts';

/** The delegated scope the bootstrapper requires. */
export const bootstrapperScope = 'user_impersonation';

/** Values of `X-WOPI-EcosystemOperation` the bootstrapper knows (reference §6.2). */
export const ecosystemOperations = ['GET_ROOT_CONTAINER', 'GET_NEW_ACCESS_TOKEN', 'GET_WOPI_SRC_WITH_ACCESS_TOKEN'] as const;

/**
 * The `WWW-Authenticate` challenge of a 401 from the bootstrapper (reference §6.3): the
 * identity provider's authorization and token endpoints (tenant `common`), comma-separated,
 * values quoted.
 */
export function bootstrapChallenge(origin: string): string {
  return `Bearer authorization_uri="${origin}/common/oauth2/authorize",tokenIssuance_uri="${origin}/common/oauth2/v2.0/token"`;
}

function unauthorized(ctx: AppContext, why: string): ApiError {
  return errors.wopi.unauthorized({ message: why }, { headers: { 'WWW-Authenticate': bootstrapChallenge(ctx.origin()) } });
}

/** A JWT spelled as its Base64 (standard or URL-safe) encoding, decoded; undefined otherwise. */
function decodeBase64Jwt(raw: string): string | undefined {
  if (!/^[A-Za-z0-9+/_-]+=*$/.test(raw)) return undefined;
  const text = Buffer.from(raw, 'base64').toString('utf8');
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text) ? text : undefined;
}

/**
 * The signed-in user of a bootstrapper request (spec §4.4, §5).
 * @throws ApiError 401 with the challenge for a missing, blank, malformed, invalid or
 *   expired token, a token of another audience, an app token, or one without `user_impersonation`.
 */
export async function bootstrapUser(req: FastifyRequest, ctx: AppContext): Promise<Principal> {
  let raw: string;
  try {
    raw = bearerToken(req.headers.authorization, true);
  } catch (e) {
    throw unauthorized(ctx, (e as Error).message);
  }
  let principal: Principal;
  try {
    principal = await verifyToken(ctx.identity, raw, 'wopi');
  } catch (e) {
    if (!(e instanceof AuthFailure)) throw e;
    const decoded = e.reason === 'malformed' ? decodeBase64Jwt(raw) : undefined;
    if (!decoded) throw unauthorized(ctx, e.message);
    try {
      principal = await verifyToken(ctx.identity, decoded, 'wopi');
    } catch (e2) {
      if (e2 instanceof AuthFailure) throw unauthorized(ctx, e2.message);
      throw e2;
    }
  }
  if (principal.kind !== 'user') throw unauthorized(ctx, 'The bootstrapper needs a delegated token of a signed-in user.');
  if (!principal.scopes.includes(bootstrapperScope)) throw unauthorized(ctx, `The token lacks the '${bootstrapperScope}' scope.`);
  return principal;
}

/** The user's `/wopi/ecosystem` URL with a fresh ecosystem access token (reference §6.4 `EcosystemUrl`, §6.5 GetEcosystem). */
async function ecosystemUrl(ctx: AppContext, tenantId: string, userId: string): Promise<string> {
  const { token } = await issueWopiToken(ctx.store.db, tenantId, userId, { kind: 'ecosystem' });
  return `${ctx.origin()}/wopi/ecosystem?access_token=${encodeURIComponent(token)}`;
}

/** The `Bootstrap` object (spec §2.4) with a fresh ecosystem access token. */
async function bootstrapBody(ctx: AppContext, p: Principal) {
  const out: Record<string, string> = {
    EcosystemUrl: await ecosystemUrl(ctx, p.tenantId, p.objectId),
    UserId: p.objectId,
    SignInName: p.userPrincipalName ?? '',
  };
  if (p.name) out.UserFriendlyName = p.name;
  return out;
}

/**
 * `RootContainerInfo.ContainerInfo` of a root container: exactly the spec §2.4 fields (the
 * documented sample's set); no web UI, no child operations.
 */
function rootContainerInfoFields(c: RootContainer) {
  return {
    Name: c.name,
    HostUrl: '',
    SharingUrl: '',
    UserCanCreateChildContainer: false,
    UserCanCreateChildFile: false,
    UserCanDelete: false,
    UserCanRename: false,
  };
}

/**
 * CheckContainerInfo of a root container: the §2.4 fields plus those the mobile requirements
 * make required (`IsEduUser`, `LicenseCheckForEditIsEnabled`) and the other documented ones.
 */
function containerInfo(c: RootContainer) {
  return {
    ...rootContainerInfoFields(c),
    IsAnonymousUser: false,
    IsEduUser: false,
    LicenseCheckForEditIsEnabled: false,
    SupportedShareUrlTypes: [] as string[],
  };
}

/** `{ContainerPointer, ContainerInfo}` of the user's root container, with a per-container access token. */
async function rootContainerInfo(ctx: AppContext, tenantId: string, userId: string) {
  const c = await ensureRootContainer(ctx.store.db, tenantId, userId);
  const { token } = await issueWopiToken(ctx.store.db, tenantId, userId, { kind: 'container', id: c.id });
  return {
    ContainerPointer: { Url: `${ctx.origin()}/wopi/containers/${c.id}?access_token=${encodeURIComponent(token)}`, Name: c.name },
    ContainerInfo: rootContainerInfoFields(c),
  };
}

/** The container id a WopiSrc names on this host; undefined for anything else. */
function containerOfWopiSrc(ctx: AppContext, src: string): string | undefined {
  let u: URL;
  try {
    u = new URL(src, ctx.origin() + '/');
  } catch {
    return undefined;
  }
  if (u.origin !== new URL(ctx.origin()).origin) return undefined;
  const m = /^\/wopi\/containers\/([^/]+)\/?$/i.exec(u.pathname);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!).toLowerCase();
  } catch {
    // A malformed percent-escape names no container.
    return undefined;
  }
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v.trim() : Array.isArray(v) ? v[0]?.trim() : undefined;
}

/**
 * The grant of the WOPI access token of a `/wopi/*` request (`access_token` query
 * parameter, else the bearer header), checked against the resource it must open.
 * @throws ApiError 401 (no body) for a missing, unknown, expired or differently scoped token;
 *   404 for a container that does not exist or is not the token holder's.
 */
async function wopiGrant(req: FastifyRequest, ctx: AppContext, want: { kind: 'ecosystem' } | { kind: 'container'; id: string }): Promise<{ grant: WopiGrant; container?: RootContainer }> {
  const q = (req.query ?? {}) as Record<string, unknown>;
  let token = typeof q.access_token === 'string' ? q.access_token : undefined;
  if (!token) {
    try {
      token = bearerToken(req.headers.authorization);
    } catch {
      throw errors.wopi.accessTokenMissing();
    }
  }
  const grant = await verifyWopiToken(ctx.store.db, token);
  if (!grant) throw errors.wopi.accessTokenInvalid();
  if (want.kind === 'ecosystem') {
    if (grant.resource.kind !== 'ecosystem') throw errors.wopi.accessTokenNotEcosystem();
    return { grant };
  }
  const id = want.id.toLowerCase();
  if (grant.resource.kind !== 'container' || grant.resource.id !== id) throw errors.wopi.accessTokenNotContainer();
  const container = await findContainer(ctx.store.db, grant.tenantId, id);
  if (!container || container.userId !== grant.userId) throw errors.wopi.containerNotFound();
  return { grant, container };
}

function noStore(reply: FastifyReply): void {
  reply.header('Cache-Control', 'no-store');
}

/** A request whose path names a container (`/wopi/containers/:id…`). */
export type ContainerRequest = FastifyRequest<{ Params: { id: string } }>;

/**
 * The handlers of the bootstrapper and the ecosystem and container endpoints (spec §4.4;
 * reference §6.2–§6.5), each answering with `Cache-Control: no-store`.
 * @throws ApiError 401 (see {@link bootstrapUser}, {@link wopiGrant}); 404 for an unknown
 *   WopiSrc or container; 501 for an unknown `X-WOPI-EcosystemOperation`.
 */
export function wopiRules(ctx: AppContext) {
  return {
    /** `GET /wopibootstrapper`: Bootstrap. */
    async getBootstrap(req: FastifyRequest, reply: FastifyReply) {
      const p = await bootstrapUser(req, ctx);
      noStore(reply);
      return { Bootstrap: await bootstrapBody(ctx, p) };
    },

    /** `POST /wopibootstrapper`: the ecosystem operation of `X-WOPI-EcosystemOperation`. */
    async postBootstrap(req: FastifyRequest, reply: FastifyReply) {
      const p = await bootstrapUser(req, ctx);
      const op = header(req, 'x-wopi-ecosystemoperation') ?? '';
      noStore(reply);
      switch (op) {
        case 'GET_ROOT_CONTAINER':
          return { Bootstrap: await bootstrapBody(ctx, p), RootContainerInfo: await rootContainerInfo(ctx, p.tenantId, p.objectId) };
        case 'GET_NEW_ACCESS_TOKEN': {
          const src = header(req, 'x-wopi-wopisrc');
          const id = src ? containerOfWopiSrc(ctx, src) : undefined;
          const container = id ? await findContainer(ctx.store.db, p.tenantId, id) : undefined;
          if (!container || container.userId !== p.objectId) throw errors.wopi.wopiSrcNotFound();
          const { token, expiresAtMs } = await issueWopiToken(ctx.store.db, p.tenantId, p.objectId, { kind: 'container', id: container.id });
          return { Bootstrap: await bootstrapBody(ctx, p), AccessTokenInfo: { AccessToken: token, AccessTokenExpiry: expiresAtMs } };
        }
        case 'GET_WOPI_SRC_WITH_ACCESS_TOKEN':
          // Reserved for future use: a host that does not implement a shortcut answers a plain Bootstrap.
          return { Bootstrap: await bootstrapBody(ctx, p) };
        default:
          throw errors.wopi.operationNotSupported({ operation: op });
      }
    },

    /** `GET /wopi/ecosystem`: CheckEcosystem. */
    async checkEcosystem(req: FastifyRequest, reply: FastifyReply) {
      await wopiGrant(req, ctx, { kind: 'ecosystem' });
      noStore(reply);
      return { SupportsContainers: true };
    },

    /** `GET /wopi/ecosystem/root_container_pointer`: GetRootContainer. */
    async rootContainerPointer(req: FastifyRequest, reply: FastifyReply) {
      const { grant } = await wopiGrant(req, ctx, { kind: 'ecosystem' });
      noStore(reply);
      return rootContainerInfo(ctx, grant.tenantId, grant.userId);
    },

    /** `GET /wopi/containers/{id}`: CheckContainerInfo. */
    async checkContainerInfo(req: ContainerRequest, reply: FastifyReply) {
      const { container } = await wopiGrant(req, ctx, { kind: 'container', id: req.params.id });
      noStore(reply);
      return containerInfo(container!);
    },

    /** `GET /wopi/containers/{id}/ecosystem_pointer`: the user's ecosystem URL. */
    async ecosystemPointer(req: ContainerRequest, reply: FastifyReply) {
      const { grant } = await wopiGrant(req, ctx, { kind: 'container', id: req.params.id });
      const Url = await ecosystemUrl(ctx, grant.tenantId, grant.userId);
      noStore(reply);
      return { Url };
    },

    /** `GET /wopi/containers/{id}/children`: EnumerateChildren. */
    async children(req: ContainerRequest, reply: FastifyReply) {
      await wopiGrant(req, ctx, { kind: 'container', id: req.params.id });
      noStore(reply);
      // Stratus keeps no files or child containers yet: a root container is empty.
      return { ChildContainers: [], ChildFiles: [] };
    },

    /** `GET /wopi/containers/{id}/ancestry`: EnumerateAncestors. */
    async ancestry(req: ContainerRequest, reply: FastifyReply) {
      await wopiGrant(req, ctx, { kind: 'container', id: req.params.id });
      noStore(reply);
      return { AncestorsWithRootFirst: [] };
    },
  };
}
