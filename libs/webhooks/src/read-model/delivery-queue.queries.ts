import { cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { cachedForAllEndpoints } from './endpoints-cache';

export interface PendingStats {
  /** Pending deliveries whose next attempt is due. */
  readonly due: number;
  /** Pending deliveries waiting for a retry time. */
  readonly waiting: number;
  /** When the oldest pending spell began, or null when none is pending. */
  readonly oldest: string | null;
}

/**
 * The dispatcher's queue: pending deliveries in `webhook_deliveries`, one queue per endpoint
 * (index `webhook_deliveries_queue`: endpoint_id, next_attempt_at, claimed_until; pending rows only). A
 * delivery an instance has claimed is not due until the claim's lease runs out (its claimer died).
 */
const UNCLAIMED = 'AND (d.claimed_until IS NULL OR d.claimed_until <= :now)';

@Injectable()
export class DeliveryQueue {
  constructor(private readonly runner: ProjectionRunner) {}

  /**
   * Endpoints with a due delivery, in id order after `after` (null: from the first), at most
   * `limit`. One index seek per endpoint (a recursive skip-scan), so the cost follows the number
   * of endpoints, never the length of one endpoint's backlog.
   */
  endpointsWithDueWork(now: Date, after: string | null, limit: number): string[] {
    if (limit <= 0) return [];
    const rows = stmt(
      this.runner.db,
      `WITH RECURSIVE due(endpoint_id) AS (
         SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                 WHERE d.status = 'pending' AND d.endpoint_id > :after AND d.next_attempt_at <= :now ${UNCLAIMED}
                 ORDER BY d.endpoint_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
                 WHERE d.status = 'pending' AND d.endpoint_id > due.endpoint_id AND d.next_attempt_at <= :now ${UNCLAIMED}
                 ORDER BY d.endpoint_id LIMIT 1)
         FROM due WHERE due.endpoint_id IS NOT NULL
         LIMIT :limit
       )
       SELECT endpoint_id FROM due WHERE endpoint_id IS NOT NULL`,
    ).all({ after: after ?? '', now: now.toISOString(), limit }) as Array<{ endpoint_id: string }>;
    return rows.map((r) => r.endpoint_id);
  }

  /** The endpoint's due deliveries, the longest due first (live ones before a replay's). */
  dueOf(endpointId: string, now: Date, limit: number): string[] {
    return this.dueWithPriority(endpointId, now, limit).map((r) => r.id);
  }

  /** The same, each saying whether it is a replay's (sent only when no live one is due). */
  dueWithPriority(endpointId: string, now: Date, limit: number): Array<{ id: string; replay: boolean }> {
    if (limit <= 0) return [];
    const rows = stmt(
      this.runner.db,
      `SELECT id, replay FROM webhook_deliveries d WHERE status = 'pending' AND endpoint_id = :endpointId AND next_attempt_at <= :now ${UNCLAIMED}
       ORDER BY replay, next_attempt_at LIMIT :limit`,
    ).all({ endpointId, now: now.toISOString(), limit }) as Array<{ id: string; replay: number }>;
    return rows.map((r) => ({ id: r.id, replay: r.replay === 1 }));
  }

  /** The `rate_limit_per_second` of every endpoint that has one (kept until the endpoints change: endpoints-cache.ts). */
  rateLimits(): ReadonlyMap<string, number> {
    const db = this.runner.db;
    return cachedForAllEndpoints(db, 'rateLimits', () => {
      const rows = stmt(
        db,
        `SELECT id, rate_limit_per_second AS limit_per_second FROM webhook_endpoints
         WHERE rate_limit_per_second IS NOT NULL`,
      ).all() as Array<{ id: string; limit_per_second: number }>;
      return new Map(rows.map((r) => [r.id, r.limit_per_second]));
    });
  }

  /** Every endpoint's account (kept until the endpoints change: endpoints-cache.ts): the dispatcher's turns go by account. */
  accounts(): ReadonlyMap<string, string> {
    const db = this.runner.db;
    return cachedForAllEndpoints(db, 'accounts', () => {
      const rows = stmt(db, 'SELECT id, account_id FROM webhook_endpoints WHERE deleted = 0').all() as Array<{
        id: string;
        account_id: string;
      }>;
      return new Map(rows.map((r) => [r.id, r.account_id]));
    });
  }

  /** The earliest retry time after `now`, or null. */
  nextDueAfter(now: Date): string | null {
    const row = stmt(
      this.runner.db,
      "SELECT min(next_attempt_at) AS next FROM webhook_deliveries WHERE status = 'pending' AND next_attempt_at > ?",
    ).get(now.toISOString()) as { next: string | null };
    return row.next;
  }

  /** The queue's depth and age, for /metrics. */
  pendingStats(now: Date): PendingStats {
    const at = now.toISOString();
    return stmt(
      this.runner.db,
      `SELECT count(*) FILTER (WHERE next_attempt_at <= ?) AS due, count(*) FILTER (WHERE next_attempt_at > ?) AS waiting,
         min(pending_since) AS oldest
       FROM webhook_deliveries WHERE status = 'pending'`,
    ).get(at, at) as PendingStats;
  }
}
