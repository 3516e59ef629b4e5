import { NO_STREAM, WrongExpectedVersionError, type EventStore } from '@filing/event-store';
import { streamName, toEventData } from '@filing/platform';
import type { Logger } from '@nestjs/common';
import { DELIVERY_STREAM, type DeliveryScheduled } from '../deliveries/delivery.events';
import { roundRobin } from '../dispatch/round-robin';
import type { BatchDecision } from './fanout-batch';

/**
 * DeliveryScheduled appends in flight at once: enough for the store to commit them in groups,
 * few enough that a burst (a batch fanned out to many endpoints) waits here, not in its queue.
 */
const MAX_APPENDS_IN_FLIGHT = 128;

/**
 * A fan-out batch's DeliveryScheduled events, each to its own delivery stream. At most
 * MAX_APPENDS_IN_FLIGHT at a time, each worker taking the next one, account by account
 * in turn: an account whose events fan out to many endpoints does not put another account's
 * few deliveries of the same batch behind all of its own (each is a stream of its own: their
 * order across streams changes nothing else).
 */
export async function appendScheduled(
  store: EventStore,
  logger: Logger,
  batchScheduled: BatchDecision['scheduled'],
): Promise<void> {
  const scheduled = interleavedByAccount(batchScheduled);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(MAX_APPENDS_IN_FLIGHT, scheduled.length) }, async () => {
      while (next < scheduled.length) {
        const s = scheduled[next++];
        await schedule(store, logger, s.event, s.metadata);
      }
    }),
  );
}

/** Expected no_stream: a re-run batch's append (same deterministic id) writes nothing. */
async function schedule(
  store: EventStore,
  logger: Logger,
  event: DeliveryScheduled,
  metadata: BatchDecision['scheduled'][number]['metadata'],
): Promise<void> {
  const id = event.data.delivery_id;
  try {
    await store.appendToStream(streamName(DELIVERY_STREAM, id), [toEventData(event, metadata, id)], {
      expectedRevision: NO_STREAM,
    });
  } catch (err) {
    // Only a stream that began with another event: not something a re-run can fix.
    if (!(err instanceof WrongExpectedVersionError)) throw err;
    logger.error(`Delivery stream ${id} exists with other contents; not scheduled again`);
  }
}

function interleavedByAccount<T extends { readonly event: DeliveryScheduled }>(items: readonly T[]): T[] {
  const accounts = new Map<string, T[]>();
  for (const item of items) {
    const account = item.event.data.account_id;
    let ofAccount = accounts.get(account);
    if (!ofAccount) accounts.set(account, (ofAccount = []));
    ofAccount.push(item);
  }
  return accounts.size <= 1 ? [...items] : roundRobin([...accounts.values()], Infinity);
}
