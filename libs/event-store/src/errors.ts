import type { ExpectedRevision, StreamRevision } from './event-store.port';

/** The stream's revision was not the one the writer expected. Nothing was written. */
export class WrongExpectedVersionError extends Error {
  override readonly name = 'WrongExpectedVersionError';
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** The stream's actual revision, or `no_stream`. */
    readonly actual: StreamRevision | 'no_stream',
  ) {
    super(`Wrong expected version for stream ${streamId}: expected ${String(expected)}, actual ${String(actual)}`);
  }
}

/** The store could not be reached or failed; the operation may or may not have been applied. */
export class EventStoreUnavailableError extends Error {
  override readonly name = 'EventStoreUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** An argument the store refuses (bad event id, empty type, non-JSON data). Nothing was written. */
export class InvalidEventError extends Error {
  override readonly name = 'InvalidEventError';
}

/**
 * The store refuses this service for good — wrong credentials, no permission, a server
 * certificate its CA file does not vouch for — as opposed to being down for a while. A start
 * that meets it stops with this message alone: retrying cannot help.
 */
export class EventStoreAccessError extends Error {
  override readonly name = 'EventStoreAccessError';
}

/** The stream was hard-deleted (tombstoned): nothing can be appended to it again. Nothing was written. */
export class StreamDeletedError extends Error {
  override readonly name = 'StreamDeletedError';
  constructor(readonly streamId: string) {
    super(`Stream ${streamId} is deleted for good (tombstoned)`);
  }
}
