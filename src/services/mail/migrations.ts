/**
 * Tables of the mail store (spec: mail §2.3, §3; reference mail.md §2–§6): folders,
 * messages (real columns for everything filtered or sorted, plus the full document as
 * JSON), categories and extended properties as child tables (for `any` lambdas),
 * attachments, open extensions, outbound deliveries, and the full-text index
 * (SQLite FTS5 external-content table kept by triggers; PostgreSQL generated `tsvector`
 * with a GIN index).
 */
import { sql, type Kysely } from 'kysely';
import { autoIncrementKey, isPostgres, type Migrations } from '../../store/db.ts';
import type { MailDatabase } from './tables.ts';
import { presenceChannelPrefix } from '../../core/cache-presence.ts';

/** The mail area's tables, children first (cleared by `POST /_stratus/reset`). */
export const mailTables: (keyof MailDatabase)[] = ['mail_upload_chunks', 'mail_upload_sessions', 'mail_id_history', 'mail_outbound', 'mail_extensions', 'mail_attachments', 'mail_multi_props', 'mail_single_props', 'mail_categories', 'mail_messages', 'mail_folder_counts', 'mail_folders'];

/** Migrations of the mail area. */
export const mailMigrations: Migrations = {
  mail_0001_store: {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mail_folders')
        .addColumn('id', 'varchar(200)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('parent_id', 'varchar(200)')
        .addColumn('well_known', 'varchar(64)')
        .addColumn('display_name', 'varchar(400)', (c) => c.notNull())
        .addColumn('is_hidden', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_folders_parent').on('mail_folders').columns(['tenant_id', 'mailbox_id', 'parent_id']).execute();
      await db.schema.createIndex('mail_folders_wk').on('mail_folders').columns(['tenant_id', 'mailbox_id', 'well_known']).unique().execute();

      await db.schema
        .createTable('mail_messages')
        .addColumn('pk', ...autoIncrementKey(db))
        .addColumn('id', 'varchar(200)', (c) => c.notNull().unique())
        .addColumn('immutable_id', 'varchar(200)', (c) => c.notNull().unique())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('folder_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('created_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('modified_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('received_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('sent_at', 'varchar(32)')
        .addColumn('is_read', 'integer', (c) => c.notNull())
        .addColumn('is_draft', 'integer', (c) => c.notNull())
        .addColumn('has_attachments', 'integer', (c) => c.notNull())
        .addColumn('is_mentioned', 'integer', (c) => c.notNull())
        .addColumn('importance', 'varchar(16)', (c) => c.notNull())
        .addColumn('inference', 'varchar(16)', (c) => c.notNull())
        .addColumn('flag_status', 'varchar(16)', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('subject_lc', 'text', (c) => c.notNull())
        .addColumn('from_address_lc', 'varchar(400)')
        .addColumn('from_name', 'varchar(400)')
        .addColumn('sender_address_lc', 'varchar(400)')
        .addColumn('conversation_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('internet_message_id', 'varchar(600)', (c) => c.notNull())
        .addColumn('change_key', 'varchar(64)', (c) => c.notNull())
        .addColumn('from_text', 'text', (c) => c.notNull())
        .addColumn('search_body', 'text', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .execute();
      const m = (name: string, cols: string[]) => db.schema.createIndex(name).on('mail_messages').columns(cols).execute();
      await m('mail_messages_folder_received', ['tenant_id', 'mailbox_id', 'folder_id', 'received_at']);
      await m('mail_messages_folder_pk', ['tenant_id', 'mailbox_id', 'folder_id', 'pk']);
      await m('mail_messages_folder_read', ['tenant_id', 'mailbox_id', 'folder_id', 'is_read']);
      await m('mail_messages_received', ['tenant_id', 'mailbox_id', 'received_at']);
      await m('mail_messages_sent', ['tenant_id', 'mailbox_id', 'sent_at']);
      await m('mail_messages_from', ['tenant_id', 'mailbox_id', 'from_address_lc', 'received_at']);
      await m('mail_messages_conversation', ['tenant_id', 'mailbox_id', 'conversation_id']);
      await m('mail_messages_imid', ['tenant_id', 'mailbox_id', 'internet_message_id']);

      await db.schema
        .createTable('mail_categories')
        .addColumn('message_pk', 'bigint', (c) => c.notNull())
        .addColumn('name', 'varchar(400)', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_categories_msg').on('mail_categories').columns(['message_pk', 'name']).execute();
      for (const t of ['mail_single_props', 'mail_multi_props']) {
        await db.schema
          .createTable(t)
          .addColumn('message_pk', 'bigint', (c) => c.notNull())
          .addColumn('prop_id', 'varchar(400)', (c) => c.notNull())
          .addColumn('value', 'text', (c) => c.notNull())
          .addColumn('value_lc', 'text', (c) => c.notNull())
          .execute();
        await db.schema.createIndex(`${t}_msg`).on(t).columns(['message_pk', 'prop_id']).execute();
      }
      await db.schema
        .createTable('mail_attachments')
        .addColumn('id', 'varchar(200)', (c) => c.primaryKey())
        .addColumn('message_pk', 'bigint', (c) => c.notNull())
        .addColumn('kind', 'varchar(16)', (c) => c.notNull())
        .addColumn('name', 'varchar(400)', (c) => c.notNull())
        .addColumn('content_type', 'varchar(200)')
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('is_inline', 'integer', (c) => c.notNull())
        .addColumn('modified_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_attachments_msg').on('mail_attachments').columns(['message_pk']).execute();
      await db.schema
        .createTable('mail_extensions')
        .addColumn('message_pk', 'bigint', (c) => c.notNull())
        .addColumn('name', 'varchar(400)', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('mail_extensions_pk', ['message_pk', 'name'])
        .execute();
      await db.schema
        .createTable('mail_outbound')
        .addColumn('id', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('internet_message_id', 'varchar(600)', (c) => c.notNull())
        .addColumn('sender', 'varchar(400)', (c) => c.notNull())
        .addColumn('recipients', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('sent_at', 'varchar(32)', (c) => c.notNull())
        .addColumn('doc', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_outbound_tenant').on('mail_outbound').columns(['tenant_id', 'sent_at']).execute();

      if (isPostgres(db)) {
        await sql`ALTER TABLE mail_messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', subject || ' ' || from_text || ' ' || search_body)) STORED`.execute(db);
        await sql`CREATE INDEX mail_messages_fts ON mail_messages USING GIN (search_tsv)`.execute(db);
      } else {
        await sql`CREATE VIRTUAL TABLE mail_fts USING fts5(subject, from_text, search_body, content='mail_messages', content_rowid='pk')`.execute(db);
        await sql`CREATE TRIGGER mail_fts_ai AFTER INSERT ON mail_messages BEGIN INSERT INTO mail_fts(rowid, subject, from_text, search_body) VALUES (new.pk, new.subject, new.from_text, new.search_body); END`.execute(db);
        await sql`CREATE TRIGGER mail_fts_ad AFTER DELETE ON mail_messages BEGIN INSERT INTO mail_fts(mail_fts, rowid, subject, from_text, search_body) VALUES ('delete', old.pk, old.subject, old.from_text, old.search_body); END`.execute(db);
        await sql`CREATE TRIGGER mail_fts_au AFTER UPDATE ON mail_messages BEGIN INSERT INTO mail_fts(mail_fts, rowid, subject, from_text, search_body) VALUES ('delete', old.pk, old.subject, old.from_text, old.search_body); INSERT INTO mail_fts(rowid, subject, from_text, search_body) VALUES (new.pk, new.subject, new.from_text, new.search_body); END`.execute(db);
      }
    },
  },
  mail_0002_order_indexes: {
    /** Indexes that end in the tie-breaker `pk`, so newest-first pages read in index order on PostgreSQL too. */
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('mail_messages_received_pk').on('mail_messages').columns(['tenant_id', 'mailbox_id', 'received_at', 'pk']).execute();
      await db.schema.createIndex('mail_messages_folder_received_pk').on('mail_messages').columns(['tenant_id', 'mailbox_id', 'folder_id', 'received_at', 'pk']).execute();
    },
  },
  mail_0003_id_history: {
    /** Former REST ids of moved or removed messages → their immutable id (delta `@removed` with `Prefer: IdType="ImmutableId"`). */
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mail_id_history')
        .addColumn('rest_id', 'varchar(200)', (c) => c.primaryKey())
        .addColumn('immutable_id', 'varchar(200)', (c) => c.notNull())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .execute();
    },
  },
  mail_0004_upload_sessions: {
    /** Attachment upload sessions (reference §2.9) and their received byte ranges. */
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mail_upload_sessions')
        .addColumn('token', 'varchar(100)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('message_pk', 'bigint', (c) => c.notNull())
        .addColumn('name', 'varchar(400)', (c) => c.notNull())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('content_type', 'varchar(200)', (c) => c.notNull())
        .addColumn('is_inline', 'integer', (c) => c.notNull())
        .addColumn('content_id', 'varchar(400)')
        .addColumn('next_offset', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'varchar(32)', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('mail_upload_chunks')
        .addColumn('token', 'varchar(100)', (c) => c.notNull())
        .addColumn('start_offset', 'integer', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('mail_upload_chunks_pk', ['token', 'start_offset'])
        .execute();
    },
  },
  mail_0005_lower_address_indexes: {
    /**
     * `$filter` on `from/emailAddress/address` and `sender/emailAddress/address` compares
     * `lower(column)` (the OData compiler's case-insensitive form), which the plain column
     * indexes cannot serve: expression indexes so those filters seek within the mailbox.
     */
    async up(db: Kysely<unknown>) {
      await sql`CREATE INDEX mail_messages_from_lower ON mail_messages (tenant_id, mailbox_id, lower(from_address_lc), received_at)`.execute(db);
      await sql`CREATE INDEX mail_messages_sender_lower ON mail_messages (tenant_id, mailbox_id, lower(sender_address_lc), received_at)`.execute(db);
    },
  },
  mail_0006_folder_counts: {
    /**
     * Per-folder message counters (total, unread) kept by triggers on `mail_messages`, so they
     * change in the same transaction as every message write (insert, delete, move, read-state
     * change) whatever code path writes: `$count`, `@odata.count` without a filter and the
     * folders' totalItemCount / unreadItemCount read one row per folder instead of counting
     * the mailbox (design: "Keep counters for counts that are read often"). Backfilled from
     * the rows that exist.
     */
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mail_folder_counts')
        .addColumn('folder_id', 'varchar(200)', (c) => c.primaryKey())
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('total', 'bigint', (c) => c.notNull())
        .addColumn('unread', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('mail_folder_counts_mailbox').on('mail_folder_counts').columns(['tenant_id', 'mailbox_id', 'folder_id']).execute();
      await sql`INSERT INTO mail_folder_counts (folder_id, tenant_id, mailbox_id, total, unread) SELECT folder_id, min(tenant_id), min(mailbox_id), count(*), sum(1 - is_read) FROM mail_messages GROUP BY folder_id`.execute(db);
      // One statement per change: +1/-1 on the folder's row (created on first use).
      const add = (row: 'new' | 'old', sign: '+' | '-') =>
        `INSERT INTO mail_folder_counts (folder_id, tenant_id, mailbox_id, total, unread) VALUES (${row}.folder_id, ${row}.tenant_id, ${row}.mailbox_id, ${sign}1, ${sign}(1 - ${row}.is_read)) ON CONFLICT (folder_id) DO UPDATE SET total = mail_folder_counts.total + excluded.total, unread = mail_folder_counts.unread + excluded.unread`;
      if (isPostgres(db)) {
        await sql
          .raw(
            `CREATE FUNCTION mail_folder_counts_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN ${add('new', '+')};
  ELSIF TG_OP = 'DELETE' THEN ${add('old', '-')};
  ELSIF new.folder_id IS DISTINCT FROM old.folder_id OR new.is_read IS DISTINCT FROM old.is_read THEN ${add('old', '-')}; ${add('new', '+')};
  END IF;
  RETURN NULL;
END $$`,
          )
          .execute(db);
        await sql`CREATE TRIGGER mail_folder_counts_trg AFTER INSERT OR DELETE OR UPDATE OF folder_id, is_read ON mail_messages FOR EACH ROW EXECUTE FUNCTION mail_folder_counts_trg()`.execute(db);
      } else {
        await sql.raw(`CREATE TRIGGER mail_counts_ai AFTER INSERT ON mail_messages BEGIN ${add('new', '+')}; END`).execute(db);
        await sql.raw(`CREATE TRIGGER mail_counts_ad AFTER DELETE ON mail_messages BEGIN ${add('old', '-')}; END`).execute(db);
        await sql.raw(`CREATE TRIGGER mail_counts_au AFTER UPDATE OF folder_id, is_read ON mail_messages WHEN new.folder_id IS NOT old.folder_id OR new.is_read IS NOT old.is_read BEGIN ${add('old', '-')}; ${add('new', '+')}; END`).execute(db);
      }
    },
  },
  mail_0007_mailbox_versions: {
    /**
     * A version per mailbox, incremented by triggers on `mail_messages` and `mail_folders` in the
     * transaction of every insert, update and delete (whatever code path writes), read by the kept answer texts
     * of `kept.ts`. Never cleared (not one of {@link mailTables}), so a version is never reused.
     * PostgreSQL: one statement-level trigger per event over its transition table (a bulk insert
     * adds one per mailbox, not one per message).
     */
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('mail_mailbox_versions')
        .addColumn('tenant_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('mailbox_id', 'varchar(64)', (c) => c.notNull())
        .addColumn('version', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('mail_mailbox_versions_pk', ['tenant_id', 'mailbox_id'])
        .execute();
      const bump = (from: string) =>
        `INSERT INTO mail_mailbox_versions (tenant_id, mailbox_id, version) ${from} ON CONFLICT (tenant_id, mailbox_id) DO UPDATE SET version = mail_mailbox_versions.version + 1`;
      for (const table of ['mail_messages', 'mail_folders']) {
        if (isPostgres(db)) {
          for (const [event, rows] of [['INSERT', 'new_rows'], ['UPDATE', 'new_rows'], ['DELETE', 'old_rows']] as const) {
            const fn = `${table}_version_${event.toLowerCase()}`;
            await sql.raw(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${bump(`SELECT DISTINCT tenant_id, mailbox_id, 1 FROM ${rows}`)}; RETURN NULL; END $$`).execute(db);
            const referencing = event === 'DELETE' ? 'OLD TABLE AS old_rows' : 'NEW TABLE AS new_rows';
            await sql.raw(`CREATE TRIGGER ${fn} AFTER ${event} ON ${table} REFERENCING ${referencing} FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`).execute(db);
          }
        } else {
          await sql.raw(`CREATE TRIGGER ${table}_version_ai AFTER INSERT ON ${table} BEGIN ${bump('VALUES (new.tenant_id, new.mailbox_id, 1)')}; END`).execute(db);
          await sql.raw(`CREATE TRIGGER ${table}_version_ad AFTER DELETE ON ${table} BEGIN ${bump('VALUES (old.tenant_id, old.mailbox_id, 1)')}; END`).execute(db);
          await sql.raw(`CREATE TRIGGER ${table}_version_au AFTER UPDATE ON ${table} BEGIN ${bump('VALUES (new.tenant_id, new.mailbox_id, 1)')}; END`).execute(db);
        }
      }
    },
  },
  mail_0008_mailbox_version_notices: {
    /**
     * PostgreSQL: the version triggers of `mail_0007_mailbox_versions` also notify the live
     * instances (`core/kept-versions.ts`) in the write's transaction (delivered at commit):
     * `0 mail:<tenant>/<mailbox>,…` for the statement's mailboxes, or `0 mail` (all) for more
     * than 20 of them or ids with other characters than `[A-Za-z0-9._@-]`. The notification takes
     * no sequence number (no lock beyond the mailbox version rows'); the writer's request sends
     * a marker after the commit (`core/cache-presence.ts`; polled: `cache-fallback.ts`). SQLite: nothing.
     */
    async up(db: Kysely<unknown>) {
      if (!isPostgres(db)) return;
      const plain = "'^[A-Za-z0-9._@-]+$'";
      for (const table of ['mail_messages', 'mail_folders']) {
        for (const [event, rows] of [['INSERT', 'new_rows'], ['UPDATE', 'new_rows'], ['DELETE', 'old_rows']] as const) {
          const fn = `${table}_version_${event.toLowerCase()}`;
          await sql
            .raw(
              `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
              DECLARE boxes text;
              BEGIN
                INSERT INTO mail_mailbox_versions (tenant_id, mailbox_id, version) SELECT DISTINCT tenant_id, mailbox_id, 1 FROM ${rows}
                  ON CONFLICT (tenant_id, mailbox_id) DO UPDATE SET version = mail_mailbox_versions.version + 1;
                SELECT CASE WHEN count(*) = 0 THEN NULL
                  WHEN count(*) > 20 OR bool_or(tenant_id !~ ${plain} OR mailbox_id !~ ${plain}) THEN 'mail'
                  ELSE string_agg('mail:' || tenant_id || '/' || mailbox_id, ',') END
                  INTO boxes FROM (SELECT DISTINCT tenant_id, mailbox_id FROM ${rows}) b;
                IF boxes IS NOT NULL THEN PERFORM pg_notify('${presenceChannelPrefix}' || current_schema(), '0 ' || boxes); END IF;
                RETURN NULL;
              END $$`,
            )
            .execute(db);
        }
      }
    },
  },
  mail_0009_folder_page_index: {
    /**
     * Issue 31 (inbox pages): a folder's page in received order reads its row keys, change keys
     * and the commonly filtered flags from one index, without the messages' rows (each 3–4 KB,
     * about one a database page): the rows a `$skip` passes over and the rows a flag filter
     * (`isRead`, `importance`, `hasAttachments`) leaves out cost an index entry each, not a row
     * read. Measured on 50 mailboxes of 200 generated messages: the default page at `$skip=80`
     * 35 → 22 µs, an `isRead` filter 25 → 11 µs (SQLite, the statement alone).
     */
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('mail_messages_folder_page').on('mail_messages').columns(['tenant_id', 'mailbox_id', 'folder_id', 'received_at', 'pk', 'change_key', 'is_read', 'importance', 'has_attachments']).execute();
    },
  },
  mail_0011_drop_folder_prefix_indexes: {
    /**
     * `mail_messages_folder_received` and `mail_messages_folder_received_pk` are prefixes of
     * `mail_messages_folder_page` (`mail_0009`), which serves every query they served in the same
     * order. Kept, they were one more index for every message write to update, and SQLite's planner
     * took the narrower one for a page of row columns with a flag filter, then read each message row
     * to test the flag (a `$select=subject` page with `isRead eq false` 310 → 50 µs without them).
     */
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('mail_messages_folder_received').execute();
      await db.schema.dropIndex('mail_messages_folder_received_pk').execute();
    },
  },
  mail_0012_folder_subject_index: {
    /**
     * Issue 31 (inbox pages): `$orderby=subject` (the list's order `subject_lc asc, pk desc`) read
     * a folder's rows through `mail_messages_folder_read` and sorted them in a temporary b-tree,
     * every page. In this index's order, with the change keys, a page is one index range:
     * measured on 50 mailboxes of 200 generated messages, the page statement at `$skip=40` 98 →
     * 24 µs, a `$select=subject` first page 68 → 22 µs (SQLite, the statement alone). A message
     * write whose subject does not change (a read-state PATCH) does not touch it.
     */
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('mail_messages_folder_subject').on('mail_messages').columns(['tenant_id', 'mailbox_id', 'folder_id', 'subject_lc', 'pk desc', 'change_key']).execute();
    },
  },
  mail_0013_message_version_notices: {
    /**
     * Issue 31 (GET among many messages on PostgreSQL): the `mail_messages` version triggers of
     * `mail_0008_mailbox_version_notices` also name the written messages, `msg:<tenant>/<pk>` for
     * each row of the statement (or `msg`, all of them, for more than 20 rows or a tenant id with
     * other characters than `[A-Za-z0-9._@-]`), in the same notification as their mailboxes. A live
     * instance keeps each message's version and identity (`message-read.ts`) and drops it on
     * that entry, so a message read needs no statement while its message is unchanged, however
     * often the rest of its mailbox changes. SQLite: nothing (it reads the change key).
     */
    async up(db: Kysely<unknown>) {
      if (!isPostgres(db)) return;
      const plain = "'^[A-Za-z0-9._@-]+$'";
      for (const [event, rows] of [['INSERT', 'new_rows'], ['UPDATE', 'new_rows'], ['DELETE', 'old_rows']] as const) {
        const fn = `mail_messages_version_${event.toLowerCase()}`;
        await sql
          .raw(
            `CREATE OR REPLACE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
            DECLARE boxes text; msgs text;
            BEGIN
              INSERT INTO mail_mailbox_versions (tenant_id, mailbox_id, version) SELECT DISTINCT tenant_id, mailbox_id, 1 FROM ${rows}
                ON CONFLICT (tenant_id, mailbox_id) DO UPDATE SET version = mail_mailbox_versions.version + 1;
              SELECT CASE WHEN count(*) = 0 THEN NULL
                WHEN count(*) > 20 OR bool_or(tenant_id !~ ${plain} OR mailbox_id !~ ${plain}) THEN 'mail'
                ELSE string_agg('mail:' || tenant_id || '/' || mailbox_id, ',') END
                INTO boxes FROM (SELECT DISTINCT tenant_id, mailbox_id FROM ${rows}) b;
              SELECT CASE WHEN count(*) = 0 THEN NULL
                WHEN count(*) > 20 OR bool_or(tenant_id !~ ${plain}) THEN 'msg'
                ELSE string_agg('msg:' || tenant_id || '/' || pk, ',') END
                INTO msgs FROM ${rows};
              IF boxes IS NOT NULL THEN PERFORM pg_notify('${presenceChannelPrefix}' || current_schema(), '0 ' || boxes || ',' || msgs); END IF;
              RETURN NULL;
            END $$`,
          )
          .execute(db);
      }
    },
  },
};
