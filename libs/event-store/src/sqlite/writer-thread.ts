import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ExpectedRevision, StreamMetadata, StreamRevision } from '../event-store.port';
import { EventStoreUnavailableError, StreamDeletedError, WrongExpectedVersionError } from '../errors';
import type { SerializedEvent, WriteOutcome, WriteRequest } from './sqlite-writer';

/** What the writer thread is started with (`workerData`). */
export interface WriterThreadOptions {
  readonly file: string;
  readonly synchronous: 'full' | 'normal';
  readonly maxBatch: number;
}

/** Main → writer: one group of requests (packRequests). Writer → main: its outcomes, in order (packOutcomes). */
export interface WriterCall {
  readonly id: number;
  readonly requests: Packed;
}
export interface WriterAnswer {
  readonly id: number;
  readonly outcomes: Packed;
}

/**
 * What crosses the thread boundary: one flat array of strings and bigints, not an object per
 * request, event and outcome. Structured clone writes every key of every object it copies; the
 * appends' postMessage was ~5 % of the main thread under a burst of deliveries, the flat array
 * costs about a third of it (and its answer is read back without building clone objects).
 */
type Packed = ReadonlyArray<unknown>;

export function packRequests(requests: readonly WriteRequest[]): Packed {
  const packed: unknown[] = [];
  for (const r of requests) {
    if (r.op === 'append') {
      packed.push('a', r.streamId, r.expected, r.events.length);
      for (const e of r.events) packed.push(e.id, e.type, e.data, e.metadata);
    } else if (r.op === 'metadata') packed.push('m', r.streamId, r.metadata);
    else if (r.op === 'truncate') packed.push('r', r.streamId, r.before);
    else packed.push(r.op === 'tombstone' ? 't' : 'd', r.streamId);
  }
  return packed;
}

/** Reads a packed array front to back: `next` takes the next value, as the packer pushed it. */
function reader(packed: Packed): { more: () => boolean; next: <T>() => T } {
  let i = 0;
  return { more: () => i < packed.length, next: <T>() => packed[i++] as T };
}

export function unpackRequests(packed: Packed): WriteRequest[] {
  const requests: WriteRequest[] = [];
  const { more, next } = reader(packed);
  while (more()) {
    const op = next<string>();
    const streamId = next<string>();
    if (op === 'm') requests.push({ op: 'metadata', streamId, metadata: next<StreamMetadata>() });
    else if (op === 'd') requests.push({ op: 'delete', streamId });
    else if (op === 't') requests.push({ op: 'tombstone', streamId });
    else if (op === 'r') requests.push({ op: 'truncate', streamId, before: next<bigint>() });
    else {
      const expected = next<ExpectedRevision>();
      const events: SerializedEvent[] = [];
      for (let n = next<number>(); n > 0; n--) {
        events.push({ id: next<string>(), type: next<string>(), data: next<string>(), metadata: next<string>() });
      }
      requests.push({ op: 'append', streamId, expected, events });
    }
  }
  return requests;
}

export function packOutcomes(outcomes: readonly WriteOutcome[]): Packed {
  const packed: unknown[] = [];
  for (const o of outcomes) {
    if (!o.ok) packed.push('e', encodeFailure(o));
    else if (!o.result) packed.push('k');
    else {
      const { nextExpectedRevision, position } = o.result;
      if (o.appended)
        packed.push('a', nextExpectedRevision, position.commit, position.prepare, o.appended.first, o.appended.created);
      else packed.push('r', nextExpectedRevision, position.commit, position.prepare);
    }
  }
  return packed;
}

export function unpackOutcomes(packed: Packed): WriteOutcome[] {
  const outcomes: WriteOutcome[] = [];
  const { more, next } = reader(packed);
  while (more()) {
    const kind = next<string>();
    if (kind === 'e') outcomes.push(decodeFailure(next<EncodedFailure>()));
    else if (kind === 'k') outcomes.push({ ok: true });
    else {
      const result = {
        nextExpectedRevision: next<bigint>(),
        position: { commit: next<bigint>(), prepare: next<bigint>() },
      };
      if (kind === 'r') outcomes.push({ ok: true, result });
      else outcomes.push({ ok: true, result, appended: { first: next<bigint>(), created: next<number>() } });
    }
  }
  return outcomes;
}

/** A failed outcome, as it crosses the thread boundary (structured clone keeps no error classes). */
export interface EncodedFailure {
  readonly ok: false;
  readonly error:
    | {
        readonly kind: 'wrong-expected-version';
        readonly streamId: string;
        readonly expected: ExpectedRevision;
        readonly actual: StreamRevision | 'no_stream';
      }
    | { readonly kind: 'unavailable'; readonly message: string; readonly cause: string }
    | { readonly kind: 'stream-deleted'; readonly streamId: string }
    | { readonly kind: 'other'; readonly name: string; readonly message: string };
}

type WriteFailure = Extract<WriteOutcome, { ok: false }>;

