import { createHash, randomBytes } from 'node:crypto';
import { MAX_CONTENT_BYTES } from '../document';
import { DOCUMENT_CONTENT_CHUNK } from '../document.events';
import {
  chunkEventId,
  CHUNKS_PER_APPEND,
  CONTENT_CHUNK_BYTES,
  ContentIntegrityError,
  contentAppends,
  joinContent,
} from './content-chunks';

const digestOf = (bytes: Buffer) => ({
  size_bytes: bytes.length,
  sha256: createHash('sha256').update(bytes).digest('hex'),
});
const dataOf = (appends: ReturnType<typeof contentAppends>) => appends.flat().map((chunk) => chunk.data);

describe('document content as chunk events', () => {
  it("splits 10 MiB into appends that stay well under EventStoreDB's 1 MiB MaxAppendSize, and joins them back", () => {
    const content = randomBytes(MAX_CONTENT_BYTES);
    const appends = contentAppends('doc-1', content);
    expect(appends).toHaveLength(Math.ceil(MAX_CONTENT_BYTES / CONTENT_CHUNK_BYTES / CHUNKS_PER_APPEND));
    const appendSizes = appends.map((chunks) =>
      chunks.reduce((sum, c) => sum + c.type.length + JSON.stringify(c.data).length, 0),
    );
    expect(Math.max(...appendSizes)).toBeLessThan(600 * 1024);
    expect(appends.flat().every((c) => c.type === DOCUMENT_CONTENT_CHUNK && c.data.document_id === 'doc-1')).toBe(true);
    expect(dataOf(appends).map((d) => d.index)).toEqual(Array.from({ length: appends.flat().length }, (_, i) => i));
    expect(joinContent(dataOf(appends), digestOf(content)).equals(content)).toBe(true);
  });

  it.each([1, CONTENT_CHUNK_BYTES - 1, CONTENT_CHUNK_BYTES, CONTENT_CHUNK_BYTES + 1, 3 * CONTENT_CHUNK_BYTES])(
    'round-trips %i bytes exactly',
    (size) => {
      const content = randomBytes(size);
      const chunks = dataOf(contentAppends('doc-1', content));
      expect(chunks).toHaveLength(Math.ceil(size / CONTENT_CHUNK_BYTES));
      expect(joinContent(chunks, digestOf(content)).equals(content)).toBe(true);
    },
  );

  it('never hands out bytes other than the document names: a missing, repeated or altered chunk is refused', () => {
    const content = randomBytes(3 * CONTENT_CHUNK_BYTES);
    const digest = digestOf(content);
    const chunks = dataOf(contentAppends('doc-1', content));
    const altered = { ...chunks[1], content_base64: Buffer.alloc(CONTENT_CHUNK_BYTES).toString('base64') };
    for (const broken of [
      chunks.slice(0, 2),
      [chunks[0], chunks[2], chunks[1]],
      [chunks[0], chunks[0], chunks[1], chunks[2]],
      [chunks[0], altered, chunks[2]],
      [{}],
    ]) {
      expect(() => joinContent(broken, digest)).toThrow(ContentIntegrityError);
    }
    expect(() => joinContent(chunks, { ...digest, sha256: 'f'.repeat(64) })).toThrow(/does not match/);
  });

  it('gives each chunk an event id that depends on the document and the index only', () => {
    expect(chunkEventId('doc-1', 0)).toBe(chunkEventId('doc-1', 0));
    expect(new Set([chunkEventId('doc-1', 0), chunkEventId('doc-1', 1), chunkEventId('doc-2', 0)]).size).toBe(3);
    expect(chunkEventId('doc-1', 0)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
