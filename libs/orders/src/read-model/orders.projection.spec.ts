import { CursorCodec, type ProjectionRunner, type RecordedEnvelope } from '@filing/platform';
import { recorded } from '@filing/platform/testing';
import Database from 'better-sqlite3';
import {
  ORDER_CANCELLED, ORDER_COMPLETED, ORDER_SUBMITTED, type OrderEvent, type OrderEventData,
} from '../order.events';
import { OrdersProjection } from './orders.projection';
import { OrdersQueries } from './orders.queries';

const cursors = CursorCodec.random();

let position = 0;
const stored = (event: OrderEvent, account: string, occurredAt: string, revision = 0): RecordedEnvelope =>
  recorded(event, { streamId: `order-${event.data.order_id}`, revision, occurredAt, accountId: account, position: position++ });

const order = (order_id: string, entity_id: string): OrderEventData => ({
  order_id,
  entity_id,
  order_type: 'formation',
  jurisdiction_code: 'US-DE',
  details: { rush: true, people: ['a'] },
  status: 'submitted',
  cancellation_reason: null,
});

describe('orders read model', () => {
  let db: Database.Database;
  let queries: OrdersQueries;
  const projection = new OrdersProjection();

  beforeEach(() => {
    db = new Database(':memory:');
    projection.setup(db);
    queries = new OrdersQueries({ db } as unknown as ProjectionRunner);
    const at = '2026-01-01T00:00:00.000Z';
    const later = '2026-01-02T00:00:00.000Z';
    for (const [id, entity, account] of [['o1', 'e1', 'a'], ['o2', 'e2', 'a'], ['o3', 'e1', 'a'], ['o4', 'e1', 'b']]) {
      projection.apply(db, stored({ type: ORDER_SUBMITTED, data: { ...order(id, entity), status: 'submitted' } }, account, at));
    }
    projection.apply(
      db,
      stored({ type: ORDER_CANCELLED, data: { ...order('o2', 'e2'), status: 'cancelled', cancellation_reason: 'No' } }, 'a', later, 1),
    );
    projection.apply(db, stored({ type: ORDER_COMPLETED, data: { ...order('o3', 'e1'), status: 'completed' } }, 'a', later, 1));
  });
  afterEach(() => db.close());

  it('keeps each order as of its last event, with details, version and times', () => {
    expect(queries.get('a', 'o2')).toEqual({
      id: 'o2',
      entity_id: 'e2',
      order_type: 'formation',
      jurisdiction_code: 'US-DE',
      details: { rush: true, people: ['a'] },
      status: 'cancelled',
      cancellation_reason: 'No',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
      version: 1,
    });
  });

  it('answers only within the account, except to an operator', () => {
    expect(queries.get('b', 'o2')).toBeNull();
    expect(queries.exists('a', 'o1')).toBe(true);
    expect(queries.exists('b', 'o1')).toBe(false);
    expect(queries.getInAnyAccount('o4')).toMatchObject({ id: 'o4', account_id: 'b' });
    expect(queries.getInAnyAccount('o9')).toBeNull();
    expect(queries.list('b', {}, { limit: 50, after: null, cursors }).data.map((o) => o.id)).toEqual(['o4']);
  });

  it('filters by entity and status, and pages', () => {
    const page = queries.list('a', {}, { limit: 2, after: null, cursors });
    expect(page.data.map((o) => o.id)).toEqual(['o1', 'o2']);
    expect(cursors.decode(page.next_cursor)).toMatchObject({ c: 'orders', k: 'o2' });
    expect(queries.list('a', {}, { limit: 2, after: 'o2', cursors })).toEqual({ data: [expect.objectContaining({ id: 'o3' })], next_cursor: null });
    expect(queries.list('a', { entity_id: 'e1' }, { limit: 50, after: null, cursors }).data.map((o) => o.id)).toEqual(['o1', 'o3']);
    expect(queries.list('a', { status: 'completed' }, { limit: 50, after: null, cursors }).data.map((o) => o.id)).toEqual(['o3']);
    expect(queries.list('a', { entity_id: 'e1', status: 'submitted' }, { limit: 50, after: null, cursors }).data.map((o) => o.id)).toEqual(['o1']);
  });
});
