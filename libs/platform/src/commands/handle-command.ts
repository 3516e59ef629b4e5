import {
  NO_STREAM,
  WrongExpectedVersionError,
  type EventStore,
  type Position,
  type StreamRevision,
} from '@filing/event-store';
import { PreconditionFailedError } from '../errors/domain-errors';
import {
  buildMetadata,
  fromRecorded,
  toEventData,
  type CommandContext,
  type DomainEvent,
  type RecordedEnvelope,
} from '../events/envelope';

export interface HandleCommandOptions<S, E extends DomainEvent, C> {
  readonly store: EventStore;
  readonly streamId: string;
  readonly initialState: S;
  readonly evolve: (state: S, event: RecordedEnvelope<E>) => S;
  /** Pure: returns the events the command causes, or throws a domain error. */
  readonly decide: (state: S, command: C) => readonly E[];
  readonly command: C;
  readonly context: CommandContext;
  /** Reloads after a concurrent write, then gives up and rethrows. Default 3 (4 attempts). */
  readonly maxRetries?: number;
  /**
   * The client's `If-Match` version. A mismatch is a 412, and a concurrent write is one too:
   * the client asked for *that* version, so retrying on a newer one would be wrong.
   */
  readonly ifMatch?: StreamRevision;
  /** schema_version of each event type (default 1). */
  readonly schemaVersion?: (eventType: string) => number;
  readonly now?: () => Date;
  /**
   * The stream's id was minted for this command (a new resource's id), so no stream can exist:
   * the first attempt decides on `initialState` without reading it. The append still expects
   * no stream; should one exist after all, its conflict reloads as any concurrent write does.
   */
  readonly newStream?: boolean;
}

export interface HandleCommandResult<S, E extends DomainEvent> {
  /** Position of the last appended event (what read-your-writes waits for); null if nothing was appended. */
  readonly position: Position | null;
  /** The stream's revision now (the resource's `version`); null when the stream is still empty. */
  readonly nextExpectedRevision: StreamRevision | null;
  readonly events: readonly RecordedEnvelope<E>[];
  readonly state: S;
}

/** Reads a whole stream forwards and folds it; `revision` is null for a missing stream. */
export async function loadAggregate<S, E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  initialState: S,
  evolve: (state: S, event: RecordedEnvelope<E>) => S,
): Promise<{ state: S; revision: StreamRevision | null }> {
  const recorded = await store.readStream(streamId, { direction: 'forwards', fromRevision: 'start' });
  let state = initialState;
  let revision: StreamRevision | null = null;
  for (const event of recorded) {
    state = evolve(state, fromRecorded<E>(event));
    revision = event.revision;
  }
  return { state, revision };
}

/**
 * Load → decide → append with the expected revision; on a concurrent write, reload and decide
 * again (the command may still be allowed on the newer state), up to `maxRetries` times.
 */
export async function handleCommand<S, E extends DomainEvent, C>(
  options: HandleCommandOptions<S, E, C>,
): Promise<HandleCommandResult<S, E>> {
  const { store, streamId, initialState, evolve, decide, command, context, ifMatch } = options;
  const maxRetries = options.maxRetries ?? 3;
  const now = options.now ?? (() => new Date());
  const schemaVersion = options.schemaVersion ?? (() => 1);

  for (let attempt = 0; ; attempt++) {
    const loaded =
      attempt === 0 && options.newStream
        ? { state: initialState, revision: null }
        : await loadAggregate(store, streamId, initialState, evolve);
    if (ifMatch !== undefined && loaded.revision !== ifMatch) throw new PreconditionFailedError();

    const decided = decide(loaded.state, command);
    if (decided.length === 0) {
      return { position: null, nextExpectedRevision: loaded.revision, events: [], state: loaded.state };
    }

    const occurredAt = now();
    // Fresh ids on every attempt: a retry is a new decision, not a re-send of the old one.
    const data = decided.map((e) => toEventData(e, buildMetadata(context, occurredAt, schemaVersion(e.type))));
    let result;
    try {
      result = await store.appendToStream(streamId, data, { expectedRevision: loaded.revision ?? NO_STREAM });
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
      if (ifMatch !== undefined) throw new PreconditionFailedError();
      if (attempt >= maxRetries) throw err;
      continue;
    }

    const events = await recordedEnvelopes<E>(store, streamId, data, result.position, result.nextExpectedRevision);
    const state = events.reduce(evolve, loaded.state);
    return { position: result.position, nextExpectedRevision: result.nextExpectedRevision, events, state };
  }
}

/**
 * The append result gives the position of the last event only. For a single event (the common
 * case) that is enough; for several, read them back, since only the store knows their positions.
 */
async function recordedEnvelopes<E extends DomainEvent>(
  store: EventStore,
  streamId: string,
  data: ReturnType<typeof toEventData>[],
  lastPosition: Position,
  lastRevision: StreamRevision,
): Promise<RecordedEnvelope<E>[]> {
  const firstRevision = lastRevision - BigInt(data.length - 1);
  if (data.length > 1) {
    const read = await store.readStream(streamId, { fromRevision: firstRevision, maxCount: data.length });
    return read.map((e) => fromRecorded<E>(e));
  }
  const [e] = data;
  return [
    fromRecorded<E>({
      id: e.id,
      type: e.type,
      data: e.data,
      metadata: e.metadata ?? {},
      streamId,
      revision: firstRevision,
      position: lastPosition,
      created: new Date(),
    }),
  ];
}
