/**
 * The test server's storage: one in-memory transaction log (`$all`) plus a per-stream index,
 * persisted as append-only NDJSON (one line per write, so a write torn by SIGKILL is dropped whole
 * on the next load). Knows EventStoreDB's write semantics (expected revision, idempotent re-append,
 * soft delete via `$$<stream>` `$tb`, tombstones) but nothing about gRPC.
 */
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface StoredEvent {
  /** Fake transaction-log byte offset; commit == prepare. Strictly increasing, never 0. */
  readonly position: bigint;
  readonly streamId: string;
  readonly revision: bigint;
  /** Lower-case UUID (EventStoreDB stores a .NET Guid, which prints lower-case). */
  readonly id: string;
  readonly type: string;
  readonly contentType: string;
  readonly data: Buffer;
  readonly customMetadata: Buffer;
  /** .NET ticks (100 ns) since the Unix epoch, as a decimal string. */
  readonly created: string;
}

export interface ProposedEvent {
  readonly id: string;
  readonly type: string;
  readonly contentType: string;
  readonly data: Buffer;
  readonly customMetadata: Buffer;
}

export type Expected =
  | { readonly kind: 'any' }
  | { readonly kind: 'no_stream' }
  | { readonly kind: 'stream_exists' }
  | { readonly kind: 'revision'; readonly revision: bigint };

export type WriteOutcome =
  /** `revision` is -1n when the stream has no events (an empty append to a missing stream). */
  | { readonly kind: 'ok'; readonly revision: bigint; readonly position: bigint | null }
  /** `current` is -1n for "no stream". */
  | { readonly kind: 'wrong_expected_version'; readonly current: bigint; readonly expected: Expected }
  | { readonly kind: 'stream_deleted' };

export interface StreamState {
  /** Index = revision. Soft-deleted events stay here (hidden below `truncateBefore`). */
  readonly events: StoredEvent[];
  /** Last revision per event id, for idempotent re-append. */
  readonly idIndex: Map<string, bigint>;
  /** From the `$$<stream>` metadata's `$tb`: revisions below it are hidden (soft delete). */
  truncateBefore: bigint;
  tombstoned: boolean;
}

/** EventStoreDB writes a tombstone as event number `long.MaxValue` with this system type. */
export const TOMBSTONE_TYPE = '$streamDeleted';
export const TOMBSTONE_REVISION = 9223372036854775807n;
export const METADATA_TYPE = '$metadata';
const FIRST_POSITION = 4096n;

interface LogLine {
  readonly events: ReadonlyArray<{
    p: string;
    s: string;
    r: string;
    i: string;
    t: string;
    c: string;
    d: string;
    m: string;
    k: string;
  }>;
}

export class LogStore {
  /** `$all`, in position order. */
  readonly log: StoredEvent[] = [];
  readonly streams = new Map<string, StreamState>();
  /** Called after every write; subscriptions pump from their cursor. */
  readonly listeners = new Set<() => void>();
  private nextPosition = FIRST_POSITION;
  private readonly fd: number;

