/**
 * Resource providers (reference resource-manager-base §5): the namespaces Stratus serves,
 * derived from the resource-manager operations the areas declare on the kernel (their URL
 * templates give the namespace and resource types, their api-versions the types' versions),
 * plus `Vendor.Resources` itself; and each subscription's registration of them.
 *
 * Registration states: a subscription starts with every namespace registered (`Registered`:
 * the demo world and any subscription a world file adds can be used at once). `register` sets
 * `Registering`, which reads `Registered` once {@link registeringSeconds} of the Stratus clock
 * have passed; `unregister` sets `NotRegistered` at once (the published values seen in the
 * examples are `NotRegistered`, `Registering`, `Registered`; `Unregistering` is not used).
 * A PUT under a `NotRegistered` namespace answers 409 `MissingSubscriptionRegistration`
 * (the kernel runs {@link registrationCheck} for every namespaced PUT).
 */
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowMs } from '../../core/clock.ts';
import { declaredOperations } from '../arm/operations.ts';
import type { ArmCall } from '../arm/gateway.ts';
import { regions } from './locations.ts';
import { ResourcesStore, type Registration } from './store.ts';

/** How long (Stratus clock seconds) a registration reads `Registering`. */
export const registeringSeconds = 10;

/** One resource type of a provider. */
export interface ProviderResourceType {
  resourceType: string;
  locations: string[];
  apiVersions: string[];
  capabilities?: string;
}

/** A namespace Stratus serves. */
export interface ServedProvider {
  namespace: string;
  registrationPolicy: 'RegistrationRequired' | 'RegistrationFree';
  resourceTypes: ProviderResourceType[];
}

/** The api-versions of the `Vendor.Resources` operations (resource groups, resources, providers, tags), newest first. */
export const resourcesApiVersions = ['2025-04-01', '2025-03-01', '2024-11-01', '2024-07-01', '2024-03-01', '2023-07-01', '2022-09-01', '2021-04-01', '2021-01-01', '2020-10-01', '2020-06-01', '2019-10-01', '2019-08-01', '2019-07-01', '2019-05-01', '2018-05-01', '2018-02-01'];
/** The api-versions of the subscriptions operations (subscriptions, locations, tenants), newest first. */
export const subscriptionsApiVersions = ['2022-12-01', '2021-01-01', '2020-01-01', '2019-11-01', '2019-06-01', '2018-06-01', '2016-06-01'];

const regionNames = regions.map((r) => r.displayName);

/** The `Vendor.Resources` provider: not derived (its operations are not under `/providers/`). */
function resourcesProvider(): ServedProvider {
  const t = (resourceType: string, located = false, versions = resourcesApiVersions): ProviderResourceType => ({ resourceType, locations: located ? regionNames : [], apiVersions: [...versions] });
  return {
    namespace: 'Vendor.Resources',
    registrationPolicy: 'RegistrationFree',
    resourceTypes: [t('tenants', false, subscriptionsApiVersions), t('subscriptions', false, subscriptionsApiVersions), t('subscriptions/locations', false, subscriptionsApiVersions), t('resourceGroups', true), t('subscriptions/resourceGroups'), t('subscriptions/resources'), t('subscriptions/resourceGroups/resources'), t('subscriptions/providers'), t('subscriptions/operationresults'), t('tags')],
  };
}

/**
 * The resource type a URL template below `/providers/<ns>/` names: the literal segments of
 * `type/:name` pairs, ending with a final `:name` (an item) or a final literal of a GET (a
 * collection); undefined for an action (two literals in a row, a POST's last literal, a `list…`).
 */
function typeOf(method: string, rest: string[]): string | undefined {
  const parts: string[] = [];
  for (let i = 0; i < rest.length; i += 2) {
    const seg = rest[i]!;
    if (seg.startsWith(':') || seg.includes('*')) return undefined;
    const next = rest[i + 1];
    if (next === undefined) {
      // A GET of a collection names its type; `list…` (listSynchronizations, listKeys) is an action read by GET.
      if (method !== 'GET' || /^list[A-Z]/u.test(seg)) return undefined;
      parts.push(seg);
      break;
    }
    if (!next.startsWith(':')) return undefined;
    parts.push(seg);
  }
  return parts.length ? parts.join('/') : undefined;
}

