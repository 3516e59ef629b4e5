import type Database from 'better-sqlite3';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { BatchEncoder, type EncodedBatch } from './batch-encoder';
import { REBUILD_WRITER_PROGRAM } from './rebuild-writer-program';

/** Batches to a transaction on the thread (each is one on the main thread's side). */
const BATCHES_PER_COMMIT = 8;

interface Message {
  readonly texts: string[];
  readonly batch: EncodedBatch;
  readonly commit?: boolean;
  /** With `commit`: COMMIT now, whatever the count of batches since the last. */
  readonly final?: boolean;
  readonly rollback?: boolean;
  readonly read?: { readonly id: number; readonly params: EncodedBatch };
}

/** What a statement's `run` gives on the recording handle: its figures are not known yet. */
const NO_RUN_RESULT = {
  get changes(): number {
    throw new Error('A rebuild runs its statements on a thread: run() has no result to give');
  },
  get lastInsertRowid(): number {
    throw new Error('A rebuild runs its statements on a thread: run() has no result to give');
  },
};

/**
 * A bulk rebuild's writes on a second thread, so SQLite's work (its inserts, upserts and commits)
 * runs beside the main thread's reading, parsing and computing of the next batch. `db` stands in
 * for the read database within a batch: its statements' `run` records the statement and values
 * for the thread, which runs the batches in order, several to a transaction, as far behind as
 * the owner lets it (`settle`).
 * A `get`/`all` is answered by the thread after everything recorded before it, the main thread
 * waiting: correct at any point, but it gives up the overlap, so projections avoid reads in a
 * rebuild. A failure on the thread fails the rebuild at the next `settle` or `close`.
 */
export class RebuildWriterThread {
  /** The recording handle: prepare (run, get, all) and exec, as far as projections use them. */
  readonly db: Database.Database;
  private readonly worker: Worker;
  private readonly replies: MessagePort;
  private readonly flag: Int32Array;
  private readonly exited: Promise<void>;
  private readonly ids = new Map<string, number>();
  private texts: string[] = [];
  private readonly encoder = new BatchEncoder();
  private inBatch = false;
  private outstanding = 0;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;
  private closing: Promise<void> | null = null;

  constructor(file: string) {
    const shared = new SharedArrayBuffer(4);
    this.flag = new Int32Array(shared);
    const { port1, port2 } = new MessageChannel();
    this.replies = port1;
    this.worker = new Worker(REBUILD_WRITER_PROGRAM, {
      eval: true,
      workerData: {
        file,
        driver: require.resolve('better-sqlite3'),
        flag: shared,
        replies: port2,
        batchesPerCommit: BATCHES_PER_COMMIT,
      },
      transferList: [port2],
      // Plain JavaScript: none of the parent's preloads (a TypeScript loader costs ~0.3 s to start).
      execArgv: [],
    });
    this.worker.on('message', (message: { failure: string | null }) => {
      this.outstanding--;
      if (message.failure !== null) this.failure ??= new Error(`Rebuild writer: ${message.failure}`);
      this.wake?.();
    });
    this.worker.on('error', (err) => {
      this.failure ??= err;
      this.wake?.();
    });
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', () => {
        this.failure ??= new Error('Rebuild writer thread exited');
        this.wake?.();
        resolve();
      }),
    );
    const recording = {
      prepare: (sql: string) => this.statement(this.idOf(sql)),
      exec: (sql: string) => {
        this.encoder.exec(this.idOf(sql));
        return recording;
      },
    };
    this.db = recording as unknown as Database.Database;
  }

  /** Starts a batch: what the recording handle runs until `commit` is one transaction. */
  begin(): void {
    this.throwIfFailed();
    this.inBatch = true;
  }

  /** Hands the batch to the thread (one message), without waiting for it. */
  commit(): void {
    this.inBatch = false;
    this.outstanding++;
    this.post({ texts: this.takeTexts(), batch: this.encoder.take(), commit: true });
  }

  /** Drops the batch: what a read already sent to the thread is rolled back there. */
  rollback(): void {
    this.inBatch = false;
    this.post({ texts: this.takeTexts(), batch: this.encoder.take(), rollback: true });
  }

  /** Resolves once at most `inFlight` batches are left on the thread; throws its failure. */
  async settle(inFlight: number): Promise<void> {
    while (this.failure === null && this.outstanding > inFlight) {
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    this.throwIfFailed();
  }

  /**
   * Waits for every batch and commits them (`commit`), or drops what is not committed yet; then
   * closes the thread's connection. Throws a failure of the thread.
   */
  close(commit = true): Promise<void> {
    return (this.closing ??= (async () => {
      try {
        if (commit && this.failure === null) {
          this.outstanding++;
          this.post({ texts: this.takeTexts(), batch: this.encoder.take(), commit: true, final: true });
        }
        await this.settle(0);
      } finally {
        this.worker.postMessage({ close: true });
        await this.exited;
        this.replies.close();
      }
    })());
  }

  private statement(id: number) {
    return {
      run: (...args: unknown[]) => {
        if (!this.inBatch) throw new Error('A rebuild writes only within a batch');
        this.encoder.run(id, args);
        return NO_RUN_RESULT;
      },
      get: (...args: unknown[]) => this.read(id, args, false),
      all: (...args: unknown[]) => this.read(id, args, true),
    };
  }

  /** Everything recorded so far, then the read, on the thread; the main thread waits for its answer. */
  private read(id: number, args: readonly unknown[], all: boolean): unknown {
    this.throwIfFailed();
    const params = new BatchEncoder();
    params.run(id, args);
    Atomics.store(this.flag, 0, 0);
    this.worker.postMessage({
      texts: this.takeTexts(),
      batch: this.encoder.take(),
      read: { all, params: params.take() },
    });
    // A lost thread would leave the wait unanswered: a minute is far past any batch's work.
    if (Atomics.wait(this.flag, 0, 0, 60_000) === 'timed-out') throw new Error('Rebuild writer thread did not answer');
    const reply = receiveMessageOnPort(this.replies)?.message as { result?: unknown; failure?: string } | undefined;
    if (!reply) throw new Error('Rebuild writer thread gave no answer');
    if (reply.failure !== undefined) throw (this.failure ??= new Error(`Rebuild writer: ${reply.failure}`));
    return reply.result;
  }

  private post(message: Message): void {
    const { statements, kinds, numbers } = message.batch;
    this.worker.postMessage(message, [statements.buffer, kinds.buffer, numbers.buffer]);
  }

  private idOf(sql: string): number {
    let id = this.ids.get(sql);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(sql, id);
      this.texts.push(sql);
    }
    return id;
  }

  private takeTexts(): string[] {
    const texts = this.texts;
    this.texts = [];
    return texts;
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}
