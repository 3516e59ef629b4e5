import type { DomainEvent, RecordedEnvelope } from '../events/envelope';

/**
 * A read model as a table of small handlers, one per event type (STYLE.md §1, Eventuous's `On<T>`):
 * the types a projection handles are the table's keys, never a second hand-kept list, and each
 * handler sees its own event's data type. `context` is what every handler needs (the database,
 * prepared statements, the event's time).
 */
export type EventHandlers<E extends DomainEvent, C> = {
  readonly [T in E['type']]?: (event: RecordedEnvelope<Extract<E, { type: T }>>, context: C) => void;
};

/** The event types a table handles: what a projection's `handles` lists. */
export function handledTypes<E extends DomainEvent, C>(handlers: EventHandlers<E, C>): string[] {
  return Object.keys(handlers);
}

/** Runs the handler of `event`'s type; an event the table has no handler for is ignored. */
export function applyHandler<E extends DomainEvent, C>(
  handlers: EventHandlers<E, C>,
  event: RecordedEnvelope,
  context: C,
): void {
  const handler = (handlers as Record<string, ((event: RecordedEnvelope, context: C) => void) | undefined>)[event.type];
  handler?.(event, context);
}
