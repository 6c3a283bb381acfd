/**
 * Subscriptions, tenants and locations (reference resource-manager-base §6; v2022-12-01
 * shapes): `GET /subscriptions` lists the caller's tenant's subscriptions on which a role the
 * caller holds grants a read action (`Vendor.Resources/subscriptions/read`) at or above them;
 * `GET /subscriptions/{id}`, `…/locations`, `GET /tenants` (the caller's home tenant).
 * Also the provider operations (list, get, register, unregister; §5).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowIso } from '../../core/clock.ts';
import { armReader, type ArmCall } from '../arm/gateway.ts';
import type { Subscription } from '../arm/store.ts';
import { locationBody, regions } from './locations.ts';
import { params } from './input.ts';
import { providerBody, servedProvider, servedProviders } from './providers.ts';
import { ResourcesStore } from './store.ts';

/** The read action a subscription is listed for. */
export const subscriptionRead = 'Vendor.Resources/subscriptions/read';

/** The Subscription body (v2022-12-01 shape). */
export function subscriptionBody(s: Subscription, tags: Record<string, string>): Record<string, unknown> {
  return {
    id: `/subscriptions/${s.subscriptionId}`,
    authorizationSource: 'RoleBased',
    managedByTenants: [],
    subscriptionId: s.subscriptionId,
    tenantId: s.tenantId,
    displayName: s.displayName,
    state: s.state,
    subscriptionPolicies: { locationPlacementId: 'Public_2014-09-01', quotaId: 'PayAsYouGo_2014-09-01', spendingLimit: 'Off' },
    ...(Object.keys(tags).length ? { tags } : {}),
  };
}

/** The subscription, tenant, location and provider operations. */
export function subscriptionRules(ctx: AppContext) {
  const store = new ResourcesStore(ctx.store.db, ctx.cache);
  const reader = armReader(ctx);
  const sub = (call: ArmCall) => call.subscription!;
  const expandsAliases = (req: FastifyRequest) => {
    const e = (req.query as Record<string, unknown>)['$expand'];
    return typeof e === 'string' && /resourceTypes\/aliases/iu.test(e);
  };
  const namespaceOf = (req: FastifyRequest) => {
    const ns = params(req).resourceProviderNamespace!;
    const p = servedProvider(ctx, ns);
    if (!p) throw errors.arm.invalidResourceNamespace({ namespace: ns });
    return p;
  };

  return {
    /** `GET /subscriptions`: the readable subscriptions of the caller's tenant. */
    async listSubscriptions(_req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const rows = await ctx.store.db.selectFrom('arm_subscriptions').selectAll().where('tenant_id', '=', call.principal.tenantId).orderBy('subscription_id').limit(1000).execute();
      const value: Record<string, unknown>[] = [];
      for (const r of rows) {
        if (!(await reader.authorized(call.principal, subscriptionRead, `/subscriptions/${r.subscription_id}`))) continue;
        const s = { subscriptionId: r.subscription_id, tenantId: r.tenant_id, displayName: r.display_name, state: r.state, managementGroup: r.management_group_lower };
        value.push(subscriptionBody(s, await store.subscriptionTags(s.subscriptionId)));
      }
      return { value };
    },

    /** `GET /subscriptions/{id}`. */
    async getSubscription(_req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      return subscriptionBody(sub(call), await store.subscriptionTags(sub(call).subscriptionId));
    },

    /** `GET /subscriptions/{id}/locations`. */
    async listLocations(_req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      return { value: regions.map((r) => locationBody(sub(call).subscriptionId, r)) };
    },

    /** `GET /tenants`: the caller's home tenant. */
    async listTenants(_req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const t = await ctx.identity.directory.findTenant(call.principal.tenantId);
      if (!t) return { value: [] };
      return { value: [{ id: `/tenants/${t.id}`, tenantId: t.id, countryCode: 'US', displayName: t.displayName, domains: [t.domain], tenantCategory: 'Home', defaultDomain: t.domain, tenantType: 'AAD' }] };
    },

    /** `GET /subscriptions/{id}/providers` (`$expand=resourceTypes/aliases` adds `aliases`). */
    async listProviders(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const regs = await store.registrations(sub(call).subscriptionId);
      return { value: servedProviders(ctx).map((p) => providerBody(sub(call).subscriptionId, p, regs.get(p.namespace.toLowerCase()), expandsAliases(req))) };
    },

    /** `GET /subscriptions/{id}/providers/{namespace}`; 404 `InvalidResourceNamespace` for one Stratus does not serve. */
    async getProvider(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const p = namespaceOf(req);
      return providerBody(sub(call).subscriptionId, p, await store.registration(sub(call).subscriptionId, p.namespace), expandsAliases(req));
    },

    /** `POST …/providers/{namespace}/register` (200, `Registering`) and `/unregister` (200, `NotRegistered`). */
    async setRegistration(req: FastifyRequest, _reply: FastifyReply, call: ArmCall) {
      const p = namespaceOf(req);
      const register = req.url.split('?')[0]!.toLowerCase().endsWith('/register');
      const s = sub(call).subscriptionId;
      const current = await store.registration(s, p.namespace);
      // Registering a registered namespace leaves it registered (no new `Registering` window).
      if (p.registrationPolicy === 'RegistrationRequired' && (register ? current?.state === 'NotRegistered' : current?.state !== 'NotRegistered')) {
        await store.setRegistration(s, p.namespace, register ? 'Registered' : 'NotRegistered', nowIso());
      }
      return providerBody(s, p, await store.registration(s, p.namespace));
    },
  };
}