const served = new WeakMap<AppContext, { count: number; providers: ServedProvider[] }>();

/** The namespaces Stratus serves, `Vendor.Resources` first, then by name (derived once per app, again only if a route was declared since). */
export function servedProviders(ctx: AppContext): ServedProvider[] {
  const count = declaredOperations(ctx).length;
  const known = served.get(ctx);
  if (known && known.count === count) return known.providers;
  const providers = deriveProviders(ctx);
  served.set(ctx, { count, providers });
  return providers;
}

function deriveProviders(ctx: AppContext): ServedProvider[] {
  const byNs = new Map<string, { namespace: string; types: Map<string, { name: string; versions: Set<string>; located: boolean }> }>();
  for (const op of declaredOperations(ctx)) {
    const m = /\/providers\/(Vendor\.[A-Za-z]+)\/(.+)$/u.exec(op.url);
    if (!m) continue;
    const type = typeOf(op.method, m[2]!.split('/'));
    if (!type) continue;
    const key = m[1]!.toLowerCase();
    let p = byNs.get(key);
    if (!p) byNs.set(key, (p = { namespace: m[1]!, types: new Map() }));
    const typeKey = type.toLowerCase();
    let t = p.types.get(typeKey);
    if (!t) p.types.set(typeKey, (t = { name: type, versions: new Set(), located: op.url.includes(':resourceGroupName/providers/') }));
    for (const v of op.apiVersions) t.versions.add(v);
  }
  const derived = [...byNs.values()]
    .filter((p) => p.namespace.toLowerCase() !== 'vendor.resources')
    .sort((a, b) => a.namespace.localeCompare(b.namespace))
    .map((p) => ({
      namespace: p.namespace,
      registrationPolicy: 'RegistrationRequired' as const,
      resourceTypes: [...p.types.values()].map((t) => ({
        resourceType: t.name,
        locations: t.located ? regionNames : [],
        apiVersions: [...t.versions].sort().reverse(),
        ...(t.located ? { capabilities: 'SupportsTags, SupportsLocation' } : {}),
      })),
    }));
  return [resourcesProvider(), ...derived];
}

/** The served provider of a namespace (case-insensitive), or undefined. */
export function servedProvider(ctx: AppContext, namespace: string): ServedProvider | undefined {
  const ns = namespace.toLowerCase();
  return servedProviders(ctx).find((p) => p.namespace.toLowerCase() === ns);
}

/** The state a stored registration reads at the current Stratus time (absent: `Registered`). */
export function stateOf(p: ServedProvider, r: Registration | undefined): string {
  if (p.registrationPolicy === 'RegistrationFree' || !r) return 'Registered';
  if (r.state === 'NotRegistered') return 'NotRegistered';
  return nowMs() < Date.parse(r.changedAt) + registeringSeconds * 1000 ? 'Registering' : 'Registered';
}

/** The Provider body (v2025-04-01 shape) of a served namespace in a subscription; `aliases` adds empty `aliases` to each type (`$expand=resourceTypes/aliases`). */
export function providerBody(subscriptionId: string, p: ServedProvider, r: Registration | undefined, aliases = false): Record<string, unknown> {
  return {
    id: `/subscriptions/${subscriptionId}/providers/${p.namespace}`,
    namespace: p.namespace,
    registrationState: stateOf(p, r),
    registrationPolicy: p.registrationPolicy,
    resourceTypes: p.resourceTypes.map((t) => ({ ...t, ...(aliases ? { aliases: [] } : {}) })),
  };
}

/**
 * The kernel's check of a namespaced PUT: refused with 409 `MissingSubscriptionRegistration`
 * (details: the same code and message, `target` the namespace) when the subscription has
 * unregistered the namespace.
 */
export function registrationCheck(ctx: AppContext): (call: ArmCall, namespace: string) => Promise<void> {
  const store = new ResourcesStore(ctx.store.db, ctx.cache);
  return async (call, namespace) => {
    const r = await store.registration(call.subscription!.subscriptionId, namespace);
    if (!r || r.state !== 'NotRegistered') return;
    const e = errors.arm.missingSubscriptionRegistration({ namespace });
    throw errors.arm.missingSubscriptionRegistration({ namespace }, { details: [{ code: e.code, message: e.message, target: namespace }] });
  };
}
