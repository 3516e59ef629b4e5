import type { SubscriptionFilter } from '../event-store.port';
import type { SerializedEvent } from './sqlite-writer';

const LONE_SURROGATE = /\p{Surrogate}/u;

/** One event this process committed, as the writer stored it (data and metadata still JSON text). */
export interface RecentEvent {
  readonly position: bigint;
  readonly streamId: string;
  readonly revision: bigint;
  readonly event: SerializedEvent;
  readonly created: number;
}

/**
 * The events this process committed last, for subscriptions at the live tail to take without
 * reading them back from SQLite. It only answers what it can prove: it holds one run of
 * consecutive positions, so "everything after p" is known exactly when p + 1 is in the run.
 * Positions are rowids, assigned max + 1 under the write lock, so a gap between two commits
 * of this process means someone else committed there (another process, or a commit whose
 * outcome never came back): the run starts again and readers go to SQL for what lies before.
 * Events are let go once every reader has taken them (`release`), so they die young.
 */
export class RecentAppends {
  private readonly slots: Array<RecentEvent | undefined>;
  /**
   * Positions held: low..high, none when low > high (Numbers: rowids stay far below 2^53).
   * `high` is the newest position of the run even when its events are released; 0 before any.
   */
  private low = 0;
  private high = 0;
  private bytes = 0;

  constructor(
    private readonly maxEvents: number,
    private readonly maxBytes: number,
  ) {
    this.slots = new Array<RecentEvent | undefined>(maxEvents);
  }

  /**
   * One append's events, committed at positions `first`.. onwards (revisions from
   * `firstRevision`). Appends must be added in commit order.
   */
  add(streamId: string, events: readonly SerializedEvent[], first: bigint, firstRevision: bigint, created: number) {
    const start = Number(first);
    // SQLite stores a lone surrogate in a name as U+FFFD: such an event reads back different.
    const exact = !LONE_SURROGATE.test(streamId) && events.every((e) => !LONE_SURROGATE.test(e.type));
    if (!exact || !Number.isSafeInteger(start + events.length)) return this.clear();
    if (this.high === 0 || start !== this.high + 1) {
      this.releaseAll();
      this.low = start;
    }
    for (let i = 0; i < events.length; i++) {
      const event = events[i];
      const position = start + i;
      // Oldest out first (its slot is the one this event takes when full): the run stays consecutive.
      if (position - this.low >= this.maxEvents) this.evictOldest();
      this.slots[position % this.maxEvents] = {
        position: BigInt(position),
        streamId,
        revision: firstRevision + BigInt(i),
        event,
        created,
      };
      this.bytes += event.data.length + event.metadata.length;
      this.high = position;
      while (this.bytes > this.maxBytes && this.low < this.high) this.evictOldest();
    }
  }

  /** Lets go of the events up to `upTo`: every reader has them. */
  release(upTo: bigint): void {
    if (this.high === 0) return;
    const last = Math.min(Number(upTo), this.high);
    while (this.low <= last) this.evictOldest();
  }

  /** Forgets everything: the next commit starts a new run. */
  clear(): void {
    this.releaseAll();
    this.low = 0;
    this.high = 0;
  }

  /**
   * Every event committed after `after`, oldest first, at most `limit` — or null when the run
   * does not hold `after + 1` (SQL must tell).
   */
  after(after: bigint, limit: number): RecentEvent[] | null {
    const next = Number(after) + 1;
    if (this.high === 0 || next < this.low || next > this.high) return null;
    const end = Math.min(this.high, next + limit - 1);
    const events: RecentEvent[] = [];
    for (let position = next; position <= end; position++) events.push(this.slots[position % this.maxEvents]!);
    return events;
  }

  /** True when `after` is the newest position of the run: nothing this process committed is newer. */
  isHead(after: bigint): boolean {
    return this.high !== 0 && Number(after) === this.high;
  }

  private releaseAll(): void {
    while (this.low <= this.high && this.high !== 0) this.evictOldest();
  }

  private evictOldest(): void {
    const slot = this.low % this.maxEvents;
    const old = this.slots[slot]!;
    this.bytes -= old.event.data.length + old.event.metadata.length;
    this.slots[slot] = undefined;
    this.low++;
  }
}

/** The SQL filter's test in memory: `substr(column, 1, length(prefix)) = prefix`. */
export function matchesFilter(filter: SubscriptionFilter | undefined, type: string, streamId: string): boolean {
  if (!filter) return true;
  const byType = 'eventTypePrefixes' in filter;
  const prefixes = byType ? filter.eventTypePrefixes : filter.streamNamePrefixes;
  if (prefixes.length === 0) return true;
  const value = byType ? type : streamId;
  return prefixes.some((p) => value.startsWith(p));
}

/**
 * Whether `matchesFilter` agrees with the SQL filter. SQLite's substr counts characters, JS
 * strings UTF-16 units: the two differ only for prefixes with characters outside the BMP.
 */
export function filterMatchableInMemory(filter: SubscriptionFilter | undefined): boolean {
  if (!filter) return true;
  const prefixes = 'eventTypePrefixes' in filter ? filter.eventTypePrefixes : filter.streamNamePrefixes;
  return prefixes.every((p) => !/[\uD800-\uDFFF]/.test(p));
}
