import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from '../catalog/event-types';

/**
 * `?event_type=`: repeated (`event_type=a&event_type=b`), comma-separated (`event_type=a,b`) or
 * both. The names, each once in the order given, or a problem naming what is wrong.
 */
export function parseEventTypeFilter(value: unknown): { types: string[] } | { problem: string } {
  const parts = (Array.isArray(value) ? value : [value]).map((v) => (typeof v === 'string' ? v : null));
  if (parts.includes(null)) return { problem: 'event_type must be event type names' };
  const names = (parts as string[]).flatMap((p) => p.split(',')).map((n) => n.trim());
  if (names.some((n) => n.length === 0)) return { problem: 'event_type must not have an empty name' };
  const unknown = [...new Set(names.filter((n) => !isWebhookEventType(n)))];
  if (unknown.length > 0) {
    return {
      problem: `Unknown event types: ${unknown.join(', ')} (known: ${WEBHOOK_EVENT_TYPES.map((t) => t.name).join(', ')})`,
    };
  }
  return { types: [...new Set(names)] };
}

/** The problem of an `event_type` filter, or null when it is fine (for the DTO's validator). */
export function eventTypeFilterProblem(value: unknown): string | null {
  const parsed = parseEventTypeFilter(value);
  return 'problem' in parsed ? parsed.problem : null;
}
