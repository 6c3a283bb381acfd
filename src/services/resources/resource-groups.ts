/**
 * Resource groups (reference resource-manager-base §2): create-or-update (201/200), get,
 * HEAD check-existence (204/404, no body), PATCH (`tags`, `managedBy`; unspecified members
 * kept, `location` immutable), list (`$filter` by tag, `$top` with next links) and delete as a
 * long-running operation. A caller without the read at the subscription lists the groups a
 * role of its own (or of its groups) grants it the read on.
 *
 * Delete: in one transaction every area's `deleteResourceGroup` hook removes its rows inside
 * the group (modules in reverse registration order, `arm` last: tracked resources, role
 * assignments at or below the group, the group), and the operation is recorded. The answer is
 * 202 with `Location` (`/subscriptions/{s}/operationresults/{opaque}`) and `Retry-After`; the
 * operation runs for {@link deleteSeconds} of the Stratus clock (`POST /_stratus/clock` moves
 * it): until then the location answers 202 again and the group reads `Deleting` (GET, HEAD),
 * a write to it 409 `ResourceGroupBeingDeleted`, a second DELETE 202 with the same location
 * (the service accepts a delete of a deleting group); then the location answers 200.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext, ServiceModule } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso, nowMs } from '../../core/clock.ts';
import { newUuid } from '../../core/ids.ts';
import { isUniqueViolation } from '../../store/db.ts';
import { absoluteUrl, encodeToken } from '../../core/paging.ts';
import { ArmStore, type ResourceGroup } from '../arm/store.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { readableGroups } from './access.ts';
import { input, invalidFilter, params, pageSizeOf, skipTokenOf } from './input.ts';
import { regionOf, regions } from './locations.ts';
import { ResourcesStore, type GroupDeletion } from './store.ts';

/** How long (Stratus clock seconds) a resource-group delete runs. */
export const deleteSeconds = 20;
/** The `Retry-After` (seconds) of a running delete (the published minimum, reference §2.3). */
export const retryAfterSeconds = 10;

/** The read action of resource groups (a list shows the groups it is granted on). */
export const groupReadAction = 'Vendor.Resources/subscriptions/resourceGroups/read';

/** The published resource type of a group. */
const groupType = 'Vendor.Resources/resourceGroups';

/** The ResourceGroup body (v2025-04-01 shape). */
export function groupBody(g: ResourceGroup, provisioningState = 'Succeeded'): Record<string, unknown> {
  return {
    id: `/subscriptions/${g.subscriptionId}/resourceGroups/${g.name}`,
    name: g.name,
    type: groupType,
    properties: { provisioningState },
    location: g.location,
    ...(g.managedBy ? { managedBy: g.managedBy } : {}),
    ...(Object.keys(g.tags).length ? { tags: g.tags } : {}),
  };
}

/** The opaque part of an operation-results URL for a delete (base64url JSON naming the job, as the service's are). */
function opaqueOf(d: Pick<GroupDeletion, 'operationId' | 'nameLower'>): string {
  return Buffer.from(JSON.stringify({ jobId: `RESOURCEGROUPDELETIONJOB-${d.nameLower.toUpperCase()}-${d.operationId}`, jobLocation: 'global' })).toString('base64url');
}

/** The operation id an opaque operation-results name carries, or undefined. */
function operationIdOf(opaque: string): string | undefined {
  try {
    const v = JSON.parse(Buffer.from(opaque, 'base64url').toString('utf8')) as { jobId?: unknown };
    const m = typeof v.jobId === 'string' ? /-([0-9a-f-]{36})$/u.exec(v.jobId) : null;
    return m?.[1];
  } catch {
    return undefined;
  }
}

