/**
 * Tags at scope (reference resource-manager-base §4): `{scope}/providers/Vendor.Resources/tags/default`
 * for a subscription, a resource group or a tracked resource (one level or a child): GET, PUT
 * (replace the whole set, `properties` required), PATCH (`operation` `Replace` / `Merge` /
 * `Delete` with `properties.tags`; `Delete` removes the named tags whose value matches, or any
 * value when the given one is empty), DELETE (all tags). Answered synchronously with 200 (the
 * contract also allows 202). At most 50 tags.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { ArmStore } from '../arm/store.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { input, params } from './input.ts';
import { ResourcesStore } from './store.ts';

/** The scope a tags request names: the path before `/providers/Vendor.Resources/tags/default`. */
export function tagScope(req: FastifyRequest): string {
  const path = req.url.split('?')[0]!;
  return path.slice(0, path.toLowerCase().lastIndexOf('/providers/vendor.resources/tags/default'));
}

/** The tags operations. */
export function tagRules(ctx: AppContext) {
  const arm = new ArmStore(ctx.store.db, ctx.cache);
  const store = new ResourcesStore(ctx.store.db, ctx.cache);

  /** The tags at the request's scope and a function storing new ones. @throws 404 for a resource that does not exist, 409 for a group being deleted */
  async function at(req: FastifyRequest, call: ArmCall): Promise<{ scope: string; tags: Record<string, string>; save(tags: Record<string, string>): Promise<void> }> {
    const p = params(req);
    const s = call.subscription!.subscriptionId;
    if (p.providerNamespace !== undefined) {
      const scope = tagScope(req);
      const row = await arm.getResource(scope);
      if (!row) throw errors.arm.resourceNotFound({ typeAndName: scope.split('/providers/').slice(1).join('/providers/'), resourceGroup: p.resourceGroupName! });
      return {
        scope: row.id,
        tags: (row.body.tags as Record<string, string> | undefined) ?? {},
        save: async (tags) => {
          const { tags: _old, ...rest } = row.body;
          await arm.putResource({ ...row, body: Object.keys(tags).length ? { ...rest, tags } : rest, updatedAt: nowIso() });
        },
      };
    }
    if (call.resourceGroup) {
      const g = call.resourceGroup;
      return {
        scope: `/subscriptions/${s}/resourceGroups/${g.name}`,
        tags: g.tags,
        save: async (tags) => {
          const fresh = await arm.resourceGroup(s, g.name);
          if (!fresh) throw errors.arm.resourceGroupNotFound({ name: g.name });
          await arm.putResourceGroup({ ...fresh, tags });
        },
      };
    }
    return { scope: `/subscriptions/${s}`, tags: await store.subscriptionTags(s), save: (tags) => store.setSubscriptionTags(s, tags) };
  }

  const body = (scope: string, tags: Record<string, string>) => ({ id: `${scope}/providers/Vendor.Resources/tags/default`, name: 'default', type: 'Vendor.Resources/tags', properties: { tags } });
  const checked = (tags: Record<string, string>) => {
    if (Object.keys(tags).length > 50) throw errors.arm.tooManyTags({ count: String(Object.keys(tags).length) }, { target: 'properties.tags' });
    return tags;
  };
  const tagsOf = (b: Record<string, unknown>) => input.tags(input.member(b.properties, 'properties', true).tags);

  return {
    async get(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const t = await at(req, call);
      return body(t.scope, t.tags);
    },
    async put(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const tags = checked(tagsOf(input.body(req, true)));
      const t = await at(req, call);
      await t.save(tags);
      return body(t.scope, tags);
    },
    async patch(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const b = input.body(req, true);
      const operation = input.string(b, 'operation', 'operation', 16);
      const given = tagsOf(b);
      const t = await at(req, call);
      let tags: Record<string, string>;
      if (operation === 'Replace') tags = given;
      else if (operation === 'Merge') tags = { ...t.tags, ...given };
      else if (operation === 'Delete') tags = Object.fromEntries(Object.entries(t.tags).filter(([k, v]) => !(k in given) || (given[k] !== '' && given[k] !== v)));
      else throw errors.arm.invalidTagOperation({ operation: operation ?? '' }, { target: 'operation' });
      await t.save(checked(tags));
      return body(t.scope, tags);
    },
    async delete(req: FastifyRequest, reply: FastifyReply, call: ArmCall) {
      const t = await at(req, call);
      await t.save({});
      return reply.code(200).send();
    },
  };
}
