/** The longest a receiver's `Retry-After` can push a retry out. */
export const RETRY_AFTER_CAP_MS = 60 * 60 * 1000;
/** ±20 % around each configured delay, so endpoints that failed together do not retry together. */
export const JITTER_RATIO = 0.2;

/**
 * The delay before the retry that follows failed attempt number `attempt` (1-based), or null
 * when the schedule is exhausted. `random` ∈ [0, 1).
 */
export function retryDelay(
  attempt: number,
  delaysMs: readonly number[],
  retryAfterMs: number | null = null,
  random: () => number = Math.random,
): number | null {
  if (attempt < 1 || attempt > delaysMs.length) return null;
  const base = delaysMs[attempt - 1];
  const jittered = Math.round(base * (1 - JITTER_RATIO + 2 * JITTER_RATIO * random()));
  const floor = retryAfterMs === null ? 0 : Math.min(Math.max(retryAfterMs, 0), RETRY_AFTER_CAP_MS);
  return Math.max(jittered, floor);
}

/** `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or bad. */
export function parseRetryAfter(value: string | string[] | undefined | null, now: Date = new Date()): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw === null) return null;
  const text = raw.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - now.getTime());
}
