import { createHash } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { DOCUMENT_CONTENT_CHUNK, type DocumentContentChunk } from '../document.events';

/*
 * A document's bytes as events: pure splitting and joining, no store. Plaintext chunks are what
 * versions before content encryption wrote (read until migrated); content-cipher.ts encrypts. The content stream holds
 * chunks 0…n-1 in order; joined, they must be exactly the size and SHA-256 the DocumentAdded names.
 */

/** 192 KiB of bytes: 256 KiB of base64 per event. */
export const CONTENT_CHUNK_BYTES = 192 * 1024;
/**
 * EventStoreDB refuses an append over its MaxAppendSize (1 MiB of data, metadata and types, by
 * default): two chunks per append keep each write at about half of that, so 10 MiB take 27 appends.
 */
export const CHUNKS_PER_APPEND = 2;

/** Fixed, so a chunk's event id depends on the document and the index only. */
const CHUNK_ID_NAMESPACE = '5b0c8a57-3f43-4f0e-9a55-2d7f41c7e1a9';

/** Deterministic: a re-appended chunk (a retried import) is recognised by the store, not written twice. */
export function chunkEventId(documentId: string, index: number): string {
  return uuidv5(`${documentId}/${index}`, CHUNK_ID_NAMESPACE);
}

/** The content's chunk events, grouped into the appends that write them in order. */
export function contentAppends(documentId: string, content: Buffer): DocumentContentChunk[][] {
  const chunks: DocumentContentChunk[] = [];
  for (let index = 0, at = 0; at < content.length; index++, at += CONTENT_CHUNK_BYTES) {
    const content_base64 = content.subarray(at, at + CONTENT_CHUNK_BYTES).toString('base64');
    chunks.push({ type: DOCUMENT_CONTENT_CHUNK, data: { document_id: documentId, index, content_base64 } });
  }
  const appends: DocumentContentChunk[][] = [];
  for (let i = 0; i < chunks.length; i += CHUNKS_PER_APPEND) appends.push(chunks.slice(i, i + CHUNKS_PER_APPEND));
  return appends;
}

/** A content stream that does not hold the bytes its document names: never served. */
export class ContentIntegrityError extends Error {
  override readonly name = 'ContentIntegrityError';
}

/** What the document's event says its content is. */
export interface ContentDigest {
  readonly size_bytes: number;
  readonly sha256: string;
}

/**
 * The bytes of a content stream's events (their data, in stream order), checked against the
 * document: chunks 0…n-1 without a gap, then exactly its size and SHA-256.
 */
export function joinContent(chunks: readonly object[], expected: ContentDigest): Buffer {
  const parts = chunks.map((chunk, i) => {
    const { index, content_base64 } = chunk as { index?: unknown; content_base64?: unknown };
    if (index !== i || typeof content_base64 !== 'string') {
      throw new ContentIntegrityError(`Content chunk ${i} is missing or malformed (found index ${String(index)})`);
    }
    return Buffer.from(content_base64, 'base64');
  });
  return verified(Buffer.concat(parts), expected);
}

/** `bytes` when they are exactly the size and SHA-256 the document names; a ContentIntegrityError otherwise. */
export function verified(bytes: Buffer, expected: ContentDigest): Buffer {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (bytes.length !== expected.size_bytes || sha256 !== expected.sha256) {
    throw new ContentIntegrityError(
      `Content of ${bytes.length} bytes with SHA-256 ${sha256} does not match the document's ${expected.size_bytes} bytes, ${expected.sha256}`,
    );
  }
  return bytes;
}
