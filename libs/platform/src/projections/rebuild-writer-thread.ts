import type Database from 'better-sqlite3';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';

/**
 * The thread's whole program, plain JavaScript (it runs the same from the TypeScript sources and
 * from the build). It owns a bulk rebuild's connection while the rebuild loads: each message is
 * a batch's statements (as `BatchEncoder` writes them), run in one transaction that a `commit`
 * message ends. A `read` message answers on the
 * replies port and wakes the waiting owner through the shared flag. After a failure it runs
 * nothing more and answers every message with the failure.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
// Its name in top -H, ps -L and perf (Linux; elsewhere unnamed): docs/operations.md, "Threads".
try { require('node:fs').writeFileSync('/proc/thread-self/comm', 'rebuild-writer'); } catch {}
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('journal_mode = OFF');
db.pragma('synchronous = OFF');
// 64 MiB: its writes go mostly to the tables' right edges; 256 MiB here cost ~270 MB more peak
// RSS at 1M events and saved no CPU.
db.pragma('cache_size = -65536');
db.pragma('busy_timeout = 5000');
const flag = new Int32Array(workerData.flag);
const replies = workerData.replies;
const texts = [];
const statements = [];
let failure = null;
/** Batches run since the last COMMIT. */
let uncommitted = 0;
function statement(id) {
  return statements[id] || (statements[id] = db.prepare(texts[id]));
}
/** An encoded batch's values in order: each call takes the next of the given kind. */
function valuesOf(batch) {
  const { numbers, strings } = batch;
  let number = 0;
  let string = 0;
  return (kind) =>
    kind === 1 ? strings[string++] : kind === 2 ? numbers[number++] : kind === 3 ? BigInt(strings[string++]) : null;
}
/** Runs each statement of an encoded batch (as BatchEncoder writes it), in order. */
function run(batch) {
  if (!db.inTransaction) db.exec('BEGIN IMMEDIATE');
  const { statements: list, count, kinds } = batch;
  const next = valuesOf(batch);
  let value = 0;
  for (let i = 0; i < count; i += 2) {
    const id = list[i];
    const values = list[i + 1];
    if (values < 0) {
      db.exec(texts[id]);
      continue;
    }
    const params = new Array(values);
    for (let j = 0; j < values; j++, value++) params[j] = next(kinds[value]);
    // Spread, not the array: better-sqlite3 binds arguments directly but reads an array item by
    // item through V8's API (~15 % of a row's bind, ~6 % of this thread in a rebuild).
    statement(id).run(...params);
  }
}
/** The one statement of an encoded read, and its values. */
function readOf(batch) {
  const { statements: list, kinds } = batch;
  const next = valuesOf(batch);
  return [list[0], Array.from({ length: list[1] }, (_, j) => next(kinds[j]))];
}
parentPort.on('message', (message) => {
  if (message.close) {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
    parentPort.close();
    replies.close();
    return;
  }
  for (const text of message.texts) texts.push(text);
  if (message.rollback) {
    if (db.inTransaction) db.exec('ROLLBACK');
    uncommitted = 0;
    return;
  }
  let result;
  if (failure === null) {
    try {
      run(message.batch);
      if (message.read) {
        const [id, params] = readOf(message.read.params);
        result = message.read.all ? statement(id).all(params) : statement(id).get(params);
      }
      // A commit writes every page the transaction dirtied, and a page at a table's right edge
      // is dirtied by every batch: committed every few batches, each such page is written once for
      // all of them. Nothing reads the scratch file meanwhile; a failure fails the whole rebuild.
      if (message.commit && (message.final || ++uncommitted >= workerData.batchesPerCommit)) {
        if (db.inTransaction) db.exec('COMMIT');
        uncommitted = 0;
      }
    } catch (err) {
      failure = String(err && err.stack ? err.stack : err);
      if (db.inTransaction) db.exec('ROLLBACK');
    }
  }
  if (message.read) {
    replies.postMessage(failure === null ? { result } : { failure });
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  }
  if (message.commit) parentPort.postMessage({ failure });
});
`;

/**
 * A batch's statements as the thread takes them, in few objects, since a structured clone costs
 * per value: the numbers in one typed array (transferred), the strings in one array (a string
 * clones at ~60 ns, less than cutting it out of one long text on both sides, measured), and per
 * value its kind (0 null, 1 string, 2 number, 3 bigint as its digits). `statements` holds each
 * statement's id and value count (-1: run as `exec`), `count` entries of it.
 */
interface EncodedBatch {
  readonly statements: Int32Array<ArrayBuffer>;
  readonly count: number;
  readonly kinds: Uint8Array<ArrayBuffer>;
  readonly numbers: Float64Array<ArrayBuffer>;
  readonly strings: string[];
}

/** A typed array's next size: twice, so that filling it costs O(1) per value. */
function grown<T extends Int32Array<ArrayBuffer> | Uint8Array<ArrayBuffer> | Float64Array<ArrayBuffer>>(
  array: T,
  make: (length: number) => T,
): T {
  const bigger = make(array.length * 2);
  bigger.set(array);
  return bigger;
}

class BatchEncoder {
  // Written in place, then handed over whole (transferred); the next batch starts at the size the last one needed.
  private statements = new Int32Array(256);
  private count = 0;
  private kinds = new Uint8Array(4096);
  private kindCount = 0;
  private numbers = new Float64Array(1024);
  private numberCount = 0;
  private strings: string[] = [];

  get empty(): boolean {
    return this.count === 0;
  }

  exec(id: number): void {
    this.statement(id, -1);
  }

  /** A statement and its values (better-sqlite3 flattens arrays among them). */
  run(id: number, args: readonly unknown[]): void {
    const at = this.count;
    this.statement(id, 0);
    let count = 0;
    for (const arg of args) {
      if (Array.isArray(arg)) {
        for (const value of arg as unknown[]) this.value(value);
        count += (arg as unknown[]).length;
      } else {
        this.value(arg);
        count++;
      }
    }
    this.statements[at + 1] = count;
  }

  take(): EncodedBatch {
    const batch: EncodedBatch = {
      statements: this.statements,
      count: this.count,
      kinds: this.kinds,
      numbers: this.numbers,
      strings: this.strings,
    };
    this.statements = new Int32Array(this.statements.length);
    this.count = 0;
    this.kinds = new Uint8Array(this.kinds.length);
    this.kindCount = 0;
    this.numbers = new Float64Array(this.numbers.length);
    this.numberCount = 0;
    this.strings = [];
    return batch;
  }

  private statement(id: number, values: number): void {
    if (this.count + 2 > this.statements.length) this.statements = grown(this.statements, (n) => new Int32Array(n));
    this.statements[this.count++] = id;
    this.statements[this.count++] = values;
  }

  private kind(kind: number): void {
    if (this.kindCount === this.kinds.length) this.kinds = grown(this.kinds, (n) => new Uint8Array(n));
    this.kinds[this.kindCount++] = kind;
  }

  private value(value: unknown): void {
    switch (typeof value) {
      case 'string':
        this.kind(1);
        this.strings.push(value);
        return;
      case 'number':
        this.kind(2);
        if (this.numberCount === this.numbers.length) this.numbers = grown(this.numbers, (n) => new Float64Array(n));
        this.numbers[this.numberCount++] = value;
        return;
      case 'bigint':
        this.kind(3);
        this.strings.push(value.toString());
        return;
      default:
        if (value === null || value === undefined) {
          // better-sqlite3 binds undefined as NULL too.
          this.kind(0);
          return;
        }
        throw new Error(`A rebuild runs its statements on a thread: cannot bind a ${typeof value} value`);
    }
  }
}

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
    this.worker = new Worker(PROGRAM, {
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
