/**
 * The data share area (spec: resource-manager §2.4, §4.5; reference §5): accounts, shares,
 * invitations, consumer share subscriptions that synchronize, and the provider's
 * `listSynchronizations` with OData `$filter` / `$orderby`, `$skipToken` paging and the
 * subscription read budget header.
 */
import type { ServiceModule } from '../../context.ts';
import { registerDataShareRoutes } from './routes.ts';
import { DataShareStore, datashareMigrations, datashareTables } from './store.ts';

/** The datashare module. */
export const datashareModule: ServiceModule = {
  name: 'datashare',
  migrations: datashareMigrations,
  tables: datashareTables,
  register: registerDataShareRoutes,
  deleteResourceGroup: (ctx, trx, subscriptionId, groupName) => new DataShareStore(trx, ctx.cache).deleteForGroup(subscriptionId, groupName, trx),
};
