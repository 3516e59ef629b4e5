import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { v5 as uuidv5 } from 'uuid';
import { DOCUMENT_CIPHER_CHUNK, type DocumentCipherChunk } from '../document.events';
import {
  CHUNKS_PER_APPEND,
  CONTENT_CHUNK_BYTES,
  type ContentDigest,
  ContentIntegrityError,
  verified,
} from './content-chunks';

/*
 * A document's bytes, encrypted with its own data key: pure, no store, no key handling. Each
 * chunk is AES-256-GCM with a random 12-byte IV, and the document id and chunk index as
 * additional data, so a chunk cannot be moved to another document or place and still open.
 * Stored as base64 of IV | ciphertext | tag: 192 KiB of content are ~256 KiB of base64 per event,
 * as before encryption (content-chunks.ts).
 */

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Fixed, so an encrypted chunk's event id depends on the document and the index only. */
const CIPHER_CHUNK_ID_NAMESPACE = '0f3f6d55-1d0e-4b8e-9c55-4a0f7b0c2e61';

/** Deterministic: a retried write (same key) is recognised by the store, not written twice. */
export function cipherChunkEventId(documentId: string, index: number): string {
  return uuidv5(`${documentId}/${index}`, CIPHER_CHUNK_ID_NAMESPACE);
}

function additionalData(documentId: string, index: number): Buffer {
  return Buffer.from(`documentcipher:${documentId}:${index}`, 'utf8');
}

export function encryptChunk(key: Buffer, documentId: string, index: number, plain: Buffer): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(additionalData(documentId, index));
  return Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]).toString('base64');
}

/** The chunk's bytes; a ContentIntegrityError when it does not open under this key, document and index. */
export function decryptChunk(key: Buffer, documentId: string, index: number, ciphertextBase64: string): Buffer {
  const sealed = Buffer.from(ciphertextBase64, 'base64');
  if (sealed.length < IV_BYTES + TAG_BYTES) throw new ContentIntegrityError(`Content chunk ${index} is truncated`);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(additionalData(documentId, index));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new ContentIntegrityError(`Content chunk ${index} does not open under document ${documentId}'s key`);
  }
}

/** The content's encrypted chunk events, grouped into the appends that write them in order. */
export function cipherAppends(documentId: string, key: Buffer, content: Buffer): DocumentCipherChunk[][] {
  const appends: DocumentCipherChunk[][] = [];
  let index = 0;
  for (let at = 0; at < content.length; at += CONTENT_CHUNK_BYTES * CHUNKS_PER_APPEND) {
    const chunks: DocumentCipherChunk[] = [];
    for (let i = 0; i < CHUNKS_PER_APPEND && at + i * CONTENT_CHUNK_BYTES < content.length; i++, index++) {
      const start = at + i * CONTENT_CHUNK_BYTES;
      const plain = content.subarray(start, start + CONTENT_CHUNK_BYTES);
      chunks.push({
        type: DOCUMENT_CIPHER_CHUNK,
        data: { document_id: documentId, index, ciphertext_base64: encryptChunk(key, documentId, index, plain) },
      });
    }
    appends.push(chunks);
  }
  return appends;
}

/**
 * The bytes of an encrypted content stream's events (their data, in stream order), decrypted and
 * checked against the document: chunks 0…n-1 without a gap, each opening under the key, then
 * exactly its size and SHA-256.
 */
export function openContent(
  chunks: readonly object[],
  key: Buffer,
  documentId: string,
  expected: ContentDigest,
): Buffer {
  const parts = chunks.map((chunk, i) => {
    const { index, ciphertext_base64 } = chunk as { index?: unknown; ciphertext_base64?: unknown };
    if (index !== i || typeof ciphertext_base64 !== 'string') {
      throw new ContentIntegrityError(`Content chunk ${i} is missing or malformed (found index ${String(index)})`);
    }
    return decryptChunk(key, documentId, i, ciphertext_base64);
  });
  return verified(Buffer.concat(parts), expected);
}
