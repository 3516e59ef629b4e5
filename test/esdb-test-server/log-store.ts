/**
 * The test server's storage: one in-memory transaction log (`$all`) plus a per-stream index,
 * persisted as append-only NDJSON (one line per write, so a write torn by SIGKILL is dropped whole
 * on the next load). It follows EventStoreDB's write and read rules (same in 23.10 and 24.10),
 * nothing about gRPC:
 *
 * - expected revision and idempotent re-append: IndexWriter.CheckCommit, including the
 *   in-memory committed-events cache that bounds idempotency for `any`/`stream_exists`;
 * - stream metadata from the last event of `$$<stream>`; `$maxCount`, `$maxAge`, `$tb` hide
 *   events from stream reads (IndexReader), never from `$all`;
 * - soft delete = `{"$tb": long.MaxValue}`, undone by the next append (SoftUndeleteStream);
 *   tombstone = a `$streamDeleted` record at revision long.MaxValue;
 * - scavenge (`scavenge()`, on a stopped server's data): what the scavenger removes for good.
 */
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  DELETED_STREAM,
  EMPTY_METADATA,
  parseStreamMetadata,
  softDeleteMetadata,
  withTruncateBefore,
  type StreamMetadata,
} from './stream-metadata';

export { DELETED_STREAM } from './stream-metadata';

export interface StoredEvent {
  /** Fake transaction-log byte offset; commit == prepare (implicitly committed prepares, as since 20.x). */
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
  /** `revision` is -1n when the stream has no events; `position` null when the server gives none. */
  | { readonly kind: 'ok'; readonly revision: bigint; readonly position: bigint | null }
  /** `current` is -1n for "no stream". */
  | { readonly kind: 'wrong_expected_version'; readonly current: bigint; readonly expected: Expected }
  | { readonly kind: 'stream_deleted' };

/** What a stream read may see at this moment. */
export type StreamView =
  | { readonly kind: 'deleted' }
  | { readonly kind: 'no_stream' }
  | {
      readonly kind: 'ok';
      /** Index = revision; includes hidden events (check `visible`). */
      readonly events: readonly StoredEvent[];
      /** Lowest revision `$maxCount` and `$tb` allow. */
      readonly min: bigint;
      readonly last: bigint;
      visible(e: StoredEvent): boolean;
    };

interface StreamState {
  /** Index = revision. */
  readonly events: StoredEvent[];
  /** The `$streamDeleted` record, once hard-deleted. */
  tombstone: StoredEvent | null;
}

/** EventStoreDB writes a tombstone as event number long.MaxValue with this system type. */
export const TOMBSTONE_TYPE = '$streamDeleted';
export const METADATA_TYPE = '$metadata';
const JSON_CONTENT = 'application/json';
const FIRST_POSITION = 4096n;
/** ExpectedVersion constants as the server uses them internally (and in error trailers). */
const ANY = -2n;
const NO_STREAM = -1n;
const STREAM_EXISTS = -4n;
/** Metastreams keep only their newest event visible (ESConsts.MetaStreamMaxCount). */
const METASTREAM_METADATA: StreamMetadata = Object.freeze({ maxCount: 1n });

export const isMetastream = (streamId: string) => streamId.startsWith('$$');
export const metastreamOf = (streamId: string) => `$$${streamId}`;
const originalOf = (metastream: string) => metastream.slice(2);

/**
 * The committed-events cache behind idempotency for `any`/`stream_exists`: event id → where it
 * was first written. In memory only (empty after a restart), FIFO-evicted past 8 MiB
 * (ESConsts.CommitedEventsMemCacheLimit) with the server's own size estimate per entry. A second
 * write of a known id keeps the first entry (BoundedCache.PutRecord with throwOnDuplicate=false).
 */
class CommittedEvents {
  private readonly byId = new Map<string, { streamId: string; revision: bigint }>();
  private readonly queue: string[] = [];
  private head = 0;
  private size = 0;

  constructor(private readonly limitBytes: number) {}

  get(id: string) {
    return this.byId.get(id);
  }

