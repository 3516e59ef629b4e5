import type { EventData, Json, JsonObject, Position, RecordedEvent, StreamRevision } from '@filing/event-store';
import { v7 as uuidv7 } from 'uuid';

/** What `decide` returns: an explicit, stable type name (`orders.OrderSubmitted`) and plain JSON. */
export interface DomainEvent<T extends string = string, D extends JsonObject = JsonObject> {
  readonly type: T;
  readonly data: D;
}

/** Carried by every event (DESIGN.md): who did it, for which account, why, and when. */
export interface EventMetadata {
  readonly account_id: string | null;
  readonly actor: string;
  readonly correlation_id: string;
  readonly causation_id: string | null;
  /** ISO 8601 UTC with milliseconds: `2026-11-22T10:00:00.000Z`. */
  readonly occurred_at: string;
  readonly schema_version: number;
}

/** Who is asking, filled by the HTTP layer (or the CLI) and copied onto every event it causes. */
export interface CommandContext {
  /** null for operator actions that belong to no account. */
  readonly account_id: string | null;
  /** e.g. `client:<id>`, `user:<id>`, `operator:<id>`, `system:webhooks`. */
  readonly actor: string;
  readonly correlation_id: string;
  /** The id of the event or request that caused this command, if any. */
  readonly causation_id: string | null;
}
export type RequestContext = CommandContext;

/**
 * A recorded event as domain code sees it. An intersection, so a union of event types still
 * narrows on `type`.
 */
export type RecordedEnvelope<E extends DomainEvent = DomainEvent> = E & {
  readonly id: string;
  readonly metadata: EventMetadata;
  readonly streamId: string;
  readonly revision: StreamRevision;
  readonly position: Position;
};

/** The stored event does not carry valid metadata (written by something that bypassed this code). */
export class InvalidEnvelopeError extends Error {
  override readonly name = 'InvalidEnvelopeError';
}

export function buildMetadata(
  context: CommandContext,
  occurredAt: Date = new Date(),
  schemaVersion = 1,
): EventMetadata {
  return {
    account_id: context.account_id,
    actor: context.actor,
    correlation_id: context.correlation_id,
    causation_id: context.causation_id,
    occurred_at: occurredAt.toISOString(),
    schema_version: schemaVersion,
  };
}

/** Ids are UUID v7 (time-ordered), so they index well and sort by creation. */
export function toEventData(event: DomainEvent, metadata: EventMetadata, id: string = uuidv7()): EventData {
  return { id, type: event.type, data: event.data, metadata: { ...metadata } };
}

/** Validates the metadata shape; the data is trusted to match `E` (we wrote it). */
export function fromRecorded<E extends DomainEvent = DomainEvent>(event: RecordedEvent): RecordedEnvelope<E> {
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: parseMetadata(event.metadata, event.id),
    streamId: event.streamId,
    revision: event.revision,
    position: event.position,
  } as unknown as RecordedEnvelope<E>;
}

const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export function parseMetadata(metadata: JsonObject, eventId = '?'): EventMetadata {
  const m = metadata as unknown as EventMetadata;
  // Every event read passes here (a rebuild: a million times): the valid case builds nothing else.
  if (!metadataIsValid(metadata)) {
    throw new InvalidEnvelopeError(`Event ${eventId}: ${metadataProblems(metadata).join('; ')}`);
  }
  return {
    account_id: m.account_id,
    actor: m.actor,
    correlation_id: m.correlation_id,
    causation_id: m.causation_id,
    occurred_at: m.occurred_at,
    schema_version: m.schema_version,
  };
}

const nonEmpty = (v: Json | undefined) => typeof v === 'string' && v.length > 0;
const nullOrNonEmpty = (v: Json | undefined) => v === null || nonEmpty(v);
const isoUtcMs = (v: Json | undefined) => typeof v === 'string' && ISO_UTC_MS.test(v);
const positiveInteger = (v: Json | undefined) => typeof v === 'number' && Number.isInteger(v) && v >= 1;

/** Each metadata field: its rule, and what the rule asks for (the error's words). */
const METADATA_RULES: readonly (readonly [keyof EventMetadata, (v: Json | undefined) => boolean, string])[] = [
  ['account_id', nullOrNonEmpty, 'a string or null'],
  ['actor', nonEmpty, 'a non-empty string'],
  ['correlation_id', nonEmpty, 'a non-empty string'],
  ['causation_id', nullOrNonEmpty, 'a string or null'],
  ['occurred_at', isoUtcMs, 'ISO 8601 UTC with milliseconds'],
  ['schema_version', positiveInteger, 'a positive integer'],
];

function metadataIsValid(metadata: JsonObject): boolean {
  for (const [field, ok] of METADATA_RULES) if (!ok(metadata[field])) return false;
  return true;
}

function metadataProblems(metadata: JsonObject): string[] {
  return METADATA_RULES.filter(([field, ok]) => !ok(metadata[field])).map(
    ([field, , what]) => `${field} must be ${what}`,
  );
}

/**
 * `<context>-<id>`, e.g. `order-0193…`. The context has no `-`, so EventStoreDB's category
 * (`$ce-order`) is everything before the first dash.
 */
export function streamName(context: string, id: string): string {
  if (!/^[a-z][a-zA-Z0-9_]*$/.test(context)) throw new RangeError(`Invalid stream context ${JSON.stringify(context)}`);
  if (id.length === 0) throw new RangeError('A stream id must not be empty');
  return `${context}-${id}`;
}

export function parseStreamName(stream: string): { context: string; id: string } {
  const dash = stream.indexOf('-');
  if (dash <= 0 || dash === stream.length - 1)
    throw new RangeError(`Not a <context>-<id> stream: ${JSON.stringify(stream)}`);
  return { context: stream.slice(0, dash), id: stream.slice(dash + 1) };
}
