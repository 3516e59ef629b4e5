import {
  type CommandContext,
  CursorCodec,
  NotFoundError,
  type Page,
  pageRequest,
  ProjectionRunner,
  toPage,
  ValidationError,
  extend,
} from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { cachedStatement as stmt } from '@filing/platform';

export interface DeliveryView {
  readonly id: string;
  readonly event_id: string;
  readonly event_type: string;
  readonly endpoint_id: string;
  readonly status: string;
  readonly attempt_count: number;
  readonly last_attempt_at: string | null;
  readonly next_attempt_at: string | null;
  readonly created_at: string;
}

export interface AttemptView {
  readonly attempted_at: string;
  readonly status_code: number | null;
  readonly error: string | null;
  readonly duration_ms: number;
}

/** One delivery of a notification, as `GET /events/{id}` lists it. */
export interface EventDelivery {
  readonly delivery_id: string;
  readonly endpoint_id: string;
  readonly status: string;
  readonly attempts: AttemptView[];
}

interface DeliveryRow {
  id: string;
  account_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  seq: number;
  created_at: string;
  version: number;
}

const STATUSES = ['pending', 'delivered', 'failed', 'cancelled'];

const view = (r: DeliveryRow): DeliveryView => ({
  id: r.id,
  event_id: r.event_id,
  event_type: r.event_type,
  endpoint_id: r.endpoint_id,
  status: r.status,
  attempt_count: r.attempt_count,
  last_attempt_at: r.last_attempt_at,
  next_attempt_at: r.next_attempt_at,
  created_at: r.created_at,
});

/** The delivery log (CONTRACT.md §4), account-scoped. */
@Injectable()
export class DeliveriesQueries {
  constructor(
    private readonly runner: ProjectionRunner,
    private readonly cursors: CursorCodec,
  ) {}

  list(
    ctx: CommandContext,
    endpointId: string,
    query: { limit?: string; cursor?: string; status?: string },
  ): Page<DeliveryView> {
    this.requireEndpoint(ctx, endpointId);
    if (query.status !== undefined && !STATUSES.includes(query.status)) {
      throw ValidationError.field('status', `status must be one of ${STATUSES.join(', ')}`);
    }
    const collection = `webhook-deliveries:${endpointId}`;
    const request = pageRequest<number>(query, collection, 'number', this.cursors);
    const rows = stmt(
      this.runner.db,
      `SELECT * FROM webhook_deliveries WHERE endpoint_id = ? AND (? IS NULL OR status = ?) AND seq > ? ORDER BY seq LIMIT ?`,
    ).all(
      endpointId,
      query.status ?? null,
      query.status ?? null,
      request.after ?? -1,
      request.limit + 1,
    ) as DeliveryRow[];
    const page = toPage(rows, request, collection, (r) => r.seq);
    return { data: page.data.map(view), next_cursor: page.next_cursor };
  }

  /** The newest `limit` deliveries of an endpoint, newest first (the settings screen's "recent deliveries"). */
  recent(ctx: CommandContext, endpointId: string, limit: number): DeliveryView[] {
    this.requireEndpoint(ctx, endpointId);
    const rows = stmt(
      this.runner.db,
      'SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT ?',
    ).all(endpointId, limit) as DeliveryRow[];
    return rows.map(view);
  }

  private requireEndpoint(ctx: CommandContext, endpointId: string): void {
    const endpoint = stmt(
      this.runner.db,
      'SELECT 1 FROM webhook_endpoints WHERE id = ? AND account_id = ? AND deleted = 0',
    ).get(endpointId, ctx.account_id);
    if (!endpoint) throw NotFoundError.of('webhook endpoint', endpointId);
  }

  /** Every delivery of one notification (each endpoint's, a replay's too), oldest first, with their attempts. */
  ofEvent(accountId: string, eventId: string): EventDelivery[] {
    const rows = stmt(
      this.runner.db,
      'SELECT * FROM webhook_deliveries WHERE event_id = ? AND account_id = ? ORDER BY seq, id',
    ).all(eventId, accountId) as DeliveryRow[];
    return rows.map((row) => ({
      delivery_id: row.id,
      endpoint_id: row.endpoint_id,
      status: row.status,
      attempts: this.attemptsOf(row),
    }));
  }

  private attemptsOf(row: DeliveryRow): AttemptView[] {
    return stmt(
      this.runner.db,
      `SELECT attempted_at, status_code, error, duration_ms FROM webhook_delivery_attempts
       WHERE delivery_seq = ? AND delivery_id = ? ORDER BY attempt`,
    ).all(row.seq, row.id) as AttemptView[];
  }

  get(ctx: CommandContext, id: string): DeliveryView & { attempts: AttemptView[] } {
    const row = stmt(this.runner.db, 'SELECT * FROM webhook_deliveries WHERE id = ? AND account_id = ?').get(
      id,
      ctx.account_id,
    ) as DeliveryRow | undefined;
    if (!row) throw NotFoundError.of('webhook delivery', id);
    return extend(view(row), { attempts: this.attemptsOf(row) });
  }
}
