/**
 * The default-ordered pages of `listSynchronizations` (spec: resource-manager §2.4, §4.5;
 * reference §5) as they are kept between requests: the stored runs of one page (newest start
 * first) and the JSON texts of the answers made from them.
 *
 * A page's stored rows do not change with the clock; what does is only which of its
 * `InProgress` runs are due (they read as `Succeeded`, with their planned end and duration).
 * For a fixed set of rows that is fully told by how many of the pending runs' due times are
 * at or before now — the {@link SynchronizationPage.phase} — so an answer text is kept per
 * phase (and per everything else the answer holds, see `consumer.ts`), and a page whose runs
 * are all finished has one phase and one text whatever the clock says (also when the clock
 * is reset backward: the phase then goes down again).
 *
 * Pages live in the `resources` cache area (`store.ts`): a run added, a share or account
 * deleted changes that area in its transaction, dropping every page and its texts.
 */
import type { ShareSynchronization } from './store.ts';

/** A stored run as the default-ordered list reads it (columns of `datashare_synchronizations`). */
export interface StoredRun {
  synchronization_id: string;
  synchronization_mode: string;
  start_time: string;
  consumer_name: string | null;
  consumer_email: string | null;
  consumer_tenant_name: string | null;
  status: string;
  message: string | null;
  end_time: string | null;
  duration_ms: number | null;
  due_at: string | null;
  planned_duration_ms: number | null;
}

/** The columns of a {@link StoredRun}, in the order they are read. */
export const storedRunColumns = [
  'synchronization_id',
  'synchronization_mode',
  'start_time',
  'consumer_name',
  'consumer_email',
  'consumer_tenant_name',
  'status',
  'message',
  'end_time',
  'duration_ms',
  'due_at',
  'planned_duration_ms',
] as const;

/**
 * A run row (stored, or completed by the list's SQL) as the §2.4 `ShareSynchronization`;
 * without the consumer fields when `consumerFields` is false (the consumer's own list).
 */
export function toSync(r: Omit<StoredRun, 'due_at' | 'planned_duration_ms'>, consumerFields = true): ShareSynchronization {
  const out: ShareSynchronization = { synchronizationId: r.synchronization_id, synchronizationMode: r.synchronization_mode as ShareSynchronization['synchronizationMode'], status: r.status, startTime: r.start_time };
  if (r.message != null) out.message = r.message;
  if (r.end_time != null) out.endTime = r.end_time;
  if (r.duration_ms != null) out.durationMs = Number(r.duration_ms);
  if (!consumerFields) return out;
  if (r.consumer_name != null) out.consumerName = r.consumer_name;
  if (r.consumer_email != null) out.consumerEmail = r.consumer_email;
  if (r.consumer_tenant_name != null) out.consumerTenantName = r.consumer_tenant_name;
  return out;
}

/** Answer texts kept per page at most (api-versions × phases; a page of finished runs has one phase); more empties the set. */
const maxTexts = 8;

/** One default-ordered page of stored runs and the answer texts made from it. */
export class SynchronizationPage {
  /** The page's runs (at most the page size). */
  readonly runs: StoredRun[];
  /** Whether a run follows the page. */
  readonly more: boolean;
  /** The due times (ISO 8601 UTC) of the page's `InProgress` runs that have one, ascending. */
  readonly due: string[];
  private readonly texts = new Map<string, Buffer>();

  /** @param rows up to `limit + 1` rows read in the list order (the extra one tells {@link more}). */
  constructor(rows: StoredRun[], limit: number) {
    this.runs = rows.length > limit ? rows.slice(0, limit) : rows;
    this.more = rows.length > limit;
    this.due = this.runs
      .filter((r) => r.status === 'InProgress' && r.due_at !== null)
      .map((r) => r.due_at!)
      .sort();
  }

  /** How many of the pending runs are due at `now` (ISO 8601 UTC; texts of one format compare as the databases do). */
  phase(now: string): number {
    let n = 0;
    while (n < this.due.length && this.due[n]! <= now) n++;
    return n;
  }

  /** The page's runs as of `now`: a due `InProgress` run reads as `Succeeded`, ended at its due time after its planned duration. */
  value(now: string, consumerFields = true): ShareSynchronization[] {
    return this.runs.map((r) =>
      r.status === 'InProgress' && r.due_at !== null && r.due_at <= now
        ? toSync({ ...r, status: 'Succeeded', message: 'Synchronization completed.', end_time: r.due_at, duration_ms: r.planned_duration_ms }, consumerFields)
        : toSync(r, consumerFields),
    );
  }

  /**
   * The answer text kept under `key` (UTF-8: encoded once, not per answer), or `make()` kept
   * under it. The key must name everything the text depends on besides the rows: the phase
   * (when {@link due} is not empty), the variant, and what the next link holds.
   */
  text(key: string, make: () => string): Buffer {
    let t = this.texts.get(key);
    if (t === undefined) {
      t = Buffer.from(make(), 'utf8');
      if (this.texts.size >= maxTexts) this.texts.clear();
      this.texts.set(key, t);
    }
    return t;
  }
}
