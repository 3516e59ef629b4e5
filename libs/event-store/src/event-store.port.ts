/**
 * The event store port. Two adapters implement it with the same semantics (sqlite, esdb),
 * proven by one conformance suite (testing/conformance.ts). The semantics follow EventStoreDB,
 * so code written against the embedded store behaves the same in production.
 */

/** A stream revision: 0 for a stream's first event. */
export type StreamRevision = bigint;

/**
 * A position in the global `$all` log. Opaque: compare with `comparePositions`, persist with
 * `positionToString`. EventStoreDB gives (commit, prepare) transaction-log offsets; the sqlite
 * adapter uses its rowid for both.
 */
export interface Position {
  readonly commit: bigint;
  readonly prepare: bigint;
}

export const ANY = 'any' as const;
export const NO_STREAM = 'no_stream' as const;
export const STREAM_EXISTS = 'stream_exists' as const;

/** What the writer believes the stream's current revision is. */
export type ExpectedRevision = typeof ANY | typeof NO_STREAM | typeof STREAM_EXISTS | StreamRevision;

/** JSON-serialisable value (event data and metadata are plain JSON). */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface EventData {
  /** UUID; re-appending an id already in the stream is acknowledged without writing it twice. */
  readonly id: string;
  /** Explicit, stable type name, e.g. `orders.OrderSubmitted`. Never `constructor.name`. */
  readonly type: string;
  readonly data: JsonObject;
  readonly metadata?: JsonObject;
}

export interface RecordedEvent {
  readonly id: string;
  readonly type: string;
  readonly streamId: string;
  readonly revision: StreamRevision;
  readonly position: Position;
  readonly data: JsonObject;
  readonly metadata: JsonObject;
  /** When the store recorded the event. */
  readonly created: Date;
}

export interface AppendOptions {
  /** Default `any`. */
  readonly expectedRevision?: ExpectedRevision;
}

export interface AppendResult {
  /** The stream's revision after the append (of the last event of this append). */
  readonly nextExpectedRevision: StreamRevision;
  /** Position of the last event of this append in `$all`. */
  readonly position: Position;
}

export type Direction = 'forwards' | 'backwards';

export interface ReadStreamOptions {
  readonly direction?: Direction;
  /** Inclusive. `start` = revision 0, `end` = the last event. Default: start forwards, end backwards. */
  readonly fromRevision?: StreamRevision | 'start' | 'end';
  readonly maxCount?: number;
}

export interface ReadAllOptions {
  readonly direction?: Direction;
  /**
   * Forwards: inclusive of `from`. Backwards: events strictly before `from`.
   * Default: start forwards, end backwards.
   */
  readonly from?: Position | 'start' | 'end';
  readonly maxCount?: number;
}

/** Server-side filter of a `$all` subscription: any of the prefixes matches. */
export type SubscriptionFilter =
  { readonly eventTypePrefixes: readonly string[] } | { readonly streamNamePrefixes: readonly string[] };

export interface SubscribeToAllOptions {
  /** Exclusive: the subscription delivers events after this position. `start` = everything. */
  readonly from?: Position | 'start' | 'end';
  readonly filter?: SubscriptionFilter;
}

export type SubscriptionMessage =
  | { readonly kind: 'event'; readonly event: RecordedEvent }
  /** Catch-up has reached the head of the log; what follows is live. Sent once. */
  | { readonly kind: 'caught-up' }
  /**
   * Every event up to `position` has been considered (filtered-out ones included): a consumer may
   * persist it as its checkpoint so a restart does not re-scan what the filter skipped.
   */
  | { readonly kind: 'checkpoint'; readonly position: Position };

/**
 * A catch-up subscription: catch-up, then live, no gap and no duplicate at the seam. The adapter
 * waits for the consumer to ask for the next message (backpressure). A dropped connection is
 * resubscribed from the last delivered position, invisibly to the consumer. It ends only when
 * `stop()` is called (or with an error that cannot be recovered from).
 */
export interface EventSubscription extends AsyncIterable<SubscriptionMessage> {
  stop(): Promise<void>;
}

/**
 * What stream reads show of a stream (EventStoreDB's `$maxAge`, `$maxCount`, `$tb`). `$all` reads
 * and subscriptions still carry every event, as on the server until it scavenges.
 */
export interface StreamMetadata {
  /** Seconds: stream reads hide events recorded longer ago than this. */
  readonly maxAge?: number;
  /** Stream reads show only the newest `maxCount` events. */
  readonly maxCount?: number;
  /** Stream reads hide revisions before this one. */
  readonly truncateBefore?: StreamRevision;
}

export interface HeadPositionOptions {
  /** Event types (exact) the head may pass over: large ones nobody waits for, e.g. content chunks. */
  readonly skipTypes?: readonly string[];
}

export interface EventStore {
  /** Which adapter this is: `sqlite` or `esdb`. */
  readonly kind: string;
  /**
   * Whether several service instances may append to this store at once (EventStoreDB), or one
   * process owns it (sqlite: the DATA_DIR lock, CONTRACT "one process per DATA_DIR"). On a store
   * one process owns, what that process holds in memory already says who is writing what, so
   * callers may skip writes that only arbitrate between instances (the webhook claim).
   */
  readonly sharedByInstances: boolean;
  /** All events of one call commit together or not at all. */
  appendToStream(streamId: string, events: readonly EventData[], options?: AppendOptions): Promise<AppendResult>;
  /**
   * The revision an append's expected revision is compared with: the stream's newest event's, or
   * null when it has none. Reads no event body: a cheap check that a state folded earlier is
   * still the stream's current one.
   */
  streamRevision(streamId: string): Promise<StreamRevision | null>;
  /** A missing stream reads as an empty list. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** Application events only: EventStoreDB system events (`$`-prefixed) are never returned. */
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  subscribeToAll(options?: SubscribeToAllOptions): EventSubscription;
  /** Replaces the stream's metadata (a missing field means no such limit). */
  setStreamMetadata(streamId: string, metadata: StreamMetadata): Promise<void>;
  /** The stream's metadata; `{}` when none was set. */
  getStreamMetadata(streamId: string): Promise<StreamMetadata>;
  /**
   * Soft delete: the stream reads as empty from now on (its events stay in `$all`); a later
   * append continues its revisions and the stream then shows only the new events.
   */
  deleteStream(streamId: string): Promise<void>;
  /**
   * Hard delete (EventStoreDB's tombstone), for streams whose events must not outlive them (key
   * streams): the stream reads as empty for ever and an append to it fails with
   * StreamDeletedError. The sqlite store removes its rows at once, from `$all` too; EventStoreDB
   * keeps them on disk, unreadable through the client, until its next scavenge. Tombstoning a
   * tombstoned stream (or one that never existed) succeeds.
   */
  tombstoneStream(streamId: string): Promise<void>;
  /**
   * Hides revisions before `before` from stream reads for good (`$tb`, the stream's other
   * metadata kept). The sqlite store removes their rows at once, from `$all` too; EventStoreDB
   * removes them at its next scavenge (`$all` reads still carry them until then).
   */
  truncateStream(streamId: string, before: StreamRevision): Promise<void>;
  /**
   * Position of the newest application event in `$all`, or null when there is none. With
   * `skipTypes`, events of those types may be passed over (EventStoreDB does, so the read carries
   * no large body): the answer is then at or after the newest other event's position and at or
   * before the newest event's.
   */
  headPosition(options?: HeadPositionOptions): Promise<Position | null>;
  /** Resolves when the store answers; rejects otherwise (used by /readyz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export const EVENT_STORE = Symbol('EVENT_STORE');
