/**
 * Catch-up subscriptions as EventStoreDB 23.10 runs them (Services/Transport/Grpc/
 * Enumerators.AllSubscription*.cs, Enumerators.StreamSubscription.cs, SubscriptionsService).
 *
 * One cursor into the in-memory log serves catch-up and live, so nothing is lost or repeated at
 * the seam however long catch-up takes and whatever is appended meanwhile. Every `call.write()`
 * that reports backpressure is awaited before the next one.
 *
 * - Catch-up reads pages like the server: up to ReadBatchSize (32) matching events, and for a
 *   filtered `$all` subscription at most `maxSearchWindow` events considered per page. The
 *   checkpoint counter adds up events considered; when a page that is not the last one brings it
 *   to `checkpointIntervalMultiplier × window`, a checkpoint goes out at the last event the page
 *   delivered, or at the page's start (commit position of its first event, prepare 0) if none.
 * - Live: each new event counts one; the checkpoint goes out at the event that completes the
 *   interval (delivered or not). `caught_up` marks the switch.
 * - A live consumer that does not read is dropped as the server drops it: its two 32-message
 *   channels full, the next event fails the call with ABORTED "Consumer too slow…", and the
 *   client has to resubscribe. The server never holds more than that for it.
 * - Stream subscriptions honour `$tb`/`$maxCount`/`$maxAge` while catching up (they read the
 *   stream) but not live; a missing or soft-deleted stream keeps them in catch-up (no
 *   `caught_up`) until it has events; a tombstone is delivered, then the call fails.
 */
import { randomUUID } from 'node:crypto';
import type { LogStore, StoredEvent } from './log-store';
import { Code, grpc, pb, type GrpcModule, type StreamsPb } from './proto';

export type ReadCall = GrpcModule.ServerWritableStream<StreamsPb.ReadReq, StreamsPb.ReadResp>;
type ReadOptions = StreamsPb.ReadReq.Options;
type ToResp = (e: StoredEvent) => StreamsPb.ReadResp;

/** Enumerators.ReadBatchSize: page size and default filter window. */
export const READ_BATCH_SIZE = 32;
/** Enumerators.MaxLiveEventBufferCount, for each of the two live channels; +2 in hand. */
const LIVE_BUFFER = 2 * 32 + 2;
const TOO_SLOW = 'Operation timed out: Consumer too slow to handle event while live. Client resubscription required.';

interface Filter {
  matches(e: StoredEvent): boolean;
  window: number;
  checkpointInterval: number;
}

/** The server's filter strategies: a non-empty regex wins over prefixes; regex is a search. */
export function compileFilter(filter: StreamsPb.ReadReq.Options.FilterOptions): Filter {
  const onStream = filter.hasStreamIdentifier();
  const expression = onStream ? filter.getStreamIdentifier() : filter.getEventType();
  const prefixes = expression?.getPrefixList() ?? [];
  const regexText = expression?.getRegex() ?? '';
  const regex = regexText !== '' ? new RegExp(regexText) : null;
  const window = filter.hasMax() ? filter.getMax() : READ_BATCH_SIZE;
  // The server refuses a multiplier of 0 (ArgumentOutOfRange); the client always sends ≥ 1.
  const multiplier = Math.max(1, filter.getCheckpointintervalmultiplier());
  return {
    window: Math.max(1, window),
    checkpointInterval: multiplier * Math.max(1, window),
    matches(e) {
      const subject = onStream ? e.streamId : e.type;
      return regex ? regex.test(subject) : prefixes.some((p) => subject.startsWith(p));
    },
  };
}

/** Writes honouring backpressure; knows when the call is gone. */
class Outbox {
  done = false;
  blocked = false;
  private readonly closers: Array<() => void> = [];

  constructor(private readonly call: ReadCall) {
    const finish = () => this.close();
    call.on('cancelled', finish);
    call.on('close', finish);
    call.on('error', finish);
  }

  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  close(): void {
    if (this.done) return;
    this.done = true;
    for (const fn of this.closers.splice(0)) fn();
  }

  /** false once the call is over. */
  async send(resp: StreamsPb.ReadResp): Promise<boolean> {
    if (this.done) return false;
    if (!this.call.write(resp)) {
      this.blocked = true;
      await drained(this.call);
      this.blocked = false;
    }
    return !this.done;
  }

