import { type EventData, SqliteEventStore, type StreamRevision } from '@filing/event-store';
import { type AppConfig, buildMetadata, type SecretBox, streamName, toEventData } from '@filing/platform';
import { setTimeout as sleep } from 'node:timers/promises';
import { DeliveryCommands } from '../deliveries/delivery-commands';
import { DELIVERY_STREAM, DeliveryEvents } from '../deliveries/delivery.events';
import { enabledTarget as target, scheduledDelivery } from '../testing/delivery-fixtures';
import type { EndpointsService } from '../endpoints/endpoints.service';
import type { DeliveryTargets } from '../read-model/delivery-target.queries';
import { DeliveryStates } from './delivery-states';
import { DispatchPipeline } from './dispatch-pipeline';
import { claimLeaseMs, claimSendBy, DispatcherInstance } from './dispatcher-instance';
import type { Sender, WebhookRequest } from './webhook-sender';

const TIMEOUT_MS = 100;
const SKEW_MS = 1_000;
const LEASE_MS = claimLeaseMs(TIMEOUT_MS);

/** One file as if several instances appended to it: claims are written (as on EventStoreDB). */
class SharedStore extends SqliteEventStore {
  override readonly sharedByInstances = true;
  /** How long the acknowledgement of a claim append takes (it is written at once): a leader election. */
  claimAckDelayMs = 0;

  override async appendToStream(
    stream: string,
    events: readonly EventData[],
    options?: { expectedRevision?: StreamRevision | 'any' | 'no_stream' | 'stream_exists' },
  ) {
    const result = await super.appendToStream(stream, events, options);
    const delay = this.claimAckDelayMs;
    if (delay > 0 && events.some((e) => e.type === DeliveryEvents.DeliveryClaimed)) await sleep(delay);
    return result;
  }
}

describe('delivery claims: the lease is kept when the POST leaves', () => {
  let store: SharedStore;

  /** An instance of its own (its pipeline, its copy of states) over the shared store; `sent` what it POSTed. */
  const instance = () => {
    const sent: string[] = [];
    const sender = {
      send: (request: WebhookRequest) => {
        sent.push(request.eventId);
        return Promise.resolve({ result: { kind: 'response', statusCode: 204 }, durationMs: 1, retryAfterMs: null });
      },
    } as unknown as Sender;
    const pipeline = new DispatchPipeline(
      {
        webhookTimeoutMs: TIMEOUT_MS,
        webhookRetryDelaysMs: [1000],
        webhookClaimClockSkewMs: SKEW_MS,
      } as unknown as AppConfig,
      sender,
      new DeliveryCommands(store),
      { of: () => target } as unknown as DeliveryTargets,
      { open: () => 'whsec_' + Buffer.alloc(32, 1).toString('base64') } as unknown as SecretBox,
      {} as EndpointsService,
      new DispatcherInstance(),
      new DeliveryStates(),
    );
    return { pipeline, sent };
  };
  const types = async () => (await store.readStream(streamName(DELIVERY_STREAM, 'D'))).map((e) => e.type);

  beforeEach(async () => {
    store = new SharedStore({ file: ':memory:' });
    await store.appendToStream(streamName(DELIVERY_STREAM, 'D'), [
      toEventData(
        scheduledDelivery('D'),
        buildMetadata({ account_id: 'A', actor: 'test', correlation_id: 'c', causation_id: null }),
      ),
    ]);
  });
  afterEach(() => store.close());

  it('gives the POST a deadline: the request at its timeout ends the skew tolerance before the lease', () => {
    expect(claimSendBy(20_000, 10_000, 1_000)).toBe(9_000);
    expect(claimSendBy(20_000, 10_000, 0)).toBe(10_000);
  });

  it('an instance whose claim is acknowledged after its lease sends nothing; the one that claims next sends it, once', async () => {
    const slow = instance();
    const other = instance();
    store.claimAckDelayMs = LEASE_MS + 500;
    const slowRun = slow.pipeline.run('D');
    // The claim is in the store; its lease runs out while the slow instance waits for the ack.
    for (;;) {
      if ((await types()).includes(DeliveryEvents.DeliveryClaimed)) break;
      await sleep(10);
    }
    await sleep(LEASE_MS + 50);
    store.claimAckDelayMs = 0;
    await other.pipeline.run('D');
    expect(await slowRun).toBeNull();

    expect(slow.sent).toEqual([]);
    expect(other.sent).toEqual(['ev-D']);
    expect(await types()).toEqual([
      DeliveryEvents.DeliveryScheduled,
      DeliveryEvents.DeliveryClaimed,
      DeliveryEvents.DeliveryClaimed,
      DeliveryEvents.DeliveryAttempted,
    ]);
  }, 20_000);

  it('gives a claim up, unsent, when its ack leaves too little of the lease for the request and the skew', async () => {
    const slow = instance();
    // Within the lease, but past the time the POST may leave (lease - timeout - skew).
    store.claimAckDelayMs = LEASE_MS - TIMEOUT_MS - SKEW_MS + 300;
    expect(await slow.pipeline.run('D')).toBeNull();
    expect(slow.sent).toEqual([]);
    // Nothing recorded: once the lease is over the delivery is due again, and sent.
    expect(await types()).toEqual([DeliveryEvents.DeliveryScheduled, DeliveryEvents.DeliveryClaimed]);
  }, 20_000);

  it('sends at once when the ack is prompt', async () => {
    const prompt = instance();
    await prompt.pipeline.run('D');
    expect(prompt.sent).toEqual(['ev-D']);
  });
});
