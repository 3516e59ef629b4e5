import { comparePositions, type Position, type RecordedEvent } from '@filing/event-store';
import { buildMetadata, EventHandlingError, type EventMetadata, type ProcessorMessage } from '@filing/platform';
import {
  DELIVERY_EVENT_PREFIX,
  deliveryEnd,
  DeliveryEvents,
  type DeliveryScheduled,
} from '../deliveries/delivery.events';
import { mayHaveFacts, type ResourceFacts } from '../notifications/notification-mapper';
import { type CancelScope, fanOutStep } from './fanout-step';
import type { MemoryFanOutView } from './fanout-view';
import type { DeliveryRow } from './open-deliveries';

/** What the fan-out reads besides the batch: its view (changed in place) and what its file holds. */
export interface BatchInputs {
  readonly view: MemoryFanOutView;
  /** The saved checkpoint: events up to it were handled already (a re-run after a failure). */
  readonly after: Position | null;
  readonly factsOf: (streamId: string) => ResourceFacts | undefined;
  /** A delivery as known before this batch (rows waiting to be saved, then the file). */
  readonly deliveryOf: (deliveryId: string) => DeliveryRow | undefined;
}

/** A pending-deliveries cancellation to record: one endpoint's, as of the disable's position. */
export interface Cancellation {
  readonly endpointId: string;
  readonly reason: string;
  readonly at: Position;
}

/** What one batch decided: the appends to make, then what to save with its checkpoint. */
export interface BatchDecision {
  /** The batch's last position (null: nothing to checkpoint). */
  readonly position: Position | null;
  readonly scheduled: ReadonlyArray<{ readonly event: DeliveryScheduled; readonly metadata: EventMetadata }>;
  readonly cancellations: readonly Cancellation[];
  readonly endpoints: ReadonlySet<string>;
  readonly switches: ReadonlySet<string>;
  /** Deliveries opened or closed, latest state each. */
  readonly deliveries: ReadonlyMap<string, DeliveryRow>;
  readonly facts: ReadonlyMap<string, ResourceFacts>;
}

const noFacts = (): undefined => undefined;

/**
 * The fan-out's decision for a batch, in order: each notifiable event's deliveries (one per
 * endpoint subscribed at its position), each disable's or switch-off's cancellation (recorded
 * for PendingCancellations, never done here), and which deliveries open or close. No I/O but
 * the reads in `inputs`; the view changes in place (a failed batch reloads it).
 */
export function decideBatch(batch: readonly ProcessorMessage[], inputs: BatchInputs): BatchDecision {
  const facts = new Map<string, ResourceFacts>();
  const factsOf = (streamId: string) => (facts.has(streamId) ? facts.get(streamId) : inputs.factsOf(streamId));
  const decision = {
    position: null as Position | null,
    scheduled: [] as Array<{ event: DeliveryScheduled; metadata: EventMetadata }>,
    cancellations: [] as Cancellation[],
    endpoints: new Set<string>(),
    switches: new Set<string>(),
    deliveries: new Map<string, DeliveryRow>(),
    facts,
  };
  for (const work of batch) {
    if (work.kind === 'checkpoint') {
      decision.position = work.position;
      continue;
    }
    const { event } = work;
    decision.position = event.position;
    if (inputs.after && comparePositions(event.position, inputs.after) <= 0) continue;
    if (event.type.startsWith(DELIVERY_EVENT_PREFIX)) {
      trackDelivery(event, decision.deliveries, inputs.deliveryOf);
      // A delivery that gave up is also `webhook_delivery.failed` (issue 50): fanned out below.
      if (event.type !== DeliveryEvents.DeliveryFailed) continue;
    }
    let step: ReturnType<typeof fanOutStep>;
    try {
      step = fanOutStep(inputs.view, mayHaveFacts(event) ? factsOf : noFacts, event);
    } catch (cause) {
      // Named, so the supervisor can tell a poison event from a passing store failure.
      throw new EventHandlingError('webhook-fanout', event, { cause });
    }
    if (step.facts) facts.set(step.facts[0], step.facts[1]);
    if (step.endpointChanged) decision.endpoints.add(step.endpointChanged);
    if (step.switchChanged) decision.switches.add(step.switchChanged);
    if (step.cancel) decision.cancellations.push(...cancellationsOf(inputs.view, step.cancel, event.position));
    scheduleAll(event, step.scheduled, decision);
  }
  return decision;
}

/** One job per endpoint in scope: an account's switch-off is each of its endpoints'. */
function cancellationsOf(view: MemoryFanOutView, scope: CancelScope, at: Position): Cancellation[] {
  if ('endpointId' in scope) return [{ endpointId: scope.endpointId, reason: 'endpoint disabled or deleted', at }];
  return view
    .endpointsOf(scope.accountId)
    .map((e) => ({ endpointId: e.id, reason: 'webhook notifications switched off', at }));
}

function scheduleAll(
  event: RecordedEvent,
  scheduled: readonly DeliveryScheduled[],
  decision: {
    scheduled: Array<{ event: DeliveryScheduled; metadata: EventMetadata }>;
    deliveries: Map<string, DeliveryRow>;
  },
): void {
  const correlation = typeof event.metadata.correlation_id === 'string' ? event.metadata.correlation_id : event.id;
  // One event's deliveries share their metadata (an event's notification is one account's).
  let metadata: EventMetadata | undefined;
  for (const s of scheduled) {
    if (metadata?.account_id !== s.data.account_id) {
      metadata = buildMetadata({
        account_id: s.data.account_id,
        actor: 'system:webhooks',
        correlation_id: correlation,
        causation_id: event.id,
      });
    }
    decision.scheduled.push({ event: s, metadata });
    // Open from the event's position on, though its own event lands later in the stream.
    const owner = { endpointId: s.data.endpoint_id, accountId: s.data.account_id };
    decision.deliveries.set(s.data.delivery_id, { owner, open: true, openedAt: event.position });
  }
}

/**
 * Which deliveries are pending, from their own events. A closed delivery's row stays (closed):
 * it says whose it was if a redelivery opens it again.
 */
function trackDelivery(
  event: RecordedEvent,
  changed: Map<string, DeliveryRow>,
  known: (deliveryId: string) => DeliveryRow | undefined,
): void {
  const id = typeof event.data.delivery_id === 'string' ? event.data.delivery_id : null;
  if (!id) return;
  const row = changed.get(id) ?? known(id);
  if (event.type === DeliveryEvents.DeliveryScheduled) {
    if (row) return;
    const { endpoint_id, account_id } = event.data as { endpoint_id: string; account_id: string };
    changed.set(id, {
      owner: { endpointId: endpoint_id, accountId: account_id },
      open: true,
      openedAt: event.position,
    });
  } else if (row?.open && deliveryEnd(event) !== null) {
    changed.set(id, { owner: row.owner, open: false, openedAt: null });
  } else if (row && event.type === DeliveryEvents.DeliveryRedeliveryRequested) {
    changed.set(id, { owner: row.owner, open: true, openedAt: event.position });
  }
}
