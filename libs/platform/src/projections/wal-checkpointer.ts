import type Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';

/**
 * The thread's whole program, plain JavaScript (it runs the same from the TypeScript sources
 * and from the build): its own connection, a PASSIVE checkpoint every `intervalMs` — it never
 * waits for readers or the writer — until told to stop.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
// Its name in top -H, ps -L and perf (Linux; elsewhere unnamed): docs/operations.md, "Threads".
try { require('node:fs').writeFileSync('/proc/thread-self/comm', 'wal-checkpoint'); } catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage(String(err));
  }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Checkpoints a WAL database from a worker thread, so copying the log into the database file
 * and its fsyncs leave the event loop (with auto-checkpoint they ran inside whichever commit on
 * the loop crossed the threshold). The owner raises its connection's `wal_autocheckpoint` to a
 * safety net for when this thread cannot keep up or has died.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(
    readonly file: string,
    onError: (message: string) => void,
    intervalMs = CHECKPOINT_INTERVAL_MS,
  ) {
    this.worker = new Worker(PROGRAM, {
      eval: true,
      workerData: { file, intervalMs, driver: require.resolve('better-sqlite3') },
      // It allocates next to nothing: a small young generation keeps its isolate's memory small.
      resourceLimits: { maxYoungGenerationSizeMb: 3 },
    });
    this.worker.on('message', onError);
    this.worker.on('error', (err) => onError(String(err)));
    // Never what keeps the process alive (after the listeners: a 'message' listener refs the port).
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /**
   * Closes the thread's connection; the file can be closed or replaced meanwhile. Resolves once
   * the thread is gone, so its connection no longer holds the file's `-wal`/`-shm` (a directory
   * removed right after a close would otherwise race it).
   */
  stop(): Promise<void> {
    // Waiting on an unref'd thread would not keep the process alive: one with nothing else to do
    // (a CLI command closing its runner) would exit silently inside the await.
    this.worker.ref();
    this.worker.postMessage('stop');
    return this.exited;
  }
}

/**
 * How often the thread checkpoints. Often, so each checkpoint is small: its fsyncs make the file
 * system commit its journal, and the event loop's own WAL appends wait on that commit (a write
 * updates the file's times). At 200 ms, under the write bench (~100 MB of WAL a second), one
 * read-model COMMIT a second or so took 20–40 ms (the statements before it < 1 ms); at 50 ms
 * under 23 ms: the requests' p99 29.8 → 23.5 ms (mean of six runs each, alternating), the same
 * throughput and CPU. With nothing to copy, a checkpoint returns at once.
 */
const CHECKPOINT_INTERVAL_MS = 50;

/** The owner's connection checkpoints by itself only past this many WAL pages (~64 MB): the safety net. */
const SAFETY_NET_AUTOCHECKPOINT_PAGES = 16_384;

/**
 * Moves a live WAL database's checkpoints off the event loop: `db` (the owner's connection, in
 * WAL mode) checkpoints by itself only past the safety net, and a thread checkpoints `file`
 * meanwhile. Stop the returned thread before or after closing `db`.
 */
export function checkpointOffTheLoop(
  db: Database.Database,
  file: string,
  onError: (message: string) => void,
): WalCheckpointer {
  db.pragma(`wal_autocheckpoint = ${SAFETY_NET_AUTOCHECKPOINT_PAGES}`);
  return new WalCheckpointer(file, onError);
}
