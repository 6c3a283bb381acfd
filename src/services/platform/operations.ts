/**
 * Long-running operations of the data platform (reference §3; spec §3, §4.2 "not shown").
 *
 * An operation row stores when it started, when it completes (start + the provisioning
 * delay) and the outcome decided at the start. Its state is computed on read from the
 * clock: before the completion time it is `Running`; at or after it the first reader
 * completes it in one transaction (activating the provisioned item, or removing it on a
 * failure) and every later reader sees the same final state — also after a restart, since
 * nothing lives in memory.
 */
import type { AppContext } from '../../context.ts';
import { errors } from '../../core/errors/index.ts';
import { nowMs } from '../../core/clock.ts';
import { fromJson } from '../../store/db.ts';
import { completeOperation, getOperation, type OperationRow } from './store.ts';

/** The `status` values Stratus reports (reference §3.2). */
export type OperationStatus = 'NotStarted' | 'Running' | 'Succeeded' | 'Failed';

/** An operation's state as computed now. */
export interface OperationView {
  row: OperationRow;
  status: OperationStatus;
  /** The `OperationState` body (reference §3.2). */
  body: {
    status: OperationStatus;
    createdTimeUtc: string;
    lastUpdatedTimeUtc: string;
    percentComplete: number | null;
    error: Record<string, unknown> | null;
  };
  /** Whole seconds until completion while running (≥ 1), else undefined. */
  retryAfterSeconds?: number;
}

/**
 * Reads the caller's operation and brings it up to date with the clock (completing it, when due,
 * marks the request `raw` as one that wrote: `core/cache-requests.ts`).
 * @throws ApiError 400 `InvalidInput` for a malformed id; 404 `OperationNotFound` when the
 * tenant has no such operation or another principal started it (only the caller may read it).
 */
export async function readOperation(ctx: AppContext, tenantId: string, callerId: string, operationId: string, raw: object): Promise<OperationView> {
  const id = operationId.toLowerCase();
  let row = /^[0-9a-f-]{36}$/.test(id) ? await getOperation(ctx.store.db, tenantId, id) : undefined;
  if (!row || row.caller_id !== callerId) {
    throw errors.platform.operationNotFound({}, { isRetriable: false, relatedResource: { resourceId: operationId, resourceType: 'Operation' } });
  }
  const created = Number(row.created_ms);
  const complete = Number(row.complete_ms);
  const now = nowMs();
  if (now >= complete && row.status === null) {
    ctx.cache.requests.mark(raw); // the read completes it: a write (`core/cache-requests.ts`)
    await completeOperation(ctx.store.db, row, new Date(complete).toISOString());
    row = (await getOperation(ctx.store.db, tenantId, id))!;
  }
  if (row.status === null) {
    return {
      row,
      status: 'Running',
      body: {
        status: 'Running',
        createdTimeUtc: new Date(created).toISOString(),
        lastUpdatedTimeUtc: new Date(created).toISOString(),
        // Observed: null while running (reference §3.3).
        percentComplete: null,
        error: null,
      },
      retryAfterSeconds: Math.max(1, Math.ceil((complete - now) / 1000)),
    };
  }
  const failed = row.status === 'Failed';
  return {
    row,
    status: row.status,
    body: {
      status: row.status,
      createdTimeUtc: new Date(created).toISOString(),
      lastUpdatedTimeUtc: new Date(complete).toISOString(),
      percentComplete: failed ? null : 100,
      error: failed ? fromJson<Record<string, unknown>>(row.error) : null,
    },
  };
}