  fail(error: Partial<GrpcModule.StatusObject>): void {
    if (this.done) return;
    this.close();
    this.call.emit('error', error);
  }
}

function confirmation(): StreamsPb.ReadResp {
  return new pb.ReadResp().setConfirmation(new pb.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID()));
}

function caughtUp(): StreamsPb.ReadResp {
  return new pb.ReadResp().setCaughtUp(new pb.ReadResp.CaughtUp());
}

function checkpoint(commit: bigint, prepare: bigint): StreamsPb.ReadResp {
  return new pb.ReadResp().setCheckpoint(
    new pb.ReadResp.Checkpoint().setCommitPosition(String(commit)).setPreparePosition(String(prepare)),
  );
}

/**
 * Drives a subscription: `step()` sends what comes next and says whether there was anything;
 * re-run on every append. Single-flight.
 */
function pump(store: LogStore, out: Outbox, step: () => Promise<boolean>, onAppend: () => void): () => void {
  let running = false;
  let again = false;
  const run = async () => {
    if (out.done) return;
    if (running) {
      again = true; // an append between the last step and the end of the loop must not be missed
      onAppend();
      return;
    }
    running = true;
    try {
      do {
        again = false;
        while (!out.done && (await step()));
      } while (again && !out.done);
    } finally {
      running = false;
    }
  };
  store.listeners.add(run);
  out.onClose(() => store.listeners.delete(run));
  return () => void run();
}

export function subscribeToAll(store: LogStore, call: ReadCall, options: ReadOptions, toResp: ToResp): void {
  const out = new Outbox(call);
  const all = options.getAll()!;
  const filter = options.hasFilter() ? compileFilter(options.getFilter()!) : null;
  const log = store.log;
  let cursor: number;
  let live = false;
  /** Where the first page starts when it is not an event's position: (0,0) from the start. */
  let firstPageStart: bigint | null = null;
  if (all.hasEnd()) {
    cursor = log.length;
    live = true;
  } else if (all.hasPosition()) {
    // The server reads one event at or after the position and starts after it (even when the
    // position is not exactly that event's).
    const p = all.getPosition()!;
    const at = store.indexAtOrAfter(BigInt(p.getCommitPosition()), BigInt(p.getPreparePosition()));
    cursor = Math.min(at + 1, log.length);
  } else {
    cursor = 0;
    firstPageStart = 0n;
  }
  let counter = 0;

  // Live backlog the server would be holding for a consumer that is not reading: the messages
  // for log records in [cursor, scan), counted ahead with a shadow of the checkpoint counter.
  let scan = cursor;
  let shadow = 0;
  let pending = 0;
  const checkBacklog = () => {
    if (!live || !out.blocked) return;
    for (; scan < log.length; scan++) {
      if (!filter || filter.matches(log[scan])) pending++;
      if (filter && ++shadow >= filter.checkpointInterval) {
        shadow = 0;
        pending++;
      }
    }
    if (pending > LIVE_BUFFER) out.fail({ code: Code.ABORTED, details: TOO_SLOW });
  };

  const sendAll = async (messages: StreamsPb.ReadResp[]) => {
    for (const m of messages) if (!(await out.send(m))) return false;
    return true;
  };

  const catchUpPage = async (): Promise<boolean> => {
    const start = firstPageStart ?? (cursor < log.length ? log[cursor].position : store.endPosition);
    const startPrepare = 0n;
    firstPageStart = null;
    const window = filter ? filter.window : Infinity;
    const matched: StoredEvent[] = [];
    let considered = 0;
    let endOfStream = false;
    while (matched.length < READ_BATCH_SIZE && considered < window) {
      if (cursor >= log.length) {
        endOfStream = true;
        break;
      }
      const e = log[cursor++];
      considered++;
      if (!filter || filter.matches(e)) matched.push(e);
    }
    const messages = matched.map(toResp);
    if (filter) {
      counter += considered;
      if (!endOfStream && counter >= filter.checkpointInterval) {
        counter %= filter.checkpointInterval;
        const last = matched[matched.length - 1];
        messages.push(last ? checkpoint(last.position, last.position) : checkpoint(start, startPrepare));
      }
    }
    if (!(await sendAll(messages))) return false;
    if (endOfStream) {
      live = true;
      scan = cursor;
      shadow = counter;
      pending = 0;
      return out.send(caughtUp());
    }
    return true;
  };

  const liveEvent = async (): Promise<boolean> => {
    if (cursor >= log.length) return false;
    const i = cursor++;
    const e = log[i];
    const messages: StreamsPb.ReadResp[] = [];
    if (!filter || filter.matches(e)) messages.push(toResp(e));
    if (filter && ++counter >= filter.checkpointInterval) {
      counter = 0;
      messages.push(checkpoint(e.position, e.position));
    }
    if (i < scan) pending -= messages.length;
    else {
      scan = i + 1;
      shadow = counter;
      pending = 0;
    }
    return sendAll(messages);
  };

  const kick = pump(store, out, () => (live ? liveEvent() : catchUpPage()), checkBacklog);
  call.write(confirmation());
  if (live) call.write(caughtUp());
  kick();
}

