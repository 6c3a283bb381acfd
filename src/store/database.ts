/**
 * The whole database, declared once: the store's, the core's and every area's tables merged
 * into {@link databaseColumns} (run time, read by test/database-types.test.ts) and
 * {@link Database} (the Kysely interface). `AppContext.store` is a `Store<Database>`;
 * services type their handles as `Kysely<Database>`. Core code never imports this file (it
 * would pull the services in): it uses the interfaces of src/core/tables.ts. The server
 * imports only the types (nothing here runs at start).
 */
import type { Tables } from './columns.ts';
import { storeColumns } from './tables.ts';
import { coreColumns } from '../core/tables.ts';
import { analyticsColumns } from '../services/analytics/tables.ts';
import { armColumns } from '../services/arm/tables.ts';
import { authorizationColumns } from '../services/authorization/tables.ts';
import { automationColumns } from '../services/automation/tables.ts';
import { billingColumns } from '../services/billing/tables.ts';
import { datashareColumns } from '../services/datashare/tables.ts';
import { mailColumns } from '../services/mail/tables.ts';
import { mailsyncColumns } from '../services/mailsync/tables.ts';
import { platformColumns } from '../services/platform/tables.ts';
import { resourcesColumns } from '../services/resources/tables.ts';
import { wopiColumns } from '../services/wopi/tables.ts';
import { worldColumns } from '../world/tables.ts';

/** Every table of a migrated store with its columns, by table name. */
export const databaseColumns = {
  ...storeColumns,
  ...coreColumns,
  ...analyticsColumns,
  ...armColumns,
  ...authorizationColumns,
  ...automationColumns,
  ...billingColumns,
  ...datashareColumns,
  ...mailColumns,
  ...mailsyncColumns,
  ...platformColumns,
  ...resourcesColumns,
  ...wopiColumns,
  ...worldColumns,
};

/** Every table of a migrated store, as Kysely sees it. */
export type Database = Tables<typeof databaseColumns>;
