/**
 * Catch-up subscriptions as EventStoreDB 24.10 runs them (Services/Transport/Enumerators/
 * Enumerator.AllSubscription*.cs, Enumerator.StreamSubscription.cs, SubscriptionsService):
 *
 * - The live feed is registered first, into a 32-entry channel that drops its oldest entry when
 *   full; entries carry sequence numbers. Then confirmation, then catch-up from the log in pages,
 *   then live. Live entries at or before the last thing sent are skipped; a gap in the sequence
 *   (the consumer was too slow and entries were dropped) sends the subscription back to
 *   catch-up from the log, so a slow consumer loses nothing and the server holds at most the 32
 *   entries. Each switch to live sends `caught_up` again ("fell behind" is not sent to clients).
 * - Every message waits for `call.write()` backpressure, catch-up and live alike.
 * - Filtered `$all`: pages of at most 32 matches and `maxSearchWindow` (default 32) events
 *   considered; the first page starts at the subscription's position itself (inclusive), later
 *   ones at the next record's commit position with prepare 0. When a page that is not the last
 *   brings the count of events considered to `checkpointIntervalMultiplier × window`, a
 *   checkpoint goes out at the later of the last event sent and the page's start; reaching the
 *   end sends one more the same way (from `start` with nothing sent: (0,0)). Live, the counter
 *   counts every record appended since the subscription began and checkpoints at the record that
 *   completes the interval. A checkpoint not after the previous one is not sent.
 *
 * Versions: this is the release/v24.10 branch as of 24.10.5. 24.10.0–24.10.4 sent the
 * end-of-catch-up checkpoint from `start` with nothing sent as ulong.MaxValue (End), after which
 * no checkpoint is "after" and none is sent (KDB-710; `endCheckpointBeforeKdb710`); see README.md.
 * - Stream subscriptions: catch-up reads the stream (so `$tb`/`$maxCount`/`$maxAge` apply, and a
 *   missing or soft-deleted stream goes straight to live); live forwards whatever is appended;
 *   a tombstone is forwarded, then the call fails; a tombstoned stream fails at once.
 */
import { randomUUID } from 'node:crypto';
import { DELETED_STREAM, type LogStore, type StoredEvent } from './log-store';
import { Code, grpc, pb, type GrpcModule, type StreamsPb } from './proto';

export type ReadCall = GrpcModule.ServerWritableStream<StreamsPb.ReadReq, StreamsPb.ReadResp>;
type ReadOptions = StreamsPb.ReadReq.Options;
type ToResp = (e: StoredEvent) => StreamsPb.ReadResp;

/** Enumerator.ReadBatchSize: page size and default filter window. */
export const READ_BATCH_SIZE = 32;
/** Enumerator.MaxLiveEventBufferCount: the live channel, DropOldest. */
const LIVE_CHANNEL_SIZE = 32;
const TOMBSTONE_TYPE = '$streamDeleted';
const ULONG_MAX = 18446744073709551615n;

/** A TFPos: (commit, prepare); (-1, -1) is "before everything". */
interface TfPos {
  readonly commit: bigint;
  readonly prepare: bigint;
}
const BEFORE_ALL: TfPos = { commit: -1n, prepare: -1n };
const at = (e: StoredEvent): TfPos => ({ commit: e.position, prepare: e.position });
function compare(a: TfPos, b: TfPos): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  return a.prepare === b.prepare ? 0 : a.prepare < b.prepare ? -1 : 1;
}
/** Position.FromInt64: -1 becomes ulong.MaxValue on the wire. */
const wire = (p: TfPos): TfPos => ({
  commit: p.commit === -1n ? ULONG_MAX : p.commit,
  prepare: p.prepare === -1n ? ULONG_MAX : p.prepare,
});

export interface Filter {
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
  const window = Math.max(1, filter.hasMax() ? filter.getMax() : READ_BATCH_SIZE);
  // The server refuses a multiplier of 0 (ArgumentOutOfRange); the client always sends ≥ 1.
  const multiplier = Math.max(1, filter.getCheckpointintervalmultiplier());
  return {
    window,
    checkpointInterval: multiplier * window,
    matches(e) {
      const subject = onStream ? e.streamId : e.type;
      return regex ? regex.test(subject) : prefixes.some((p) => subject.startsWith(p));
    },
  };
}

/**
 * The bounded live channel: the oldest entry goes when a 33rd arrives. Entries are numbered; the
 * reader learns whether an entry follows the one it read before (no entry dropped between).
 */
class LiveChannel<T> {
  private readonly entries: Array<{ seq: number; item: T }> = [];
  private nextSeq = 0;
  private readSeq = 0;
  private wake: (() => void) | null = null;

  push(item: T): void {
    if (this.entries.length >= LIVE_CHANNEL_SIZE) this.entries.shift();
    this.entries.push({ seq: ++this.nextSeq, item });
    this.notify();
  }

