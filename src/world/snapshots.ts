/**
 * Snapshots of the whole world (issue 28 items 4, 5, 7): every table of every area and of the
 * directory, copied inside the same database into tables `snap_<tag>_<table>` (SQLite: the same
 * file; PostgreSQL: the same schema, so every instance restores the same one), with a row of
 * `stratus_snapshots` naming them and the Stratus time to restore.
 *
 * - The tables are derived at run time from the modules (`ServiceModule.tables`) and the
 *   directory (`directoryTables`); the columns from their declarations (`databaseColumns`). The
 *   full-text tables (SQLite's `mail_fts`, PostgreSQL's `mail_search`) are not among them: the
 *   triggers of `mail_messages` keep them through the restore's deletes and inserts.
 * - Save: `CREATE TABLE snap_… AS SELECT <columns> FROM <table>` per table, in one transaction.
 * - Restore, in one transaction: the rows that differ from the snapshot are deleted (children
 *   first), then the snapshot's missing rows inserted (parents first), by primary key and
 *   `EXCEPT` (see {@link restoreStatements}); tables that triggers of other tables write (the
 *   mail folder counts) are put right last. DELETE rather than TRUNCATE: the triggers that count
 *   mailbox versions and keep the full-text index must see the rows go.
 *   On PostgreSQL the whole restore is one statement text (one round trip).
 * - Not part of a snapshot: the signing keys (tokens issued before stay verifiable), the
 *   mailbox version counters (never reused), the migrations, the live instances, the
 *   rate-limit windows (emptied by a restore instead).
 */
import { sql, type Kysely } from 'kysely';
import type { ServiceModule } from '../context.ts';
import { directoryTables } from '../core/identity/directory.ts';
import { randomToken } from '../core/ids.ts';
import { nowIso, nowMs } from '../core/clock.ts';
import { errors } from '../core/errors/index.ts';
import { databaseColumns, type Database } from '../store/database.ts';
import { isPostgres, type Store } from '../store/db.ts';

/** The name of the snapshot taken right after the world was loaded (what a reset restores). */
export const worldSnapshotName = '$world';

/** A user snapshot name: 1–64 letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const snapshotNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A snapshot as `GET /_stratus/snapshots` lists it. */
export interface SnapshotInfo {
  name: string;
  /** When it was saved (Stratus clock). */
  createdAt: string;
  /** The Stratus time a restore sets (ISO), or null: the machine's time. */
  clock: string | null;
  tables: number;
  rows: number;
}

/** The tables of a world, children before parents: every module's (last module first), then the directory's. */
export function worldTables(modules: readonly ServiceModule[]): string[] {
  const out: string[] = [];
  for (const m of [...modules].reverse()) for (const t of m.tables) if (!out.includes(t)) out.push(t);
  for (const t of directoryTables) if (!out.includes(t)) out.push(t);
  return out;
}

/** The declared columns of `table` (those an insert may write). */
function columnsOf(table: string): string[] {
  const cols = (databaseColumns as Record<string, Record<string, unknown>>)[table];
  if (!cols) throw new Error(`table ${table} is not declared in src/store/database.ts`);
  return Object.keys(cols);
}

const q = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** What a restore needs to know of the schema, read once per store: the tables triggers of other tables write, and each table's primary key. */
interface SchemaFacts {
  derived: Set<string>;
  keys: Map<string, string[]>;
}
const schemaFacts = new WeakMap<object, Promise<SchemaFacts>>();

