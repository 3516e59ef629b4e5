import { EventStoreUnavailableError, SqliteEventStore, StreamDeletedError } from '@filing/event-store';
import { randomBytes, randomUUID } from 'node:crypto';
import { KeyStreams } from './key-streams';
import { SecretBox } from './secret-box';

describe('data keys in key streams', () => {
  const [oldRoot, newRoot] = [randomBytes(32), randomBytes(32)];
  let store: SqliteEventStore;
  beforeEach(() => (store = new SqliteEventStore({ file: ':memory:' })));
  afterEach(async () => {
    jest.restoreAllMocks();
    await store.close();
  });
  const sealedIn = async (streamId: string) =>
    (await store.readAll()).filter((e) => e.streamId === streamId).map((e) => e.data.key_sealed as string);

  it('makes a key once, seals it bound to its stream, and gives the same key back', async () => {
    const keys = new KeyStreams(store, new SecretBox(oldRoot));
    const key = await keys.openOrCreate('documentkey-1', {});
    expect(key).toHaveLength(32);
    expect((await keys.openOrCreate('documentkey-1', {})).equals(key)).toBe(true);
    const [sealed] = await sealedIn('documentkey-1');
    expect(sealed).toMatch(/^v1\.[0-9a-f]{8}\./);
    expect(sealed.includes(key.toString('base64'))).toBe(false);
    // Moved to another stream, it does not open.
    await store.appendToStream('documentkey-2', [
      { id: randomUUID(), type: 'keys.DataKeySealed', data: { key_sealed: sealed } },
    ]);
    await expect(keys.open('documentkey-2')).rejects.toThrow(/does not verify/);
  });

  it('destroyed, the key is gone from the log and cannot be made again', async () => {
    const keys = new KeyStreams(store, new SecretBox(oldRoot));
    await keys.openOrCreate('documentkey-1', {});
    await keys.destroy('documentkey-1');
    expect(await keys.open('documentkey-1')).toBeNull();
    expect(await sealedIn('documentkey-1')).toEqual([]);
    await expect(keys.openOrCreate('documentkey-1', {})).rejects.toBeInstanceOf(StreamDeletedError);
    expect(await keys.reseal('documentkey-1')).toBe('destroyed');
  });

  it('re-seals the same key under the new root and removes the version under the old one; again: current', async () => {
    const key = await new KeyStreams(store, new SecretBox(oldRoot)).openOrCreate('documentkey-1', {});
    const rotated = new KeyStreams(store, new SecretBox(newRoot, [oldRoot]));
    expect(await rotated.reseal('documentkey-1')).toBe('resealed');
    expect(await rotated.reseal('documentkey-1')).toBe('current');
    const sealed = await sealedIn('documentkey-1');
    expect(sealed).toHaveLength(1);
    expect(new SecretBox(newRoot).isCurrent(sealed[0])).toBe(true);
    expect((await new KeyStreams(store, new SecretBox(newRoot)).open('documentkey-1'))!.equals(key)).toBe(true);
  });

  it('a re-seal cut short between its two writes is finished by the next run', async () => {
    await new KeyStreams(store, new SecretBox(oldRoot)).openOrCreate('documentkey-1', {});
    const rotated = new KeyStreams(store, new SecretBox(newRoot, [oldRoot]));
    jest.spyOn(store, 'truncateStream').mockRejectedValueOnce(new EventStoreUnavailableError('gone'));
    await expect(rotated.reseal('documentkey-1')).rejects.toBeInstanceOf(EventStoreUnavailableError);
    expect(await sealedIn('documentkey-1')).toHaveLength(2);
    expect(await rotated.reseal('documentkey-1')).toBe('current');
    expect(await sealedIn('documentkey-1')).toHaveLength(1);
  });

  it('lists the key streams the log names', async () => {
    const keys = new KeyStreams(store, new SecretBox(oldRoot));
    for (const id of ['documentkey-a', 'documentkey-b', 'other-c']) await keys.openOrCreate(id, {});
    expect((await keys.list(['documentkey-'])).sort()).toEqual(['documentkey-a', 'documentkey-b']);
  });
});
