/**
 * The tables of the resources area (issue 27), declared once: provider registrations per
 * subscription, the resource-group deletes (long-running operations) and the tags of
 * subscriptions. ResourcesDatabase is the Kysely interface derived from them;
 * test/database-types.test.ts compares the declaration with the migrated schema.
 */
import { defineTables, text, type Tables } from '../../store/columns.ts';

/** The columns of the resources tables, by table. */
export const resourcesColumns = defineTables({
  /** Created by `resources_0001_tables`: a subscription's registration of a namespace that differs from the default (registered). */
  resources_registrations: {
    subscription_id: text(),
    namespace_lower: text(),
    /** `Registered` or `NotRegistered`: the state the namespace goes to. */
    state: text(),
    /** When the state was set (ISO 8601 UTC); a registration reads `Registering` for a while after it. */
    changed_at: text(),
  },
  /** Created by `resources_0001_tables`: one row per resource-group delete. */
  resources_group_deletions: {
    operation_id: text(),
    tenant_id: text(),
    subscription_id: text(),
    name_lower: text(),
    /** The group as it was (JSON), answered with `provisioningState: Deleting` while the delete runs. */
    body: text(),
    api_version: text(),
    started_at: text(),
    completes_at: text(),
  },
  /** Created by `resources_0001_tables`: the tags of a subscription (tags at subscription scope). */
  resources_subscription_tags: {
    subscription_id: text(),
    tags: text(),
  },
});

/** The resources tables as Kysely sees them. */
export type ResourcesDatabase = Tables<typeof resourcesColumns>;
