/**
 * Values every instance of a deployment shares, kept as extra rows of `stratus_cache_versions`
 * (issue 28 items 5–6): `clock` (the Stratus clock's offset from the machine clock, in ms) and
 * `world` (a generation incremented by every reset and snapshot restore). They travel with the
 * cache invalidation of `cache.ts`, so they cost no statement of their own:
 *
 * - the version read a request makes (one per turn, not live) returns these rows too; a row whose
 *   value differs from the one this instance knows calls its watcher;
 * - a write notifies the live instances (PostgreSQL) with `<seq> clock=<ms>,world=<n>`; they call
 *   the watchers before they acknowledge, and the writer answers only after every live instance
 *   acknowledged (`CacheHub.settle`). So a clock move, reset or restore on one instance is what
 *   every instance uses on its very next request.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../store/db.ts';
import { presenceChannelPrefix } from './cache-presence.ts';
import type { CacheDatabase } from './tables.ts';

/** The shared rows. */
export type SharedRow = 'clock' | 'world';

/** A value to write: a number, or `'next'` (the row's value plus one). */
export type SharedWrite = Partial<Record<SharedRow, number | 'next'>>;

/** The shared rows of one app: what it knows of them and what it does when another instance changes one. */
export class SharedValues {
  private readonly known = new Map<string, string>();
  private readonly watchers = new Map<string, (value: number) => void>();

  /** Calls `fn(value)` whenever another instance or process changes `row` (not for this instance's own writes). */
  watch(row: SharedRow, fn: (value: number) => void): void {
    this.watchers.set(row, fn);
  }

  /** Reads the rows now (at start): returns their values (0 for a missing row) and records them as known. */
  async read(db: Kysely<CacheDatabase>): Promise<Record<SharedRow, number>> {
    const rows = await db.selectFrom('stratus_cache_versions').select(['area', 'version']).where('area', 'in', ['clock', 'world']).execute();
    const out: Record<SharedRow, number> = { clock: 0, world: 0 };
    for (const r of rows) {
      this.known.set(r.area, String(r.version));
      out[r.area as SharedRow] = Number(r.version);
    }
    return out;
  }

  /** A version read's rows (`CacheHub.sync`): calls the watcher of every row whose value moved. */
  seen(rows: Map<string, string>): void {
    for (const [row, fn] of this.watchers) {
      const v = rows.get(row);
      if (v !== undefined && v !== this.known.get(row)) {
        this.known.set(row, v);
        fn(Number(v));
      }
    }
  }

  /** A part of a notification (`row=value`): applies it and returns true; false for any other part. */
  notified(part: string): boolean {
    const eq = part.indexOf('=');
    if (eq < 0) return false;
    const row = part.slice(0, eq);
    const v = part.slice(eq + 1);
    const fn = this.watchers.get(row);
    if (fn && v !== this.known.get(row)) {
      this.known.set(row, v);
      fn(Number(v));
    }
    return true;
  }

  /**
   * Writes `values` through `db` (pass a transaction to commit them with other writes) and, on
   * PostgreSQL, takes a sequence number and notifies the live instances.
   * @returns the values written, and the sequence number on PostgreSQL.
   */
  async write(db: Kysely<CacheDatabase>, values: SharedWrite): Promise<{ values: Partial<Record<SharedRow, number>>; seq: number | undefined }> {
    const written: Partial<Record<SharedRow, number>> = {};
    for (const [row, v] of Object.entries(values) as [SharedRow, number | 'next'][]) {
      const set = v === 'next' ? sql`stratus_cache_versions.version + 1` : sql`${Math.round(v)}`;
      const { rows } = await sql<{ version: string }>`insert into stratus_cache_versions (area, version) values (${row}, ${v === 'next' ? 1 : Math.round(v)})
        on conflict (area) do update set version = ${set} returning version`.execute(db);
      written[row] = Number(rows[0]!.version);
      this.known.set(row, String(written[row]));
    }
    if (!isPostgres(db)) return { values: written, seq: undefined };
    const parts = Object.entries(written).map(([k, v]) => `${k}=${v}`).join(',');
    const { rows } = await sql<{ seq: string }>`
      with s as (update stratus_cache_versions set version = version + 1 where area = '*' returning version)
      select version::text as seq, pg_notify(${presenceChannelPrefix} || current_schema(), version::text || ' ' || ${parts}) from s`.execute(db);
    return { values: written, seq: rows[0] ? Number(rows[0].seq) : undefined };
  }
}
