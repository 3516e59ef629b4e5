import { recorded } from '@filing/platform/testing';
import Database from 'better-sqlite3';
import type { DeliveryEvent } from '../deliveries/delivery.events';
import { DeliveryStates } from '../dispatch/delivery-states';
import { DueWindows } from '../dispatch/due-windows';
import { DeliveriesProjection } from './deliveries.projection';
import { DeliverySignal } from './delivery-signal';

const T0 = '2026-11-22T10:00:00.000Z';
const T1 = '2026-11-22T10:00:01.000Z';
const T2 = '2026-11-22T10:00:03.000Z';

const scheduled = (id: string): DeliveryEvent => ({
  type: 'webhooks.DeliveryScheduled',
  data: {
    delivery_id: id,
    endpoint_id: 'E',
    account_id: 'A',
    event_id: `ev-${id}`,
    event_type: 'entity.created',
    source_position: '1/1',
    payload: { event_id: `ev-${id}` },
    due_at: T0,
  },
});
const attempted = (id: string, attempt: number, at: string, status: number, outcome?: 'succeeded'): DeliveryEvent => ({
  type: 'webhooks.DeliveryAttempted',
  data: {
    delivery_id: id,
    attempt,
    attempted_at: at,
    status_code: status,
    error: null,
    duration_ms: 7,
    ...(outcome ? { outcome } : {}),
  },
});

/** Events of one stream, each with the occurred_at of the append that wrote it. */
type Stream = ReadonlyArray<readonly [DeliveryEvent, string]>;

/** A retried delivery that then succeeds: as versions before wrote it, and as this one does. */
const older = (id: string): Stream => [
  [scheduled(id), T0],
  [attempted(id, 1, T0, 503), T0],
  [{ type: 'webhooks.DeliveryRetryScheduled', data: { delivery_id: id, next_attempt_at: T1 } }, T0],
  [attempted(id, 2, T1, 200), T2],
  // One append with its attempt: the same occurred_at.
  [{ type: 'webhooks.DeliverySucceeded', data: { delivery_id: id, attempt: 2 } }, T2],
];
const newer = (id: string): Stream => [...older(id).slice(0, 3), [attempted(id, 2, T1, 200, 'succeeded'), T2]];

/**
 * The delivery log's and the endpoint health's tables after projecting `streams`, each event at
 * the next position, or where `positionOf` puts it (given that next one).
 */
function project(
  streams: Stream[],
  positionOf = (next: number, _revision: number) => next,
): { tables: Record<string, unknown[]>; db: Database.Database } {
  const db = new Database(':memory:');
  const projections = [new DeliveriesProjection(new DeliverySignal(), new DeliveryStates(), new DueWindows())];
  for (const p of projections) p.setup(db);
  let next = 0;
  for (const stream of streams) {
    for (const [revision, [event, occurredAt]] of stream.entries()) {
      const streamId = `webhookdelivery-${event.data.delivery_id}`;
      const position = positionOf(++next, revision);
      const envelope = recorded(event, { streamId, revision, position, occurredAt, accountId: 'A' });
      for (const p of projections) p.apply(db, envelope);
    }
  }
  const tables = Object.fromEntries(
    projections
      .flatMap((p) => p.tables)
      .map((table) => [table, db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all()]),
  );
  return { tables, db };
}

describe('a successful attempt in one event or, in older streams, two: the same read-model rows', () => {
  it('gives equal rows in every table but the stream revision each delivery row was written at', () => {
    // Scheduled at the same positions in both, so `seq` agrees.
    const before = project([older('D')]);
    const after = project([newer('D')]);
    const version = (t: Record<string, unknown[]>) => (t.webhook_deliveries as Array<{ version: number }>)[0].version;
    // Each row remembers the revision of its stream's last event: one event fewer now.
    expect([version(before.tables), version(after.tables)]).toEqual([4, 3]);
    const withoutVersion = (t: Record<string, unknown[]>) => ({
      ...t,
      webhook_deliveries: (t.webhook_deliveries as Array<{ version: number }>).map(({ version: _, ...row }) => row),
    });
    expect(withoutVersion(after.tables)).toEqual(withoutVersion(before.tables));
    expect(after.tables.webhook_deliveries[0]).toMatchObject({
      status: 'delivered',
      attempt_count: 2,
      last_attempt_at: T1,
      next_attempt_at: null,
      claimed_until: null,
      pending_since: null,
      updated_at: T2,
    });
    expect(after.tables.webhook_deliveries[0]).toMatchObject({ status: 'delivered', status_at: T2 });
  });

  it('reads a log holding both shapes side by side: each delivery is delivered once', () => {
    const { db } = project([older('D1'), newer('D2')]);
    expect(db.prepare('SELECT id, status, attempt_count FROM webhook_deliveries ORDER BY id').all()).toEqual([
      { id: 'D1', status: 'delivered', attempt_count: 2 },
      { id: 'D2', status: 'delivered', attempt_count: 2 },
    ]);
    expect(
      db.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE endpoint_id = 'E' AND status = 'delivered'").get(),
    ).toEqual({ n: 2 });
  });

  it('an attempt without an outcome leaves the delivery pending, whatever its status code', () => {
    const { tables } = project([older('D').slice(0, 4)]);
    expect(tables.webhook_deliveries[0]).toMatchObject({ status: 'pending', attempt_count: 2 });
  });

  it("keeps each delivery's attempts, in order, even were two deliveries given the same seq", () => {
    // Both scheduled at position 1: the attempts' key must still tell them apart.
    const { db } = project([newer('D1'), newer('D2')], (next, revision) => (revision === 0 ? 1 : 100 + next));
    const attempts = db.prepare(
      'SELECT attempt, status_code FROM webhook_delivery_attempts WHERE delivery_seq = ? AND delivery_id = ? ORDER BY attempt',
    );
    for (const id of ['D1', 'D2'])
      expect(attempts.all(1, id)).toEqual([
        { attempt: 1, status_code: 503 },
        { attempt: 2, status_code: 200 },
      ]);
  });
});
