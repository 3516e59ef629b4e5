import { SqliteEventStore } from '@filing/event-store';
import { type AppConfig, buildMetadata, fromRecorded, type SecretBox, streamName, toEventData } from '@filing/platform';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import { enabledTarget, scheduledDelivery } from '../testing/delivery-fixtures';
import { DELIVERY_STREAM, type DeliveryEvent } from '../deliveries/delivery.events';
import type { EndpointsService } from '../endpoints/endpoints.service';
import type { DeliveryTargets } from '../read-model/delivery-target.queries';
import { DeliveryStates } from './delivery-states';
import { DispatchPipeline } from './dispatch-pipeline';
import { DispatcherInstance } from './dispatcher-instance';
import type { Sender, WebhookRequest } from './webhook-sender';

const target = enabledTarget;
const scheduled = scheduledDelivery;

/** An attempt as every version wrote it before a successful one said so itself. */
const attemptWithoutOutcome = (statusCode: number): DeliveryEvent => ({
  type: 'webhooks.DeliveryAttempted',
  data: {
    delivery_id: 'D',
    attempt: 1,
    attempted_at: '2020-01-01T00:00:00.000Z',
    status_code: statusCode,
    error: null,
    duration_ms: 1,
  },
});

/** The same file as if several instances appended to it: claims are written (as on EventStoreDB). */
class SharedSqliteEventStore extends SqliteEventStore {
  override readonly sharedByInstances = true;
}

const modes = [
  ['one process owns the store (sqlite): no claim event', () => new SqliteEventStore({ file: ':memory:' })],
  ['instances share the store: claims written', () => new SharedSqliteEventStore({ file: ':memory:' })],
] as const;

