/**
 * What the data share synchronization operations mean (spec: resource-manager §2.4, §4.5;
 * reference §5): the consumer's share subscriptions (accepting an invitation), `synchronize`,
 * and both `listSynchronizations` (the provider's, in the spec, and the consumer's, outside
 * it) with OData `$filter` / `$orderby` and `$skipToken` paging.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../core/errors/index.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { newUuid } from '../../core/ids.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import { compileFilter, compileOrderBy, ODataError, parseFilter, parseOrderBy, type FieldMap } from '../../core/odata/index.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { odataOption, queryValue, skipToken } from '../arm/input.ts';
import { systemDataFor } from '../arm/kernel.ts';
import { cacheKey } from '../../core/cache.ts';
import { consumerSynchronizationFields, synchronizationFields } from './store.ts';
import type { SynchronizationPage } from './pages.ts';
import { checkName, input, invalidSkipToken, params, skipTokenNames, types, userOf, type DataShareResources } from './rules.ts';

/** Synchronizations per page of `listSynchronizations`. */
export const synchronizationPageSize = 20;
/** How long a consumer-started run stays `InProgress`, in ms, by mode. */
export const runDurationMs = { Incremental: 30_000, FullSync: 120_000 } as const;

/**
 * The first number literal of a parsed `$filter` that is not an int32 (the one numeric field,
 * `durationMs`, is int32, spec §2.4): PostgreSQL refuses to compare an integer column with a
 * fraction or an out-of-range value, so such a filter is a 400, not a database error.
 */
function nonInt32Literal(node: unknown): { value: number; position: number } | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  const n = node as Record<string, unknown>;
  if (n.kind === 'literal' && n.type === 'number') {
    const v = n.value as number;
    return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? undefined : { value: v, position: n.position as number };
  }
  for (const child of Object.values(n)) {
    const hit = Array.isArray(child) ? child.map(nonInt32Literal).find((x) => x) : nonInt32Literal(child);
    if (hit) return hit;
  }
  return undefined;
}