  /** The next entry, waiting for one; throws Gone once `closed()` says so. */
  async take(closed: () => boolean): Promise<{ item: T; inSequence: boolean }> {
    while (this.entries.length === 0) {
      if (closed()) throw new Gone();
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
    const { seq, item } = this.entries.shift()!;
    const inSequence = seq === this.readSeq + 1;
    this.readSeq = seq;
    return { item, inSequence };
  }

  notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/** Writes honouring backpressure; knows when the call is gone. */
class Outbox {
  done = false;
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
    if (!this.call.write(resp)) await drained(this.call);
    return !this.done;
  }

  fail(error: Partial<GrpcModule.StatusObject>): void {
    if (this.done) return;
    this.close();
    this.call.emit('error', error);
  }
}

/** Ends the subscription's loop once the call is gone. */
class Gone extends Error {}

/**
 * Registers a live feed on the store: `onRecord` sees every record appended from now on, in
 * order. Returns the feed's channel.
 */
function liveFeed<T>(
  store: LogStore,
  out: Outbox,
  onRecord: (e: StoredEvent, push: (item: T) => void) => void,
): LiveChannel<T> {
  const channel = new LiveChannel<T>();
  let seen = store.log.length;
  const listener = () => {
    for (; seen < store.log.length; seen++) onRecord(store.log[seen], (item) => channel.push(item));
  };
  store.listeners.add(listener);
  out.onClose(() => {
    store.listeners.delete(listener);
    channel.notify();
  });
  return channel;
}

function confirmation(): StreamsPb.ReadResp {
  return new pb.ReadResp().setConfirmation(new pb.ReadResp.SubscriptionConfirmation().setSubscriptionId(randomUUID()));
}

function caughtUp(): StreamsPb.ReadResp {
  return new pb.ReadResp().setCaughtUp(new pb.ReadResp.CaughtUp());
}

type AllLive = { readonly event: StoredEvent } | { readonly checkpoint: TfPos };

export interface AllSubscriptionOptions {
  /**
   * 24.10.0–24.10.4 behaviour (before KDB-710): the end-of-catch-up checkpoint is not raised to
   * the page start, so from `start` with nothing sent it is (-1,-1), sent as ulong.MaxValue.
   */
  readonly endCheckpointBeforeKdb710?: boolean;
}

export function subscribeToAll(
  store: LogStore,
  call: ReadCall,
  options: ReadOptions,
  toResp: ToResp,
  version: AllSubscriptionOptions = {},
): void {
  const out = new Outbox(call);
  const all = options.getAll()!;
  const filter = options.hasFilter() ? compileFilter(options.getFilter()!) : null;
  const log = store.log;

  // SubscribeToLive: the counter for live checkpoints starts at 0 now.
  let liveCounter = 0;
  const live = liveFeed<AllLive>(store, out, (e, push) => {
    if (!filter || filter.matches(e)) push({ event: e });
    if (filter && ++liveCounter >= filter.checkpointInterval) {
      liveCounter = 0;
      push({ checkpoint: at(e) });
    }
  });
  const confirmedAt: TfPos = log.length > 0 ? at(log[log.length - 1]) : BEFORE_ALL;

  let lastEventSent: TfPos | null = null;
  let lastCheckpointSent: TfPos | null = null;
  const send = async (resp: StreamsPb.ReadResp) => {
    if (!(await out.send(resp))) throw new Gone();
  };
  const sendEvent = async (e: StoredEvent) => {
    if (lastEventSent && compare(at(e), lastEventSent) <= 0) return; // "should no longer happen"
    lastEventSent = at(e);
    await send(toResp(e));
  };
  // MoveNextAsync drops a checkpoint that is not after the last one (compared on the wire).
  const sendCheckpoint = async (p: TfPos) => {
    if (compare(p, BEFORE_ALL) === 0 && !version.endCheckpointBeforeKdb710) return; // nothing to report yet
    const w = wire(p);
    if (lastCheckpointSent && compare(w, lastCheckpointSent) <= 0) return;
    lastCheckpointSent = w;
    await send(
      new pb.ReadResp().setCheckpoint(
        new pb.ReadResp.Checkpoint().setCommitPosition(String(w.commit)).setPreparePosition(String(w.prepare)),
      ),
    );
  };

  const catchUp = async (from: TfPos): Promise<TfPos> => {
    let checkpoint = from;
    let counter = 0;
    let pageStart = compare(from, BEFORE_ALL) === 0 ? { commit: 0n, prepare: 0n } : from;
    if (!store.isRecordBoundary(pageStart.commit)) {
      out.fail({ code: Code.INVALID_ARGUMENT, details: 'Trying to read from an invalid position.' });
      throw new Gone();
    }
    let cursor = store.indexAtOrAfter(pageStart.commit, pageStart.prepare);
    const window = filter ? filter.window : Infinity;
    for (;;) {
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
      const currentPos = pageStart;
      if (considered > 0)
        pageStart = { commit: cursor < log.length ? log[cursor].position : store.endPosition, prepare: 0n };
      for (const e of matched) {
        if (compare(at(e), checkpoint) <= 0) continue; // the first page starts at the checkpoint itself
        await sendEvent(e);
        checkpoint = at(e);
      }
      if (!filter) {
        if (endOfStream) return checkpoint;
        continue;
      }
      counter += considered;
      if (endOfStream) {
        // 24.10.5 (KDB-710): never before the page start, so never (-1,-1), which 24.10.0–.4
        // sent as ulong.MaxValue (End).
        if (compare(checkpoint, currentPos) < 0 && !version.endCheckpointBeforeKdb710) checkpoint = currentPos;
        await sendCheckpoint(checkpoint);
        return checkpoint;
      }
      if (counter >= filter.checkpointInterval) {
        counter %= filter.checkpointInterval;
        if (compare(checkpoint, currentPos) < 0) checkpoint = currentPos;
        await sendCheckpoint(checkpoint);
      }
    }
  };

  /** Returns when it fell behind (a gap in the live sequence). */
  const goLive = async (from: TfPos): Promise<TfPos> => {
    let checkpoint = from;
    await send(caughtUp());
    for (;;) {
      const { item, inSequence } = await live.take(() => out.done);
      if ('event' in item && compare(at(item.event), checkpoint) <= 0) continue;
      if ('checkpoint' in item && compare(item.checkpoint, checkpoint) < 0) continue;
      if (!inSequence) {
        if (filter) await sendCheckpoint(checkpoint);
        return checkpoint;
      }
      if ('event' in item) {
        await sendEvent(item.event);
        checkpoint = at(item.event);
      } else {
        await sendCheckpoint(item.checkpoint);
        checkpoint = item.checkpoint;
      }
    }
  };

  void (async () => {
    try {
      await send(confirmation());
      let checkpoint: TfPos;
      if (all.hasEnd()) checkpoint = confirmedAt;
      else if (all.hasPosition()) {
        const p = all.getPosition()!;
        const requested = { commit: BigInt(p.getCommitPosition()), prepare: BigInt(p.getPreparePosition()) };
        // Position(ulong.MaxValue, ulong.MaxValue) is End, whatever way it was asked for.
        checkpoint = requested.commit === ULONG_MAX && requested.prepare === ULONG_MAX ? confirmedAt : requested;
      } else checkpoint = BEFORE_ALL;
      if (compare(checkpoint, confirmedAt) >= 0) checkpoint = await goLive(checkpoint);
      for (;;) checkpoint = await goLive(await catchUp(checkpoint));
    } catch (err) {
      if (!(err instanceof Gone)) throw err;
    }
  })();
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
  const confirmedAt = store.lastEventNumber(streamId);
  // SubscriptionsService refuses to subscribe to a tombstoned stream, whatever the start.
  if (confirmedAt === DELETED_STREAM) {
    out.fail(streamDeletedError(streamId));
    return;
  }
  const live = liveFeed<StoredEvent>(store, out, (e, push) => {
    if (e.streamId === streamId) push(e);
  });

  const send = async (resp: StreamsPb.ReadResp) => {
    if (!(await out.send(resp))) throw new Gone();
  };
  const sendEvent = async (e: StoredEvent) => {
    await send(toResp(e));
    // Sent first, then the call fails.
    if (e.type === TOMBSTONE_TYPE) {
      out.fail(streamDeletedError(streamId));
      throw new Gone();
    }
  };

  const catchUp = async (from: bigint): Promise<bigint> => {
    let checkpoint = from;
    let next = from + 1n;
    for (;;) {
      const view = store.streamView(streamId);
      if (view.kind === 'deleted') {
        out.fail(streamDeletedError(streamId));
        throw new Gone();
      }
      if (view.kind === 'no_stream') return checkpoint;
      if (next < view.min) next = view.min;
      const page: StoredEvent[] = [];
      for (; page.length < READ_BATCH_SIZE && next <= view.last; next++) {
        const e = view.events[Number(next)];
        if (view.visible(e)) page.push(e);
      }
      for (const e of page) {
        await sendEvent(e);
        checkpoint = e.revision;
      }
      if (next > view.last) return checkpoint;
    }
  };

  const goLive = async (from: bigint): Promise<bigint> => {
    let checkpoint = from;
    await send(caughtUp());
    for (;;) {
      const { item, inSequence } = await live.take(() => out.done);
      if (item.revision <= checkpoint) continue;
      if (!inSequence) return checkpoint;
      await sendEvent(item);
      checkpoint = item.revision;
    }
  };

  void (async () => {
    try {
      await send(confirmation());
      let checkpoint = streamOptions.hasEnd()
        ? confirmedAt
        : streamOptions.hasRevision()
          ? BigInt(streamOptions.getRevision())
          : -1n;
      if (checkpoint >= confirmedAt) checkpoint = await goLive(checkpoint);
      for (;;) checkpoint = await goLive(await catchUp(checkpoint));
    } catch (err) {
      if (!(err instanceof Gone)) throw err;
    }
  })();
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
