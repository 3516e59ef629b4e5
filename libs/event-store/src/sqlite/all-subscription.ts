import type {
  EventSubscription,
  SubscribeToAllOptions,
  SubscriptionFilter,
  SubscriptionMessage,
} from '../event-store.port';
import type { LiveTail } from './live-tail';
import { filterMatchableInMemory, matchesFilter, type RecentEvent } from './recent-appends';
import { fromRecent, scanned, type ScanRow } from './sqlite-rows';

const SCAN_BATCH = 512;

/** What a `$all` subscription needs of the store. */
export interface AllSubscriptionHost {
  readonly live: LiveTail;
  assertOpen(): void;
  headCommit(): bigint;
  /** One page after `after` and the head, read in one snapshot. */
  scanPage(after: bigint, filter: SubscriptionFilter | undefined, limit: number): { rows: ScanRow[]; head: bigint };
}

/**
 * A `$all` subscription of the embedded store: catch-up pages from SQL, then the live tail from
 * this process's recent appends in memory while it is right behind them, SQL otherwise.
 */
export function subscribeToAll(host: AllSubscriptionHost, options: SubscribeToAllOptions): EventSubscription {
  const subscription = new AllSubscription(host, options);
  const iterator = subscription.messages();
  return {
    [Symbol.asyncIterator]: () => iterator,
    async stop() {
      subscription.abort.abort();
      await iterator.return(undefined);
    },
  };
}

class AllSubscription {
  readonly abort = new AbortController();
  private wake: (() => void) | undefined;
  private readonly onAppend = () => this.wake?.();
  private readonly filter: SubscriptionFilter | undefined;
  private readonly fromMemory: boolean;
  /** The last position delivered or passed over (by a checkpoint). */
  private after = 0n;
  private caughtUp = false;
  /** Whether a miss of the recent appends must read SQL, or may wait for the next wake. */
  private scan = true;

  constructor(
    private readonly host: AllSubscriptionHost,
    private readonly options: SubscribeToAllOptions,
  ) {
    this.filter = options.filter;
    this.fromMemory = filterMatchableInMemory(this.filter);
  }

  async *messages(): AsyncGenerator<SubscriptionMessage> {
    const { live } = this.host;
    live.listen(this.onAppend);
    try {
      this.after = this.startAfter();
      while (!this.abort.signal.aborted) {
        this.host.assertOpen();
        // Live and right behind this process's appends: take them from memory. The run of
        // recent appends holds everything from after + 1 to its end, so this skips nothing.
        const recent = this.caughtUp && this.fromMemory ? live.recent.after(this.after, SCAN_BATCH) : null;
        if (recent) yield* this.deliverRecent(recent);
        // At the newest of this process's appends since the last wake: anything else is
        // another process's, which its own commits reveal as a gap, or the poll.
        else if (this.caughtUp && !this.scan && live.recent.isHead(this.after)) await this.nextWake();
        else if (yield* this.deliverPage()) await this.nextWake();
      }
    } finally {
      live.unlisten(this.onAppend);
      live.readerGone(this);
    }
  }

  private startAfter(): bigint {
    const from = this.options.from ?? 'start';
    return from === 'start' ? 0n : from === 'end' ? this.host.headCommit() : from.commit;
  }

  /** The live tail: a run of this process's recent appends, from memory. */
  private async *deliverRecent(recent: readonly RecentEvent[]): AsyncGenerator<SubscriptionMessage> {
    for (const e of recent) {
      if (!matchesFilter(this.filter, e.event.type, e.streamId)) continue;
      const event = fromRecent(e);
      this.after = e.position;
      yield { kind: 'event', event };
      if (this.abort.signal.aborted) return;
    }
    const checkpoint = this.passTo(recent[recent.length - 1].position);
    if (checkpoint) yield checkpoint;
    this.host.live.readerAt(this, this.after);
    this.scan = false;
  }

  /**
   * Catch-up, or the tail when memory cannot serve it: one page from SQL. Returns true when the
   * page reached the head (wait for the next wake), false to read on at once.
   */
  private async *deliverPage(): AsyncGenerator<SubscriptionMessage, boolean> {
    // The head is read in the same snapshot as the page: it is how far this page looked.
    // Read later (after the consumer had paused on the yields below) it would also cover
    // events committed meanwhile that the page never saw, and skipping to it loses them.
    const { rows, head } = this.host.scanPage(this.after, this.filter, SCAN_BATCH);
    for (const row of rows) {
      const event = scanned(row);
      this.after = event.position.commit;
      yield { kind: 'event', event };
      if (this.abort.signal.aborted) return false;
    }
    if (rows.length === SCAN_BATCH) return false;
    // A short page saw everything up to `head`: what the filter skipped there is considered.
    const checkpoint = this.passTo(head);
    if (checkpoint) yield checkpoint;
    if (!this.caughtUp) {
      this.caughtUp = true;
      yield { kind: 'caught-up' };
    }
    if (this.fromMemory) this.host.live.readerAt(this, this.after);
    return true;
  }

  /** Moves past events the filter skipped up to `end`: the checkpoint saying so, if it is news. */
  private passTo(end: bigint): SubscriptionMessage | null {
    if (end <= this.after) return null;
    this.after = end;
    return { kind: 'checkpoint', position: { commit: end, prepare: end } };
  }

  private async nextWake(): Promise<void> {
    await this.host.live.nextWake(this.abort.signal, (w) => (this.wake = w));
    this.scan = true;
  }
}
