/**
 * The EventStoreDB adapter's stream administration: metadata (`$maxAge`, `$maxCount`, `$tb`),
 * soft delete, tombstone and truncation, each mapping the client's errors to the port's.
 */
import {
  type EventStoreDBClient,
  StreamDeletedError as EsdbStreamDeletedError,
  StreamNotFoundError,
  WrongExpectedVersionError as EsdbWrongExpectedVersionError,
} from '@eventstore/db-client';
import { ANY, type StreamMetadata, type StreamRevision } from '../event-store.port';
import { mapError } from './esdb-mapping';

export async function setStreamMetadata(
  client: EventStoreDBClient,
  streamId: string,
  metadata: StreamMetadata,
): Promise<void> {
  try {
    const meta: { maxAge?: number; maxCount?: number; truncateBefore?: number } = {};
    if (metadata.maxAge !== undefined) meta.maxAge = metadata.maxAge;
    if (metadata.maxCount !== undefined) meta.maxCount = metadata.maxCount;
    if (metadata.truncateBefore !== undefined) meta.truncateBefore = Number(metadata.truncateBefore);
    await client.setStreamMetadata(streamId, meta);
  } catch (err) {
    throw mapError(err);
  }
}

export async function getStreamMetadata(client: EventStoreDBClient, streamId: string): Promise<StreamMetadata> {
  try {
    const { metadata } = await client.getStreamMetadata(streamId);
    if (!metadata) return {};
    const found: { maxAge?: number; maxCount?: number; truncateBefore?: StreamRevision } = {};
    if (metadata.maxAge !== undefined) found.maxAge = Number(metadata.maxAge);
    if (metadata.maxCount !== undefined) found.maxCount = Number(metadata.maxCount);
    // A soft delete's $tb (long.MaxValue) is the server's own marker, not a limit set here.
    if (metadata.truncateBefore !== undefined && BigInt(metadata.truncateBefore) < 0x7fffffffffffffffn)
      found.truncateBefore = BigInt(metadata.truncateBefore);
    return found;
  } catch (err) {
    if (err instanceof StreamNotFoundError || err instanceof EsdbStreamDeletedError) return {};
    throw mapError(err);
  }
}

export async function deleteStream(client: EventStoreDBClient, streamId: string): Promise<void> {
  try {
    await client.deleteStream(streamId, { expectedRevision: ANY });
  } catch (err) {
    // The server answers a delete of a stream that never existed with a wrong expected version;
    // a tombstoned one is deleted already.
    if (
      err instanceof StreamNotFoundError ||
      err instanceof EsdbWrongExpectedVersionError ||
      err instanceof EsdbStreamDeletedError
    )
      return;
    throw mapError(err);
  }
}

export async function tombstoneStream(client: EventStoreDBClient, streamId: string): Promise<void> {
  try {
    await client.tombstoneStream(streamId, { expectedRevision: ANY });
  } catch (err) {
    if (err instanceof EsdbStreamDeletedError) return;
    throw mapError(err);
  }
}

export async function truncateStream(
  client: EventStoreDBClient,
  streamId: string,
  before: StreamRevision,
): Promise<void> {
  try {
    // $tb replaces nothing else the stream's metadata says (setStreamMetadata writes it whole).
    const { metadata } = await client.getStreamMetadata(streamId).catch((err: unknown) => {
      if (err instanceof StreamNotFoundError) return { metadata: undefined };
      throw err;
    });
    await client.setStreamMetadata(streamId, Object.assign({}, metadata, { truncateBefore: Number(before) }));
  } catch (err) {
    throw mapError(err);
  }
}
