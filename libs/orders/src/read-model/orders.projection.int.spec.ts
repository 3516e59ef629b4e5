import { type ReadModelFixture, readModelFixture } from '@filing/platform/testing';
import { ORDER_CANCELLED, ORDER_COMPLETED, ORDER_SUBMITTED, type OrderEventData } from '../order.events';
import { OrdersProjection } from './orders.projection';
import { OrdersQueries } from './orders.queries';

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
  let model: ReadModelFixture<OrdersQueries>;

  beforeEach(() => {
    model = readModelFixture(new OrdersProjection(), (runner) => new OrdersQueries(runner));
    const later = { accountId: 'a', revision: 1, occurredAt: '2026-01-02T00:00:00.000Z' };
    for (const [id, entity, accountId] of [
      ['o1', 'e1', 'a'],
      ['o2', 'e2', 'a'],
      ['o3', 'e1', 'a'],
      ['o4', 'e1', 'b'],
    ]) {
      model.apply({ type: ORDER_SUBMITTED, data: { ...order(id, entity), status: 'submitted' } }, { accountId });
    }
    model.apply(
      { type: ORDER_CANCELLED, data: { ...order('o2', 'e2'), status: 'cancelled', cancellation_reason: 'No' } },
      later,
    );
    model.apply({ type: ORDER_COMPLETED, data: { ...order('o3', 'e1'), status: 'completed' } }, later);
  });
  afterEach(() => model.close());

  it('keeps each order as of its last event, with details, version and times', () => {
    const { order_id, ...fields } = order('o2', 'e2');
    const cancelled = {
      status: 'cancelled',
      cancellation_reason: 'No',
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
    };
    expect(model.queries.get('a', order_id)).toEqual({ id: order_id, ...fields, ...cancelled, version: 1 });
  });

  it('answers only within the account, except to an operator', () => {
    expect(model.queries.get('b', 'o2')).toBeNull();
    expect(model.queries.exists('a', 'o1')).toBe(true);
    expect(model.queries.exists('b', 'o1')).toBe(false);
    expect(model.queries.getInAnyAccount('o4')).toMatchObject({
      id: 'o4',
      account_id: 'b',
      details: { rush: true, people: ['a'] },
    });
    expect(model.queries.getInAnyAccount('o9')).toBeNull();
    expect(model.ids('b')).toEqual(['o4']);
  });

  it('filters by entity and status, and pages', () => {
    model.expectPages('a', ['o1', 'o2', 'o3'], 2);
    expect(model.ids('a', { entity_id: 'e1' })).toEqual(['o1', 'o3']);
    expect(model.ids('a', { status: 'completed' })).toEqual(['o3']);
    expect(model.ids('a', { entity_id: 'e1', status: 'submitted' })).toEqual(['o1']);
  });
});
