import { createHash, randomBytes } from 'node:crypto';
import { MAX_CONTENT_BYTES } from '../document';
import { DOCUMENT_CIPHER_CHUNK } from '../document.events';
import { CONTENT_CHUNK_BYTES, ContentIntegrityError } from './content-chunks';
import { cipherAppends, cipherChunkEventId, openContent } from './content-cipher';

const digestOf = (bytes: Buffer) => ({
  size_bytes: bytes.length,
  sha256: createHash('sha256').update(bytes).digest('hex'),
});
const dataOf = (appends: ReturnType<typeof cipherAppends>) => appends.flat().map((chunk) => chunk.data);

describe('document content encrypted with its own key', () => {
  const key = randomBytes(32);

  it.each([1, CONTENT_CHUNK_BYTES - 1, CONTENT_CHUNK_BYTES, CONTENT_CHUNK_BYTES + 1, MAX_CONTENT_BYTES])(
    'round-trips %i bytes exactly, in chunks no larger than the plaintext ones',
    (size) => {
      const content = randomBytes(size);
      const appends = cipherAppends('doc-1', key, content);
      const chunks = dataOf(appends);
      expect(chunks).toHaveLength(Math.ceil(size / CONTENT_CHUNK_BYTES));
      expect(appends.flat().every((c) => c.type === DOCUMENT_CIPHER_CHUNK && c.data.document_id === 'doc-1')).toBe(
        true,
      );
      expect(Math.max(...chunks.map((c) => JSON.stringify(c).length))).toBeLessThan(256 * 1024 + 200);
      expect(openContent(chunks, key, 'doc-1', digestOf(content)).equals(content)).toBe(true);
    },
  );

  it('stores no run of the plaintext, and a new IV each time', () => {
    const content = Buffer.alloc(3 * CONTENT_CHUNK_BYTES, 'PLAINTEXT-');
    const [first, second] = [cipherAppends('doc-1', key, content), cipherAppends('doc-1', key, content)].map(dataOf);
    const stored = Buffer.concat(first.map((c) => Buffer.from(c.ciphertext_base64, 'base64')));
    expect(stored.indexOf('PLAINTEXT-')).toBe(-1);
    expect(first[0].ciphertext_base64).not.toBe(second[0].ciphertext_base64);
  });

  it('opens under its own key, document and place only', () => {
    const content = randomBytes(3 * CONTENT_CHUNK_BYTES);
    const digest = digestOf(content);
    const chunks = dataOf(cipherAppends('doc-1', key, content));
    const other = dataOf(cipherAppends('doc-2', key, content));
    const swapped = [chunks[0], { ...chunks[2], index: 1 }, { ...chunks[1], index: 2 }];
    expect(() => openContent(chunks, randomBytes(32), 'doc-1', digest)).toThrow(ContentIntegrityError);
    expect(() => openContent(chunks, key, 'doc-2', digest)).toThrow(ContentIntegrityError);
    expect(() => openContent([chunks[0], other[1], chunks[2]], key, 'doc-1', digest)).toThrow(ContentIntegrityError);
    expect(() => openContent(swapped, key, 'doc-1', digest)).toThrow(ContentIntegrityError);
    expect(() => openContent(chunks.slice(0, 2), key, 'doc-1', digest)).toThrow(/does not match/);
  });

  it('gives each chunk an event id that depends on the document and the index only', () => {
    expect(cipherChunkEventId('doc-1', 0)).toBe(cipherChunkEventId('doc-1', 0));
    expect(
      new Set([cipherChunkEventId('doc-1', 0), cipherChunkEventId('doc-1', 1), cipherChunkEventId('doc-2', 0)]).size,
    ).toBe(3);
  });
});