/** The resource-group operations, over the app's store; `modules` are the app's areas (their delete hooks). */
export function groupRules(ctx: AppContext, modules: readonly ServiceModule[]) {
  const arm = new ArmStore(ctx.store.db, ctx.cache);
  const store = new ResourcesStore(ctx.store.db, ctx.cache);
  const sub = (call: ArmCall) => call.subscription!.subscriptionId;

  const location = (reply: FastifyReply, call: ArmCall, d: GroupDeletion) => {
    reply.header('location', absoluteUrl(ctx.origin(), `/subscriptions/${sub(call)}/operationresults/${opaqueOf(d)}`, { 'api-version': d.apiVersion }));
    reply.header('retry-after', String(retryAfterSeconds));
  };
  const notDeleting = async (call: ArmCall, name: string) => {
    if (await store.runningDeletion(sub(call), name, nowIso())) throw errors.arm.resourceGroupBeingDeleted({ name });
  };

  return {
    /** PUT: `location` required and listed, immutable once created; `tags`, `managedBy`. */
    async put(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const name = params(req).resourceGroupName!;
      const body = input.body(req, true);
      await notDeleting(call, name);
      const loc = input.string(body, 'location', 'location', 64);
      if (loc === undefined) throw errors.arm.locationRequired({}, { target: 'location' });
      const region = regionOf(loc);
      if (!region) throw errors.arm.locationNotAvailable({ location: loc, available: regions.map((r) => r.name).join(',') }, { target: 'location' });
      const tags = input.tags(body.tags);
      if (Object.keys(tags).length > 50) throw errors.arm.tooManyTags({ count: String(Object.keys(tags).length) }, { target: 'tags' });
      const managedBy = input.string(body, 'managedBy', 'managedBy', 1024);
      const existing = await arm.resourceGroup(sub(call), name);
      if (existing && (regionOf(existing.location)?.name ?? existing.location) !== region.name) throw errors.arm.resourceGroupLocationImmutable({ given: loc, existing: existing.location }, { target: 'location' });
      const g: ResourceGroup = { subscriptionId: sub(call), name: existing?.name ?? name, location: existing?.location ?? region.name, tags, ...(managedBy ? { managedBy } : {}) };
      let created: boolean;
      try {
        created = await arm.putResourceGroup(g);
      } catch (e) {
        // A concurrent create of the same group won the race: this PUT updates what it made.
        if (!isUniqueViolation(e)) throw e;
        created = await arm.putResourceGroup(g);
      }
      reply.code(created ? 201 : 200);
      return groupBody(g);
    },

    /** GET (and HEAD: 204 / 404 without a body). A group being deleted reads `Deleting`. */
    async get(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const name = params(req).resourceGroupName!;
      const g = await arm.resourceGroup(sub(call), name);
      const deleting = g ? undefined : await store.runningDeletion(sub(call), name, nowIso());
      if (!g && !deleting) throw errors.arm.resourceGroupNotFound({ name });
      if (req.method === 'HEAD') return reply.code(204).send();
      return g ? groupBody(g) : { ...deleting!.body, properties: { provisioningState: 'Deleting' } };
    },

    /** PATCH: `tags` replaced and `managedBy` set when given, the rest kept; a different `location` refused. */
    async patch(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const name = params(req).resourceGroupName!;
      const body = input.body(req, true);
      await notDeleting(call, name);
      const g = await arm.resourceGroup(sub(call), name);
      if (!g) throw errors.arm.resourceGroupNotFound({ name });
      const loc = input.string(body, 'location', 'location', 64);
      if (loc !== undefined && regionOf(loc)?.name !== (regionOf(g.location)?.name ?? g.location)) throw errors.arm.resourceGroupLocationImmutable({ given: loc, existing: g.location }, { target: 'location' });
      const tags = body.tags === undefined ? g.tags : input.tags(body.tags);
      if (Object.keys(tags).length > 50) throw errors.arm.tooManyTags({ count: String(Object.keys(tags).length) }, { target: 'tags' });
      const managedBy = body.managedBy === undefined ? g.managedBy : (input.string(body, 'managedBy', 'managedBy', 1024) ?? undefined);
      const next: ResourceGroup = { subscriptionId: g.subscriptionId, name: g.name, location: g.location, tags, ...(managedBy ? { managedBy } : {}) };
      await arm.putResourceGroup(next);
      return groupBody(next);
    },

    /** List: `$filter=tagName eq '…' [and tagValue eq '…']`, `$top` (page size), `$skiptoken`. */
    async list(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const filter = (req.query as Record<string, unknown>)['$filter'];
      let tag: { name: string; value?: string } | undefined;
      if (typeof filter === 'string' && filter.trim() !== '') {
        const m = /^\s*tagName\s+eq\s+'((?:[^']|'')*)'(?:\s+and\s+tagValue\s+eq\s+'((?:[^']|'')*)')?\s*$/iu.exec(filter);
        if (!m) throw invalidFilter(filter);
        tag = { name: m[1]!.replace(/''/g, "'"), ...(m[2] !== undefined ? { value: m[2].replace(/''/g, "'") } : {}) };
      }
      const top = pageSizeOf(req);
      const after = skipTokenOf(req);
      const rows = await store.listGroups(sub(call), top + 1, after, tag, await readableGroups(ctx, call, groupReadAction));
      const page = rows.slice(0, top);
      const out: Record<string, unknown> = {
        value: page.map((r) => groupBody({ subscriptionId: r.subscription_id, name: r.name, location: r.location, tags: JSON.parse(r.tags), ...(r.managed_by ? { managedBy: r.managed_by } : {}) })),
      };
      if (rows.length > top) {
        const q = req.query as Record<string, string>;
        out.nextLink = absoluteUrl(ctx.origin(), `/subscriptions/${sub(call)}/resourcegroups`, { 'api-version': call.apiVersion, $filter: q['$filter'], $top: q['$top'], $skiptoken: encodeToken({ a: page.at(-1)!.name_lower }) });
      }
      return out;
    },

    /** DELETE: 202 + `Location` + `Retry-After`; everything inside the group removed in one transaction (see the file comment). */
    async delete(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const name = params(req).resourceGroupName!;
      const at = nowIso();
      const d = await ctx.store.transaction(async (trx) => {
        const running = await store.runningDeletion(sub(call), name, at, trx);
        if (running) return running;
        const g = await new ArmStore(trx).resourceGroup(sub(call), name);
        if (!g) throw errors.arm.resourceGroupNotFound({ name });
        for (const m of [...modules].reverse()) await m.deleteResourceGroup?.(ctx, trx, sub(call), name);
        const deletion: GroupDeletion = {
          operationId: newUuid(),
          tenantId: call.principal.tenantId,
          subscriptionId: sub(call),
          nameLower: g.name.toLowerCase(),
          body: groupBody(g),
          apiVersion: call.apiVersion,
          startedAt: at,
          completesAt: new Date(nowMs() + deleteSeconds * 1000).toISOString(),
        };
        await store.addDeletion(deletion, trx);
        return deletion;
      });
      location(reply, call, d);
      return reply.code(202).send();
    },

    /** GET of an operation-results location: 202 (with `Location`, `Retry-After`) while the delete runs, then 200. */
    async operationResult(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const opaque = params(req).operationId!;
      const id = operationIdOf(opaque);
      const d = id ? await store.deletion(id) : undefined;
      if (!d || d.subscriptionId !== sub(call).toLowerCase() || d.tenantId !== call.principal.tenantId) throw errors.arm.operationNotFound({ id: opaque });
      if (nowMs() < Date.parse(d.completesAt)) {
        location(reply, call, d);
        return reply.code(202).send();
      }
      return reply.code(200).send();
    },
  };
}
