/**
 * Who a role assignment may name (reference resource-manager-base §7.1, §8 `PrincipalNotFound`):
 * the users, groups and service principals of the caller's tenant directory.
 */
import type { AppContext } from '../../context.ts';

/** The `principalType` of a role assignment. */
export type PrincipalType = 'User' | 'Group' | 'ServicePrincipal';

/**
 * The type of the directory object `principalId` in `tenantId`, or undefined when the tenant's
 * directory has no such user, group or service principal. THE one look-up of assignment
 * principals: users (`directory_users`) and service principals (`directory_apps` by object id,
 * managed identities included) and groups (`directory_groups`).
 */
export async function principalTypeOf(ctx: AppContext, tenantId: string, principalId: string): Promise<PrincipalType | undefined> {
  const id = principalId.toLowerCase();
  const user = await ctx.identity.directory.findUser(id);
  if (user && user.id === id && user.tenantId === tenantId) return 'User';
  const app = await ctx.identity.directory.findApp(id);
  if (app && app.objectId === id && app.tenantId === tenantId && app.hasServicePrincipal !== false) return 'ServicePrincipal';
  const group = await ctx.store.db.selectFrom('directory_groups').select('id').where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (group) return 'Group';
  return undefined;
}
