import type { DeliveryQueue } from '../read-model/delivery-queue.queries';

/**
 * Which endpoints have due work, and when the next retry comes due, as the dispatcher last read
 * them from the queue — one object, each rule for dropping what it keeps in one method:
 * - `forget` (the tick, a retry or a redelivery): read everything again;
 * - `newlyDue` (a delivery scheduled, due now): an endpoint not listed makes the listing stale;
 * - `dueLater` (one scheduled for later, another instance's clock ahead): the next retry time may move;
 * - a retry time passing (seen by `inTurn` and `nextRetry`): list again.
 * The round-robin's cursor (the last endpoint listed) is kept here too.
 */
export class DueListing {
  /** The last endpoint listed: the next round starts after it. */
  private cursor: string | null = null;
  /** The last listing held every endpoint with due work (fewer than its limit). */
  private fewWithDueWork = false;
  /**
   * That listing, kept while nothing can have added an endpoint to it. An endpoint whose due
   * work ran out since only gets an empty turn, so the picks are those of a fresh listing.
   */
  private all: string[] | null = null;
  /**
   * The earliest future retry time as last read (null: none), or undefined: read it again. Only
   * a projection commit that adds work can bring an earlier one, and those ring the signal; a
   * retry leaving the queue early only makes it too early, which costs one idle pump.
   */
  private retryAt: number | null | undefined = undefined;

  constructor(private readonly queue: DeliveryQueue) {}

  forget(): void {
    this.retryAt = undefined;
    this.all = null;
  }

  newlyDue(endpointId: string): void {
    if (this.all !== null && !this.all.includes(endpointId)) this.all = null;
  }

  dueLater(): void {
    this.retryAt = undefined;
  }

  /** A retry time has come (or is unknown): what is due may have changed anywhere. */
  retryPassed(nowMs: number): boolean {
    return this.retryAt === undefined || (this.retryAt !== null && this.retryAt <= nowMs);
  }

  /** Up to `limit` endpoints with due work, starting after the cursor and wrapping around. */
  inTurn(now: Date, limit: number): string[] {
    const cursor = this.cursor;
    if (this.retryPassed(now.getTime())) this.all = null;
    if (cursor !== null && this.fewWithDueWork) {
      // All of them fitted last time (the usual case): one listing, turned to start after the cursor.
      const all = this.all ?? this.queue.endpointsWithDueWork(now, null, limit);
      if (all.length < limit) {
        this.all = all;
        const turn = all.findIndex((id) => id > cursor);
        return turn <= 0 ? all : [...all.slice(turn), ...all.slice(0, turn)];
      }
    }
    this.all = null;
    const after = this.queue.endpointsWithDueWork(now, cursor, limit);
    if (after.length >= limit || cursor === null) {
      this.fewWithDueWork = after.length < limit;
      return after;
    }
    const wrapped = this.queue.endpointsWithDueWork(now, null, limit - after.length).filter((id) => id <= cursor);
    this.fewWithDueWork = after.length + wrapped.length < limit;
    return [...after, ...wrapped];
  }

  /** The round served these endpoints: the next starts after the last. */
  served(endpoints: readonly string[]): void {
    if (endpoints.length > 0) this.cursor = endpoints[endpoints.length - 1];
  }

  /** The next retry time (epoch ms, null: none), read again once it has passed. */
  nextRetry(nowMs: number): number | null {
    if (this.retryPassed(nowMs)) {
      const retry = this.queue.nextDueAfter(new Date(nowMs));
      this.retryAt = retry === null ? null : Date.parse(retry);
    }
    return this.retryAt ?? null;
  }
}
