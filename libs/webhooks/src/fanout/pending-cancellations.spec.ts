import { SqliteEventStore } from '@filing/event-store';
import { buildMetadata, streamName, toEventData } from '@filing/platform';
import type { Logger } from '@nestjs/common';
import Database from 'better-sqlite3';
import { DELIVERY_STREAM, type DeliveryEvent, DeliveryEvents } from '../deliveries/delivery.events';
import { eventually } from '../../../../test/support/webhooks';
import { scheduledDelivery } from '../testing/delivery-fixtures';
import { OpenDeliveries } from './open-deliveries';
import { PendingCancellations } from './pending-cancellations';

const meta = () => buildMetadata({ account_id: 'A', actor: 'test', correlation_id: 'c', causation_id: null });
const scheduled = scheduledDelivery;

describe('PendingCancellations: a backlog cancelled beside the fan-out', () => {
  let store: SqliteEventStore;
  let db: Database.Database;
  let rows: OpenDeliveries;
  let worker: PendingCancellations;
  const logger = { warn: jest.fn(), error: jest.fn() } as unknown as Logger;
  const append = async (id: string, event: DeliveryEvent) =>
    (await store.appendToStream(streamName(DELIVERY_STREAM, id), [toEventData(event, meta())])).position;
  const types = async (id: string) => (await store.readStream(streamName(DELIVERY_STREAM, id))).map((e) => e.type);

  beforeEach(() => {
    store = new SqliteEventStore({ file: ':memory:' });
    db = new Database(':memory:');
    rows = new OpenDeliveries(db);
    rows.setup();
    worker = new PendingCancellations(rows, store, logger, {
      chunk: 2,
      inFlight: 2,
      pauseMs: 1,
      restPerWork: 0,
      retryMs: 10,
    });
  });
  afterEach(async () => {
    await worker.stop();
    db.close();
    await store.close();
  });

  it('cancels what was pending at the disable, in chunks, but not what was redelivered after it', async () => {
    const ids = ['d1', 'd2', 'd3', 'd4', 'd5'];
    for (const id of ids) {
      const at = await append(id, scheduled(id));
      rows.put(id, { owner: { endpointId: 'E', accountId: 'A' }, open: true, openedAt: at });
    }
    const attempted = (id: string): DeliveryEvent => ({
      type: DeliveryEvents.DeliveryAttempted,
      data: {
        delivery_id: id,
        attempt: 1,
        attempted_at: new Date().toISOString(),
        status_code: 503,
        error: null,
        duration_ms: 1,
      },
    });
    await append('d4', { type: DeliveryEvents.DeliveryFailed, data: { delivery_id: 'd4', reason: 'x' } });
    const disabledAt = (await store.headPosition())!;
    rows.addCancellation('E', 'endpoint disabled or deleted', disabledAt);
    // After the disable: d2's attempt (in flight at it) is recorded; d4 is redelivered.
    await append('d2', attempted('d2'));
    await append('d4', {
      type: DeliveryEvents.DeliveryRedeliveryRequested,
      data: { delivery_id: 'd4', due_at: '2020-01-01T00:00:00.000Z' },
    });
    worker.start();
    worker.wake();
    await eventually(() => (rows.cancellationsWaiting() === 0 ? true : undefined), 5, 5_000);

    for (const id of ['d1', 'd2', 'd3', 'd5']) expect((await types(id)).at(-1)).toBe(DeliveryEvents.DeliveryCancelled);
    expect((await types('d4')).at(-1)).toBe(DeliveryEvents.DeliveryRedeliveryRequested);
  });

  it('goes on after the last chunk it saved when started again', async () => {
    for (const id of ['a', 'b', 'c']) {
      const at = await append(id, scheduled(id));
      rows.put(id, { owner: { endpointId: 'E', accountId: 'A' }, open: true, openedAt: at });
    }
    rows.addCancellation('E', 'webhook notifications switched off', (await store.headPosition())!);
    rows.progress(rows.nextCancellation()!.seq, 'b'); // a and b done before a restart
    worker.start();
    await eventually(() => (rows.cancellationsWaiting() === 0 ? true : undefined), 5, 5_000);
    expect(await types('a')).toEqual([DeliveryEvents.DeliveryScheduled]);
    expect((await types('c')).at(-1)).toBe(DeliveryEvents.DeliveryCancelled);
  });
});
