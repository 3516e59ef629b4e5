import type { ProjectionRunner } from '@filing/platform';
import Database from 'better-sqlite3';
import { DeliveryStates } from '../dispatch/delivery-states';
import { DueWindows } from '../dispatch/due-windows';
import { DeliveriesProjection } from './deliveries.projection';
import { DeliveryQueue } from './delivery-queue.queries';
import { DeliverySignal } from './delivery-signal';

const NOW = new Date('2026-11-22T10:00:00.000Z');
const at = (offsetMs: number) => new Date(NOW.getTime() + offsetMs).toISOString();

describe('the dispatcher queue (webhook_deliveries)', () => {
  let db: Database.Database;
  let queue: DeliveryQueue;
  let seq = 0;
  const put = (id: string, endpointId: string, status: string, nextAttemptAt: string | null) =>
    db
      .prepare(
        `INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, event_type, status, attempt_count, next_attempt_at,
           pending_since, source_position, seq, event_at, status_at, created_at, updated_at, version)
         VALUES (?, 'A', ?, ?, 'entity.created', ?, 0, ?, ?, '1/1', ?, ?, ?, ?, ?, 0)`,
      )
      .run(id, endpointId, `ev-${id}`, status, nextAttemptAt, nextAttemptAt, seq++, at(0), at(0), at(0), at(0));

  beforeEach(() => {
    db = new Database(':memory:');
    new DeliveriesProjection(new DeliverySignal(), new DeliveryStates(), new DueWindows()).setup(db);
    queue = new DeliveryQueue({ db } as unknown as ProjectionRunner);
    // e1: a long due backlog; e2: one due; e3: only a retry later; e4: done; e5: due.
    for (let i = 0; i < 50; i++) put(`e1-${i}`, 'e1', 'pending', at(-1000 + i));
    put('e2-0', 'e2', 'pending', at(0));
    put('e3-0', 'e3', 'pending', at(60_000));
    put('e4-0', 'e4', 'delivered', null);
    put('e5-0', 'e5', 'pending', at(-5));
  });

  it('lists each endpoint with due work once, in id order, whatever its backlog', () => {
    expect(queue.endpointsWithDueWork(NOW, null, 10)).toEqual(['e1', 'e2', 'e5']);
  });

  it('starts after a cursor and stops at the limit, so rounds can take turns', () => {
    expect(queue.endpointsWithDueWork(NOW, 'e1', 10)).toEqual(['e2', 'e5']);
    expect(queue.endpointsWithDueWork(NOW, null, 2)).toEqual(['e1', 'e2']);
    expect(queue.endpointsWithDueWork(NOW, 'e5', 10)).toEqual([]);
    expect(queue.endpointsWithDueWork(NOW, null, 0)).toEqual([]);
  });

  it("gives an endpoint's due deliveries, the longest due first, up to the limit", () => {
    expect(queue.dueOf('e1', NOW, 3)).toEqual(['e1-0', 'e1-1', 'e1-2']);
    expect(queue.dueOf('e3', NOW, 3)).toEqual([]);
    expect(queue.dueOf('e3', new Date(NOW.getTime() + 60_000), 3)).toEqual(['e3-0']);
  });

  it("lists a replay's due deliveries after the live ones, however long they have been due", () => {
    db.prepare("UPDATE webhook_deliveries SET replay = 1 WHERE id IN ('e1-0', 'e1-1')").run();
    expect(queue.dueOf('e1', NOW, 3)).toEqual(['e1-2', 'e1-3', 'e1-4']);
    expect(queue.dueWithPriority('e1', NOW, 50).slice(-3)).toEqual([
      { id: 'e1-49', replay: false },
      { id: 'e1-0', replay: true },
      { id: 'e1-1', replay: true },
    ]);
  });

  it("leaves out a delivery an instance has claimed until the claim's lease runs out", () => {
    const claim = db.prepare('UPDATE webhook_deliveries SET claimed_until = ? WHERE id = ?');
    claim.run(at(15_000), 'e2-0');
    claim.run(at(15_000), 'e1-0');
    claim.run(at(-1), 'e1-1');
    expect(queue.endpointsWithDueWork(NOW, null, 10)).toEqual(['e1', 'e5']);
    expect(queue.dueOf('e1', NOW, 2)).toEqual(['e1-1', 'e1-2']);
    const leaseOver = new Date(NOW.getTime() + 15_000);
    expect(queue.endpointsWithDueWork(leaseOver, null, 10)).toEqual(['e1', 'e2', 'e5']);
    expect(queue.dueOf('e1', leaseOver, 2)).toEqual(['e1-0', 'e1-1']);
  });

  it('knows the next retry time and the queue depth', () => {
    expect(queue.nextDueAfter(NOW)).toBe(at(60_000));
    expect(queue.pendingStats(NOW)).toEqual({ due: 52, waiting: 1, oldest: at(-1000) });
  });
});
