/**
 * The head of `$all` without a large body: a backwards read of one event through a server-side
 * event-type filter. @eventstore/db-client 6.2.1's `readAll` sends no filter, though the server
 * takes one on finite `$all` reads (Streams.Read with `filter`: ReadAllBackwardsFiltered); this
 * builds the same request `readAll` builds, with a filter, on the client's own channel, so the
 * connection's TLS, credentials and reconnection apply as to every other call.
 */
import type { EventStoreDBClient } from '@eventstore/db-client';
import { Empty } from '@eventstore/db-client/generated/shared_pb';
import { StreamsClient } from '@eventstore/db-client/generated/streams_grpc_pb';
import { ReadReq, type ReadResp } from '@eventstore/db-client/generated/streams_pb';
import { ReadStream } from '@eventstore/db-client/dist/streams/utils/ReadStream';
import type { ClientReadableStream, Metadata, CallOptions } from '@grpc/grpc-js';
import type { Position } from '../event-store.port';

/** The protected members of the client that its own `readAll` uses. */
interface ClientInternals {
  GRPCStreamCreator(
    client: typeof StreamsClient,
    debugName: string,
    creator: (client: StreamsClient) => ClientReadableStream<ReadResp>,
  ): () => Promise<ClientReadableStream<ReadResp>>;
  callArguments(options: object, callOptions?: CallOptions): [Metadata, CallOptions];
}

/** Pages the server searches per step: its ReadBatchSize. */
const SEARCH_WINDOW = 32;

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Excludes system events (`$`-prefixed types, as the adapter's reads skip them) and `skipTypes`.
 * A negative look-ahead: the server's regex (.NET) and the test server's (JavaScript) both have it.
 */
export function headFilterRegex(skipTypes: readonly string[]): string {
  const skipped = skipTypes.map((t) => `${escapeRegex(t)}$`);
  return `^(?!\\$${skipped.map((s) => `|${s}`).join('')})`;
}

/** The position of the newest event whose type passes {@link headFilterRegex}, or null. */
export async function readFilteredHead(
  client: EventStoreDBClient,
  skipTypes: readonly string[],
): Promise<Position | null> {
  const internals = client as unknown as ClientInternals;
  const options = new ReadReq.Options()
    .setAll(new ReadReq.Options.AllOptions().setEnd(new Empty()))
    .setReadDirection(ReadReq.Options.ReadDirection.BACKWARDS)
    .setResolveLinks(false)
    .setCount('1')
    .setUuidOption(new ReadReq.Options.UUIDOption().setString(new Empty()))
    .setFilter(
      new ReadReq.Options.FilterOptions()
        .setEventType(new ReadReq.Options.FilterOptions.Expression().setRegex(headFilterRegex(skipTypes)))
        .setMax(SEARCH_WINDOW)
        .setCheckpointintervalmultiplier(1),
    );
  const request = new ReadReq().setOptions(options);
  const createStream = internals.GRPCStreamCreator.call(client, StreamsClient, 'readHead', (grpcClient) =>
    grpcClient.read(request, ...internals.callArguments.call(client, {}, { deadline: Infinity })),
  );
  const read = new ReadStream<Position>(
    createStream,
    // As the client's convertGrpcEvent: the record's own positions.
    (event) => {
      const record = event.getEvent();
      return { commit: BigInt(record?.getCommitPosition() ?? 0), prepare: BigInt(record?.getPreparePosition() ?? 0) };
    },
    {},
  );
  let head: Position | null = null;
  for await (const position of read as AsyncIterable<Position>) head ??= position;
  return head;
}
