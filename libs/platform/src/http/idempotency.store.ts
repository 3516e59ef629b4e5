import {
  type EventStore,
  type ExpectedRevision,
  type JsonObject,
  NO_STREAM,
  type RecordedEvent,
  type StreamRevision,
  WrongExpectedVersionError,
} from '@filing/event-store';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildMetadata, type CommandContext, streamName, toEventData } from '../events/envelope';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim with no answer after this long is taken to be abandoned (its instance died) and may be claimed again. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** How long a request waits for the answer of a concurrent one with the same key before its 409. */
export const IDEMPOTENCY_IN_FLIGHT_WAIT_MS = 2_000;

export const IdempotencyEvents = {
  KeyClaimed: 'idempotency.KeyClaimed',
  ResponseRecorded: 'idempotency.ResponseRecorded',
  KeyReleased: 'idempotency.KeyReleased',
} as const;

/** A final answer as it was sent: replayed byte for byte. */
export interface StoredResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The winner's hold on a key: what it records its answer (or release) against. */
export interface IdempotencyClaim {
  readonly streamId: string;
  readonly revision: StreamRevision;
  readonly context: CommandContext;
}

export type Reservation =
  /** First use of the key: the caller runs the request, then `complete()`s or `release()`s the claim. */
  | { readonly kind: 'reserved'; readonly claim: IdempotencyClaim }
  /** The first request with this key has not answered yet (after waiting for it as long as asked). */
  | { readonly kind: 'in-flight' }
  /** The key was used with another request (method, path or body). */
  | { readonly kind: 'mismatch' }
  | { readonly kind: 'replay'; readonly response: StoredResponse };

export interface IdempotencyStoreOptions {
  readonly store: EventStore;
  readonly ttlMs?: number;
  readonly leaseMs?: number;
  readonly now?: () => number;
}

/** What a key's stream says now. */
type KeyState =
  | { readonly kind: 'free'; readonly expected: ExpectedRevision }
  | { readonly kind: 'in-flight'; readonly fingerprint: string }
  | { readonly kind: 'done'; readonly fingerprint: string; readonly response: StoredResponse };

/**
 * Idempotency keys and the answers they replay, per scope (the account), for 24 h, in the event
 * store, so every instance sees the same keys: one stream per (scope, key), named by a hash of
 * both. The first request appends a claim expecting the stream as it read it (`no_stream` for a
 * new key), so of several instances racing one key exactly one wins; the winner appends its answer
 * (or a release, for an answer that is not kept). The stream's `$maxAge` is 24 h, so the store
 * can scavenge it; a claim older than that counts as absent whatever the store still shows.
 */
export class IdempotencyStore {
  private readonly store: EventStore;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly now: () => number;

