/**
 * The authorization area: role management policies (spec resource-manager §2.1, §4.1,
 * §4.2; api-version 2020-10-01). Every role definition at every scope has a policy; the
 * defaults are computed, only PATCHed policies are stored (`authz_role_management_policies`).
 *
 * Its demo data (the storage account `stratusdata` in `stratus-rg` with its child
 * `blobServices/default`, resource scopes for policies, and the managed identity's Reader
 * assignment on the default subscription) is in the demo world, `src/world/worlds/demo.yaml`.
 */
import { sql } from 'kysely';
import type { ServiceModule } from '../../context.ts';
import { registerPolicyRoutes } from './routes.ts';
import { registerRoleRoutes } from './role-routes.ts';
import { authorizationMigrations, policyTable } from './store.ts';

/** The authorization module. */
export const authorizationModule: ServiceModule = {
  name: 'authorization',
  migrations: authorizationMigrations,
  tables: [policyTable],
  register(app, ctx) {
    registerPolicyRoutes(app, ctx);
    registerRoleRoutes(app, ctx);
  },
  // The policies changed at the group or below it go with the group (issue 27).
  async deleteResourceGroup(ctx, trx, subscriptionId, groupName) {
    const scope = `/subscriptions/${subscriptionId}/resourcegroups/${groupName}`.toLowerCase();
    await trx.deleteFrom(policyTable).where((eb) => eb.or([eb('scope_lower', '=', scope), eb(sql`substr(scope_lower, 1, ${scope.length + 1})`, '=', `${scope}/`)])).execute();
  },
};
