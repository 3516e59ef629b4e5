import { EventStoreUnavailableError, SqliteEventStore } from '@filing/event-store';
import { buildMetadata, type CommandContext, SecretBox, toEventData } from '@filing/platform';
import { createHash, randomBytes } from 'node:crypto';
import { DocumentAggregate } from '../document.aggregate';
import { appendDocumentAdded } from './testing';
import { chunkEventId, contentAppends, CONTENT_CHUNK_BYTES } from './content-chunks';
import { DocumentContentStore, keyStreamId, legacyContentStreamId } from './document-content.store';
import { DocumentKeys } from './document-keys.service';

/** The operator's chores on documents' keys, on the embedded store. */
describe('document keys: re-seal and the migration of plaintext content', () => {
  const context: CommandContext = { account_id: 'acc-1', actor: 'client:c1', correlation_id: 'r', causation_id: null };
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const [oldRoot, newRoot] = [randomBytes(32), randomBytes(32)];
  let store: SqliteEventStore;
  beforeEach(() => (store = new SqliteEventStore({ file: ':memory:' })));
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
  });
  const services = (box: SecretBox) => {
    const contents = new DocumentContentStore(store, box);
    return { contents, keys: new DocumentKeys(store, box, contents) };
  };

  const addDocument = (id: string, bytes: Buffer) =>
    appendDocumentAdded(store, { ...context, account_id: 'acc-1' }, id, bytes);

  /** Content as the version before encryption wrote it: plaintext chunks, soft-deleted with its document. */
  async function legacyDocument(id: string, bytes: Buffer, deleted = false): Promise<void> {
    let index = 0;
    for (const chunks of contentAppends(id, bytes)) {
      const events = chunks.map((c) => toEventData(c, buildMetadata(context), chunkEventId(id, index++)));
      await store.appendToStream(legacyContentStreamId(id), events);
    }
    await addDocument(id, bytes);
    if (deleted) {
      await DocumentAggregate.run(store, context, { kind: 'delete', id, account_id: 'acc-1' });
      await store.deleteStream(legacyContentStreamId(id));
    }
  }
  const inLog = async (needle: string) => (await store.readAll()).some((e) => JSON.stringify(e.data).includes(needle));

  it('re-seals every live key, and destroys the key a cut-short delete left behind', async () => {
    const before = services(new SecretBox(oldRoot));
    for (const id of ['live', 'gone']) {
      await before.contents.write(context, id, Buffer.from(id));
      await addDocument(id, Buffer.from(id));
    }
    // The delete was recorded; its key was not destroyed (the process died).
    await DocumentAggregate.run(store, context, { kind: 'delete', id: 'gone', account_id: 'acc-1' });

    const after = services(new SecretBox(newRoot, [oldRoot]));
    const progress: Array<[number, number]> = [];
    expect(await after.keys.resealAll((done, total) => progress.push([done, total]))).toEqual({
      resealed: 1,
      current: 0,
      destroyed: 1,
    });
    expect(progress).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(await store.readStream(keyStreamId('gone'))).toEqual([]);
    const onlyNew = services(new SecretBox(newRoot));
    expect(
      (await onlyNew.contents.read('live', { size_bytes: 4, sha256: sha256(Buffer.from('live')) }))!.toString(),
    ).toBe('live');
    expect(await after.keys.resealAll()).toEqual({ resealed: 0, current: 1, destroyed: 0 });
  });

  it("encrypts a live document's plaintext, removes it and a deleted one's from the log; a cut-short run is finished", async () => {
    const kept = Buffer.alloc(2 * CONTENT_CHUNK_BYTES + 7, 'KEPT-PLAINTEXT|');
    const gone = Buffer.from('GONE-PLAINTEXT');
    await legacyDocument('kept', kept);
    await legacyDocument('gone', gone, true);
    const { contents, keys } = services(new SecretBox(oldRoot));
    expect((await contents.read('kept', { size_bytes: kept.length, sha256: sha256(kept) }))!.equals(kept)).toBe(true);

    // The store goes away after the encrypted copy, before the plaintext stream is removed.
    jest.spyOn(store, 'tombstoneStream').mockRejectedValueOnce(new EventStoreUnavailableError('gone'));
    await expect(keys.encryptLegacy()).rejects.toBeInstanceOf(EventStoreUnavailableError);
    jest.restoreAllMocks();
    expect(await keys.encryptLegacy()).toEqual({ encrypted: 1, erased: 1 });
    expect(await keys.encryptLegacy()).toEqual({ encrypted: 0, erased: 0 });

    expect((await contents.read('kept', { size_bytes: kept.length, sha256: sha256(kept) }))!.equals(kept)).toBe(true);
    expect(await contents.encrypted('kept')).toBe(true);
    for (const plaintext of [kept.subarray(0, 30), gone]) expect(await inLog(plaintext.toString('base64'))).toBe(false);
  });
});
