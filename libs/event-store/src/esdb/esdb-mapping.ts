/** The client's events and errors in the port's terms, for the adapter and its subscription. */
import {
  AccessDeniedError,
  InvalidArgumentError,
  StreamDeletedError as EsdbStreamDeletedError,
  UnsupportedError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
  isCommandError,
  type RecordedEvent as EsdbRecordedEvent,
} from '@eventstore/db-client';
import { NO_STREAM, type ExpectedRevision, type JsonObject, type RecordedEvent } from '../event-store.port';
import { EventStoreUnavailableError, StreamDeletedError, WrongExpectedVersionError } from '../errors';

/** A dropped connection, a restarting or unreachable server: worth another try. */
export function isRecoverable(err: unknown): boolean {
  if (err instanceof AccessDeniedError || err instanceof InvalidArgumentError || err instanceof UnsupportedError) {
    return false;
  }
  if (isClientError(err)) return true;
  if (isGrpcError(err)) return true;
  // A stream torn down under the iterator (ERR_STREAM_PREMATURE_CLOSE, aborts).
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ERR_STREAM_PREMATURE_CLOSE' || (err as Error | null)?.name === 'AbortError';
}

const UNAVAILABLE_GRPC_CODES = new Set([
  1 /* CANCELLED */, 4 /* DEADLINE_EXCEEDED */, 10 /* ABORTED */, 14 /* UNAVAILABLE */,
]);

function isClientError(err: unknown): boolean {
  return err instanceof Error && isCommandError(err);
}

function isGrpcError(err: unknown): err is { code: number; details?: string; message: string } {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number';
}

/** The client's errors in the port's terms. */
export function mapError(err: unknown, append?: { streamId: string; expected: ExpectedRevision }): unknown {
  if (err instanceof EsdbWrongExpectedVersionError && append) {
    const actual = err.actualVersion;
    return new WrongExpectedVersionError(
      append.streamId,
      append.expected,
      typeof actual === 'bigint' && actual >= 0n ? actual : NO_STREAM,
    );
  }
  if (err instanceof EsdbStreamDeletedError) return new StreamDeletedError(err.streamName);
  if (err instanceof EventStoreUnavailableError || err instanceof WrongExpectedVersionError) return err;
  // The client types UNAVAILABLE, CANCELLED, DEADLINE_EXCEEDED, ABORTED (Timeout) and NOT_LEADER;
  // raw gRPC errors can also escape it (e.g. from the append request stream).
  const type = (err as { type?: unknown } | null)?.type;
  const transient = ['unavailable', 'cancelled', 'deadline-exceeded', 'timeout', 'not-leader'];
  if (
    (isClientError(err) && typeof type === 'string' && transient.includes(type)) ||
    (!isClientError(err) && isGrpcError(err) && UNAVAILABLE_GRPC_CODES.has(err.code))
  ) {
    return new EventStoreUnavailableError(`EventStoreDB is unavailable: ${(err as Error).message}`, { cause: err });
  }
  return err;
}

export function isSystemEvent(event: { type: string; streamId: string }): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

export function toRecorded(event: EsdbRecordedEvent): RecordedEvent {
  return {
    id: event.id,
    type: event.type,
    streamId: event.streamId,
    revision: event.revision,
    // Stream reads carry positions too (servers since 22.6); `$all` reads always do.
    position: event.position ?? { commit: 0n, prepare: 0n },
    data: asJsonObject(event.data),
    metadata: asJsonObject(event.metadata),
    created: event.created,
  };
}

/**
 * The application writes JSON objects only. Anything else (a foreign binary event, metadata
 * another tool wrote) is parsed if it is JSON, else read as an empty object rather than failing
 * every reader of `$all`.
 */
function asJsonObject(value: unknown): JsonObject {
  let v = value;
  if (v instanceof Uint8Array) {
    try {
      v = JSON.parse(Buffer.from(v).toString('utf8'));
    } catch {
      return {};
    }
  }
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : {};
}
