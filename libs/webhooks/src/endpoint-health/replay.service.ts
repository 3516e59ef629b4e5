import {
  comparePositions,
  EVENT_STORE,
  type EventStore,
  NO_STREAM,
  type Position,
  type StreamRevision,
  WrongExpectedVersionError,
} from '@filing/event-store';
import {
  buildMetadata,
  type EventMetadata,
  type CommandContext,
  PreconditionFailedError,
  ProjectionRunner,
  ReadYourWrites,
  streamName,
  toEventData,
  ValidationError,
} from '@filing/platform';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { refuseUnsendable } from '../deliveries/delivery';
import { DELIVERY_STREAM, DeliveryEvents, type DeliveryScheduled } from '../deliveries/delivery.events';
import { EndpointsService } from '../endpoints/endpoints.service';
import { type HistoryRow, type HistoryWindow, NotificationHistory } from '../events/notification-history';
import { deliveryId } from '../fanout/delivery-id';
import { DeliveryTargets } from '../read-model/delivery-target.queries';

/** Notifications one replay sends at most (issue 50): a wider window is a 400 naming it. */
export const MAX_REPLAY = 100_000;
/** DeliveryScheduled appends in flight at once. */
const CONCURRENCY = 16;
/** Notifications read from the history at once. */
const PAGE = 500;
/** How long the Events API's history may take to catch up with the store before the window is read. */
const CATCH_UP_WAIT_MS = 5_000;

/**
 * `POST /webhook-endpoints/{id}/replay` and the settings screen's *Replay*: every notification of
 * the account in [since, until) that the endpoint's selection matches (the Events API's history,
 * whether or not the endpoint existed then) becomes a new delivery to it, marked `replay` so
 * the endpoint's live deliveries go first. Each is a DeliveryScheduled event with the original
 * payload (same `event_id`, so the same `webhook-id`): every instance's dispatcher sees it, and
 * the endpoint's rate limit, retries and disable apply as to any delivery.
 */
@Injectable()
export class ReplayService {
  private readonly logger = new Logger('WebhookReplay');

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly endpoints: EndpointsService,
    private readonly history: NotificationHistory,
    private readonly targets: DeliveryTargets,
    private readonly runner: ProjectionRunner,
    private readonly ryw: ReadYourWrites,
  ) {}

  async replay(
    ctx: CommandContext,
    endpointId: string,
    since: Date,
    until: Date | null,
    ifMatch?: StreamRevision,
  ): Promise<{ deliveries: number }> {
    if (until !== null && until.getTime() <= since.getTime()) {
      throw ValidationError.field('until', 'until must be later than since');
    }
    const endpoint = this.endpoints.get(ctx, endpointId);
    if (ifMatch !== undefined && BigInt(endpoint.version) !== ifMatch) throw new PreconditionFailedError();
    const accountId = ctx.account_id ?? '';
    // Sent now, it would only be cancelled: a 409 that says what to change, before anything is written.
    refuseUnsendable(this.targets.of(accountId, endpoint.id), 'The endpoint');
    // The window's notifications may be in the store and not yet in the history: wait for it.
    await this.runner.waitFor(await this.store.headPosition(), CATCH_UP_WAIT_MS);
    const window = { accountId, eventTypes: endpoint.event_types, since, until };
    const { count, lastSeq } = this.history.count(window);
    if (count > MAX_REPLAY) {
      throw ValidationError.field(
        until === null ? 'since' : 'until',
        `The window holds ${count} notifications; a replay sends at most ${MAX_REPLAY}: narrow it (since/until)`,
      );
    }
    const metadata = buildMetadata({
      account_id: accountId,
      actor: ctx.actor,
      correlation_id: ctx.correlation_id,
      causation_id: ctx.causation_id,
    });
    const scheduled = await this.scheduleAll(window, lastSeq, endpoint.id, metadata);
    // Read-your-writes: the deliveries list shows them once the answer is back.
    await this.ryw.await(scheduled.last);
    return { deliveries: scheduled.count };
  }

  /** Page by page, CONCURRENCY appends at a time; each delivery's id is this replay's own. */
  private async scheduleAll(
    window: HistoryWindow,
    lastSeq: number,
    endpointId: string,
    metadata: EventMetadata,
  ): Promise<{ count: number; last: Position | null }> {
    const replayId = randomUUID();
    const now = new Date().toISOString();
    let count = 0;
    let last: Position | null = null;
    for (let rows = this.history.page(window, 0, lastSeq, PAGE); rows.length > 0;) {
      let next = 0;
      await Promise.all(
        Array.from({ length: Math.min(CONCURRENCY, rows.length) }, async () => {
          while (next < rows.length) {
            const event = replayDelivery(rows[next++], endpointId, window.accountId, replayId, now);
            const position = await this.append(event, metadata);
            if (position === null) continue;
            count++;
            if (last === null || comparePositions(position, last) > 0) last = position;
          }
        }),
      );
      rows = this.history.page(window, rows[rows.length - 1].seq, lastSeq, PAGE);
    }
    return { count, last };
  }

  private async append(event: DeliveryScheduled, metadata: EventMetadata): Promise<Position | null> {
    const id = event.data.delivery_id;
    try {
      const result = await this.store.appendToStream(
        streamName(DELIVERY_STREAM, id),
        [toEventData(event, metadata, id)],
        {
          expectedRevision: NO_STREAM,
        },
      );
      return result.position;
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      this.logger.error(`Replay delivery ${id} exists already; not scheduled again`);
      return null;
    }
  }
}

/** A replay's delivery of one notification: its own id (per replay), the original payload. */
function replayDelivery(
  row: HistoryRow,
  endpointId: string,
  accountId: string,
  replayId: string,
  now: string,
): DeliveryScheduled {
  return {
    type: DeliveryEvents.DeliveryScheduled,
    data: {
      delivery_id: deliveryId(row.event_id, `${endpointId}/replay/${replayId}`, new Date(row.occurred_at)),
      endpoint_id: endpointId,
      account_id: accountId,
      event_id: row.event_id,
      event_type: row.event_type,
      source_position: row.position,
      payload: JSON.parse(row.payload) as DeliveryScheduled['data']['payload'],
      due_at: now,
      priority: 'replay',
    },
  };
}