/** The consumer-side and synchronization operations of the area (handlers of `routes.ts`). */
export function consumerRules(r: DataShareResources) {
  const { store, arm, ctx } = r;
  const shareSubscription = async (req: FastifyRequest) => r.child(req, await r.account(req), 'shareSubscriptions', types.shareSubscription, params(req).shareSubscriptionName!);

  /** Parses `$filter` / `$orderby` / `$skipToken` of a synchronization list (400 `InvalidFilter` / `InvalidOrderBy` / `InvalidSkipToken`). */
  const listQuery = (req: FastifyRequest, fields: FieldMap) => {
    const filterText = queryValue(req, '$filter', 'filter');
    const orderText = queryValue(req, '$orderby', '$orderBy', 'orderby', 'orderBy');
    const filter = odataOption(
      '$filter',
      filterText,
      (text) => {
        const tree = parseFilter(text);
        const bad = nonInt32Literal(tree);
        if (bad) throw new ODataError(`The number ${bad.value} is not an int32 (durationMs is an int32).`, 'type', bad.position);
        return compileFilter(tree, fields);
      },
      (message) => errors.datashare.invalidFilter({ message }, { target: '$filter' }),
    );
    const orderBy = odataOption('$orderby', orderText, (text) => compileOrderBy(parseOrderBy(text), fields), (message) => errors.datashare.invalidOrderBy({ message }, { target: '$orderby' })) ?? [];
    const offset = skipToken<{ o: number }>(req, skipTokenNames, (t) => Number.isSafeInteger(t.o) && t.o >= 0, invalidSkipToken)?.o ?? 0;
    const nextLink = (path: string, apiVersion: string) =>
      absoluteUrl(ctx.origin(), path, { 'api-version': apiVersion, $filter: filterText, $orderby: orderText, $skipToken: encodeToken({ o: offset + synchronizationPageSize }) });
    // A blank `$filter` / `$orderby` compiles to nothing but is repeated in the next link.
    const hasQueryTexts = filterText !== undefined || orderText !== undefined;
    return { filter, orderBy, offset, nextLink, hasQueryTexts };
  };

  /**
   * The JSON text of a default-ordered answer (no `$filter`, no `$orderby`) from its kept
   * page, as UTF-8 bytes: kept with the page per everything else it holds — the phase of the
   * page's pending runs at the Stratus clock's now (see `pages.ts`), the variant (with or
   * without the consumer fields), and what the next link holds (origin, path, api-version).
   * No object is built, serialized and encoded per request; the body has no `systemData`, so
   * the api-versions without it answer the same bytes. A request spelling a blank `$filter` or
   * `$orderby` (repeated in the next link) gets a text made for it and not kept: a caller
   * cannot fill the page's texts with spellings.
   */
  const pageText = (reply: FastifyReply, page: SynchronizationPage, consumerFields: boolean, path: string, apiVersion: string, q: ReturnType<typeof listQuery>): Buffer => {
    const now = page.due.length === 0 ? '' : nowIso();
    const make = () => {
      const body: Record<string, unknown> = { value: page.value(now, consumerFields) };
      if (page.more) body.nextLink = q.nextLink(path, apiVersion);
      return JSON.stringify(body);
    };
    const text = q.hasQueryTexts ? Buffer.from(make(), 'utf8') : page.text(cacheKey(page.due.length === 0 ? 0 : page.phase(now), consumerFields, ctx.origin(), path, apiVersion), make);
    reply.type('application/json; charset=utf-8');
    return text;
  };

  return {
    /** PUT share subscription: accepts the invitation it names (addressed to the caller, pending); an existing one is answered as it is. */
    async putShareSubscription(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const account = await r.account(req);
      const name = params(req).shareSubscriptionName!;
      checkName('share subscription', name);
      const id = `${account.id}/shareSubscriptions/${name}`;
      const existing = await arm.getResource(id);
      if (existing) {
        reply.code(200);
        return existing.body;
      }
      const props = input.member(input.body(req, true).properties, 'properties', false);
      const invitationId = input.string(props, 'invitationId', 'properties.invitationId', 64);
      const sourceShareLocation = input.string(props, 'sourceShareLocation', 'properties.sourceShareLocation', 64);
      if (!invitationId) throw errors.datashare.invalidBody({ message: "The 'properties.invitationId' member is required." }, { target: 'properties.invitationId' });
      if (!sourceShareLocation) throw errors.datashare.invalidBody({ message: "The 'properties.sourceShareLocation' member is required." }, { target: 'properties.sourceShareLocation' });
      const inv = await store.invitation(invitationId);
      const p = call.principal;
      const addressed =
        inv &&
        ((inv.targetEmailLower !== undefined && inv.targetEmailLower === p.userPrincipalName?.toLowerCase()) ||
          (inv.targetTenantId !== undefined && inv.targetTenantId === p.tenantId.toLowerCase() && inv.targetObjectId === p.objectId.toLowerCase()));
      const target = { target: 'properties.invitationId' };
      if (!inv || !addressed) throw errors.datashare.invitationNotFound({ invitationId }, target);
      if (inv.status !== 'Pending') throw errors.datashare.invitationAlreadyAccepted({ invitationId }, target);
      const share = await arm.getResource(inv.shareIdLower);
      const invitation = await arm.getResource(inv.invitationResourceId);
      if (!share || !invitation) throw errors.datashare.invitationShareGone({ invitationId }, target);
      const providerTenant = await ctx.identity.directory.findTenant(share.tenantId);
      const sb = share.body as any;
      const at = nowIso();
      const user = userOf(p);
      const resource = {
        id,
        name,
        type: types.shareSubscription,
        systemData: systemDataFor(p, at),
        properties: {
          createdAt: at,
          invitationId: inv.invitationId,
          providerEmail: sb.properties?.userEmail,
          providerName: sb.properties?.userName,
          providerTenantName: providerTenant?.displayName,
          provisioningState: 'Succeeded',
          shareDescription: sb.properties?.description,
          shareKind: sb.properties?.shareKind,
          shareName: share.name,
          shareSubscriptionStatus: 'Active',
          shareTerms: sb.properties?.terms,
          sourceShareLocation,
          userEmail: user.userEmail,
          userName: user.userName,
        },
      };
      const ib = invitation.body as any;
      const acceptedInvitation = { ...ib, properties: { ...ib.properties, invitationStatus: 'Accepted', respondedAt: at } };
      await r.conflictSafe(name, () =>
        ctx.store.transaction(async (tx) => {
          await arm.putResource({ id, tenantId: p.tenantId, subscriptionId: account.subscriptionId, resourceGroup: account.resourceGroup, type: types.shareSubscription, name, parentId: account.id, body: resource, createdAt: at, updatedAt: at }, tx);
          await arm.putResource({ ...invitation, body: acceptedInvitation, updatedAt: at }, tx);
          if (!(await store.acceptInvitation(inv.invitationId, tx))) throw errors.datashare.invitationAlreadyAccepted({ invitationId }, target);
        }),
      );
      reply.code(201);
      return resource;
    },
    async getShareSubscription(req: FastifyRequest) {
      return (await shareSubscription(req)).body;
    },

    /** POST synchronize: records a run of the source share, `InProgress` for {@link runDurationMs} of its mode; 202. */
    async synchronize(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const ss = await shareSubscription(req);
      const body = input.body(req, false);
      const mode = input.string(body, 'synchronizationMode', 'synchronizationMode', 32) ?? 'Incremental';
      if (mode !== 'Incremental' && mode !== 'FullSync') {
        throw errors.datashare.invalidBody({ message: `The synchronization mode '${mode}' is invalid. Allowed values: Incremental, FullSync.` }, { target: 'synchronizationMode' });
      }
      const inv = await store.invitation(String((ss.body as any).properties?.invitationId ?? ''));
      const share = inv ? await arm.getResource(inv.shareIdLower) : undefined;
      if (!inv || !share) throw errors.datashare.sourceShareDeleted({ name: ss.name });
      const p = call.principal;
      const tenant = await ctx.identity.directory.findTenant(p.tenantId);
      const startMs = nowMs();
      const startTime = new Date(startMs).toISOString();
      const synchronizationId = newUuid();
      const duration = runDurationMs[mode];
      await store.addSynchronization({
        tenantId: share.tenantId,
        shareIdLower: share.id.toLowerCase(),
        shareSubscriptionIdLower: ss.id.toLowerCase(),
        synchronizationId,
        synchronizationMode: mode,
        status: 'InProgress',
        message: 'Synchronization in progress.',
        startTime,
        dueAt: new Date(startMs + duration).toISOString(),
        plannedDurationMs: duration,
        consumerName: p.name ?? p.userPrincipalName ?? p.appId,
        consumerEmail: p.userPrincipalName,
        consumerTenantName: tenant?.displayName,
      });
      reply.code(202);
      return { synchronizationId, startTime, status: 'Accepted' };
    },

    /** The provider's runs of a share (spec §4.5); the next link is fetched with GET by the official clients. */
    async listShareSynchronizations(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const share = await r.share(req);
      const q = listQuery(req, synchronizationFields);
      if (!q.filter && q.orderBy.length === 0) {
        const kept = await store.synchronizationPage({ tenantId: share.tenantId, shareIdLower: share.id.toLowerCase() }, q.offset, synchronizationPageSize);
        return pageText(reply, kept, true, `${share.id}/listSynchronizations`, call.apiVersion, q);
      }
      const page = await store.listSynchronizations({ now: nowIso(), tenantId: share.tenantId, shareIdLower: share.id.toLowerCase(), filter: q.filter, orderBy: q.orderBy, offset: q.offset, limit: synchronizationPageSize });
      const body: Record<string, unknown> = { value: page.value };
      if (page.more) body.nextLink = q.nextLink(`${share.id}/listSynchronizations`, call.apiVersion);
      return body;
    },

    /** The consumer's runs (ShareSubscriptions_ListSynchronizations, outside the spec): without the consumer fields. */
    async listShareSubscriptionSynchronizations(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const ss = await shareSubscription(req);
      const q = listQuery(req, consumerSynchronizationFields);
      if (!q.filter && q.orderBy.length === 0) {
        const kept = await store.synchronizationPage({ shareSubscriptionIdLower: ss.id.toLowerCase() }, q.offset, synchronizationPageSize);
        return pageText(reply, kept, false, `${ss.id}/listSynchronizations`, call.apiVersion, q);
      }
      const page = await store.listSynchronizations({ now: nowIso(), shareSubscriptionIdLower: ss.id.toLowerCase(), filter: q.filter, orderBy: q.orderBy, offset: q.offset, limit: synchronizationPageSize });
      const body: Record<string, unknown> = { value: page.value.map(({ consumerName: _n, consumerEmail: _e, consumerTenantName: _t, ...rest }) => rest) };
      if (page.more) body.nextLink = q.nextLink(`${ss.id}/listSynchronizations`, call.apiVersion);
      return body;
    },
  };
}
