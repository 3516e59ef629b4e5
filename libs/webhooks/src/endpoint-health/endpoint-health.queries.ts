import { cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Injectable } from '@nestjs/common';
import { type EndpointStats, type FailingStreak, percentile, STATS_WINDOW_MS } from './endpoint-health';

/** The newest delivery of an endpoint: its status, and its last attempt (when it was scheduled, before any). */
export interface LastDelivery {
  readonly status: string;
  readonly at: string;
}

/** What the settings screen's endpoint list shows of each endpoint (the stats without response times). */
export interface EndpointHealth {
  readonly delivered: number;
  readonly failed: number;
  readonly failingSince: string | null;
  readonly lastDelivery: LastDelivery | null;
}

/**
 * Reads of `webhook_health_*` (EndpointHealthProjection). Ids are taken as already checked:
 * callers resolve the endpoint in the caller's account first (EndpointsService.get, or the
 * account's own endpoint list).
 */
@Injectable()
export class EndpointHealthQueries {
  constructor(private readonly runner: ProjectionRunner) {}

  stats(endpointId: string, now: Date = new Date()): EndpointStats {
    const since = windowStart(now);
    const durations = (
      stmt(
        this.runner.db,
        `SELECT duration_ms FROM webhook_health_attempts
         WHERE endpoint_id = ? AND attempted_at >= ? AND status_code IS NOT NULL ORDER BY duration_ms`,
      ).all(endpointId, since) as Array<{ duration_ms: number }>
    ).map((r) => r.duration_ms);
    const { lastSuccess, failingSince } = this.streak(endpointId);
    return {
      delivered: this.count(endpointId, 'delivered', since),
      failed: this.count(endpointId, 'failed', since),
      // Pending is a state now, whenever the delivery was scheduled.
      pending: this.count(endpointId, 'pending', ''),
      p50_ms: percentile(durations, 50),
      p99_ms: percentile(durations, 99),
      last_success_at: lastSuccess,
      failing_since: failingSince,
    };
  }

  /** The list's facts of each endpoint: a few index lookups each, no scan of the window's attempts. */
  health(endpointIds: readonly string[], now: Date = new Date()): Map<string, EndpointHealth> {
    const since = windowStart(now);
    return new Map(
      endpointIds.map((id) => [
        id,
        {
          delivered: this.count(id, 'delivered', since),
          failed: this.count(id, 'failed', since),
          failingSince: this.streak(id).failingSince,
          lastDelivery: this.lastDelivery(id),
        },
      ]),
    );
  }

  /** The endpoint's `failed` deliveries whose event happened at or after `since`, oldest event first. */
  failedSince(endpointId: string, since: Date): string[] {
    const rows = stmt(
      this.runner.db,
      `SELECT delivery_id FROM webhook_health_deliveries WHERE endpoint_id = ? AND status = 'failed' AND event_at >= ?
       ORDER BY event_at, seq`,
    ).all(endpointId, since.toISOString()) as Array<{ delivery_id: string }>;
    return rows.map((r) => r.delivery_id);
  }

  /**
   * Every enabled endpoint's failing streak (FailingStreak): its failed attempts after both its
   * last successful attempt and its last enable. A few index seeks per enabled endpoint.
   */
  failingStreaks(): FailingStreak[] {
    return stmt(
      this.runner.db,
      `SELECT id AS endpointId, account_id AS accountId, since, lastFailureAt FROM (
         SELECT s.id, s.account_id,
           (SELECT min(a.attempted_at) FROM webhook_health_attempts a WHERE a.endpoint_id = s.id AND a.succeeded = 0 AND a.attempted_at > s.start) AS since,
           (SELECT max(a.attempted_at) FROM webhook_health_attempts a WHERE a.endpoint_id = s.id AND a.succeeded = 0 AND a.attempted_at > s.start) AS lastFailureAt
         FROM (
           SELECT e.id, e.account_id, max(coalesce(e.enabled_at, ''), coalesce(
             (SELECT max(a.attempted_at) FROM webhook_health_attempts a WHERE a.endpoint_id = e.id AND a.succeeded = 1), '')) AS start
           FROM webhook_endpoints e WHERE e.enabled = 1 AND e.deleted = 0
         ) s
       ) WHERE since IS NOT NULL`,
    ).all() as FailingStreak[];
  }

  private lastDelivery(endpointId: string): LastDelivery | null {
    const row = stmt(
      this.runner.db,
      'SELECT status, status_at, last_attempt_at FROM webhook_health_deliveries WHERE endpoint_id = ? ORDER BY seq DESC LIMIT 1',
    ).get(endpointId) as { status: string; status_at: string; last_attempt_at: string | null } | undefined;
    if (!row) return null;
    return { status: row.status, at: row.last_attempt_at ?? row.status_at };
  }

  private count(endpointId: string, status: string, from: string): number {
    const row = stmt(
      this.runner.db,
      'SELECT count(*) AS n FROM webhook_health_deliveries WHERE endpoint_id = ? AND status = ? AND status_at >= ?',
    ).get(endpointId, status, from) as { n: number };
    return row.n;
  }

  /** The last 2xx attempt, and the first failed one after it (by attempt time). */
  private streak(endpointId: string): { lastSuccess: string | null; failingSince: string | null } {
    const db = this.runner.db;
    const lastSuccess = (
      stmt(
        db,
        'SELECT max(attempted_at) AS at FROM webhook_health_attempts WHERE endpoint_id = ? AND succeeded = 1',
      ).get(endpointId) as {
        at: string | null;
      }
    ).at;
    const failingSince = (
      stmt(
        db,
        'SELECT min(attempted_at) AS at FROM webhook_health_attempts WHERE endpoint_id = ? AND succeeded = 0 AND attempted_at > ?',
      ).get(endpointId, lastSuccess ?? '') as { at: string | null }
    ).at;
    return { lastSuccess, failingSince };
  }
}

function windowStart(now: Date): string {
  return new Date(now.getTime() - STATS_WINDOW_MS).toISOString();
}
