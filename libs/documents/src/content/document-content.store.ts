import { EVENT_STORE, type EventStore, type ExpectedRevision, NO_STREAM } from '@filing/event-store';
import { buildMetadata, type CommandContext, KeyStreams, SecretBox, streamName, toEventData } from '@filing/platform';
import { Inject, Injectable } from '@nestjs/common';
import {
  DOCUMENT_CIPHER_STREAM_CONTEXT,
  DOCUMENT_CONTENT_STREAM_CONTEXT,
  DOCUMENT_KEY_STREAM_CONTEXT,
} from '../document.events';
import { type ContentDigest, joinContent } from './content-chunks';
import { cipherAppends, cipherChunkEventId, openContent } from './content-cipher';

/** `documentcipher-<document id>`: the encrypted chunks. */
export function contentStreamId(documentId: string): string {
  return streamName(DOCUMENT_CIPHER_STREAM_CONTEXT, documentId);
}

/** `documentcontent-<document id>`: plaintext chunks of a version before encryption (until migrated). */
export function legacyContentStreamId(documentId: string): string {
  return streamName(DOCUMENT_CONTENT_STREAM_CONTEXT, documentId);
}

/** `documentkey-<document id>`: the document's data key, sealed under SECRETS_KEY. */
export function keyStreamId(documentId: string): string {
  return streamName(DOCUMENT_KEY_STREAM_CONTEXT, documentId);
}

/**
 * Document bytes in the event store, so every instance serves every document and DATA_DIR holds
 * none, encrypted so that they can be erased: each document has its own data key, sealed in its
 * key stream (platform's KeyStreams); its content stream holds the chunks encrypted with it
 * (content-cipher.ts). Destroying the key stream leaves every copy of the chunks — the log,
 * exports, later backups — without a key. The key and the bytes are written before the
 * DocumentAdded that names their SHA-256 and size; content is only ever served for a document
 * the read model holds, and only its DocumentAdded puts it there, so content without one (a
 * failed or crashed add) is an invisible orphan.
 */
@Injectable()
export class DocumentContentStore {
  private readonly keys: KeyStreams;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    box: SecretBox,
  ) {
    this.keys = new KeyStreams(store, box);
  }

  /**
   * Makes the document's key (or takes the one an interrupted write made), then appends the
   * encrypted chunks in order, each append expecting the revision the previous one left: a second
   * writer of the same stream fails instead of interleaving. On a stream that already holds the
   * first chunks (an interrupted write of the same content), those appends are acknowledged
   * without writing twice: the chunk ids are deterministic, and the key is the same.
   */
  async write(context: CommandContext, documentId: string, content: Buffer): Promise<void> {
    const streamId = contentStreamId(documentId);
    const metadata = buildMetadata(context);
    const key = await this.keys.openOrCreate(keyStreamId(documentId), { ...metadata });
    let expectedRevision: ExpectedRevision = NO_STREAM;
    let index = 0;
    for (const chunks of cipherAppends(documentId, key, content)) {
      const events = chunks.map((chunk) => toEventData(chunk, metadata, cipherChunkEventId(documentId, index++)));
      expectedRevision = (await this.store.appendToStream(streamId, events, { expectedRevision })).nextExpectedRevision;
    }
  }

  /**
   * The bytes, decrypted and checked against the document's size and SHA-256 (a
   * ContentIntegrityError when they differ: never serve other bytes than the document names);
   * null when there are none, or no key to open them (destroyed). A document stored before
   * encryption and not migrated yet is read from its plaintext stream.
   */
  async read(documentId: string, expected: ContentDigest): Promise<Buffer | null> {
    const events = await this.store.readStream(contentStreamId(documentId));
    if (events.length > 0) {
      const key = await this.keys.open(keyStreamId(documentId));
      if (!key) return null;
      return openContent(
        events.map((e) => e.data),
        key,
        documentId,
        expected,
      );
    }
    const legacy = await this.store.readStream(legacyContentStreamId(documentId));
    if (legacy.length === 0) return null;
    return joinContent(
      legacy.map((e) => e.data),
      expected,
    );
  }

  /** Whether the content is in the encrypted stream already (not a plaintext one of an earlier version). */
  async encrypted(documentId: string): Promise<boolean> {
    return (await this.store.streamRevision(contentStreamId(documentId))) !== null;
  }

  /**
   * Erases the content: first the key stream is tombstoned (from then on no copy of the chunks
   * opens), then the content stream is soft-deleted, and a plaintext stream of an earlier version
   * tombstoned (sqlite: its rows removed; EventStoreDB: removed by the next scavenge). Each step
   * is safe to repeat, so a failed erasure is finished by running it again.
   */
  async destroy(documentId: string): Promise<void> {
    await this.keys.destroy(keyStreamId(documentId));
    await this.store.deleteStream(contentStreamId(documentId));
    await this.store.tombstoneStream(legacyContentStreamId(documentId));
  }
}
