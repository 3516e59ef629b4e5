import { RecentAppends } from './recent-appends';
import type { WriteOutcome, WriteRequest } from './sqlite-writer';

/**
 * What the store keeps of its latest appends for live subscribers: a subscriber further behind
 * reads SQL, as before. Enough for the processors under 64 writers; 4,096 took more of a burst
 * from memory, but what it holds outlives the young generation and the GC gave the gain back.
 */
const RECENT_EVENTS = 1024;
const RECENT_BYTES = 1024 * 1024;

type Committed = Extract<WriteOutcome, { ok: true }>;

/**
 * What the live `$all` subscriptions of one store share: this process's latest appends (read from
 * memory instead of SQL), where each live reader is (so those appends are let go once all have
 * them), and the wake-ups (an append here, a head read past what this process knew, the poll).
 */
export class LiveTail {
  readonly recent = new RecentAppends(RECENT_EVENTS, RECENT_BYTES);
  private readonly listeners = new Set<() => void>();
  /** Where each live subscription that reads recent appends is: they are kept until all have them. */
  private readonly readers = new Map<object, bigint>();
  /** The newest position this process knows committed: its own appends, or a head it read. */
  private seenHead = 0n;

  constructor(private readonly pollIntervalMs: number) {}

  /** A write the writer committed: what it appended may be handed out from memory. */
  committed(request: WriteRequest, outcome: Committed): void {
    // Rows were removed: none of them may be handed out from memory (removed-rows.ts).
    if (request.op === 'tombstone' || request.op === 'truncate') this.recent.clear();
    if (outcome.appended && outcome.result && request.op === 'append') {
      const { events } = request;
      const firstRevision = outcome.result.nextExpectedRevision - BigInt(events.length - 1);
      // The writer's word that this append's positions are consecutive, checked.
      if (outcome.result.position.commit - outcome.appended.first === BigInt(events.length - 1)) {
        this.recent.add(request.streamId, events, outcome.appended.first, firstRevision, outcome.appended.created);
      } else {
        this.recent.clear();
      }
    }
  }

  /** After a group's outcomes are answered: lets go of what readers have, and wakes them. */
  groupDone(outcomes: readonly WriteOutcome[]): void {
    this.release();
    for (const o of outcomes) if (o.ok && o.result) this.saw(o.result.position.commit);
    this.wakeAll();
  }

  /** Whether `head` is past the newest position this process knew committed (it now knows it). */
  saw(head: bigint): boolean {
    if (head <= this.seenHead) return false;
    this.seenHead = head;
    return true;
  }

  listen(listener: () => void): void {
    this.listeners.add(listener);
  }

  unlisten(listener: () => void): void {
    this.listeners.delete(listener);
  }

  wakeAll(): void {
    for (const listener of this.listeners) listener();
  }

  /** A live subscription has taken everything up to `after`. */
  readerAt(reader: object, after: bigint): void {
    this.readers.set(reader, after);
    this.release();
  }

  readerGone(reader: object): void {
    this.readers.delete(reader);
    this.release();
  }

  /**
   * Lets go of the recent appends every live reader has: held longer, they outlive the young
   * generation and cost more in GC than reading them back. A reader further behind keeps them
   * (up to the bounds); with none, nothing is kept, and one that goes live later reads SQL.
   */
  release(): void {
    let least: bigint | null = null;
    for (const after of this.readers.values()) if (least === null || after < least) least = after;
    this.recent.release(least ?? BigInt(Number.MAX_SAFE_INTEGER));
  }

  /** Live: woken by an append in this process, or by the poll for other processes' appends. */
  nextWake(signal: AbortSignal, setWake: (wake: (() => void) | undefined) => void): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.pollIntervalMs);
      signal.addEventListener('abort', done, { once: true });
      setWake(done);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        setWake(undefined);
        resolve();
      }
    });
  }
}