async function readSchemaFacts(db: Kysely<Database>, tables: readonly string[]): Promise<SchemaFacts> {
  const pg = isPostgres(db);
  const bodies = pg
    ? (
        await sql<{ body: string; tbl: string }>`select p.prosrc as body, c.relname as tbl from pg_trigger t join pg_proc p on p.oid = t.tgfoid join pg_class c on c.oid = t.tgrelid
          where not t.tgisinternal and c.relnamespace = current_schema()::regnamespace`.execute(db)
      ).rows
    : (await sql<{ body: string; tbl: string }>`select sql as body, tbl_name as tbl from sqlite_master where type = 'trigger'`.execute(db)).rows;
  const derived = new Set<string>();
  for (const t of tables) {
    const word = new RegExp(`\\b${t}\\b`, 'i');
    if (bodies.some((b) => b.tbl !== t && word.test(b.body))) derived.add(t);
  }
  const keyRows = pg
    ? (
        await sql<{ tbl: string; col: string }>`select k.table_name as tbl, k.column_name as col from information_schema.table_constraints c
          join information_schema.key_column_usage k on k.constraint_name = c.constraint_name and k.table_schema = c.table_schema and k.table_name = c.table_name
          where c.constraint_type = 'PRIMARY KEY' and c.table_schema = current_schema() order by k.table_name, k.ordinal_position`.execute(db)
      ).rows
    : (await sql<{ tbl: string; col: string }>`select m.name as tbl, p.name as col from sqlite_master m join pragma_table_info(m.name) p where m.type = 'table' and p.pk > 0 order by m.name, p.pk`.execute(db)).rows;
  const keys = new Map<string, string[]>();
  for (const r of keyRows) keys.set(r.tbl, [...(keys.get(r.tbl) ?? []), r.col]);
  return { derived, keys };
}

/**
 * The statements that put the snapshot `tag`'s rows (columns by table) back, in order. A table
 * with a primary key is restored by difference: the rows that are not in the snapshot as they
 * are (new or changed) are deleted, then the snapshot's rows that are not in the table are
 * inserted, so an unchanged table costs two reads and its triggers do not run (the mail
 * full-text index: re-inserting 600 demo messages took 50 ms). A table without one is emptied
 * and copied whole.
 */
function restoreStatements(order: readonly string[], saved: Record<string, string[]>, tag: string, facts: SchemaFacts): string[] {
  const out: string[] = [];
  const colsOf = (t: string) => {
    const live = new Set(columnsOf(t));
    return (saved[t] ?? []).filter((c) => live.has(c)).map(q).join(', ');
  };
  for (const t of order) {
    const key = facts.keys.get(t);
    const snap = q(`snap_${tag}_${t}`);
    if (!saved[t]) out.push(`delete from ${q(t)}`);
    else if (key) {
      const k = key.map(q).join(', ');
      const cols = colsOf(t);
      out.push(`delete from ${q(t)} where (${k}) in (select ${k} from (select ${cols} from ${q(t)} except select ${cols} from ${snap}) d)`);
    } else out.push(`delete from ${q(t)}`);
  }
  const parentsFirst = [...order].reverse();
  for (const t of [...parentsFirst.filter((x) => !facts.derived.has(x)), ...parentsFirst.filter((x) => facts.derived.has(x))]) {
    if (!saved[t]) continue;
    const cols = colsOf(t);
    const snap = q(`snap_${tag}_${t}`);
    if (facts.keys.get(t)) {
      // A table triggers write: what they wrote and the snapshot does not hold goes first.
      if (facts.derived.has(t)) {
        const k = facts.keys.get(t)!.map(q).join(', ');
        out.push(`delete from ${q(t)} where (${k}) in (select ${k} from (select ${cols} from ${q(t)} except select ${cols} from ${snap}) d)`);
      }
      out.push(`insert into ${q(t)} (${cols}) select ${cols} from ${snap} except select ${cols} from ${q(t)}`);
    } else out.push(`insert into ${q(t)} (${cols}) select ${cols} from ${snap}`);
  }
  return out;
}

/** Runs `statements` in `trx`: on PostgreSQL as one text (one round trip), on SQLite one by one. */
async function runAll(trx: Kysely<Database>, statements: string[]): Promise<void> {
  if (isPostgres(trx)) {
    if (statements.length) await sql.raw(statements.join(';\n')).execute(trx);
    return;
  }
  for (const s of statements) await sql.raw(s).execute(trx);
}

/** Snapshot rows of one store. */
export class Snapshots {
  constructor(
    private readonly store: Store<Database>,
    private readonly modules: readonly ServiceModule[],
  ) {}

