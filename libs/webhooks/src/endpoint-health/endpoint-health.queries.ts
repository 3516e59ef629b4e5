import { APP_CONFIG, type AppConfig, cachedStatement as stmt, ProjectionRunner } from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { type EndpointStats, type FailingStreak, failingTooLong, percentile, STATS_WINDOW_MS } from './endpoint-health';

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
  /** Its failed attempts since then span WEBHOOK_FAILING_AFTER: what `webhook_endpoint.failing` reports. */
  readonly failingLong: boolean;
  readonly lastDelivery: LastDelivery | null;
}

/**
 * Reads of `webhook_deliveries` and `webhook_health_*` (DeliveriesProjection). Ids are taken as already checked:
 * callers resolve the endpoint in the caller's account first (EndpointsService.get, or the
 * account's own endpoint list).
 */
@Injectable()
export class EndpointHealthQueries {
  constructor(
    private readonly runner: ProjectionRunner,
    @Inject(APP_CONFIG) private readonly config: Pick<AppConfig, 'webhookFailingAfterMs'>,
  ) {}

  stats(endpointId: string, now: Date = new Date()): EndpointStats {
    const since = windowStart(now);
    const durations = (
      stmt(
        this.runner.db,
        `SELECT duration_ms FROM webhook_delivery_attempts
         WHERE endpoint_id = ? AND attempted_at >= ? AND status_code IS NOT NULL ORDER BY duration_ms`,
      ).all(endpointId, since) as Array<{ duration_ms: number }>
    ).map((r) => r.duration_ms);
    const { lastSuccess, failingSince } = this.streak(endpointId);
    return {
      delivered: this.count(endpointId, 'delivered', since),
      failed: this.count(endpointId, 'failed', since),
      // Pending is a state now, whenever the delivery was scheduled.
      pending: this.summary(endpointId)?.pending ?? 0,
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
      endpointIds.map((id) => {
        const { failingSince, lastFailureAt } = this.streak(id);
        const failingLong =
          failingSince !== null &&
          lastFailureAt !== null &&
          failingTooLong({ since: failingSince, lastFailureAt }, this.config.webhookFailingAfterMs);
        return [
          id,
          {
            delivered: this.count(id, 'delivered', since),
            failed: this.count(id, 'failed', since),
            failingSince,
            failingLong,
            lastDelivery: this.lastDelivery(id),
          },
        ];
      }),
    );
  }

  /** The endpoint's `failed` deliveries whose event happened at or after `since`, oldest event first. */
  failedSince(endpointId: string, since: Date): string[] {
    const rows = stmt(
      this.runner.db,
      `SELECT id FROM webhook_deliveries WHERE endpoint_id = ? AND status = 'failed' AND event_at >= ?
       ORDER BY event_at, seq`,
    ).all(endpointId, since.toISOString()) as Array<{ id: string }>;
    return rows.map((r) => r.id);
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
           (SELECT min(a.attempted_at) FROM webhook_delivery_attempts a WHERE a.endpoint_id = s.id AND a.succeeded = 0 AND a.attempted_at > s.start) AS since,
           (SELECT max(a.attempted_at) FROM webhook_delivery_attempts a WHERE a.endpoint_id = s.id AND a.succeeded = 0 AND a.attempted_at > s.start) AS lastFailureAt
         FROM (
           SELECT e.id, e.account_id, max(coalesce(e.enabled_at, ''), coalesce(h.last_success_at, '')) AS start
           FROM webhook_endpoints e LEFT JOIN webhook_health_endpoints h ON h.endpoint_id = e.id
           WHERE e.enabled = 1 AND e.deleted = 0
         ) s
       ) WHERE since IS NOT NULL`,
    ).all() as FailingStreak[];
  }

  private lastDelivery(endpointId: string): LastDelivery | null {
    const row = stmt(
      this.runner.db,
      `SELECT d.status, d.status_at, d.last_attempt_at FROM webhook_health_endpoints h
       JOIN webhook_deliveries d ON d.id = h.last_delivery_id WHERE h.endpoint_id = ?`,
    ).get(endpointId) as { status: string; status_at: string; last_attempt_at: string | null } | undefined;
    if (!row) return null;
    return { status: row.status, at: row.last_attempt_at ?? row.status_at };
  }

  private summary(endpointId: string): { pending: number; last_success_at: string | null } | undefined {
    return stmt(
      this.runner.db,
      'SELECT pending, last_success_at FROM webhook_health_endpoints WHERE endpoint_id = ?',
    ).get(endpointId) as { pending: number; last_success_at: string | null } | undefined;
  }

  /** Ended deliveries of one outcome whose status changed at or after `from` (each outcome its own partial index). */
  private count(endpointId: string, status: 'delivered' | 'failed', from: string): number {
    const row = stmt(this.runner.db, COUNT[status]).get(endpointId, from) as { n: number };
    return row.n;
  }

  /** The last 2xx attempt, and the first failed one after it (by attempt time). */
  private streak(endpointId: string): {
    lastSuccess: string | null;
    failingSince: string | null;
    lastFailureAt: string | null;
  } {
    const lastSuccess = this.summary(endpointId)?.last_success_at ?? null;
    const row = stmt(
      this.runner.db,
      `SELECT min(attempted_at) AS first, max(attempted_at) AS last FROM webhook_delivery_attempts
       WHERE endpoint_id = ? AND succeeded = 0 AND attempted_at > ?`,
    ).get(endpointId, lastSuccess ?? '') as { first: string | null; last: string | null };
    return { lastSuccess, failingSince: row.first, lastFailureAt: row.last };
  }
}

/** The status is written out, not bound: a partial index serves only a query that names its condition. */
const COUNT = {
  delivered: `SELECT count(*) AS n FROM webhook_deliveries
    WHERE endpoint_id = ? AND status = 'delivered' AND status_at >= ?`,
  failed: `SELECT count(*) AS n FROM webhook_deliveries
    WHERE endpoint_id = ? AND status = 'failed' AND status_at >= ?`,
} as const;

function windowStart(now: Date): string {
  return new Date(now.getTime() - STATS_WINDOW_MS).toISOString();
}
