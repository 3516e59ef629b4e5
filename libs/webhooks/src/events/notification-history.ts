import { cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { OPERATIONAL_EVENT_TYPES } from '../catalog/event-types';

/** A notification of the Events API's history, as a replay sends it again. */
export interface HistoryRow {
  readonly seq: number;
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

  /** How many, and the last one's seq (a replay stops there: what comes later goes out live). */
  count(window: HistoryWindow): { readonly count: number; readonly lastSeq: number } {
    const { sql, params } = where(window);
    const row = stmt(
      this.runner.db,
      `SELECT count(*) AS count, coalesce(max(seq), 0) AS lastSeq FROM webhook_notifications WHERE ${sql}`,
    ).get(...params);
    return row as { count: number; lastSeq: number };
  }

  /**
   * The next `limit` rows after `afterSeq`, oldest first. In pages, never one statement iterated
   * across awaits: the projections write on this connection meanwhile.
   */
  page(window: HistoryWindow, afterSeq: number, lastSeq: number, limit: number): HistoryRow[] {
    const { sql, params } = where(window);
    return stmt(
      this.runner.db,
      `SELECT seq, event_id, event_type, occurred_at, position, payload FROM webhook_notifications
       WHERE ${sql} AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
    ).all(...params, afterSeq, lastSeq, limit) as HistoryRow[];
  }
}

function where(window: HistoryWindow): { sql: string; params: unknown[] } {
  const named = window.eventTypes.length > 0;
  const types = named ? window.eventTypes : OPERATIONAL_EVENT_TYPES;
  const until = window.until === null ? [] : [window.until.toISOString()];
  return {
    sql: `account_id = ? AND occurred_at >= ?${until.length > 0 ? ' AND occurred_at < ?' : ''} AND event_type ${
      named ? 'IN' : 'NOT IN'
    } (${types.map(() => '?').join(', ')})`,
    params: [window.accountId, window.since.toISOString(), ...until, ...types],
  };
}
