/**
 * The whole database as Kysely sees it: the store's, the core's and every area's tables,
 * merged into one interface. `AppContext.store` is a `Store<Database>`; services type
 * their handles as `Kysely<Database>`. Core code never imports this file (it would pull
 * the services in): it uses `CoreDatabase` of src/core/tables.ts.
 * test/database-types.test.ts checks it against the migrated schema on both dialects.
 */
import type { StoreTables } from './tables.ts';
import type { CoreDatabase } from '../core/tables.ts';
import type { AnalyticsDatabase } from '../services/analytics/tables.ts';
import type { ArmDatabase } from '../services/arm/tables.ts';
import type { AuthorizationDatabase } from '../services/authorization/tables.ts';
import type { AutomationDatabase } from '../services/automation/tables.ts';
import type { BillingDatabase } from '../services/billing/tables.ts';
import type { ComputeDatabase } from '../services/compute/tables.ts';
import type { DatashareDatabase } from '../services/datashare/tables.ts';
import type { MailDatabase } from '../services/mail/tables.ts';
import type { MailsyncDatabase } from '../services/mailsync/tables.ts';
import type { PlatformDatabase } from '../services/platform/tables.ts';
import type { WopiDatabase } from '../services/wopi/tables.ts';

/** Every table of a migrated store. */
export interface Database
  extends StoreTables,
    CoreDatabase,
    AnalyticsDatabase,
    ArmDatabase,
    AuthorizationDatabase,
    AutomationDatabase,
    BillingDatabase,
    ComputeDatabase,
    DatashareDatabase,
    MailDatabase,
    MailsyncDatabase,
    PlatformDatabase,
    WopiDatabase {}
