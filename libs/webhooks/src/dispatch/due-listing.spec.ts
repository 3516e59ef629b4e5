import type { DeliveryQueue } from '../read-model/delivery-queue.queries';
import { DueListing } from './due-listing';

/** A queue whose endpoints with due work are `due` (in id order); counts its reads. */
function fakeQueue(due: string[], nextRetry: string | null = null) {
  const reads = { listings: 0, retries: 0 };
  const queue = {
    endpointsWithDueWork: (_now: Date, after: string | null, limit: number) => {
      reads.listings++;
      return due.filter((id) => after === null || id > after).slice(0, limit);
    },
    nextDueAfter: () => {
      reads.retries++;
      return nextRetry;
    },
  } as unknown as DeliveryQueue;
  return { queue, reads, due };
}

describe('DueListing: the endpoints in turn and the next retry, read again only when stale', () => {
  const now = new Date('2026-01-01T00:00:00.000Z');

  it('starts each round after the endpoint served last, wrapping around', () => {
    const { queue } = fakeQueue(['a', 'b', 'c', 'd']);
    const listing = new DueListing(queue);
    expect(listing.nextRetry(now.getTime())).toBeNull();
    expect(listing.inTurn(now, 10)).toEqual(['a', 'b', 'c', 'd']);
    listing.served(['a', 'b']);
    expect(listing.inTurn(now, 10)).toEqual(['c', 'd', 'a', 'b']);
    listing.served(['c', 'd', 'a']);
    expect(listing.inTurn(now, 3)).toEqual(['b', 'c', 'd']);
  });

  it('keeps a listing that held them all until an endpoint not in it has new due work, or it is forgotten', () => {
    const { queue, reads, due } = fakeQueue(['a', 'b']);
    const listing = new DueListing(queue);
    listing.nextRetry(now.getTime());
    listing.inTurn(now, 10);
    listing.served(['b']);
    listing.inTurn(now, 10);
    const afterTwo = reads.listings;
    listing.inTurn(now, 10);
    listing.newlyDue('a'); // listed already: still good
    listing.inTurn(now, 10);
    expect(reads.listings).toBe(afterTwo);
    due.push('c');
    listing.newlyDue('c');
    expect(listing.inTurn(now, 10)).toEqual(['c', 'a', 'b']);
    listing.forget();
    expect(listing.retryPassed(now.getTime())).toBe(true);
  });

  it('reads the next retry once, and again when it has passed or a delivery is due later', () => {
    const retry = '2026-01-01T00:00:05.000Z';
    const { queue, reads } = fakeQueue([], retry);
    const listing = new DueListing(queue);
    expect(listing.nextRetry(now.getTime())).toBe(Date.parse(retry));
    expect(listing.nextRetry(now.getTime() + 1_000)).toBe(Date.parse(retry));
    expect(reads.retries).toBe(1);
    expect(listing.retryPassed(Date.parse(retry))).toBe(true);
    listing.nextRetry(Date.parse(retry) + 1);
    listing.dueLater();
    listing.nextRetry(now.getTime());
    expect(reads.retries).toBe(3);
  });
});
