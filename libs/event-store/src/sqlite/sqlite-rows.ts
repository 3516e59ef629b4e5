import type { JsonObject, RecordedEvent, SubscriptionFilter } from '../event-store.port';
import type { RecentEvent } from './recent-appends';

export interface EventRow {
  position: number | bigint;
  stream_id: string;
  revision: number | bigint;
  event_id: string;
  type: string;
  data: string;
  metadata: string;
  created: number;
}

/**
 * A scanned row, as an array (`raw()`): `$all` reads build no object per row. The columns of
 * `SCAN_COLUMNS`, in order.
 */
export type ScanRow = [
  position: bigint,
  stream_id: string,
  revision: bigint,
  event_id: string,
  type: string,
  data: string,
  metadata: string,
  created: bigint,
];
export const SCAN_COLUMNS = 'position, stream_id, revision, event_id, type, data, metadata, created';

export interface MetadataRow {
  stream_id: string;
  max_age: bigint | null;
  max_count: bigint | null;
  truncate_before: bigint | null;
  deleted: bigint;
}

export function clampCount(maxCount: number | undefined): bigint {
  if (maxCount === undefined || !Number.isFinite(maxCount)) return BigInt(Number.MAX_SAFE_INTEGER);
  return BigInt(Math.max(0, Math.floor(maxCount)));
}

export function filterSql(filter: SubscriptionFilter | undefined): { sql: string; params: unknown[] } {
  if (!filter) return { sql: '', params: [] };
  const column = 'eventTypePrefixes' in filter ? 'type' : 'stream_id';
  const prefixes = 'eventTypePrefixes' in filter ? filter.eventTypePrefixes : filter.streamNamePrefixes;
  if (prefixes.length === 0) return { sql: '', params: [] };
  const clauses = prefixes.map(() => `substr(${column}, 1, ?) = ?`);
  return {
    sql: `AND (${clauses.join(' OR ')})`,
    params: prefixes.flatMap((p) => [p.length, p]),
  };
}

export function toRecorded(row: EventRow): RecordedEvent {
  return recordedEvent(
    row.position,
    row.stream_id,
    row.revision,
    row.event_id,
    row.type,
    row.data,
    row.metadata,
    row.created,
  );
}

export function scanned(row: ScanRow): RecordedEvent {
  return recordedEvent(...row);
}

/**
 * The same event as its row would give. Parsed for each delivery, as a row is: the subscriber
 * owns what it is given and may change it, and the appender's objects never reach it.
 */
export function fromRecent(e: RecentEvent): RecordedEvent {
  const { id, type, data, metadata } = e.event;
  return recordedEvent(e.position, e.streamId, e.revision, id, type, data, metadata, e.created);
}

function recordedEvent(
  position: number | bigint,
  streamId: string,
  revision: number | bigint,
  id: string,
  type: string,
  data: string,
  metadata: string,
  created: number | bigint,
): RecordedEvent {
  const commit = BigInt(position);
  return {
    id,
    type,
    streamId,
    revision: BigInt(revision),
    position: { commit, prepare: commit },
    // Written by appendToStream from validated JSON objects.
    data: JSON.parse(data) as JsonObject,
    metadata: JSON.parse(metadata) as JsonObject,
    created: new Date(Number(created)),
  };
}