describe.each(modes)('DeliveryStates: the dispatcher copy of pending deliveries; %s', (_, openStore) => {
  let store: SqliteEventStore;
  let states: DeliveryStates;
  let sent: string[];
  let pipeline: DispatchPipeline;
  let commands: DeliveryCommands;
  /** How far each stream has been observed (as the projection would, in stream order). */
  let observed: Map<string, number>;

  const append = (deliveryId: string, event: DeliveryEvent) =>
    store.appendToStream(streamName(DELIVERY_STREAM, deliveryId), [
      toEventData(event, buildMetadata({ account_id: 'A', actor: 'test', correlation_id: 'c', causation_id: null })),
    ]);
  /** Feeds the events of the stream not yet observed, like the deliveries projection. */
  const observe = async (deliveryId: string) => {
    const events = await store.readStream(streamName(DELIVERY_STREAM, deliveryId));
    for (const e of events.slice(observed.get(deliveryId) ?? 0)) {
      states.observe(fromRecorded<DeliveryEvent>(e));
    }
    observed.set(deliveryId, events.length);
  };
  const load = (deliveryId: string) => commands.load(deliveryId);
  /** A pipeline of its own instance over the same store; the read model always shows `target`. */
  const makePipeline = (sender: Sender, copies: DeliveryStates) =>
    new DispatchPipeline(
      { webhookTimeoutMs: 10_000, webhookRetryDelaysMs: [1000] } as unknown as AppConfig,
      sender,
      commands,
      { of: () => target } as unknown as DeliveryTargets,
      { open: () => 'whsec_' + Buffer.alloc(32, 1).toString('base64') } as unknown as SecretBox,
      {} as EndpointsService,
      new DispatcherInstance(),
      copies,
    );

  beforeEach(() => {
    store = openStore();
    states = new DeliveryStates();
    sent = [];
    observed = new Map();
    commands = new DeliveryCommands(store);
    const sender = {
      send: (request: WebhookRequest) => {
        sent.push(request.eventId);
        return Promise.resolve({ result: { kind: 'response', statusCode: 204 }, durationMs: 1, retryAfterMs: null });
      },
    } as unknown as Sender;
    pipeline = makePipeline(sender, states);
  });

  afterEach(() => store.close());

  it('keeps a pending delivery from its first event on, and forgets it once it is done', async () => {
    await append('D', scheduled('D'));
    await observe('D');
    expect(states.get('D')).toMatchObject({ revision: 0n, state: { status: 'pending', eventId: 'ev-D' } });
    await pipeline.run('D');
    await observe('D');
    expect(sent).toEqual(['ev-D']);
    expect(states.get('D')).toBeUndefined();
    expect((await load('D')).state.status).toBe('delivered');
  });

  it('a request dropped unsent from its lane records nothing and leaves the delivery due; an attempt records when its request left', async () => {
    await append('D', scheduled('D'));
    await observe('D');
    const hooks = { notSent: jest.fn(), answered: jest.fn() };
    const dropping = makePipeline({ send: () => Promise.resolve(null) }, states);
    expect(await dropping.run('D', hooks)).toBeNull();
    expect([hooks.notSent.mock.calls.length, hooks.answered.mock.calls.length]).toEqual([1, 1]);
    const types = async () => (await store.readStream(streamName(DELIVERY_STREAM, 'D'))).map((e) => e.type);
    // Instances sharing the store: this instance's claim stands until its lease ends.
    const claims = store.sharedByInstances ? ['webhooks.DeliveryClaimed'] : [];
    expect(await types()).toEqual(['webhooks.DeliveryScheduled', ...claims]);
    expect((await load('D')).state.status).toBe('pending');

    const leftAt = Date.parse('2030-01-02T03:04:05.000Z');
    const later = makePipeline(
      {
        send: () =>
          Promise.resolve({
            result: { kind: 'response', statusCode: 204 },
            durationMs: 1,
            retryAfterMs: null,
            sentAt: leftAt,
          }),
      },
      new DeliveryStates(),
    );
    await later.run('D');
    if (store.sharedByInstances) {
      // Claimed by the first pipeline's instance: nothing until its lease lapses.
      expect(await types()).toEqual(['webhooks.DeliveryScheduled', ...claims]);
      return;
    }
    const attempted = (await store.readStream(streamName(DELIVERY_STREAM, 'D')))[1];
    expect(attempted.data).toMatchObject({ attempted_at: new Date(leftAt).toISOString(), outcome: 'succeeded' });
  });

  it('starts nothing from a later event alone, and drops an entry that sees an event twice or out of order', async () => {
    await append('D', scheduled('D'));
    await append('D', { type: 'webhooks.DeliveryCancelled', data: { delivery_id: 'D', reason: 'test' } });
    const [first, second] = (await store.readStream(streamName(DELIVERY_STREAM, 'D'))).map((e) =>
      fromRecorded<DeliveryEvent>(e),
    );
    states.observe(second);
    expect(states.get('D')).toBeUndefined();
    states.observe(first);
    states.observe(first);
    expect(states.get('D')).toBeUndefined();
  });

  it('stops at its limit', async () => {
    states = new DeliveryStates(1);
    for (const id of ['D1', 'D2']) {
      await append(id, scheduled(id));
      await observe(id);
    }
    expect(states.size).toBe(1);
  });

  it('a stale copy never sends a cancelled delivery: the claim fails and the stream decides', async () => {
    await append('D', scheduled('D'));
    await observe('D');
    // Cancelled by a write this copy has not seen (another instance's, or the projection is behind).
    await commands.cancel('D', 'endpoint disabled or deleted');
    expect(states.get('D')?.state.status).toBe('pending');
    const position = await pipeline.run('D');
    expect(sent).toEqual([]);
    expect(position).not.toBeNull();
    expect(states.get('D')).toBeUndefined();
    expect((await load('D')).state.status).toBe('cancelled');
  });

  it('a stale copy never sends a delivery twice: what another instance delivered is not sent again', async () => {
    await append('D', scheduled('D'));
    await observe('D');
    const other = makePipeline(
      {
        send: () =>
          Promise.resolve({ result: { kind: 'response', statusCode: 204 }, durationMs: 1, retryAfterMs: null }),
      } as unknown as Sender,
      new DeliveryStates(),
    );
    await other.run('D');
    await pipeline.run('D');
    expect(sent).toEqual([]);
    const { state } = await load('D');
    expect(state).toMatchObject({ status: 'delivered', attemptCount: 1 });
  });

  it('a copy behind a live claim of another instance leaves the delivery alone', async () => {
    await append('D', scheduled('D'));
    await observe('D');
    // Written directly: on a store one process owns, only a former version (or instance) left one.
    await append('D', {
      type: 'webhooks.DeliveryClaimed',
      data: {
        delivery_id: 'D',
        attempt: 1,
        instance: 'other',
        lease_until: new Date(Date.now() + 15_000).toISOString(),
      },
    });
    await pipeline.run('D');
    expect(sent).toEqual([]);
    expect((await load('D')).state).toMatchObject({ status: 'pending', attemptCount: 0 });
  });

  it('a delivered stream holds a claim only where instances share the store', async () => {
    await append('D', scheduled('D'));
    await observe('D');
    await pipeline.run('D');
    expect(sent).toEqual(['ev-D']);
    const events = await store.readStream(streamName(DELIVERY_STREAM, 'D'));
    const claim = store.sharedByInstances ? ['DeliveryClaimed'] : [];
    // The successful attempt is one event that says so: no DeliverySucceeded after it.
    expect(events.map((e) => e.type.replace('webhooks.', ''))).toEqual([
      'DeliveryScheduled',
      ...claim,
      'DeliveryAttempted',
    ]);
    expect(events.at(-1)?.data).toMatchObject({ status_code: 204, outcome: 'succeeded' });
  });

  it('an older stream (attempt, then its success): kept pending until the success', async () => {
    await append('D', scheduled('D'));
    await observe('D');
    await append('D', attemptWithoutOutcome(200));
    await observe('D');
    expect(states.get('D')).toMatchObject({ revision: 1n, state: { status: 'pending', attemptCount: 1 } });
    await append('D', { type: 'webhooks.DeliverySucceeded', data: { delivery_id: 'D', attempt: 1 } });
    await observe('D');
    expect(states.get('D')).toBeUndefined();
    expect((await load('D')).state).toMatchObject({ status: 'delivered', attemptCount: 1 });
  });

  it('a cancel racing the attempt: sent only while the stream held no cancel, recorded either way', async () => {
    const ids = Array.from({ length: 24 }, (_, i) => `D${i}`);
    const sawCancel: string[] = [];
    const racing = makePipeline(
      {
        send: async ({ eventId }: WebhookRequest) => {
          // What the stream holds the moment the request goes out (the inline writer commits between ticks).
          const events = await store.readStream(streamName(DELIVERY_STREAM, eventId.slice(3)));
          if (events.some((e) => e.type === 'webhooks.DeliveryCancelled')) sawCancel.push(eventId);
          sent.push(eventId);
          return { result: { kind: 'response', statusCode: 204 }, durationMs: 1, retryAfterMs: null };
        },
      } as unknown as Sender,
      states,
    );
    for (const id of ids) {
      await append(id, scheduled(id));
      await observe(id);
    }
    const turns = async (n: number) => {
      for (let k = 0; k < n; k++) await new Promise((resolve) => setImmediate(resolve));
    };
    // Each cancel starts from 0 to 3 event-loop turns before or after its attempt.
    await Promise.all(
      ids.map(async (id, i) => {
        const [first, second] =
          i % 2 === 0
            ? [() => racing.run(id), () => commands.cancel(id, 'endpoint disabled or deleted')]
            : [() => commands.cancel(id, 'endpoint disabled or deleted'), () => racing.run(id)];
        const started = first();
        await turns(Math.floor(i / 2) % 4);
        await Promise.all([started, second()]);
      }),
    );
    expect(sawCancel).toEqual([]);
    // The race went both ways: some were sent before their cancel, some were stopped by it.
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.length).toBeLessThan(ids.length);
    for (const id of ids) {
      const { state } = await load(id);
      expect(state.status === 'delivered' || state.status === 'cancelled').toBe(true);
      expect(state.attemptCount).toBe(sent.includes(`ev-${id}`) ? 1 : 0);
    }
  });

  it('a retry uses the copy the projection kept up to date, and is sent once', async () => {
    await append('D', scheduled('D'));
    await append('D', attemptWithoutOutcome(503));
    await append('D', {
      type: 'webhooks.DeliveryRetryScheduled',
      data: { delivery_id: 'D', next_attempt_at: '2020-01-01T00:00:01.000Z' },
    });
    await observe('D');
    expect(states.get('D')).toMatchObject({ revision: 2n, state: { attemptCount: 1 } });
    await pipeline.run('D');
    expect(sent).toEqual(['ev-D']);
    expect((await load('D')).state).toMatchObject({ status: 'delivered', attemptCount: 2 });
  });
});
