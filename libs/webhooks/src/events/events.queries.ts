import { EVENT_STORE, type EventStore } from '@filing/event-store';
import {
  cachedStatement as stmt,
  type CommandContext,
  CursorCodec,
  type Page,
  pageRequest,
  ProjectionRunner,
  toPage,
  ValidationError,
  extend,
  NotFoundError,
} from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { OPERATIONAL_EVENT_TYPES } from '../catalog/event-types';
import { parseEventTypeFilter } from './event-filters';
import { DeliveriesQueries, type EventDelivery } from '../read-model/deliveries.queries';

/** One item of `GET /events`: the webhook payload, plus `occurred_at`. */
export type EventItem = Record<string, unknown> & {
  readonly event_id: string;
  readonly event_type: string;
  readonly occurred_at: string;
};

export interface EventsQuery {
  readonly limit?: string;
  readonly cursor?: string;
  readonly event_type?: string | string[];
  readonly after_event_id?: string;
}

interface NotificationRow {
  seq: number;
  occurred_at: string;
  payload: string;
}

const COLLECTION = 'events';
/** How long an `after_event_id` not (yet) in the read model waits for it to catch up with the store. */
const CATCH_UP_WAIT_MS = 2000;

/**
 * The Events API (CONTRACT.md §3 "Events"): the account's notifications, oldest first. The
 * operational `webhook_endpoint.disabled` is listed only when `event_type` names it: like an
 * endpoint's selection, "all events" never includes it, so a client catching up sees nothing new.
 */
@Injectable()
export class EventsQueries {
  constructor(
    private readonly runner: ProjectionRunner,
    private readonly cursors: CursorCodec,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly deliveries: DeliveriesQueries,
  ) {}

  async list(ctx: CommandContext, query: EventsQuery): Promise<Page<EventItem>> {
    const accountId = ctx.account_id ?? '';
    const filter = query.event_type === undefined ? null : parseEventTypeFilter(query.event_type);
    if (filter && 'problem' in filter) throw ValidationError.field('event_type', filter.problem);
    const request = pageRequest<number>(query, COLLECTION, 'number', this.cursors);
    let after = request.after ?? 0;
    if (query.after_event_id !== undefined) after = Math.max(after, await this.seqOf(accountId, query.after_event_id));

    // No filter is "all events": as for an endpoint, the operational ones only when named.
    const types = filter?.types ?? [];
    const [op, names] = types.length > 0 ? ['IN', types] : ['NOT IN', OPERATIONAL_EVENT_TYPES];
    const rows = stmt(
      this.runner.db,
      `SELECT seq, occurred_at, payload FROM webhook_notifications
       WHERE account_id = ? AND seq > ? AND event_type ${op} (${names.map(() => '?').join(', ')})
       ORDER BY seq LIMIT ?`,
    ).all(accountId, after, ...names, request.limit + 1) as NotificationRow[];
    const page = toPage(rows, request, COLLECTION, (r) => r.seq);
    return {
      data: page.data.map(
        (r) => extend(JSON.parse(r.payload) as EventItem, { occurred_at: r.occurred_at }) as EventItem,
      ),
      next_cursor: page.next_cursor,
    };
  }

  /**
   * `GET /events/{id}`: the account's notification (as listed) and where it went: every delivery
   * of it, to each endpoint, with each attempt. Another account's id is as unknown as a made-up one.
   */
  async get(ctx: CommandContext, eventId: string): Promise<EventItem & { deliveries: EventDelivery[] }> {
    const accountId = ctx.account_id ?? '';
    const row = await this.rowOf(eventId);
    if (!row || row.account_id !== accountId) throw NotFoundError.of('event', eventId);
    const item = extend(JSON.parse(row.payload) as EventItem, { occurred_at: row.occurred_at }) as EventItem;
    return extend(item, { deliveries: this.deliveries.ofEvent(accountId, row.event_id) }) as EventItem & {
      deliveries: EventDelivery[];
    };
  }

  /** The notification's row; one the read model does not hold yet is looked up again once it caught up with the store. */
  private async rowOf(
    eventId: string,
  ): Promise<(NotificationRow & { account_id: string; event_id: string }) | undefined> {
    const find = () =>
      stmt(
        this.runner.db,
        'SELECT seq, account_id, event_id, occurred_at, payload FROM webhook_notifications WHERE event_id = ?',
      ).get(eventId.toLowerCase()) as (NotificationRow & { account_id: string; event_id: string }) | undefined;
    const row = find();
    if (row) return row;
    await this.runner.waitFor(await this.store.headPosition(), CATCH_UP_WAIT_MS);
    return find();
  }

  /**
   * Where the account's event `eventId` stands. An id the read model does not hold yet (a
   * webhook can arrive before this instance's projection has the event) is looked up again once
   * the read model has caught up with the store; another account's is as unknown as a made-up one.
   */
  private async seqOf(accountId: string, eventId: string): Promise<number> {
    const find = () =>
      stmt(this.runner.db, 'SELECT seq, account_id FROM webhook_notifications WHERE event_id = ?').get(
        eventId.toLowerCase(),
      ) as { seq: number; account_id: string } | undefined;
    let row = find();
    if (!row) {
      await this.runner.waitFor(await this.store.headPosition(), CATCH_UP_WAIT_MS);
      row = find();
    }
    if (!row || row.account_id !== accountId) {
      throw ValidationError.field(
        'after_event_id',
        'after_event_id names no event of this account (use the event_id of a notification you received)',
      );
    }
    return row.seq;
  }
}
