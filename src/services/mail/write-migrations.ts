/**
 * Migrations of the mail write path (issue 31: "the full-text index updated only when indexed
 * text changes", "cheaper writes").
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres, type Migrations } from '../../store/db.ts';
import { presenceChannelPrefix } from '../../core/cache-presence.ts';
import { functionWithWriteMarker } from '../../core/cache-write-markers.ts';

/** Migrations of the mail write path (added to the mail module's migrations). */
export const mailWriteMigrations: Migrations = {
  mail_0010_fts_update_guard: {
    /**
     * SQLite: the full-text index's update trigger (`mail_fts_au` of `mail_0001_store`) fired on
     * every update of a message row — a read-state change, a move, a new change key — and
     * re-indexed the subject, sender and body text (an FTS5 delete of the old text and an insert
     * of the new one: tokenizing up to 100,000 characters twice). It now fires only when one of
     * those three columns is written with another value. PostgreSQL's index is a generated
     * column: nothing to do.
     */
    async up(db: Kysely<unknown>) {
      if (isPostgres(db)) return;
      await sql`DROP TRIGGER IF EXISTS mail_fts_au`.execute(db);
      await sql`CREATE TRIGGER mail_fts_au AFTER UPDATE OF subject, from_text, search_body ON mail_messages WHEN old.subject IS NOT new.subject OR old.from_text IS NOT new.from_text OR old.search_body IS NOT new.search_body BEGIN INSERT INTO mail_fts(mail_fts, rowid, subject, from_text, search_body) VALUES ('delete', old.pk, old.subject, old.from_text, old.search_body); INSERT INTO mail_fts(rowid, subject, from_text, search_body) VALUES (new.pk, new.subject, new.from_text, new.search_body); END`.execute(db);
    },
  },
  mail_0014_search_table: {
    /**
     * PostgreSQL: the full-text vector leaves the message row for a table of its own,
     * `mail_search (pk, search_tsv)` with the GIN index, kept by triggers on `mail_messages`:
     * a statement-level insert and delete over the transition tables, and a row-level update
     * that fires only when `subject`, `from_text` or `search_body` is written with another value.
     * Before, the vector was a generated column of `mail_messages`: every update of a message
     * row that changes an indexed column (a read-state PATCH changes `is_read` and `change_key`)
     * makes a new row version, and the GIN index took an entry for every word of the new version
     * whatever changed. Measured on the bench's store (10,600 messages, 20 clients of the
     * read-state statement, all PostgreSQL processes' CPU): about 1,100 -> 890 us an update. The search reads
     * `mail_messages.pk in (select pk from mail_search where …)` (`query.ts`). The table is not
     * one of the world's tables (like SQLite's `mail_fts`): the triggers keep it through every
     * write, reset and restore. SQLite: nothing (`mail_0010_fts_update_guard`).
     */
    async up(db: Kysely<unknown>) {
      if (!isPostgres(db)) return;
      const vector = (r: string) => `to_tsvector('simple', ${r}.subject || ' ' || ${r}.from_text || ' ' || ${r}.search_body)`;
      await sql`CREATE TABLE mail_search (pk bigint PRIMARY KEY, search_tsv tsvector NOT NULL)`.execute(db);
      await sql`INSERT INTO mail_search (pk, search_tsv) SELECT pk, search_tsv FROM mail_messages`.execute(db);
      await sql`ALTER TABLE mail_messages DROP COLUMN search_tsv`.execute(db);
      await sql`CREATE INDEX mail_search_fts ON mail_search USING GIN (search_tsv)`.execute(db);
      const fn = async (name: string, body: string) => sql.raw(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${body}; RETURN NULL; END $$`).execute(db);
      await fn('mail_search_insert', `INSERT INTO mail_search (pk, search_tsv) SELECT n.pk, ${vector('n')} FROM new_rows n`);
      await fn('mail_search_delete', 'DELETE FROM mail_search WHERE pk IN (SELECT pk FROM old_rows)');
      await fn('mail_search_update', `UPDATE mail_search SET search_tsv = ${vector('new')} WHERE pk = new.pk`);
      await sql`CREATE TRIGGER mail_search_insert AFTER INSERT ON mail_messages REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mail_search_insert()`.execute(db);
      await sql`CREATE TRIGGER mail_search_delete AFTER DELETE ON mail_messages REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION mail_search_delete()`.execute(db);
      await sql`CREATE TRIGGER mail_search_update AFTER UPDATE OF subject, from_text, search_body ON mail_messages FOR EACH ROW
        WHEN (old.subject IS DISTINCT FROM new.subject OR old.from_text IS DISTINCT FROM new.from_text OR old.search_body IS DISTINCT FROM new.search_body)
        EXECUTE FUNCTION mail_search_update()`.execute(db);
    },
  },
  mail_0015_drop_received_prefix_index: {
    /**
     * `mail_messages_received` (`tenant_id, mailbox_id, received_at`) is a prefix of
     * `mail_messages_received_pk` (`mail_0002_order_indexes`), which serves every query it served
     * in the same order: one index fewer for every message insert (and, on PostgreSQL, for every
     * update that makes a new row version, such as a read-state PATCH).
     */
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('mail_messages_received').execute();
    },
  },
  mail_0016_message_update_version_row_trigger: {
    /**
     * PostgreSQL: the version trigger of a message UPDATE (`mail_0013_message_version_notices`)
     * becomes a row-level trigger: the mailbox's version row is moved with one `INSERT … ON
     * CONFLICT` of the row's own values and the notification (`0 mail:<tenant>/<mailbox>,msg:<tenant>/<pk>`,
     * or `0 mail,msg` for ids with other characters than `[A-Za-z0-9._@-]`) is built from them,
     * instead of a transition table read by three queries. Every UPDATE of `mail_messages`
     * Stratus makes names one row by its key, so this is one notification a statement as before;
     * INSERT and DELETE (bulk loads, restores, folder deletes) keep the statement-level triggers
     * and their coalesced notification. Measured with 20 clients of the read-state statement on
     * the bench's store, alternated: 2-19 % less PostgreSQL CPU an update (bench/README.md).
     */
    async up(db: Kysely<unknown>) {
      if (!isPostgres(db)) return;
      const plain = "'^[A-Za-z0-9._@-]+$'";
      await sql`DROP TRIGGER mail_messages_version_update ON mail_messages`.execute(db);
      await sql`DROP FUNCTION mail_messages_version_update()`.execute(db);
      await sql
        .raw(
          `CREATE FUNCTION mail_messages_version_update() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            INSERT INTO mail_mailbox_versions (tenant_id, mailbox_id, version) VALUES (new.tenant_id, new.mailbox_id, 1)
              ON CONFLICT (tenant_id, mailbox_id) DO UPDATE SET version = mail_mailbox_versions.version + 1;
            PERFORM pg_notify('${presenceChannelPrefix}' || current_schema(), CASE WHEN new.tenant_id ~ ${plain} AND new.mailbox_id ~ ${plain}
              THEN '0 mail:' || new.tenant_id || '/' || new.mailbox_id || ',msg:' || new.tenant_id || '/' || new.pk ELSE '0 mail,msg' END);
            RETURN NULL;
          END $$`,
        )
        .execute(db);
      await sql`CREATE TRIGGER mail_messages_version_update AFTER UPDATE ON mail_messages FOR EACH ROW EXECUTE FUNCTION mail_messages_version_update()`.execute(db);
    },
  },
  mail_0017_read_state_function: {
    /**
     * PostgreSQL: the read-state write (`writes.ts` `writeReadStateInOne`) as one function call —
     * the row's read state, time and change key; the change-log row and the change
     * notifications' wake-up when the row was there; then, when given, the writer's own write
     * marker (`core/cache-presence.ts`, `w <instance> <k>`). Each statement of a PL/pgSQL
     * function fires its AFTER triggers when it ends, so the marker is the transaction's last
     * notification, after the message's version notice: the writer answers once it came back,
     * with no marker statement of its own. One round trip, as the single statement it replaces.
     */
    async up(db: Kysely<unknown>) {
      if (!isPostgres(db)) return;
      const signature = `stratus_mail_read_state(p_is_read integer, p_modified_at text, p_change_key text, p_pk bigint,
        p_tenant_id text, p_mailbox_id text, p_folder_id text, p_message_id text, p_marker text)`;
      const body = `UPDATE mail_messages SET is_read = p_is_read, modified_at = p_modified_at, change_key = p_change_key WHERE pk = p_pk;
      IF FOUND THEN
        INSERT INTO mail_changes (tenant_id, mailbox_id, folder_id, message_id, change_type, at) VALUES (p_tenant_id, p_mailbox_id, p_folder_id, p_message_id, 'updated', p_modified_at);
        PERFORM pg_notify('stratus_' || current_schema(), 'mail');
      END IF;`;
      await sql.raw(functionWithWriteMarker(signature, body)).execute(db);
    },
  },
};
