/**
 * WAL checkpoints of a SQLite file store off the event loop (issue 31: "no event-loop stall
 * from a write"). SQLite's automatic checkpoint runs inside the commit that crosses the
 * threshold (1,000 WAL pages by default): it copies the WAL's pages into the database file and,
 * with `synchronous = NORMAL`, fsyncs both — 10–40 ms on this machine kind, on the event loop,
 * about every hundred message writes. Here a worker thread with its own connection runs a
 * `PASSIVE` checkpoint {@link checkpointDelayMs} after writes were reported: a passive
 * checkpoint never blocks the writer or the readers (WAL design), so the main connection only
 * appends to the WAL. The main connection keeps an automatic checkpoint at
 * {@link fallbackCheckpointPages} as a safety net (a worker that cannot start or falls behind).
 *
 * Durability is SQLite's own: a commit is in the WAL before it is acknowledged; a checkpoint
 * only moves committed pages into the database file, and a crash at any point of it is
 * recovered from the WAL at the next open.
 */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

/** How long after a reported write the worker checkpoints (ms): writes of that span share one checkpoint. */
export const checkpointDelayMs = 200;

/** The size the SQLite WAL file is cut back to after a checkpoint that emptied it (bytes). */
export const walSizeLimitBytes = 64 * 1024 * 1024;

/** The main connection's own automatic checkpoint (WAL pages): only when the worker does not keep up. */
export const fallbackCheckpointPages = 20_000;

const source = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = ' + workerData.synchronous);
// This connection never writes rows: it must never checkpoint on its own either.
db.pragma('wal_autocheckpoint = 0');
let timer;
parentPort.on('message', (m) => {
  if (m === 'close') {
    clearTimeout(timer);
    db.close();
    parentPort.close();
    return;
  }
  if (timer) return;
  timer = setTimeout(() => {
    timer = undefined;
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or closing: the next report tries again; the main connection's fallback covers the rest.
    }
  }, workerData.delayMs);
});
`;

/** The checkpoint worker of one store (see the file comment). */
export interface Checkpointer {
  /** Reports writes (cheap: at most one message per {@link checkpointDelayMs}/2 reaches the worker). */
  wrote(): void;
  /** Stops the worker and closes its connection; resolves when it has exited. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the checkpoint worker of the SQLite file `file` (WAL mode, already open by the caller).
 * @param synchronous the store's `synchronous` mode (the checkpoint's fsyncs follow it)
 */
export function startCheckpointer(file: string, synchronous: string): Checkpointer {
  const worker = new Worker(source, { eval: true, workerData: { file, synchronous, delayMs: checkpointDelayMs, driver: createRequire(import.meta.url).resolve('better-sqlite3') } });
  // Never keeps the process alive; an error (the file went away) only ends the worker.
  worker.unref();
  let alive = true;
  worker.on('error', () => {
    alive = false;
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let last = -Infinity;
  return {
    wrote() {
      if (!alive) return;
      const now = performance.now();
      if (now - last < checkpointDelayMs / 2) return;
      last = now;
      worker.postMessage(0);
    },
    async close() {
      if (alive) {
        alive = false;
        // Referenced while it closes: a caller awaiting this keeps the process alive until the worker is gone.
        worker.ref();
        worker.postMessage('close');
      }
      await exited;
    },
  };
}

/**
 * Sets up a file store's connection for {@link startCheckpointer} (automatic checkpoint at
 * {@link fallbackCheckpointPages}, WAL cut back to {@link walSizeLimitBytes}); the worker starts at
 * the first reported write (a store that never writes starts none).
 * @param synchronous the store's `synchronous` mode
 */
export function checkpointsOffThread(database: { name: string; pragma(text: string): unknown }, synchronous: string): Checkpointer {
  database.pragma(`wal_autocheckpoint = ${fallbackCheckpointPages}`);
  database.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
  let worker: Checkpointer | undefined;
  return {
    wrote: () => (worker ??= startCheckpointer(database.name, synchronous)).wrote(),
    close: async () => worker?.close(),
  };
}
