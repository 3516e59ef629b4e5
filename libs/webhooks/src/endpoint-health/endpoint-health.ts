import { isCalendarDate } from '@filing/platform';

/*
 * An endpoint's health (CONTRACT.md §4 stats, the settings screen's endpoint list) and the
 * `since` of a recovery: pure rules, read-model free.
 */

/** Stats look back this far. */
export const STATS_WINDOW_MS = 24 * 60 * 60 * 1000;

/** `GET /webhook-endpoints/{id}/stats`. */
export interface EndpointStats {
  /** Deliveries that succeeded within the window. */
  readonly delivered: number;
  /** Deliveries that ended `failed` within the window. */
  readonly failed: number;
  /** Deliveries waiting for their first attempt or a retry now. */
  readonly pending: number;
  /** Response time of the window's attempts that got an HTTP answer; null without any. */
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  /** The latest attempt answered 2xx, ever. */
  readonly last_success_at: string | null;
  /** The first failed attempt after the last success; null when the last attempt succeeded or none failed. */
  readonly failing_since: string | null;
}

/**
 * An enabled endpoint's failed attempts since its last success and its last enable (none of its
 * attempts succeeded in between): the first and the last of them, by attempt time.
 */
export interface FailingStreak {
  readonly endpointId: string;
  readonly accountId: string;
  readonly since: string;
  readonly lastFailureAt: string;
}

/**
 * Auto-disable (CONTRACT.md §5): every attempt has failed for `disableAfterMs` when the failed
 * attempts of the streak span at least that long. Judged on attempt times alone, never on the
 * clock, so the same events give the same verdict on any instance and on a replay; an endpoint
 * that failed once and then had nothing to send is not disabled for the silence.
 */
export function failingTooLong(
  streak: Pick<FailingStreak, 'since' | 'lastFailureAt'>,
  disableAfterMs: number,
): boolean {
  return Date.parse(streak.lastFailureAt) - Date.parse(streak.since) >= disableAfterMs;
}

/** How often the auto-disable check runs: a tenth of WEBHOOK_DISABLE_AFTER, from 100 ms to a minute. */
export function autoDisableCheckMs(disableAfterMs: number): number {
  return Math.min(60_000, Math.max(100, Math.floor(disableAfterMs / 10)));
}

/** An attempt succeeded when the receiver answered 2xx (CONTRACT.md §5). */
export function isSuccessfulAttempt(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300;
}

/** Nearest-rank percentile of values sorted ascending (p in 0–100]; null for none. */
export function percentile(sortedAscending: readonly number[], p: number): number | null {
  if (sortedAscending.length === 0) return null;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length, Math.max(1, rank)) - 1];
}

/** Delivered out of finished (delivered + failed) in the window, 0–1; null when none finished. */
export function successRate(stats: Pick<EndpointStats, 'delivered' | 'failed'>): number | null {
  const finished = stats.delivered + stats.failed;
  return finished === 0 ? null : stats.delivered / finished;
}

const INSTANT =
  /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d{1,9})?)?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/;

/**
 * An ISO 8601 date and time with its UTC offset (`2026-11-22T10:00:00.000Z`, `…T11:00+01:00`),
 * naming a day that exists; null for anything else (a date alone, no offset, 2026-02-30).
 */
export function parseInstant(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const match = INSTANT.exec(value);
  if (!match || !isCalendarDate(match[1])) return null;
  const time = Date.parse(value);
  return Number.isFinite(time) ? new Date(time) : null;
}

export const INSTANT_MESSAGE =
  'since must be an ISO 8601 date and time with a UTC offset, e.g. 2026-11-22T10:00:00.000Z';

/** The problem of a `since`, or null (for the DTO's validator). */
export function sinceProblem(value: unknown): string | null {
  return parseInstant(value) ? null : INSTANT_MESSAGE;
}

/** The problem of a replay's `until`, or null (for the DTO's validator). */
export function untilProblem(value: unknown): string | null {
  return parseInstant(value) ? null : INSTANT_MESSAGE.replace(/^since/, 'until');
}
