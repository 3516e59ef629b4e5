import { EVENT_STORE, type EventStore, type ExpectedRevision, NO_STREAM } from '@filing/event-store';
import { buildMetadata, type CommandContext, streamName, toEventData } from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import { DOCUMENT_CONTENT_STREAM_CONTEXT } from '../document.events';
import { chunkEventId, type ContentDigest, contentAppends, joinContent } from './content-chunks';

/** `documentcontent-<document id>`. */
export function contentStreamId(documentId: string): string {
  return streamName(DOCUMENT_CONTENT_STREAM_CONTEXT, documentId);
}

/**
 * Document bytes in the event store, so every instance serves every document and DATA_DIR holds
 * none: chunk events in a content stream per document (content-chunks.ts). The bytes are written
 * before the DocumentAdded that names their SHA-256 and size, and the stream is soft-deleted after
 * the DocumentDeleted. Content is only ever served for a document the read model holds, and only
 * its DocumentAdded puts it there, so a content stream without one (a failed or crashed add) is
 * an invisible orphan.
 */
@Injectable()
export class DocumentContentStore {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /**
   * Appends the chunks in order, each append expecting the revision the previous one left: a
   * second writer of the same stream fails instead of interleaving. On a stream that already holds
   * the first chunks (an interrupted write of the same content), those appends are acknowledged
   * without writing twice: the chunk ids are deterministic.
   */
  async write(context: CommandContext, documentId: string, content: Buffer): Promise<void> {
    const streamId = contentStreamId(documentId);
    const metadata = buildMetadata(context);
    let expectedRevision: ExpectedRevision = NO_STREAM;
    let index = 0;
    for (const chunks of contentAppends(documentId, content)) {
      const events = chunks.map((chunk) => toEventData(chunk, metadata, chunkEventId(documentId, index++)));
      expectedRevision = (await this.store.appendToStream(streamId, events, { expectedRevision })).nextExpectedRevision;
    }
  }

  /**
   * The bytes, checked against the document's size and SHA-256 (a ContentIntegrityError when they
   * differ: never serve other bytes than the document names); null when the stream is empty or
   * deleted.
   */
  async read(documentId: string, expected: ContentDigest): Promise<Buffer | null> {
    const events = await this.store.readStream(contentStreamId(documentId));
    if (events.length === 0) return null;
    return joinContent(
      events.map((e) => e.data),
      expected,
    );
  }

  /**
   * Soft-deletes the content stream: no read returns the bytes any more, on any instance. The
   * events stay in `$all` until an EventStoreDB scavenge removes them (the sqlite store keeps them).
   */
  async remove(documentId: string): Promise<void> {
    await this.store.deleteStream(contentStreamId(documentId));
  }
}