  constructor(options: IdempotencyStoreOptions) {
    this.store = options.store;
    this.ttlMs = options.ttlMs ?? IDEMPOTENCY_TTL_MS;
    this.leaseMs = options.leaseMs ?? IDEMPOTENCY_LEASE_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Claims the key, or says why not. While another request holds it, waits up to `waitMs` for its
   * answer (polling the stream: the holder may be another instance), so a concurrent retry gets
   * the same answer rather than a 409 when the first answers in time.
   */
  async reserve(
    scope: string,
    key: string,
    fingerprint: string,
    context: CommandContext,
    waitMs = 0,
  ): Promise<Reservation> {
    const streamId = idempotencyStream(scope, key);
    const deadline = this.now() + waitMs;
    for (let pause = 25; ; pause = Math.min(pause * 2, 200)) {
      const outcome = await this.tryClaim(streamId, fingerprint, context);
      if (outcome.kind !== 'in-flight' || this.now() + pause > deadline) return outcome;
      await sleep(pause);
    }
  }

  async complete(claim: IdempotencyClaim, response: StoredResponse): Promise<void> {
    await this.appendAfterClaim(claim, IdempotencyEvents.ResponseRecorded, { ...response });
  }

  /** Forgets a claim whose request gave no answer worth keeping (400, 429, 5xx), so a retry runs it again. */
  async release(claim: IdempotencyClaim): Promise<void> {
    await this.appendAfterClaim(claim, IdempotencyEvents.KeyReleased, {});
  }

  private async tryClaim(streamId: string, fingerprint: string, context: CommandContext): Promise<Reservation> {
    // Set when the stream read empty but exists: all of it is past `$maxAge`, so claim after it.
    let hiddenUpTo: StreamRevision | null = null;
    // A few rounds at most: a lost race re-reads the stream and finds the winner's claim.
    for (let attempt = 0; attempt < 4; attempt++) {
      const state = this.stateOf(await this.store.readStream(streamId, { direction: 'backwards', maxCount: 2 }));
      if (state.kind === 'done' || state.kind === 'in-flight') {
        if (state.fingerprint !== fingerprint) return { kind: 'mismatch' };
        return state.kind === 'done' ? { kind: 'replay', response: state.response } : { kind: 'in-flight' };
      }
      const expected = state.expected === NO_STREAM && hiddenUpTo !== null ? hiddenUpTo : state.expected;
      try {
        const revision = await this.append(
          streamId,
          IdempotencyEvents.KeyClaimed,
          { fingerprint, claimed_at_ms: this.now() },
          context,
          expected,
        );
        if (expected === NO_STREAM) await this.expireAfterTtl(streamId);
        return { kind: 'reserved', claim: { streamId, revision, context } };
      } catch (err) {
        if (!(err instanceof WrongExpectedVersionError)) throw err;
        hiddenUpTo = err.actual === NO_STREAM ? null : err.actual;
      }
    }
    return { kind: 'in-flight' };
  }

  private async append(
    streamId: string,
    type: string,
    data: JsonObject,
    context: CommandContext,
    expectedRevision: ExpectedRevision,
  ): Promise<StreamRevision> {
    const event = toEventData({ type, data }, buildMetadata(context, new Date(this.now())));
    return (await this.store.appendToStream(streamId, [event], { expectedRevision })).nextExpectedRevision;
  }

  /** Lets the store drop the key's events after 24 h. The claim holds without it: a failure only delays that cleanup. */
  private async expireAfterTtl(streamId: string): Promise<void> {
    try {
      await this.store.setStreamMetadata(streamId, { maxAge: Math.ceil(this.ttlMs / 1000) });
    } catch {
      // see above
    }
  }

  /** From the stream's last two events: an outcome is always appended right after its claim. */
  private stateOf(newestFirst: readonly RecordedEvent[]): KeyState {
    const [last, before] = newestFirst;
    if (!last) return { kind: 'free', expected: NO_STREAM };
    const free: KeyState = { kind: 'free', expected: last.revision };
    const claim = last.type === IdempotencyEvents.KeyClaimed ? last : before;
    if (claim?.type !== IdempotencyEvents.KeyClaimed || last.type === IdempotencyEvents.KeyReleased) return free;
    const { fingerprint, claimed_at_ms: claimedAt } = claim.data as { fingerprint: string; claimed_at_ms: number };
    const age = this.now() - claimedAt;
    if (age >= this.ttlMs) return free;
    if (last === claim) return age >= this.leaseMs ? free : { kind: 'in-flight', fingerprint };
    return { kind: 'done', fingerprint, response: last.data as unknown as StoredResponse };
  }

  /** Appends right after the claim; a claim taken over meanwhile (its lease ran out) keeps the newer holder's outcome. */
  private async appendAfterClaim(claim: IdempotencyClaim, type: string, data: JsonObject): Promise<void> {
    try {
      await this.append(claim.streamId, type, data, claim.context, claim.revision);
    } catch (err) {
      if (!(err instanceof WrongExpectedVersionError)) throw err;
    }
  }
}

/** `idempotency-<sha256 of scope and key>`: a fixed-length name whatever the key holds. */
export function idempotencyStream(scope: string, key: string): string {
  return streamName(
    'idempotency',
    createHash('sha256')
      .update(JSON.stringify([scope, key]))
      .digest('hex'),
  );
}
