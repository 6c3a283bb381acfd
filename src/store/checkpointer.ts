/**
 * WAL checkpoints of the embedded store off the event loop (issue 31: "no event-loop stall from
 * a write").
 *
 * SQLite copies the write-ahead log back into the database file in a checkpoint, by default
 * inside the commit that takes the log past 1,000 pages: that commit then writes about 4 MB and
 * syncs both files before it returns. On the event loop that was a stall of 25–40 ms (three
 * `fsync`s of 1–15 ms each, measured with `strace -T` under the 90/10 mix of `bench:real`), two
 * or three times a second under writes, and every request in flight waited for it.
 *
 * Here a worker thread with a connection of its own to the same file runs a PASSIVE checkpoint
 * every {@link checkpointIntervalMs} while commits come in (it sees them by `data_version`; an
 * idle log is looked at every {@link idleIntervalMs}): it copies what the log holds, up to the
 * oldest open snapshot, without waiting for readers or writers, and syncs as the store's
 * `synchronous` setting says, while the event loop goes on serving and committing. When it has
 * copied the whole log, the next write restarts the log from its start. The serving connection's
 * own threshold ({@link servingCheckpointPages}, a checkpoint in the commit that takes the log
 * past it) stays the bound on the log: under writes so constant that the worker never catches
 * up with the log's end (the log restarts only after a complete copy), that commit checkpoints,
 * but finds most pages already copied. At SQLite's default of 1,000 pages that commit came
 * before the worker did: a read-state PATCH transaction cost 206 µs on the event loop with the
 * worker every 100 ms, 98 µs at 10,000 pages and 20 ms (a scratch loop of its statements at 1,250
 * transactions a second; in the server, mix A/B +4.4 % req/s, p99 14 -> 9.5 ms; bench/README.md,
 * sixth pass). (A worker-only scheme — `wal_autocheckpoint = 0` — let a constantly written log
 * grow to 880 MB in 6 s; one that escalated to a RESTART checkpoint could not get the write lock
 * between the commits.)
 *
 * Durability is the log's, as before: a commit is in the log when it returns, so `kill -9` loses
 * nothing; a checkpoint only moves pages already there.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Milliseconds between two checkpoints of the worker while the log grows (at 12,000 log pages a second of writes, about 240 pages each). */
export const checkpointIntervalMs = 20;

/** Milliseconds between two looks of the worker at an idle log (one that no commit has grown since its last checkpoint). */
export const idleIntervalMs = 100;

/**
 * The serving connection's own checkpoint threshold, in log pages (SQLite's default is 1,000).
 * Far enough above what the log holds between two checkpoints of the worker that the worker
 * takes them all but under writes it cannot keep up with; still the bound on the log then
 * (about 40 MB of 4 KiB pages).
 */
export const servingCheckpointPages = 10_000;

const source = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
db.pragma('synchronous = ' + workerData.synchronous);
const passive = db.prepare('pragma wal_checkpoint(PASSIVE)');
// Moves exactly when another connection commits: this one never writes.
const dataVersion = db.prepare('pragma data_version').pluck();
let seen = -1;
const run = () => {
  try {
    seen = dataVersion.get();
    return passive.get();
  } catch (e) {
    // Busy or locked: the next round tries again.
    return undefined;
  }
};
let timer;
const tick = () => {
  let idle = false;
  try {
    idle = dataVersion.get() === seen;
  } catch (e) {
    // Read again next round.
  }
  if (!idle) run();
  timer = setTimeout(tick, idle ? workerData.idleIntervalMs : workerData.intervalMs);
};
timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m && m.checkpoint) {
    parentPort.postMessage({ id: m.id, result: run() });
    return;
  }
  if (m === 'close') {
    clearTimeout(timer);
    db.close();
    parentPort.close();
  }
});
`;

/** SQLite's answer to a checkpoint: `busy` (1 when it could not finish), `log` (pages in the log), `checkpointed` (pages copied). */
export interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

/** The checkpoint worker of one store file ({@link startCheckpointer}). */
export interface Checkpointer {
  /** Runs one checkpoint now on the worker; undefined when it was busy or the worker is gone. */
  checkpoint(): Promise<CheckpointResult | undefined>;
  /** Stops the worker and closes its connection (the serving connection's close checkpoints last). */
  close(): Promise<void>;
}

/**
 * Starts the checkpoint worker of a WAL-mode store file (see the module note).
 * @param file the database file's path, as the serving connection opened it
 * @param synchronous the store's `synchronous` setting (`OFF`, `NORMAL`, `FULL`, `EXTRA`)
 * @throws Error when the worker cannot be started
 */
export function startCheckpointer(file: string, synchronous: string): Checkpointer {
  const worker = new Worker(source, { eval: true, workerData: { file, synchronous, intervalMs: checkpointIntervalMs, idleIntervalMs, driver: createRequire(import.meta.url).resolve('better-sqlite3') } });
  let closing = false;
  // Set when the worker failed or exited: the serving connection's own threshold still bounds the log.
  let gone = false;
  let next = 1;
  const waiting = new Map<number, (r: CheckpointResult | undefined) => void>();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const lost = () => {
    gone = true;
    for (const w of waiting.values()) w(undefined);
    waiting.clear();
  };
  worker.on('error', lost);
  worker.on('exit', lost);
  worker.on('message', (m: { id: number; result?: CheckpointResult }) => {
    waiting.get(m.id)?.(m.result);
    waiting.delete(m.id);
    if (waiting.size === 0) worker.unref();
  });
  // Never keeps the process alive by itself.
  worker.unref();
  return {
    checkpoint() {
      if (closing || gone) return Promise.resolve(undefined);
      const id = next++;
      worker.ref();
      return new Promise((resolve) => {
        waiting.set(id, resolve);
        worker.postMessage({ checkpoint: true, id });
      });
    },
    async close() {
      if (closing) return exited;
      closing = true;
      // Referenced until it has closed its connection: the caller awaits that.
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
