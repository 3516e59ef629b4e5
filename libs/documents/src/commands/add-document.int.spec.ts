import { type EventStore, EventStoreUnavailableError, SqliteEventStore } from '@filing/event-store';
import {
  type CommandContext,
  NotFoundError,
  type ReadYourWrites,
  ReferenceChecker,
  ServiceKeys,
  ValidationError,
} from '@filing/platform';
import { createHash, randomBytes } from 'node:crypto';
import { CONTENT_CHUNK_BYTES } from '../content/content-chunks';
import { contentStreamId, DocumentContentStore, keyStreamId } from '../content/document-content.store';
import { DOCUMENT_CIPHER_CHUNK } from '../document.events';
import { AddDocumentCommand, AddDocumentHandler } from './add-document';
import { DeleteDocumentCommand, DeleteDocumentHandler } from './delete-document';

/** The write path's all-or-nothing rule, on the embedded store made to fail on demand. */
describe('adding and deleting a document: the content stream and the events', () => {
  const context: CommandContext = { account_id: 'acc-1', actor: 'client:c1', correlation_id: 'r', causation_id: null };
  const references = new ReferenceChecker(
    { await: async () => undefined } as unknown as ReadYourWrites,
    {} as EventStore,
  );
  references.register('entity', () => true);
  references.register('order', () => true);
  // Three chunks, written in two appends.
  const content = randomBytes(2 * CONTENT_CHUNK_BYTES + 1000);
  const digest = { size_bytes: content.length, sha256: createHash('sha256').update(content).digest('hex') };
  const input = {
    entity_id: '0193A5B2-0000-7000-8000-0000000000E1',
    title: 'Certificate',
    document_type: 'certificate',
    content_type: 'application/octet-stream',
    content,
  };
  let store: SqliteEventStore;
  let contents: DocumentContentStore;

  beforeEach(() => {
    store = new SqliteEventStore({ file: ':memory:' });
    contents = new DocumentContentStore(store, ServiceKeys.random().secretBox());
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
  });

  const add = (documentId: string, fields: Partial<typeof input> = {}) =>
    new AddDocumentHandler(store, references, contents).execute(
      new AddDocumentCommand(context, { ...input, ...fields }, documentId),
    );
  const remove = (documentId: string) =>
    new DeleteDocumentHandler(store, contents).execute(new DeleteDocumentCommand(context, documentId));
  const types = async (streamId: string) => (await store.readStream(streamId)).map((e) => e.type);

  /** Appends fail (`when` says which), after writing them when `recorded` (a timeout after the write). */
  function failAppends(when: (streamId: string, call: number) => boolean, recorded = false) {
    const append = store.appendToStream.bind(store);
    let calls = 0;
    return jest.spyOn(store, 'appendToStream').mockImplementation(async (streamId, events, options) => {
      if (!when(streamId, calls++)) return append(streamId, events, options);
      if (recorded) await append(streamId, events, options);
      throw new EventStoreUnavailableError('the store is down');
    });
  }

  it('writes the bytes as chunks of their own stream first, then the DocumentAdded naming their hash and size, never the bytes', async () => {
    const result = await add('doc-1');
    expect(result.resource).toMatchObject({ id: 'doc-1', ...digest, version: 0 });

    const [key] = await store.readStream(keyStreamId('doc-1'));
    const chunks = await store.readStream(contentStreamId('doc-1'));
    expect(chunks.map((e) => [e.type, e.data.index, e.metadata.account_id])).toEqual(
      [0, 1, 2].map((i) => [DOCUMENT_CIPHER_CHUNK, i, 'acc-1']),
    );
    expect(Math.max(...chunks.map((e) => JSON.stringify(e.data).length))).toBeLessThanOrEqual(256 * 1024 + 100);
    // Encrypted: no 32-byte run of the content is in any chunk.
    const stored = Buffer.concat(chunks.map((e) => Buffer.from(e.data.ciphertext_base64 as string, 'base64')));
    expect(stored.indexOf(content.subarray(1000, 1032))).toBe(-1);
    const [added] = await store.readStream('document-doc-1');
    expect(key.position.commit < chunks[0].position.commit).toBe(true);
    expect(chunks.every((chunk) => chunk.position.commit < added.position.commit)).toBe(true);
    expect(added.data).toEqual({
      document_id: 'doc-1',
      entity_id: '0193a5b2-0000-7000-8000-0000000000e1',
      order_id: null,
      title: 'Certificate',
      document_type: 'certificate',
      content_type: 'application/octet-stream',
      ...digest,
    });
    expect((await contents.read('doc-1', digest))!.equals(content)).toBe(true);
  });

  it('deletes the content stream again when the DocumentAdded cannot be appended', async () => {
    failAppends((streamId) => streamId.startsWith('document-'));
    await expect(add('doc-2')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(await contents.read('doc-2', digest)).toBeNull();
    expect(await types('document-doc-2')).toEqual([]);
  });

  it('leaves nothing readable and no document when the content write fails half way', async () => {
    failAppends((streamId, call) => call === 1);
    await expect(add('doc-3')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(await contents.read('doc-3', digest)).toBeNull();
    expect(await types('document-doc-3')).toEqual([]);
  });

  it('keeps the content when the append failed but the DocumentAdded was recorded all the same', async () => {
    failAppends((streamId) => streamId.startsWith('document-'), true);
    await expect(add('doc-4')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect((await contents.read('doc-4', digest))!.equals(content)).toBe(true);
  });

  it('keeps the (invisible) content when the store cannot tell whether the DocumentAdded was recorded', async () => {
    failAppends((streamId) => streamId.startsWith('document-'));
    const read = store.readStream.bind(store);
    jest.spyOn(store, 'readStream').mockImplementation(async (streamId, options) => {
      if (streamId.startsWith('document-')) throw new EventStoreUnavailableError('still down');
      return read(streamId, options);
    });
    await expect(add('doc-5')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    jest.restoreAllMocks();
    expect(await types(contentStreamId('doc-5'))).toHaveLength(3);
  });

  it('writes nothing for a document it refuses', async () => {
    const refused = await add('doc-6', { title: ' ', content: Buffer.alloc(0) }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).errors.map((e) => e.field)).toEqual(['title', 'content_base64']);
    expect(await store.headPosition()).toBeNull();
  });

  it('deletes the content stream once the document is deleted, and not before', async () => {
    await add('doc-7');
    const spy = failAppends(() => true);
    await expect(remove('doc-7')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect((await contents.read('doc-7', digest))!.equals(content)).toBe(true);
    spy.mockRestore();
    await remove('doc-7');
    expect(await contents.read('doc-7', digest)).toBeNull();
    expect(await types('document-doc-7')).toEqual(['documents.DocumentAdded', 'documents.DocumentDeleted']);
  });

  it('destroys the key in the delete: the content stream no longer opens, the plaintext is nowhere in the log', async () => {
    await add('doc-9');
    await remove('doc-9');
    expect(await store.readStream(keyStreamId('doc-9'))).toEqual([]);
    const all = await store.readAll();
    expect(all.filter((e) => e.streamId === keyStreamId('doc-9'))).toEqual([]);
    expect(all.some((e) => JSON.stringify(e.data).includes(content.subarray(0, 300).toString('base64')))).toBe(false);
  });

  it('answers a recorded delete as done even when the key cannot be destroyed after it; a second DELETE destroys it', async () => {
    await add('doc-8');
    const spy = jest
      .spyOn(store, 'tombstoneStream')
      .mockRejectedValue(new EventStoreUnavailableError('down after the append'));
    await expect(remove('doc-8')).resolves.toMatchObject({ resource: { id: 'doc-8', deleted: true } });
    expect(await types('document-doc-8')).toEqual(['documents.DocumentAdded', 'documents.DocumentDeleted']);
    expect(await types(keyStreamId('doc-8'))).toHaveLength(1);
    spy.mockRestore();
    await expect(remove('doc-8')).rejects.toBeInstanceOf(NotFoundError);
    expect(await types(keyStreamId('doc-8'))).toEqual([]);
    expect(await contents.read('doc-8', digest)).toBeNull();
  });
});
