import { SqliteEventStore } from '@filing/event-store';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError } from '../errors/domain-errors';
import { buildMetadata, toEventData } from '../events/envelope';
import { readHistory } from './history';
import { CursorCodec } from './cursor-codec';
import { pageRequest } from './page.dto';

describe('readHistory', () => {
  const cursors = CursorCodec.random();
  let dir: string;
  let store: SqliteEventStore;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'history-'));
    store = new SqliteEventStore({ file: join(dir, 'events.db') });
    const context = { account_id: 'acc-1', actor: 'client:c1', correlation_id: 'r1', causation_id: null };
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    await store.appendToStream('thing-1', [
      toEventData({ type: 'things.ThingCreated', data: { name: 'a' } }, buildMetadata(context, at(0))),
      toEventData(
        { type: 'things.ThingUpdated', data: { name: 'b' } },
        buildMetadata({ ...context, actor: 'operator:o1' }, at(1)),
      ),
      toEventData({ type: 'things.ThingUpdated', data: { name: 'c' } }, buildMetadata(context, at(2))),
    ]);
  });
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const read = (accountId: string, query: { limit?: string; cursor?: string } = {}, streamId = 'thing-1') =>
    readHistory({
      store,
      streamId,
      accountId,
      page: pageRequest<number>(query, 'things/history', 'number', cursors),
      collection: 'things/history',
      notFound: () => NotFoundError.of('thing', '1'),
    });

  it('lists the stream oldest first as {type, occurred_at, actor, data}', async () => {
    expect(await read('acc-1')).toEqual({
      data: [
        { type: 'ThingCreated', occurred_at: '2026-01-01T00:00:00.000Z', actor: 'client:c1', data: { name: 'a' } },
        { type: 'ThingUpdated', occurred_at: '2026-01-01T00:00:01.000Z', actor: 'operator:o1', data: { name: 'b' } },
        { type: 'ThingUpdated', occurred_at: '2026-01-01T00:00:02.000Z', actor: 'client:c1', data: { name: 'c' } },
      ],
      next_cursor: null,
    });
  });

  it('pages by revision', async () => {
    const first = await read('acc-1', { limit: '2' });
    expect(first.data.map((e) => e.data.name)).toEqual(['a', 'b']);
    const second = await read('acc-1', { limit: '2', cursor: first.next_cursor! });
    expect(second).toEqual({ data: [expect.objectContaining({ data: { name: 'c' } })], next_cursor: null });
  });

  it("answers another account's stream, and a missing one, as not found, on any page", async () => {
    await expect(read('acc-2')).rejects.toThrow(NotFoundError);
    const first = await read('acc-1', { limit: '1' });
    await expect(read('acc-2', { limit: '1', cursor: first.next_cursor! })).rejects.toThrow(NotFoundError);
    await expect(read('acc-1', {}, 'thing-2')).rejects.toThrow(NotFoundError);
  });
});