  constructor(dataDir: string) {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, 'log.ndjson');
    if (existsSync(file)) this.load(readFileSync(file, 'utf8'));
    this.fd = openSync(file, 'a');
  }

  close(): void {
    closeSync(this.fd);
  }

  stream(streamId: string): StreamState | undefined {
    return this.streams.get(streamId);
  }

  lastRevision(streamId: string): bigint {
    const s = this.streams.get(streamId);
    return s ? BigInt(s.events.length) - 1n : -1n;
  }

  /** Events a read may see: soft-deleted revisions are hidden. */
  visibleRange(state: StreamState): { first: bigint; last: bigint } | null {
    const last = BigInt(state.events.length) - 1n;
    if (last < 0n || state.truncateBefore > last) return null;
    return { first: state.truncateBefore, last };
  }

  /** Index of the first `$all` event with position > `position`. */
  indexAfter(position: bigint): number {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid].position <= position) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first `$all` event with position >= `position`. */
  indexAtOrAfter(position: bigint): number {
    return position === 0n ? 0 : this.indexAfter(position - 1n);
  }

  append(streamId: string, expected: Expected, proposed: readonly ProposedEvent[], now = Date.now()): WriteOutcome {
    const state = this.streams.get(streamId);
    if (state?.tombstoned) return { kind: 'stream_deleted' };
    const last = this.lastRevision(streamId);

    if (proposed.length > 0) {
      const replay = this.idempotentReplay(state, expected, proposed, last);
      if (replay) return replay;
    }
    if (!matches(expected, last)) return { kind: 'wrong_expected_version', current: last, expected };
    if (proposed.length === 0) return { kind: 'ok', revision: last, position: null };

    const created = String(BigInt(now) * 10_000n);
    const written = proposed.map((p, i) => this.place(streamId, last + 1n + BigInt(i), p, created));
    this.persist(written);
    for (const e of written) this.apply(e);
    this.notify();
    return { kind: 'ok', revision: last + BigInt(written.length), position: written[written.length - 1].position };
  }

  /**
   * Soft delete as the server does it: metadata `{"$tb": last+1}` on `$$<stream>`. Reads then see
   * "not found"; a later append continues at last+1.
   */
  softDelete(streamId: string, expected: Expected): WriteOutcome {
    const state = this.streams.get(streamId);
    if (state?.tombstoned) return { kind: 'stream_deleted' };
    const last = this.lastRevision(streamId);
    if (!matches(expected, last)) return { kind: 'wrong_expected_version', current: last, expected };
    const data = Buffer.from(JSON.stringify({ $tb: Number(last + 1n) }));
    return this.append(`$$${streamId}`, { kind: 'any' }, [
      {
        id: randomUUID(),
        type: METADATA_TYPE,
        contentType: 'application/json',
        data,
        customMetadata: Buffer.alloc(0),
      },
    ]);
  }

  tombstone(streamId: string, expected: Expected): WriteOutcome {
    const state = this.streams.get(streamId);
    if (state?.tombstoned) return { kind: 'stream_deleted' };
    const last = this.lastRevision(streamId);
    if (!matches(expected, last)) return { kind: 'wrong_expected_version', current: last, expected };
    const created = String(BigInt(Date.now()) * 10_000n);
    const event = this.place(
      streamId,
      TOMBSTONE_REVISION,
      { id: randomUUID(), type: TOMBSTONE_TYPE, contentType: 'application/octet-stream', data: Buffer.alloc(0), customMetadata: Buffer.alloc(0) },
      created,
    );
    this.persist([event]);
    this.apply(event);
    this.notify();
    return { kind: 'ok', revision: last, position: event.position };
  }

  /**
   * EventStoreDB's idempotency, as the sqlite adapter implements it: when every id of the append
   * is already in the stream as one consecutive run that the expected revision would have produced,
   * acknowledge the original write and store nothing. A partial overlap is a conflict.
   */
  private idempotentReplay(
    state: StreamState | undefined,
    expected: Expected,
    proposed: readonly ProposedEvent[],
    last: bigint,
  ): WriteOutcome | null {
    if (!state) return null;
    const conflict: WriteOutcome = { kind: 'wrong_expected_version', current: last, expected };
    const ids = proposed.map((p) => p.id.toLowerCase());
    const first = state.idIndex.get(ids[0]);
    if (first === undefined) return ids.some((id) => state.idIndex.has(id)) ? conflict : null;
    for (let i = 0; i < ids.length; i++) {
      if (state.events[Number(first) + i]?.id !== ids[i]) return conflict;
    }
    const before = first - 1n;
    const consistent =
      expected.kind === 'any' ||
      expected.kind === 'stream_exists' ||
      (expected.kind === 'no_stream' && before === -1n) ||
      (expected.kind === 'revision' && expected.revision === before);
    if (!consistent) return conflict;
    const lastOfRun = state.events[Number(first) + ids.length - 1];
    return { kind: 'ok', revision: lastOfRun.revision, position: lastOfRun.position };
  }

  private place(streamId: string, revision: bigint, p: ProposedEvent, created: string): StoredEvent {
    const event: StoredEvent = {
      position: this.nextPosition,
      streamId,
      revision,
      id: p.id.toLowerCase(),
      type: p.type,
      contentType: p.contentType,
      data: p.data,
      customMetadata: p.customMetadata,
      created,
    };
    this.nextPosition += recordSize(event);
    return event;
  }

  private apply(e: StoredEvent): void {
    this.log.push(e);
    if (e.position >= this.nextPosition) this.nextPosition = e.position + recordSize(e);
    let state = this.streams.get(e.streamId);
    if (!state) {
      state = { events: [], idIndex: new Map(), truncateBefore: 0n, tombstoned: false };
      this.streams.set(e.streamId, state);
    }
    if (e.type === TOMBSTONE_TYPE && e.revision === TOMBSTONE_REVISION) {
      state.tombstoned = true;
      return;
    }
    state.events.push(e);
    state.idIndex.set(e.id, e.revision);
    if (e.streamId.startsWith('$$') && e.type === METADATA_TYPE) {
      const target = e.streamId.slice(2);
      let targetState = this.streams.get(target);
      if (!targetState) {
        targetState = { events: [], idIndex: new Map(), truncateBefore: 0n, tombstoned: false };
        this.streams.set(target, targetState);
      }
      targetState.truncateBefore = truncateBeforeOf(e.data);
    }
  }

  private persist(events: readonly StoredEvent[]): void {
    const line: LogLine = {
      events: events.map((e) => ({
        p: String(e.position),
        s: e.streamId,
        r: String(e.revision),
        i: e.id,
        t: e.type,
        c: e.contentType,
        d: e.data.toString('base64'),
        m: e.customMetadata.toString('base64'),
        k: e.created,
      })),
    };
    // Synchronous: the write is in the OS before the client hears "success", so SIGKILL keeps it.
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  private load(text: string): void {
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      let line: LogLine;
      try {
        line = JSON.parse(raw) as LogLine;
      } catch {
        continue; // a torn last write: it was never acknowledged
      }
      for (const r of line.events) {
        this.apply({
          position: BigInt(r.p),
          streamId: r.s,
          revision: BigInt(r.r),
          id: r.i,
          type: r.t,
          contentType: r.c,
          data: Buffer.from(r.d, 'base64'),
          customMetadata: Buffer.from(r.m, 'base64'),
          created: r.k,
        });
      }
    }
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

function matches(expected: Expected, last: bigint): boolean {
  switch (expected.kind) {
    case 'any':
      return true;
    case 'no_stream':
      return last === -1n;
    case 'stream_exists':
      return last >= 0n;
    case 'revision':
      return expected.revision === last;
  }
}

/** A made-up record size so positions look like byte offsets (gaps between events). */
function recordSize(e: StoredEvent): bigint {
  return BigInt(64 + e.streamId.length + e.type.length + e.data.length + e.customMetadata.length);
}

function truncateBeforeOf(data: Buffer): bigint {
  try {
    const meta = JSON.parse(data.toString('utf8')) as { $tb?: unknown };
    return typeof meta.$tb === 'number' && Number.isInteger(meta.$tb) && meta.$tb > 0 ? BigInt(meta.$tb) : 0n;
  } catch {
    return 0n;
  }
}