export function subscribeToStream(store: LogStore, call: ReadCall, options: ReadOptions, toResp: ToResp): void {
  const out = new Outbox(call);
  const streamOptions = options.getStream();
  const identifier = streamOptions?.getStreamIdentifier();
  if (!streamOptions || !identifier) {
    out.fail({ code: Code.INVALID_ARGUMENT, details: 'Missing stream options' });
    return;
  }
  const streamId = Buffer.from(identifier.getStreamName_asU8()).toString('utf8');
  let live = false;
  let next: bigint;
  if (streamOptions.hasEnd()) {
    live = true;
    next = BigInt(store.streamEvents(streamId).length);
  } else {
    next = streamOptions.hasRevision() ? BigInt(streamOptions.getRevision()) + 1n : 0n;
  }
  let tombstoneSent = false;

  const catchUpPage = async (): Promise<boolean> => {
    const view = store.streamView(streamId);
    if (view.kind === 'deleted') {
      out.fail(streamDeletedError(streamId));
      return false;
    }
    // Not there (or soft-deleted): the server polls the stream until it is.
    if (view.kind === 'no_stream') return false;
    const page: StreamsPb.ReadResp[] = [];
    if (next < view.min) next = view.min;
    while (page.length < READ_BATCH_SIZE && next <= view.last) {
      const e = view.events[Number(next++)];
      if (view.visible(e)) page.push(toResp(e));
    }
    for (const m of page) if (!(await out.send(m))) return false;
    if (next > view.last) {
      live = true;
      return out.send(caughtUp());
    }
    return true;
  };

  const liveEvent = async (): Promise<boolean> => {
    // Live events are not filtered by metadata: the server forwards whatever is appended.
    const events = store.streamEvents(streamId);
    if (next < BigInt(events.length)) return out.send(toResp(events[Number(next++)]));
    const tombstone = store.tombstoneOf(streamId);
    if (tombstone && !tombstoneSent) {
      // The server forwards the `$streamDeleted` event, then fails the call.
      tombstoneSent = true;
      if (await out.send(toResp(tombstone))) out.fail(streamDeletedError(streamId));
    }
    return false;
  };

  const checkBacklog = () => {
    if (!live || !out.blocked) return;
    const pending = BigInt(store.streamEvents(streamId).length) - next;
    if (pending > BigInt(LIVE_BUFFER)) out.fail({ code: Code.ABORTED, details: TOO_SLOW });
  };

  const kick = pump(store, out, () => (live ? liveEvent() : catchUpPage()), checkBacklog);
  call.write(confirmation());
  if (live) call.write(caughtUp());
  kick();
}

export function streamDeletedError(streamId: string): Partial<GrpcModule.StatusObject> {
  const metadata = new grpc.Metadata();
  metadata.set('exception', 'stream-deleted');
  metadata.set('stream-name', streamId);
  return { code: Code.FAILED_PRECONDITION, details: `Event stream '${streamId}' is deleted.`, metadata };
}

export function drained(call: ReadCall): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      call.off('drain', done);
      call.off('cancelled', done);
      call.off('close', done);
      resolve();
    };
    call.on('drain', done);
    call.on('cancelled', done);
    call.on('close', done);
  });
}
