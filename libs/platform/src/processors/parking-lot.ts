import { parsePosition, type EventStore, type Position, type RecordedEvent } from '@filing/event-store';
import {
  appendProcessorRecord,
  eventRef,
  field,
  parkedEvents,
  PROCESSOR_RECORD_PREFIX,
  ProcessorRecords,
  processorStream,
  recordId,
  type ParkedRecord,
  type RetriedRecord,
} from './processor-records';
import {
  describe,
  EventHandlingError,
  messagePosition,
  type ProcessorDefinition,
  type ProcessorMessage,
} from './processor-types';

/** What the processor hands its handler next: a batch, or one parked event an operator asked to retry. */
export type Unit =
  | { readonly kind: 'batch'; readonly messages: ProcessorMessage[] }
  | { readonly kind: 'retry'; readonly request: RecordedEvent };

const ACTOR = 'system:processors';

/**
 * A reactor's parked events, as its record stream says: loaded at every (re)start, kept up to
 * date from the records the subscription brings (written by this instance or another). Parked
 * events reach the handler as checkpoints only, so the reactor goes on past them.
 */
export class ParkingLot {
  private parked = new Map<string, ParkedRecord>();
  private answered = new Set<string>();

  constructor(
    private readonly store: EventStore,
    private readonly processor: string,
  ) {}

  get size(): number {
    return this.parked.size;
  }

  async load(): Promise<void> {
    const records = await this.store.readStream(processorStream(this.processor));
    this.parked = parkedEvents(records);
    this.answered = new Set(
      records.filter((r) => r.type === ProcessorRecords.ParkedEventRetried).map((r) => field(r, 'request_id')),
    );
  }

  /** Records a poison event as parked (the same record id on every instance) and skips it from now on. */
  async park(failure: EventHandlingError): Promise<ParkedRecord> {
    const record: ParkedRecord = {
      processor: this.processor,
      ...eventRef(failure.event),
      error: describe(failure.cause),
    };
    const id = recordId(this.processor, ProcessorRecords.EventParked, failure.event.id);
    await appendProcessorRecord(
      this.store,
      this.processor,
      { id, type: ProcessorRecords.EventParked, data: record },
      ACTOR,
    );
    this.parked.set(record.event_id, record);
    return record;
  }

  /** Records what a retry an operator asked for did; a handled event is no longer parked. */
  async answer(request: RecordedEvent, outcome: 'handled' | 'failed', error: string | null): Promise<void> {
    const data: RetriedRecord = {
      processor: this.processor,
      event_id: field(request, 'event_id'),
      request_id: request.id,
      outcome,
      error,
    };
    const id = recordId(this.processor, ProcessorRecords.ParkedEventRetried, request.id);
    await appendProcessorRecord(
      this.store,
      this.processor,
      { id, type: ProcessorRecords.ParkedEventRetried, data },
      ACTOR,
    );
    this.answered.add(request.id);
    if (outcome === 'handled') this.parked.delete(data.event_id);
  }

  /** The parked event a retry request names, as it is in the log (null: it is not there any more). */
  async original(request: RecordedEvent): Promise<RecordedEvent | null> {
    const position = parsePosition(field(request, 'position'));
    const [event] = await this.store.readAll({ from: position, maxCount: 1 });
    return event?.id === request.data.event_id ? event : null;
  }

  /** Splits what the subscription brought into units: records and parked events become checkpoints. */
  sort(messages: readonly ProcessorMessage[]): Unit[] {
    const units: Unit[] = [];
    let batch: ProcessorMessage[] = [];
    for (const m of messages) {
      if (m.kind === 'event' && m.event.type.startsWith(PROCESSOR_RECORD_PREFIX) && !this.isOwnRecord(m.event)) {
        // Another processor's record: nothing for this one to handle.
        batch.push({ kind: 'checkpoint', position: m.event.position });
      } else if (m.kind === 'event' && this.isOwnRecord(m.event)) {
        if (m.event.type === ProcessorRecords.ParkedEventRetryRequested && this.pending(m.event)) {
          if (batch.length > 0) units.push({ kind: 'batch', messages: batch });
          units.push({ kind: 'retry', request: m.event });
          batch = [];
          continue;
        }
        this.learn(m.event);
        batch.push({ kind: 'checkpoint', position: m.event.position });
      } else if (m.kind === 'event' && this.parked.has(m.event.id)) {
        batch.push({ kind: 'checkpoint', position: m.event.position });
      } else {
        batch.push(m);
      }
    }
    if (batch.length > 0) units.push({ kind: 'batch', messages: batch });
    return units;
  }

  private isOwnRecord(event: RecordedEvent): boolean {
    return event.streamId === processorStream(this.processor);
  }

  /** A retry request nobody answered yet, for an event still parked. */
  private pending(request: RecordedEvent): boolean {
    return !this.answered.has(request.id) && this.parked.has(field(request, 'event_id'));
  }

  /** A record another instance (or this one) wrote. */
  private learn(record: RecordedEvent): void {
    if (record.type === ProcessorRecords.EventParked) {
      const data = record.data as unknown as ParkedRecord;
      this.parked.set(data.event_id, data);
    } else if (record.type === ProcessorRecords.ParkedEventRetried) {
      this.answered.add(field(record, 'request_id'));
      if (record.data.outcome === 'handled') this.parked.delete(field(record, 'event_id'));
    }
  }
}

/** The event a poison failure is about: named by the handler, or the unit's only event. */
export function poisonEvent(processor: string, error: unknown, unit: Unit): EventHandlingError | null {
  if (error instanceof EventHandlingError) return error;
  if (unit.kind === 'retry') return new EventHandlingError(processor, unit.request, { cause: error });
  const events = unit.messages.filter((m) => m.kind === 'event');
  return events.length === 1 ? new EventHandlingError(processor, events[0].event, { cause: error }) : null;
}

export function lastPosition(unit: Unit): Position | null {
  if (unit.kind === 'retry') return unit.request.position;
  const last = unit.messages.at(-1);
  return last ? messagePosition(last) : null;
}

/** A reactor's subscription also brings its records (parks by other instances, retry requests). */
export function withRecords(filter: ProcessorDefinition['filter']): ProcessorDefinition['filter'] {
  if (!filter) return filter;
  if ('eventTypePrefixes' in filter)
    return { eventTypePrefixes: [...filter.eventTypePrefixes, PROCESSOR_RECORD_PREFIX] };
  return { streamNamePrefixes: [...filter.streamNamePrefixes, 'processor-'] };
}
