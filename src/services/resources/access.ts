/**
 * What a caller may read of a subscription when no role grants it the read at the subscription
 * (or above): the resource groups a role of its own, or of one of its groups, grants the read
 * on (reference resource-manager-base §2.4, §3: the lists show what the caller can read).
 */
import type { AppContext } from '../../context.ts';
import { armReader, authorizationFailed, type ArmCall } from '../arm/gateway.ts';
import { principalIdsFor } from '../arm/rbac.ts';

/**
 * The groups (lower-case names) of the call's subscription the caller may do `action` on, or
 * undefined when a role grants it `action` at the subscription (every group).
 * @throws 403 `AuthorizationFailed` (at the subscription) when it may on none.
 */
export async function readableGroups(ctx: AppContext, call: ArmCall, action: string): Promise<string[] | undefined> {
  const reader = armReader(ctx);
  const s = `/subscriptions/${call.subscription!.subscriptionId}`;
  if (await reader.authorized(call.principal, action, s)) return undefined;
  const prefix = `${s}/resourcegroups/`.toLowerCase();
  const candidates = new Set<string>();
  for (const id of await principalIdsFor(reader, call.principal.tenantId, call.principal.objectId)) {
    for (const a of await reader.assignmentsOf(id)) {
      const scope = a.scope.toLowerCase();
      if (a.tenantId === call.principal.tenantId && scope.startsWith(prefix)) candidates.add(scope.slice(prefix.length).split('/')[0]!);
    }
  }
  const names: string[] = [];
  for (const n of candidates) if (await reader.authorized(call.principal, action, `${s}/resourceGroups/${n}`)) names.push(n);
  if (names.length === 0) throw authorizationFailed(call.principal, action, s);
  return names.sort();
}
