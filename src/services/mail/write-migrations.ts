/**
 * Migrations of the mail write path (issue 31: "the full-text index updated only when indexed
 * text changes").
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres, type Migrations } from '../../store/db.ts';

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
};
