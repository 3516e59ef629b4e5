import { cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { OPERATIONAL_EVENT_TYPES } from '../catalog/event-types';

/** A notification of the Events API's history, as a replay sends it again. */
export interface HistoryRow {
  readonly event_id: string;
  readonly event_type: string;
  readonly occurred_at: string;
  readonly position: string;
  readonly payload: string;
}

/** An account's notifications of the selected types that happened in [since, until). */
export interface HistoryWindow {
  readonly accountId: string;
  /** An endpoint's selection: empty means every type but the operational ones. */
  readonly eventTypes: readonly string[];
  readonly since: Date;
  readonly until: Date | null;
}

/**
 * The Events API's history (`webhook_notifications`) by time window and selection: what
 * `POST /webhook-endpoints/{id}/replay` counts and sends, in stream order.
 */
@Injectable()
export class NotificationHistory {
  constructor(private readonly runner: ProjectionRunner) {}

  count(window: HistoryWindow): number {
    const { sql, params } = where(window);
    return (
      stmt(this.runner.db, `SELECT count(*) AS n FROM webhook_notifications WHERE ${sql}`).get(...params) as {
        n: number;
      }
    ).n;
  }

  /** Row by row, oldest first: a large window is not materialised as one array. */
  *rows(window: HistoryWindow): Generator<HistoryRow> {
    const { sql, params } = where(window);
    // Its own statement (not the cache's): an iterating statement is busy until it is done.
    yield* this.runner.db
      .prepare(
        `SELECT event_id, event_type, occurred_at, position, payload FROM webhook_notifications WHERE ${sql} ORDER BY seq`,
      )
      .iterate(...params) as Generator<HistoryRow>;
  }
}

function where(window: HistoryWindow): { sql: string; params: unknown[] } {
  const types = window.eventTypes.length > 0 ? window.eventTypes : OPERATIONAL_EVENT_TYPES;
  const op = window.eventTypes.length > 0 ? 'IN' : 'NOT IN';
  const until = window.until === null ? '' : ' AND occurred_at < ?';
  return {
    sql: `account_id = ? AND occurred_at >= ?${until} AND event_type ${op} (${types.map(() => '?').join(', ')})`,
    params: [
      window.accountId,
      window.since.toISOString(),
      ...(window.until === null ? [] : [window.until.toISOString()]),
      ...types,
    ],
  };
}
