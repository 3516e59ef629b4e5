import { type EventStore, type JsonObject, SqliteEventStore } from '@filing/event-store';
import { type AppConfig, buildMetadata, toEventData } from '@filing/platform';
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeliveryCommands } from '../deliveries/delivery-commands';
import { DeliveryEvents } from '../deliveries/delivery.events';
import { EndpointEvents, NOTIFICATIONS_SWITCHED } from '../endpoints/endpoint.events';
import { threadsNamed } from '../../../../test/support/thread-names';
import { eventually } from '../../../../test/support/webhooks';
import { FanOutService } from './fanout.service';

const ACCOUNT = '0193a000-0000-7000-8000-00000000000a';
const ENDPOINT = '0193a000-0000-7000-8000-0000000000e1';
const meta = () =>
  buildMetadata({ account_id: ACCOUNT, actor: 'client:test', correlation_id: 'c', causation_id: null });

describe('fan-out service memory', () => {
  let dir: string;
  let store: EventStore;
  let fanOut: FanOutService;

  const start = () => {
    const config = { dataDir: dir } as AppConfig;
    fanOut = new FanOutService(store, config, {} as DeliveryCommands);
    fanOut.start();
  };
  const append = (stream: string, type: string, data: JsonObject) =>
    store.appendToStream(stream, [toEventData({ type, data }, meta())]);
  const caughtUp = async () => {
    const head = (await store.headPosition())!;
    while ((fanOut.position()?.commit ?? -1n) < head.commit) await new Promise((r) => setTimeout(r, 10));
  };
  /** One enabled endpoint taking every event type, notifications switched on. */
  const subscribeToAll = async () => {
    await append(`webhookendpoint-${ENDPOINT}`, EndpointEvents.EndpointCreated, {
      endpoint_id: ENDPOINT,
      event_types: [],
    });
    await append(`webhookendpoint-${ENDPOINT}`, EndpointEvents.EndpointEnabled, { endpoint_id: ENDPOINT });
    await append(`webhooksettings-${ACCOUNT}`, NOTIFICATIONS_SWITCHED, { account_id: ACCOUNT, enabled: true });
  };
  const scheduledIds = async () =>
    (await store.readAll({ maxCount: 100_000 }))
      .filter((e) => e.type === DeliveryEvents.DeliveryScheduled)
      .map((e) => e.data.delivery_id as string);

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fanout-memory-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
  });
  afterEach(async () => {
    await fanOut?.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds only the open deliveries: closed ones leave the view, a redelivery brings one back, also after a restart', async () => {
    start();
    await subscribeToAll();
    for (let i = 0; i < 50; i++) {
      const id = `0193a000-0000-7000-8000-${String(i).padStart(12, '0')}`;
      await append(`entity-${id}`, 'entities.EntityCreated', { entity_id: id, status: 'active' });
    }
    await caughtUp();
    const ids = await scheduledIds();
    expect(ids).toHaveLength(50);
    expect(fanOut.openDeliveryCount()).toBe(50);

    // 48 end (succeeded: an attempt saying so, or an older stream's DeliverySucceeded; failed;
    // cancelled): the view keeps the 2 still pending, one of them after an attempt to be retried.
    const attempted = (id: string, outcome?: 'succeeded'): JsonObject => ({
      delivery_id: id,
      attempt: 1,
      attempted_at: new Date().toISOString(),
      status_code: outcome ? 200 : 503,
      error: null,
      duration_ms: 1,
      ...(outcome ? { outcome } : {}),
    });
    const closing: Array<(id: string) => [string, JsonObject]> = [
      (id) => [DeliveryEvents.DeliveryAttempted, attempted(id, 'succeeded')],
      (id) => [DeliveryEvents.DeliverySucceeded, { delivery_id: id, attempt: 1 }],
      (id) => [DeliveryEvents.DeliveryFailed, { delivery_id: id, reason: 'x' }],
      (id) => [DeliveryEvents.DeliveryCancelled, { delivery_id: id, reason: 'x' }],
    ];
    await append(`webhookdelivery-${ids[0]}`, DeliveryEvents.DeliveryAttempted, attempted(ids[0]));
    for (const [i, id] of ids.slice(2).entries()) await append(`webhookdelivery-${id}`, ...closing[i % 4](id));
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(2);

    // A redelivery of one closed in an earlier batch: whose it is comes from the fan-out's file.
    const due = new Date().toISOString();
    await append(`webhookdelivery-${ids[2]}`, DeliveryEvents.DeliveryRedeliveryRequested, {
      delivery_id: ids[2],
      due_at: due,
    });
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(3);

    // A restart loads the open ones only; a redelivery after it is tracked as well.
    await fanOut.stop();
    start();
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(3);
    await append(`webhookdelivery-${ids[3]}`, DeliveryEvents.DeliveryRedeliveryRequested, {
      delivery_id: ids[3],
      due_at: due,
    });
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(4);

    // A disable cancels exactly those four, as the view says at its position: in the background,
    // after the fan-out has moved past it.
    await append(`webhookendpoint-${ENDPOINT}`, EndpointEvents.EndpointDisabled, { endpoint_id: ENDPOINT });
    await caughtUp();
    await eventually(() => (fanOut.cancellationsWaiting() === 0 ? true : undefined), 10, 10_000);
    const cancelled = (await store.readAll({ maxCount: 100_000 }))
      .filter((e) => e.type === DeliveryEvents.DeliveryCancelled && e.data.reason === 'endpoint disabled or deleted')
      .map((e) => e.data.delivery_id as string);
    expect(cancelled.sort()).toEqual([ids[0], ids[1], ids[2], ids[3]].sort());
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(0);
  });

  it("a later event's payload carries what its stream's earlier events said, across batches, a restart and a delete", async () => {
    start();
    await subscribeToAll();
    const [kept, deleted, fresh] = ['e1', 'e2', 'e3'].map((n) => `0193a000-0000-7000-8000-0000000000${n}`);
    const created = (id: string, data: JsonObject) => append(`entity-${id}`, 'entities.EntityCreated', data);
    const updated = (id: string) => append(`entity-${id}`, 'entities.EntityUpdated', { name: 'renamed' });
    await created(kept, { entity_id: kept, status: 'inactive' });
    await created(deleted, { entity_id: deleted, status: 'inactive' });
    await caughtUp();
    await updated(kept); // a later batch
    await caughtUp();
    await fanOut.stop();
    start();
    await updated(kept); // after a restart: from the fan-out's file
    await store.deleteStream(`entity-${deleted}`);
    await updated(deleted); // revision 1 of a stream that reads as empty
    await created(fresh, { entity_id: fresh }); // nothing earlier: the default
    await caughtUp();

    const payloads = (await store.readAll({ maxCount: 100_000 }))
      .filter((e) => e.type === DeliveryEvents.DeliveryScheduled)
      .map((e) => e.data.payload as { event_type: string; entity_id: string; status: string })
      .map(({ event_type, entity_id, status }) => ({ event_type, entity_id, status }));
    expect(payloads).toEqual([
      { event_type: 'entity.created', entity_id: kept, status: 'inactive' },
      { event_type: 'entity.created', entity_id: deleted, status: 'inactive' },
      { event_type: 'entity.updated', entity_id: kept, status: 'inactive' },
      { event_type: 'entity.updated', entity_id: kept, status: 'inactive' },
      { event_type: 'entity.updated', entity_id: deleted, status: 'inactive' },
      { event_type: 'entity.created', entity_id: fresh, status: 'active' },
    ]);
  });

  it('saves the rows of batches with only delivery events later; a crash before then derives them again', async () => {
    start();
    await subscribeToAll();
    const ids = ['0193a000-0000-7000-8000-0000000000f1', '0193a000-0000-7000-8000-0000000000f2'];
    for (const id of ids) await append(`entity-${id}`, 'entities.EntityCreated', { entity_id: id, status: 'active' });
    await caughtUp();
    const [first, second] = await scheduledIds();
    const saved = () => {
      const db = new Database(join(dir, 'webhook-fanout.db'), { readonly: true });
      try {
        const open = db.prepare('SELECT id FROM webhook_fanout_deliveries WHERE open = 1 ORDER BY id').all();
        const cp = db.prepare('SELECT position FROM webhook_fanout_checkpoint').get() as { position: string };
        return { open: (open as Array<{ id: string }>).map((r) => r.id), checkpoint: cp.position };
      } finally {
        db.close();
      }
    };
    const before = saved();
    expect(before.open).toEqual([first, second].sort());

    // One delivery ends: the view knows at once, the file not yet (no transaction for that batch).
    await append(`webhookdelivery-${first}`, DeliveryEvents.DeliveryFailed, { delivery_id: first, reason: 'x' });
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(1);
    expect(saved()).toEqual(before);

    // A crash now (the file as it is, copied): a fan-out on the copy runs that batch again.
    const copy = mkdtempSync(join(tmpdir(), 'fanout-crash-'));
    try {
      for (const f of ['webhook-fanout.db', 'webhook-fanout.db-wal'])
        if (existsSync(join(dir, f))) copyFileSync(join(dir, f), join(copy, f));
      const crashed = new FanOutService(store, { dataDir: copy } as AppConfig, {} as DeliveryCommands);
      crashed.start();
      const head = (await store.headPosition())!;
      while ((crashed.position()?.commit ?? -1n) < head.commit) await new Promise((r) => setTimeout(r, 10));
      expect(crashed.openDeliveryCount()).toBe(1);
      await crashed.stop();
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }

    // A redelivery of it (its owner from the unsaved rows), then a stop saves everything.
    await append(`webhookdelivery-${first}`, DeliveryEvents.DeliveryRedeliveryRequested, {
      delivery_id: first,
      due_at: new Date().toISOString(),
    });
    await append(`webhookdelivery-${second}`, DeliveryEvents.DeliveryCancelled, { delivery_id: second, reason: 'x' });
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(1);
    await fanOut.stop();
    const after = saved();
    expect(after.open).toEqual([first]);
    expect(after.checkpoint).not.toEqual(before.checkpoint);
    start();
    await caughtUp();
    expect(fanOut.openDeliveryCount()).toBe(1);
  });

  it('saves batches of delivery events alone once enough rows wait, not only when the timer fires', async () => {
    // The timer out of reach: only the row bound can save them during the test.
    class BoundedFanOut extends FanOutService {
      protected override readonly unsavedLimits = { ms: 3_600_000, rows: 10 };
    }
    fanOut = new BoundedFanOut(store, { dataDir: dir } as AppConfig, {} as DeliveryCommands);
    fanOut.start();
    await subscribeToAll();
    const entities = Array.from(
      { length: 25 },
      (_, i) => `0193a000-0000-7000-8000-${String(900 + i).padStart(12, '0')}`,
    );
    for (const id of entities)
      await append(`entity-${id}`, 'entities.EntityCreated', { entity_id: id, status: 'active' });
    await caughtUp();
    const ids = await scheduledIds();
    expect(ids).toHaveLength(25);
    const savedOpen = () => {
      const db = new Database(join(dir, 'webhook-fanout.db'), { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM webhook_fanout_deliveries WHERE open = 1').get() as { n: number })
          .n;
      } finally {
        db.close();
      }
    };
    expect(savedOpen()).toBe(25);

    // One delivery ends per batch: nine wait in memory, the tenth saves all ten; and again.
    const fail = async (id: string) => {
      await append(`webhookdelivery-${id}`, DeliveryEvents.DeliveryFailed, { delivery_id: id, reason: 'x' });
      await caughtUp();
    };
    const seen: number[] = [];
    for (const id of ids.slice(0, 22)) {
      await fail(id);
      seen.push(savedOpen());
    }
    expect(fanOut.openDeliveryCount()).toBe(3);
    expect(seen).toEqual([...Array(9).fill(25), ...Array(10).fill(15), 5, 5, 5]);
  });

  it('checkpoints its database from a thread of its own, which its stop ends', async () => {
    // Specs run before this one in the same Jest worker may have left checkpointer threads of their own.
    const before = threadsNamed('wal-checkpoint');
    start();
    await subscribeToAll();
    await caughtUp();
    // Pages reach the database file itself, not only its WAL, though nothing on the service's
    // connection checkpoints below the safety net (16,384 pages): the thread copied them.
    const file = join(dir, 'webhook-fanout.db');
    await eventually(() => (statSync(file).size >= 4 * 4096 ? true : undefined), 10, 5_000);
    await fanOut.stop();
    expect(threadsNamed('wal-checkpoint')).toBeLessThanOrEqual(before);
  });
});