export function encodeFailure({ error }: WriteFailure): EncodedFailure {
  if (error instanceof WrongExpectedVersionError) {
    const { streamId, expected, actual } = error;
    return { ok: false, error: { kind: 'wrong-expected-version', streamId, expected, actual } };
  }
  if (error instanceof StreamDeletedError)
    return { ok: false, error: { kind: 'stream-deleted', streamId: error.streamId } };
  if (error instanceof EventStoreUnavailableError) {
    return { ok: false, error: { kind: 'unavailable', message: error.message, cause: String(error.cause) } };
  }
  const { name, message } = error instanceof Error ? error : new Error(String(error));
  return { ok: false, error: { kind: 'other', name, message } };
}

export function decodeFailure({ error: e }: EncodedFailure): WriteFailure {
  switch (e.kind) {
    case 'wrong-expected-version':
      return { ok: false, error: new WrongExpectedVersionError(e.streamId, e.expected, e.actual) };
    case 'unavailable':
      return { ok: false, error: new EventStoreUnavailableError(e.message, { cause: new Error(e.cause) }) };
    case 'stream-deleted':
      return { ok: false, error: new StreamDeletedError(e.streamId) };
    case 'other':
      return { ok: false, error: Object.assign(new Error(e.message), { name: e.name }) };
  }
}

/**
 * The event log's writer on its own thread, so commits and their fsyncs leave the event loop.
 * `send` resolves once the writer has committed (durable) and answered. If the thread dies,
 * every unanswered call rejects with EventStoreUnavailableError — its outcome is unknown, so it
 * is never acknowledged — and the next `send` starts a new thread.
 */
export class WriterThread {
  private worker: Worker | null = null;
  private booted: Promise<void> = Promise.resolve();
  private nextId = 0;
  /** Set by close(): from then on the thread stays ref'd until it exits. */
  private closing = false;
  private readonly calls = new Map<number, { resolve(outcomes: WriteOutcome[]): void; reject(err: Error): void }>();

  constructor(private readonly options: WriterThreadOptions) {
    // Started now, not at the first append: booting a thread takes a while (longer still from
    // the TypeScript sources), and the first caller should not wait for it.
    this.worker = this.start();
  }

  send(requests: readonly WriteRequest[]): Promise<WriteOutcome[]> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<WriteOutcome[]>((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      // Unanswered calls keep the process alive; an idle writer does not.
      if (this.calls.size === 1) worker.ref();
      worker.postMessage({ id, requests: packRequests(requests) } satisfies WriterCall);
    });
  }

  /** Resolves once the thread has opened the database; rejects if it could not. */
  ready(): Promise<void> {
    return this.booted;
  }

  /** Resolves once every call sent so far is answered and the thread has closed its database. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.closing = true;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // Idle, the thread is unref'd: waiting for it must keep the process alive.
    worker.ref();
    worker.postMessage('close');
    await exited;
  }

  // A boot or an answer arriving after close() must not unref the thread close() waits for.
  private unrefIfIdle(worker: Worker): void {
    if (this.calls.size === 0 && !this.closing) worker.unref();
  }

  private start(): Worker {
    // Ref'd while it boots (someone may be waiting on ready()), unref'd once idle.
    const worker = spawnWriter(this.options);
    this.closing = false;
    this.booted = new Promise<void>((resolve, reject) => {
      worker.once('message', () => {
        this.unrefIfIdle(worker);
        resolve();
      });
      worker.once('exit', () =>
        reject(new EventStoreUnavailableError("The event store's writer thread did not start")),
      );
    });
    // Observed here, so a writer that never starts is not also an unhandled rejection.
    this.booted.catch(() => {});
    worker.on('message', (answer: WriterAnswer | 'ready') => {
      if (answer === 'ready') return;
      const call = this.calls.get(answer.id);
      this.calls.delete(answer.id);
      this.unrefIfIdle(worker);
      call?.resolve(unpackOutcomes(answer.outcomes));
    });
    let failure: Error | undefined;
    worker.on('error', (err) => (failure = err));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      if (this.calls.size === 0) return;
      const error = new EventStoreUnavailableError(
        `The event store's writer thread stopped (exit code ${code}); the outcome of these appends is unknown`,
        { cause: failure },
      );
      for (const call of this.calls.values()) call.reject(error);
      this.calls.clear();
    });
    return worker;
  }
}

/**
 * Built, the writer is `sqlite-writer.worker.js` next to this file. From the TypeScript sources
 * (jest's swc transform, the bench's @swc-node/register) the thread does not inherit the
 * parent's hook: it registers @swc-node/register itself, then loads the `.ts` entry.
 */
function spawnWriter(options: WriterThreadOptions): Worker {
  const ext = extname(__filename);
  const entry = join(__dirname, `sqlite-writer.worker${ext}`);
  if (ext !== '.ts') return new Worker(entry, { workerData: options, resourceLimits: WRITER_LIMITS });
  const hook = require.resolve('@swc-node/register');
  return new Worker(`require(${JSON.stringify(hook)}); require(${JSON.stringify(entry)});`, {
    eval: true,
    workerData: options,
    resourceLimits: WRITER_LIMITS,
  });
}

/**
 * The writer's young generation: everything it allocates dies with its batch, and V8's default
 * lets each isolate's semi-spaces grow to 16 MB in a burst of appends (resident memory, issue
 * #16). Its old generation keeps the process's limit: a batch may carry many 15 MB bodies.
 */
const WRITER_LIMITS = { maxYoungGenerationSizeMb: 6 };
