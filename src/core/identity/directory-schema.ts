/**
 * Migrations of the directory objects served by the directory API (issue 27 items 6–7): user
 * properties (enabled, mail nickname, other properties as JSON), the application object of an
 * app registration (its object id, redirect URIs by platform, whether its service principal
 * exists), several client secrets and certificate key credentials per application, groups and
 * their members. Core tables: the identity provider reads the credentials and the account
 * state, the resource manager reads group membership.
 */
import { sql, type Kysely } from 'kysely';
import type { Migrations } from '../../store/db.ts';
import { stableUuid } from '../ids.ts';

/** The application object id of an app registration seeded before applications had one (stable per client id). */
export function seededApplicationId(appId: string): string {
  return stableUuid('stratus-application', appId.toLowerCase());
}

/** Migrations `core_0010`–`core_0011` (both dialects). */
export const directoryObjectMigrations: Migrations = {
  core_0010_directory_objects: {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('directory_users').addColumn('account_enabled', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('directory_users').addColumn('mail_nickname', 'text').execute();
      await db.schema.alterTable('directory_users').addColumn('created_at', 'varchar(32)').execute();
      await db.schema.alterTable('directory_users').addColumn('props', 'text', (c) => c.notNull().defaultTo('{}')).execute();
      await db.schema.createIndex('directory_users_tenant').on('directory_users').columns(['tenant_id', 'id']).execute();
      await db.schema.alterTable('directory_apps').addColumn('application_id', 'varchar(64)').execute();
      await db.schema.alterTable('directory_apps').addColumn('has_sp', 'integer', (c) => c.notNull().defaultTo(1)).execute();
      await db.schema.alterTable('directory_apps').addColumn('credentials', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('directory_apps').addColumn('created_at', 'varchar(32)').execute();
      await db.schema.alterTable('directory_apps').addColumn('props', 'text', (c) => c.notNull().defaultTo('{}')).execute();
      // Registrations made before this migration get their application object id now (managed identities have none).
      const rows = await sql<{ app_id: string }>`select app_id from directory_apps where kind <> 'ManagedIdentity'`.execute(db);
      for (const r of rows.rows) await sql`update directory_apps set application_id = ${seededApplicationId(r.app_id)} where app_id = ${r.app_id}`.execute(db);
      await db.schema.createIndex('directory_apps_application').on('directory_apps').column('application_id').unique().execute();
      await db.schema.createIndex('directory_apps_tenant').on('directory_apps').columns(['tenant_id', 'app_id']).execute();
      await db.schema.createIndex('app_role_grants_audience').on('app_role_grants').columns(['audience', 'app_id']).execute();
      await db.schema
        .createTable('app_password_credentials')
        .addColumn('key_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('hint', 'varchar(8)', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('start_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('end_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('app_password_credentials_app').on('app_password_credentials').columns(['app_id', 'hint']).execute();
      await db.schema
        .createTable('app_key_credentials')
        .addColumn('key_id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('app_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('type', 'varchar(32)', (c) => c.notNull())
        .addColumn('usage', 'varchar(16)', (c) => c.notNull())
        .addColumn('key_der', 'text', (c) => c.notNull())
        .addColumn('thumbprint', 'varchar(64)', (c) => c.notNull())
        .addColumn('thumbprint256', 'varchar(64)', (c) => c.notNull())
        .addColumn('display_name', 'text')
        .addColumn('start_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('end_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('app_key_credentials_app').on('app_key_credentials').column('app_id').execute();
      await db.schema
        .createTable('directory_groups')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('mail_nickname', 'text', (c) => c.notNull())
        .addColumn('security_enabled', 'integer', (c) => c.notNull().defaultTo(1))
        .addColumn('mail_enabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('props', 'text', (c) => c.notNull().defaultTo('{}'))
        .execute();
      await db.schema.createIndex('directory_groups_tenant').on('directory_groups').columns(['tenant_id', 'id']).execute();
      await db.schema
        .createTable('directory_group_members')
        .addColumn('group_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('member_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('member_type', 'varchar(32)', (c) => c.notNull())
        .addPrimaryKeyConstraint('directory_group_members_pk', ['group_id', 'member_id'])
        .execute();
      await db.schema.createIndex('directory_group_members_member').on('directory_group_members').columns(['member_id', 'group_id']).execute();
    },
  },
};
