import { EventStoreUnavailableError, type EventStore } from '@filing/event-store';
import { type CommandContext, type ReadYourWrites, ReferenceChecker, ValidationError } from '@filing/platform';
import { createHash } from 'node:crypto';
import { DocumentContentStore } from '../content/document-content.store';
import { AddDocumentCommand, AddDocumentHandler } from './add-document';
import { DeleteDocumentCommand, DeleteDocumentHandler } from './delete-document';

/** The write path's all-or-nothing rule, against an event store that fails on demand. */
describe('adding a document: the bytes and the event', () => {
  const context: CommandContext = { account_id: 'acc-1', actor: 'client:c1', correlation_id: 'r', causation_id: null };
  const references = new ReferenceChecker({ await: async () => undefined } as unknown as ReadYourWrites, {} as EventStore);
  references.register('entity', () => true);
  references.register('order', () => true);
  const content = Buffer.from([0, 1, 2, 250, 255]);
  const input = {
    entity_id: '0193A5B2-0000-7000-8000-0000000000E1',
    title: 'Certificate',
    document_type: 'certificate',
    content_type: 'application/octet-stream',
    content,
  };
  let contents: DocumentContentStore;
  let streams: Map<string, unknown[]>;
  let appendError: Error | null;
  let recordedDespiteError: boolean;
  let readError: Error | null;
  /** After a failed append, the store cannot be read either (it is down). */
  let unreadableAfterFailedAppend: boolean;

  /** Just enough of an event store: one stream per id, appends that fail when told to. */
  const store = {
    kind: 'fake',
    async readStream(streamId: string) {
      if (readError) throw readError;
      return (streams.get(streamId) ?? []).map((e, i) => ({ ...(e as object), streamId, revision: BigInt(i), position: { commit: 1n, prepare: 1n } }));
    },
    async appendToStream(streamId: string, events: { id: string; type: string; data: object; metadata: object }[]) {
      if (appendError) {
        if (unreadableAfterFailedAppend) readError = new EventStoreUnavailableError('still down');
        if (recordedDespiteError) streams.set(streamId, [...(streams.get(streamId) ?? []), ...events]);
        throw appendError;
      }
      const stream = [...(streams.get(streamId) ?? []), ...events];
      streams.set(streamId, stream);
      return { nextExpectedRevision: BigInt(stream.length - 1), position: { commit: 7n, prepare: 7n } };
    },
  } as unknown as EventStore;

  beforeEach(() => {
    contents = new DocumentContentStore(':memory:');
    streams = new Map();
    appendError = null;
    recordedDespiteError = false;
    readError = null;
    unreadableAfterFailedAppend = false;
  });
  afterEach(() => contents.close());

  const handler = () => new AddDocumentHandler(store, references, contents);

  it('stores the bytes under the new id and appends their hash and size, never the bytes', async () => {
    const result = await handler().execute(new AddDocumentCommand(context, input, 'doc-1'));
    expect(contents.get('doc-1', 'acc-1')).toEqual(content);
    expect(contents.get('doc-1', 'acc-2')).toBeNull();
    const [event] = streams.get('document-doc-1') as { type: string; data: Record<string, unknown> }[];
    expect(event.type).toBe('documents.DocumentAdded');
    expect(event.data).toEqual({
      document_id: 'doc-1',
      entity_id: '0193a5b2-0000-7000-8000-0000000000e1',
      order_id: null,
      title: 'Certificate',
      document_type: 'certificate',
      content_type: 'application/octet-stream',
      size_bytes: 5,
      sha256: createHash('sha256').update(content).digest('hex'),
    });
    expect(result.resource).toMatchObject({ id: 'doc-1', size_bytes: 5, version: 0 });
  });

  it('removes the bytes again when the append fails', async () => {
    appendError = new EventStoreUnavailableError('down');
    await expect(handler().execute(new AddDocumentCommand(context, input, 'doc-2'))).rejects.toBe(appendError);
    expect(contents.count()).toBe(0);
  });

  it('keeps the bytes when the append failed but the event was recorded all the same', async () => {
    appendError = new EventStoreUnavailableError('timed out after the write');
    recordedDespiteError = true;
    await expect(handler().execute(new AddDocumentCommand(context, input, 'doc-3'))).rejects.toBe(appendError);
    expect(contents.get('doc-3', 'acc-1')).toEqual(content);
  });

  it('keeps the (invisible) bytes when the store cannot tell whether the event was recorded', async () => {
    appendError = new EventStoreUnavailableError('down');
    unreadableAfterFailedAppend = true;
    await expect(handler().execute(new AddDocumentCommand(context, input, 'doc-4'))).rejects.toBe(appendError);
    expect(contents.count()).toBe(1);
  });

  it('writes no bytes for a document it refuses', async () => {
    const refused = await handler()
      .execute(new AddDocumentCommand(context, { ...input, title: ' ', content: Buffer.alloc(0) }, 'doc-5'))
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).errors.map((e) => e.field)).toEqual(['title', 'content_base64']);
    expect(contents.count()).toBe(0);
    expect(streams.size).toBe(0);
  });

  it('removes the bytes once the document is deleted, and not before', async () => {
    await handler().execute(new AddDocumentCommand(context, input, 'doc-6'));
    appendError = new EventStoreUnavailableError('down');
    const remove = new DeleteDocumentHandler(store, contents);
    await expect(remove.execute(new DeleteDocumentCommand(context, 'doc-6'))).rejects.toBe(appendError);
    expect(contents.get('doc-6', 'acc-1')).toEqual(content);
    appendError = null;
    await remove.execute(new DeleteDocumentCommand(context, 'doc-6'));
    expect(contents.get('doc-6', 'acc-1')).toBeNull();
  });
});