  put(id: string, streamId: string, revision: bigint): void {
    while (this.queue.length - this.head > 0 && this.size > this.limitBytes) {
      const old = this.queue[this.head++];
      const entry = this.byId.get(old);
      if (entry) {
        this.size -= entrySize(entry.streamId);
        this.byId.delete(old);
      }
    }
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    this.size += entrySize(streamId);
    this.queue.push(id);
    if (!this.byId.has(id)) this.byId.set(id, { streamId, revision });
  }
}

/** Guid + int + pointer + MemSizer.SizeOf(streamId), as IndexWriter sizes an entry. */
function entrySize(streamId: string): number {
  const stringSize = streamId.length === 0 ? 0 : Math.ceil((20 + streamId.length * 2 + 1) / 8) * 8;
  return 16 + 4 + 8 + stringSize;
}

export interface LogStoreOptions {
  /** Milliseconds since the epoch, as the server's clock (tests may move it on). */
  readonly now?: () => number;
  /** Bytes of the committed-events cache; default 8 MiB as on the server. */
  readonly idempotencyCacheBytes?: number;
}

type CommitCheck =
  | { readonly kind: 'ok'; readonly current: bigint; readonly softDeleted: boolean }
  | { readonly kind: 'wrong_expected_version'; readonly current: bigint }
  | { readonly kind: 'deleted' }
  | { readonly kind: 'idempotent'; readonly last: bigint };

export class LogStore {
  /** `$all`, in position order. */
  readonly log: StoredEvent[] = [];
  private readonly streams = new Map<string, StreamState>();
  private readonly metadata = new Map<string, StreamMetadata>();
  /** Called after every write; subscriptions pump from their cursor. */
  readonly listeners = new Set<() => void>();
  private readonly committed: CommittedEvents;
  private readonly now: () => number;
  private nextPosition = FIRST_POSITION;
  private fd: number;
  private readonly file: string;

  constructor(dataDir: string, options: LogStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.committed = new CommittedEvents(options.idempotencyCacheBytes ?? 8 * 1024 * 1024);
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, 'log.ndjson');
    this.file = file;
    if (existsSync(file)) this.load(readFileSync(file, 'utf8'));
    this.fd = openSync(file, 'a');
  }

