import type { JsonObject } from '@filing/event-store';
import { recorded } from '@filing/platform/testing';
import Database from 'better-sqlite3';
import { NotificationsProjection } from './notifications.projection';

/** Two entities' streams, one of them continued in later batches, in `$all` order. */
const log = (
  [
    {
      type: 'entities.EntityCreated',
      data: { entity_id: 'E1', status: 'inactive' },
      streamId: 'entity-E1',
      revision: 0,
    },
    { type: 'entities.EntityCreated', data: { entity_id: 'E2' }, streamId: 'entity-E2', revision: 0 },
    { type: 'entities.EntityUpdated', data: { name: 'renamed' }, streamId: 'entity-E1', revision: 1 },
    { type: 'entities.EntityUpdated', data: { status: 'active' }, streamId: 'entity-E2', revision: 1 },
    { type: 'entities.EntityUpdated', data: { name: 'again' }, streamId: 'entity-E1', revision: 2 },
  ] as { type: string; data: JsonObject; streamId: string; revision: number }[]
).map(({ type, data, streamId, revision }, position) =>
  recorded({ type, data }, { streamId, revision, position, accountId: 'acc-1' }),
);

function rows(db: Database.Database) {
  return {
    notifications: db.prepare('SELECT * FROM webhook_notifications ORDER BY seq').all(),
    facts: db.prepare('SELECT * FROM webhook_notification_facts ORDER BY stream_id').all(),
  };
}

describe('NotificationsProjection', () => {
  it('rebuilt in batches, a stream continued in a later batch, gives the rows of live applies', () => {
    const live = new Database(':memory:');
    const projection = new NotificationsProjection();
    projection.setup(live);
    for (const event of log) projection.apply(live, event);

    const rebuilt = new Database(':memory:');
    projection.setup(rebuilt);
    for (const batch of [log.slice(0, 2), log.slice(2, 4), log.slice(4)]) {
      projection.beginBatch(rebuilt, { rebuild: true });
      for (const event of batch) projection.apply(rebuilt, event);
      projection.endBatch(rebuilt);
    }

    expect(rows(rebuilt)).toEqual(rows(live));
    // E1's later updates carry no status: it comes from the facts its creation left, a batch earlier.
    const payloads = rows(rebuilt).notifications.map((row) => JSON.parse((row as { payload: string }).payload));
    expect(payloads.map((p: { status: string }) => p.status)).toEqual([
      'inactive',
      'active',
      'inactive',
      'active',
      'inactive',
    ]);
  });

  it('rebuilt in a batch of more rows than one statement writes, gives the rows of live applies, in order', () => {
    const many = Array.from({ length: 150 }, (_, i) =>
      recorded(
        i % 2 === 0
          ? { type: 'entities.EntityCreated', data: { entity_id: `M${i}`, status: 'active' } }
          : { type: 'entities.EntityUpdated', data: { status: 'inactive' } },
        { streamId: `entity-M${i - (i % 2)}`, revision: i % 2, position: 100 + i, accountId: `acc-${i % 3}` },
      ),
    );
    const live = new Database(':memory:');
    const rebuilt = new Database(':memory:');
    const projection = new NotificationsProjection();
    for (const db of [live, rebuilt]) projection.setup(db);
    for (const event of many) projection.apply(live, event);
    projection.beginBatch(rebuilt, { rebuild: true });
    for (const event of many) projection.apply(rebuilt, event);
    projection.endBatch(rebuilt);

    expect(rows(rebuilt)).toEqual(rows(live));
    expect(rows(rebuilt).notifications).toHaveLength(150);
    expect(rows(rebuilt).facts).toHaveLength(75);
  });
});