  /** Every snapshot but the world's, oldest first. */
  async list(): Promise<SnapshotInfo[]> {
    const rows = await this.store.db.selectFrom('stratus_snapshots').selectAll().where('name', '<>', worldSnapshotName).orderBy('created_at').orderBy('name').execute();
    return rows.map((r) => ({
      name: r.name,
      createdAt: r.created_at,
      clock: r.clock_ms === null ? null : new Date(Number(r.clock_ms)).toISOString(),
      tables: Object.keys(JSON.parse(r.tables)).length,
      rows: Number(r.row_count),
    }));
  }

  /** Whether a snapshot `name` exists. */
  async has(name: string): Promise<boolean> {
    return !!(await this.store.db.selectFrom('stratus_snapshots').select('name').where('name', '=', name).executeTakeFirst());
  }

  /**
   * Saves the current state as `name` with the Stratus time to restore (`clockMs`; default: now;
   * null: the machine's time).
   * @throws errors.control.snapshotExists when the name is taken.
   */
  async save(name: string, clockMs: number | null = nowMs()): Promise<SnapshotInfo> {
    const tag = randomToken(6).toLowerCase().replace(/[^a-z0-9]/g, 'x');
    const tables = worldTables(this.modules);
    const saved: Record<string, string[]> = {};
    const statements: string[] = [];
    for (const t of tables) {
      saved[t] = columnsOf(t);
      statements.push(`create table ${q(`snap_${tag}_${t}`)} as select ${saved[t]!.map(q).join(', ')} from ${q(t)}`);
    }
    const createdAt = nowIso();
    let rows = 0;
    await this.store.transaction(async (trx) => {
      if (await trx.selectFrom('stratus_snapshots').select('name').where('name', '=', name).executeTakeFirst()) throw errors.control.snapshotExists({ name });
      await runAll(trx, statements);
      const counts = tables.map((t) => `select count(*) as n from ${q(`snap_${tag}_${t}`)}`).join(' union all ');
      rows = (await sql.raw<{ n: number | string }>(counts).execute(trx)).rows.reduce((a, r) => a + Number(r.n), 0);
      await trx.insertInto('stratus_snapshots').values({ name, tag, created_at: createdAt, clock_ms: clockMs, tables: JSON.stringify(saved), row_count: rows }).execute();
    });
    return { name, createdAt, clock: clockMs === null ? null : new Date(clockMs).toISOString(), tables: tables.length, rows };
  }

  /**
   * Puts every table back as snapshot `name` holds it (one transaction).
   * @returns the Stratus time to restore (epoch ms; null: the machine's time).
   * @throws errors.control.snapshotNotFound
   */
  async restore(name: string): Promise<{ clockMs: number | null }> {
    const db = this.store.db;
    let known = schemaFacts.get(this.store);
    if (!known) schemaFacts.set(this.store, (known = readSchemaFacts(db, worldTables(this.modules))));
    const facts = await known;
    const order = worldTables(this.modules);
    let clockMs: number | null = null;
    await this.store.transaction(async (trx) => {
      const row = await trx.selectFrom('stratus_snapshots').selectAll().where('name', '=', name).executeTakeFirst();
      if (!row) throw errors.control.snapshotNotFound({ name });
      clockMs = row.clock_ms === null ? null : Number(row.clock_ms);
      await runAll(trx, restoreStatements(order, JSON.parse(row.tables) as Record<string, string[]>, row.tag, facts));
    });
    return { clockMs };
  }

  /**
   * Deletes snapshot `name` and its tables.
   * @throws errors.control.snapshotNotFound
   */
  async delete(name: string): Promise<void> {
    await this.store.transaction(async (trx) => {
      const row = await trx.selectFrom('stratus_snapshots').selectAll().where('name', '=', name).executeTakeFirst();
      if (!row) throw errors.control.snapshotNotFound({ name });
      await runAll(trx, Object.keys(JSON.parse(row.tables) as Record<string, string[]>).map((t) => `drop table if exists ${q(`snap_${row.tag}_${t}`)}`));
      await trx.deleteFrom('stratus_snapshots').where('name', '=', name).execute();
    });
  }
}
