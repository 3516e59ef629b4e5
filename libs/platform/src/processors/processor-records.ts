import { ANY, positionToString, type EventStore, type RecordedEvent } from '@filing/event-store';
import { createHash } from 'node:crypto';
import { buildMetadata, toEventData } from '../events/envelope';

/**
 * What processors and operators record about events a processor could not handle, in one stream
 * per processor (`processor-<name>`), so that every instance — and a replay — decides the same:
 * an event parked by a reactor, a retry an operator asked for and its outcome, an event an
 * operator chose to skip for a halted projection.
 */
export const ProcessorRecords = {
  EventParked: 'processors.EventParked',
  ParkedEventRetryRequested: 'processors.ParkedEventRetryRequested',
  ParkedEventRetried: 'processors.ParkedEventRetried',
  EventSkipped: 'processors.EventSkipped',
} as const;
export const PROCESSOR_RECORD_PREFIX = 'processors.';

/** The event a record is about, as it is in the log. */
export interface EventRef {
  readonly event_id: string;
  readonly event_type: string;
  readonly stream: string;
  /** `commit/prepare`. */
  readonly position: string;
}

export interface ParkedRecord extends EventRef {
  readonly processor: string;
  /** The handler's error message (never the event's data). */
  readonly error: string;
}

export interface RetriedRecord {
  readonly processor: string;
  readonly event_id: string;
  readonly request_id: string;
  readonly outcome: 'handled' | 'failed';
  readonly error: string | null;
}

/** A record's text field ('' when missing: records are written by this code, read defensively). */
export function field(record: Pick<RecordedEvent, 'data'>, name: string): string {
  const value = record.data[name];
  return typeof value === 'string' ? value : '';
}

export function processorStream(processor: string): string {
  return `processor-${processor}`;
}

export function eventRef(event: Pick<RecordedEvent, 'id' | 'type' | 'streamId' | 'position'>): EventRef {
  return {
    event_id: event.id,
    event_type: event.type,
    stream: event.streamId,
    position: positionToString(event.position),
  };
}

/** A UUID derived from its parts: a record written twice (two instances, a re-run) is one record. */
export function recordId(...parts: string[]): string {
  const hex = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** Appends one record (idempotent on its id); `actor` is who decided it. */
export async function appendProcessorRecord(
  store: EventStore,
  processor: string,
  record: { readonly type: string; readonly data: object; readonly id: string },
  actor: string,
): Promise<void> {
  const metadata = buildMetadata({ account_id: null, actor, correlation_id: record.id, causation_id: null });
  const event = { type: record.type, data: record.data as Record<string, never> };
  await store.appendToStream(processorStream(processor), [toEventData(event, metadata, record.id)], {
    expectedRevision: ANY,
  });
}

/** The events of a processor that are parked now: parked, and not handled by a retry since. */
export function parkedEvents(records: readonly RecordedEvent[]): Map<string, ParkedRecord> {
  const parked = new Map<string, ParkedRecord>();
  for (const r of records) {
    if (r.type === ProcessorRecords.EventParked) {
      const data = r.data as unknown as ParkedRecord;
      parked.set(data.event_id, data);
    } else if (r.type === ProcessorRecords.ParkedEventRetried && r.data.outcome === 'handled') {
      parked.delete(field(r, 'event_id'));
    }
  }
  return parked;
}

/** The event ids an operator chose to skip for a (projection) processor. */
export function skippedEvents(records: readonly RecordedEvent[]): Set<string> {
  return new Set(records.filter((r) => r.type === ProcessorRecords.EventSkipped).map((r) => field(r, 'event_id')));
}