  /**
   * What EventStoreDB's scavenge removes for good, removed from memory and from the file (written
   * anew, then renamed over the old one): every event of a tombstoned stream and of its
   * metastream (the tombstone record stays), events that `$tb` or `$maxCount` hide (a stream's
   * last event stays, as it holds the stream's revision), and all but a metastream's newest event.
   * `$maxAge` is left to the reads. The server runs it online; here it runs on the data of a
   * stopped server (open a LogStore on it, scavenge, close, start the server). Returns the number
   * of events removed.
   */
  scavenge(): number {
    const removed = new Set<StoredEvent>();
    for (const [streamId, state] of this.streams) {
      if (state.tombstone || (isMetastream(streamId) && this.streams.get(originalOf(streamId))?.tombstone)) {
        for (const e of state.events) removed.add(e);
        continue;
      }
      const view = this.streamView(streamId);
      const keepFrom = view.kind === 'ok' ? min(view.min, view.last) : BigInt(state.events.length) - 1n;
      for (const e of state.events) if (e.revision < keepFrom) removed.add(e);
    }
    const kept = this.log.filter((e) => !removed.has(e));
    this.log.splice(0, this.log.length, ...kept);
    for (const state of this.streams.values()) {
      state.events.forEach((e, i) => {
        if (removed.has(e)) state.events[i] = scavenged(e.streamId, e.revision);
      });
    }
    closeSync(this.fd);
    // The writer's checkpoint never goes back: the next record goes past the scavenged ones.
    const lines = [...kept.map((e) => ({ events: [toLine(e)] })), { events: [], next: String(this.nextPosition) }];
    writeFileSync(`${this.file}.scavenge`, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    renameSync(`${this.file}.scavenge`, this.file);
    this.fd = openSync(this.file, 'a');
    return [...removed].filter((e) => e.position >= 0n).length;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Where the next record would go: the end of the log. */
  get endPosition(): bigint {
    return this.nextPosition;
  }

  /** GetStreamLastEventNumber: long.MaxValue once tombstoned (also for its metastream), -1 if none. */
  lastEventNumber(streamId: string): bigint {
    if (isMetastream(streamId) && this.streams.get(originalOf(streamId))?.tombstone) return DELETED_STREAM;
    const state = this.streams.get(streamId);
    if (state?.tombstone) return DELETED_STREAM;
    return state ? BigInt(state.events.length) - 1n : -1n;
  }

  metadataOf(streamId: string): StreamMetadata {
    if (isMetastream(streamId)) return METASTREAM_METADATA;
    return this.metadata.get(streamId) ?? EMPTY_METADATA;
  }

  private softDeleted(streamId: string): boolean {
    return this.metadataOf(streamId).truncateBefore === DELETED_STREAM;
  }

  /** Every event of the stream by revision, hidden or not (what live subscriptions forward). */
  streamEvents(streamId: string): readonly StoredEvent[] {
    return this.streams.get(streamId)?.events ?? [];
  }

  /** The tombstone record of a hard-deleted stream (what a live stream subscription sees last). */
  tombstoneOf(streamId: string): StoredEvent | null {
    return this.streams.get(streamId)?.tombstone ?? null;
  }

  /** IndexReader's view of a stream for reads: deleted, not found, or events and what is visible. */
  streamView(streamId: string): StreamView {
    const last = this.lastEventNumber(streamId);
    if (last === DELETED_STREAM) return { kind: 'deleted' };
    const meta = this.metadataOf(streamId);
    if (last < 0n || meta.truncateBefore === DELETED_STREAM) return { kind: 'no_stream' };
    let min = 0n;
    if (meta.maxCount !== undefined) min = max(min, last - meta.maxCount + 1n);
    if (meta.truncateBefore !== undefined) min = max(min, meta.truncateBefore);
    // $maxAge compares the record's timestamp with "now" at read time.
    const oldest =
      meta.maxAgeSeconds === undefined ? null : BigInt(this.now()) * 10_000n - meta.maxAgeSeconds * 10_000_000n;
    return {
      kind: 'ok',
      events: this.streams.get(streamId)!.events,
      min,
      last,
      visible: (e) => e.revision >= min && (oldest === null || BigInt(e.created) >= oldest),
    };
  }

  /** Index of the first `$all` record at or after (commit, prepare): forward reads are inclusive. */
  indexAtOrAfter(commit: bigint, prepare: bigint): number {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.log[mid].position;
      if (p < commit || (p === commit && p < prepare)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Whether a read of `$all` may start at this commit position: the start, a record, or the end
   * (and beyond). Elsewhere the server's chunk reader fails: "invalid position".
   */
  isRecordBoundary(commit: bigint): boolean {
    if (commit === 0n || commit >= this.nextPosition) return true;
    const i = this.indexAtOrAfter(commit, 0n);
    return i < this.log.length && this.log[i].position === commit;
  }

  /**
   * Number of `$all` records a backwards read from (commit, prepare) may return: those whose
   * post-position (where the next record starts) is at or before it.
   */
  countEndingAtOrBefore(commit: bigint, prepare: bigint): number {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const post = this.postPosition(mid);
      if (post < commit || (post === commit && post <= prepare)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private postPosition(index: number): bigint {
    return index + 1 < this.log.length ? this.log[index + 1].position : this.nextPosition;
  }

  append(streamId: string, expected: Expected, proposed: readonly ProposedEvent[]): WriteOutcome {
    const ids = proposed.map((p) => p.id.toLowerCase());
    const check = this.checkCommit(streamId, expectedVersion(expected), ids);
    switch (check.kind) {
      case 'deleted':
        return { kind: 'stream_deleted' };
      case 'wrong_expected_version':
        return { kind: 'wrong_expected_version', current: check.current, expected };
      case 'idempotent':
        return { kind: 'ok', revision: check.last, position: this.visiblePosition(streamId, check.last) };
      case 'ok':
        break;
    }
    // Deviation: an empty append makes the server write an empty record and report its position;
    // here nothing is written and there is no position.
    if (proposed.length === 0) return { kind: 'ok', revision: check.current, position: null };

    const undeleteMetastream = isMetastream(streamId) && this.softDeleted(originalOf(streamId));
    const created = this.created();
    const written = proposed.map((p, i) => this.place(streamId, check.current + 1n + BigInt(i), p, created));
    for (const e of written) this.apply(e);
    const extra: StoredEvent[] = [];
    // Appending to a soft-deleted stream undeletes it from the first new revision on.
    if (check.softDeleted) extra.push(...this.undelete(streamId, check.current + 1n, created));
    // So does writing its metadata: the new metadata, with `$tb` pointing past the old events.
    if (undeleteMetastream) {
      const original = originalOf(streamId);
      extra.push(...this.undelete(original, this.lastEventNumber(original) + 1n, created));
    }
    this.persist([...written, ...extra]);
    this.notify();
    return {
      kind: 'ok',
      revision: check.current + BigInt(written.length),
      position: written[written.length - 1].position,
    };
  }

  /** Soft delete (StorageWriterService WriteDelete, HardDelete=false). */
  softDelete(streamId: string, expected: Expected): WriteOutcome {
    const check = this.checkCommit(streamId, expectedVersion(expected), [randomUUID()]);
    if (check.kind === 'deleted') return { kind: 'stream_deleted' };
    if (check.kind !== 'ok')
      return {
        kind: 'wrong_expected_version',
        current: check.kind === 'wrong_expected_version' ? check.current : -1n,
        expected,
      };
    const meta = metastreamOf(streamId);
    // Nothing to delete: neither events nor metadata.
    if (this.lastEventNumber(streamId) < 0n && this.lastEventNumber(meta) < 0n) {
      return { kind: 'wrong_expected_version', current: -1n, expected };
    }
    // The whole metadata is replaced: any $maxAge, $acl… set before is gone.
    const event = this.place(
      meta,
      this.lastEventNumber(meta) + 1n,
      {
        id: randomUUID(),
        type: METADATA_TYPE,
        contentType: JSON_CONTENT,
        data: softDeleteMetadata(),
        customMetadata: Buffer.alloc(0),
      },
      this.created(),
    );
    this.apply(event);
    this.persist([event]);
    this.notify();
    return { kind: 'ok', revision: check.current, position: event.position };
  }

  /** Hard delete: a tombstone record; every later operation on the stream fails. */
  tombstone(streamId: string, expected: Expected): WriteOutcome {
    const check = this.checkCommit(streamId, expectedVersion(expected), [randomUUID()]);
    if (check.kind === 'deleted') return { kind: 'stream_deleted' };
    if (check.kind !== 'ok')
      return {
        kind: 'wrong_expected_version',
        current: check.kind === 'wrong_expected_version' ? check.current : -1n,
        expected,
      };
    const event = this.place(
      streamId,
      DELETED_STREAM,
      {
        id: randomUUID(),
        type: TOMBSTONE_TYPE,
        contentType: 'application/octet-stream',
        data: Buffer.alloc(0),
        customMetadata: Buffer.alloc(0),
      },
      this.created(),
    );
    this.apply(event);
    this.persist([event]);
    this.notify();
    return { kind: 'ok', revision: check.current, position: event.position };
  }

  /**
   * IndexWriter.CheckCommit (23.10, 24.10), step by step. Idempotency for `any`/`stream_exists` asks the
   * committed-events cache only (all ids known, in this stream: acknowledged; the first unknown:
   * a new write; a later one unknown: a conflict). For an exact revision behind the stream's end,
   * each id must sit at expected+1, expected+2… (cache or index, so this survives restarts).
   */
  private checkCommit(streamId: string, expected: bigint, ids: readonly string[]): CommitCheck {
    const current = this.lastEventNumber(streamId);
    if (current === DELETED_STREAM) return { kind: 'deleted' };
    const wrong: CommitCheck = { kind: 'wrong_expected_version', current };

    if (expected === STREAM_EXISTS) {
      if (this.softDeleted(streamId)) return { kind: 'deleted' };
      if (current < 0n && this.lastEventNumber(metastreamOf(streamId)) < 0n) return wrong;
    }

    if (expected === ANY || expected === STREAM_EXISTS) {
      let first: bigint | null = null;
      let last = -1n;
      for (const id of ids) {
        const known = this.committed.get(id);
        if (!known || known.streamId !== streamId) {
          return first === null ? { kind: 'ok', current, softDeleted: this.softDeleted(streamId) } : wrong;
        }
        first ??= known.revision;
        last = known.revision;
      }
      if (first === null) return { kind: 'ok', current, softDeleted: this.softDeleted(streamId) };
      return { kind: 'idempotent', last };
    }

    if (expected < current) {
      const events = this.streams.get(streamId)?.events ?? [];
      let revision = expected;
      for (const id of ids) {
        revision += 1n;
        const known = this.committed.get(id);
        if (known && known.streamId === streamId && known.revision === revision) continue;
        if (events[Number(revision)]?.id === id) continue;
        if (revision !== expected + 1n) return wrong; // part of it was written: not idempotent
        // `no_stream` on a soft-deleted stream writes after its last event.
        if (expected === NO_STREAM && this.softDeleted(streamId)) return { kind: 'ok', current, softDeleted: true };
        return wrong;
      }
      if (revision === expected) return wrong; // nothing proposed
      return { kind: 'idempotent', last: revision };
    }

    if (expected > current) return wrong;
    return { kind: 'ok', current, softDeleted: this.softDeleted(streamId) };
  }

  /** The position a read of `revision` would show (IndexReader.ReadEvent), else none. */
  private visiblePosition(streamId: string, revision: bigint): bigint | null {
    const view = this.streamView(streamId);
    if (view.kind !== 'ok') return null;
    const e = view.events[Number(revision)];
    return e && view.visible(e) ? e.position : null;
  }

  /** SoftUndeleteStream: rewrite the last metadata with `$tb` = recreateFrom. */
  private undelete(streamId: string, recreateFrom: bigint, created: string): StoredEvent[] {
    const meta = metastreamOf(streamId);
    const metaEvents = this.streams.get(meta)?.events ?? [];
    const raw = metaEvents[metaEvents.length - 1]?.data ?? Buffer.from('{}');
    const data = withTruncateBefore(raw, recreateFrom);
    if (!data) return [];
    const event = this.place(
      meta,
      BigInt(metaEvents.length),
      { id: randomUUID(), type: METADATA_TYPE, contentType: JSON_CONTENT, data, customMetadata: Buffer.alloc(0) },
      created,
    );
    this.apply(event);
    return [event];
  }

  private created(): string {
    return String(BigInt(this.now()) * 10_000n);
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

  /** Indexes a record; `fromDisk` records are not put in the committed-events cache (it starts empty). */
  private apply(e: StoredEvent, fromDisk = false): void {
    this.log.push(e);
    if (e.position >= this.nextPosition) this.nextPosition = e.position + recordSize(e);
    let state = this.streams.get(e.streamId);
    if (!state) {
      state = { events: [], tombstone: null };
      this.streams.set(e.streamId, state);
    }
    if (!fromDisk) this.committed.put(e.id, e.streamId, e.revision);
    if (e.type === TOMBSTONE_TYPE && e.revision === DELETED_STREAM) {
      state.tombstone = e;
      return;
    }
    // A scavenged log has holes: the stream index stays by revision.
    while (BigInt(state.events.length) < e.revision) {
      state.events.push(scavenged(e.streamId, BigInt(state.events.length)));
    }
    state.events.push(e);
    // Any event in a metastream is the new metadata, whatever its type.
    if (isMetastream(e.streamId)) {
      this.metadata.set(originalOf(e.streamId), parseStreamMetadata(e.data, e.contentType === JSON_CONTENT));
    }
  }

  private persist(events: readonly StoredEvent[]): void {
    const line = { events: events.map(toLine) };
    // Synchronous: the write is in the OS before the client hears "success", so SIGKILL keeps it.
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
  }

  private load(text: string): void {
    for (const raw of text.split('\n')) {
      if (raw.trim() === '') continue;
      let line: { events: Array<Record<'p' | 's' | 'r' | 'i' | 't' | 'c' | 'd' | 'm' | 'k', string>>; next?: string };
      try {
        line = JSON.parse(raw) as typeof line;
      } catch {
        continue; // a torn last write: it was never acknowledged
      }
      if (line.next !== undefined) this.nextPosition = max(this.nextPosition, BigInt(line.next));
      for (const r of line.events) {
        this.apply(
          {
            position: BigInt(r.p),
            streamId: r.s,
            revision: BigInt(r.r),
            id: r.i,
            type: r.t,
            contentType: r.c,
            data: Buffer.from(r.d, 'base64'),
            customMetadata: Buffer.from(r.m, 'base64'),
            created: r.k,
          },
          true,
        );
      }
    }
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}

export function expectedVersion(e: Expected): bigint {
  switch (e.kind) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    case 'revision':
      return e.revision;
  }
}

/** One event as a line of the log file holds it. */
function toLine(e: StoredEvent): Record<'p' | 's' | 'r' | 'i' | 't' | 'c' | 'd' | 'm' | 'k', string> {
  return {
    p: String(e.position),
    s: e.streamId,
    r: String(e.revision),
    i: e.id,
    t: e.type,
    c: e.contentType,
    d: e.data.toString('base64'),
    m: e.customMetadata.toString('base64'),
    k: e.created,
  };
}

/**
 * Where a scavenged event was in its stream's index: no data, no position, never shown (only
 * events below the stream's visible minimum, or of a tombstoned stream, are scavenged).
 */
function scavenged(streamId: string, revision: bigint): StoredEvent {
  return {
    position: -1n,
    streamId,
    revision,
    id: '',
    type: '',
    contentType: '',
    data: Buffer.alloc(0),
    customMetadata: Buffer.alloc(0),
    created: '0',
  };
}

/** A made-up record size so positions look like byte offsets (gaps between events). */
function recordSize(e: StoredEvent): bigint {
  return BigInt(64 + e.streamId.length + e.type.length + e.data.length + e.customMetadata.length);
}

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);
