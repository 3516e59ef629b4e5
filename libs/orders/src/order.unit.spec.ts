import { ConflictError, NotFoundError, PreconditionFailedError } from '@filing/platform';
import { DeciderSpecification, expectOwnershipBeforeIfMatch } from '@filing/platform/testing';
import { decide, DETAILS_MAX_BYTES, evolve, initialOrderState, type OrderCommand } from './order';
import {
  ORDER_CANCELLED,
  ORDER_COMPLETED,
  ORDER_SUBMITTED,
  type OrderCancelled,
  type OrderCompleted,
  type OrderEventData,
  type OrderStatus,
  type OrderSubmitted,
} from './order.events';

const ID = '0193a5b2-0000-7000-8000-000000000001';
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';
const ACCOUNT = 'acc-1';

const given = DeciderSpecification.for(
  { decide, evolve, initialState: initialOrderState },
  { streamId: `order-${ID}`, accountId: ACCOUNT },
);
const submit = (input: Record<string, unknown>): OrderCommand =>
  ({ kind: 'submit', id: ID, account_id: ACCOUNT, input }) as unknown as OrderCommand;
const cancel = (extra: { reason?: unknown; account?: string; expected_version?: number } = {}): OrderCommand =>
  ({
    kind: 'cancel',
    id: ID,
    account_id: extra.account ?? ACCOUNT,
    reason: extra.reason,
    expected_version: extra.expected_version,
  }) as OrderCommand;
const complete = (extra: { account?: string | null; expected_version?: number } = {}): OrderCommand => ({
  kind: 'complete',
  id: ID,
  account_id: extra.account === undefined ? null : extra.account,
  expected_version: extra.expected_version,
});

const order: OrderEventData = {
  order_id: ID,
  entity_id: ENTITY,
  order_type: 'formation',
  jurisdiction_code: null,
  details: {},
  status: 'submitted',
  cancellation_reason: null,
};
const submitted: OrderSubmitted = { type: ORDER_SUBMITTED, data: { ...order, status: 'submitted' } };
const cancelled: OrderCancelled = { type: ORDER_CANCELLED, data: { ...order, status: 'cancelled' } };
const completed: OrderCompleted = { type: ORDER_COMPLETED, data: { ...order, status: 'completed' } };
const history = { submitted: [submitted], cancelled: [submitted, cancelled], completed: [submitted, completed] };

describe('order: submit', () => {
  it('submits an order with version 0, empty details and null optional fields', () => {
    given([])
      .when(submit({ entity_id: ENTITY, order_type: 'formation' }))
      .then(submitted);
    const { order_id, ...fields } = order;
    given([])
      .when(submit({ entity_id: ENTITY, order_type: 'formation' }))
      .thenState({
        id: order_id,
        account_id: ACCOUNT,
        ...fields,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
        version: 0,
      });
  });

  it('keeps the jurisdiction and the details', () => {
    const details = { state_filing_number: 'X-1', officers: [{ name: 'Ann', share: 0.5 }], rush: true, note: null };
    given([])
      .when(submit({ entity_id: ENTITY, order_type: 'annual_report', jurisdiction_code: 'US-DE', details }))
      .thenState((state) =>
        expect(state).toMatchObject({ order_type: 'annual_report', jurisdiction_code: 'US-DE', details }),
      );
  });

  it('lists every broken rule at once', () => {
    given([])
      .when(submit({ entity_id: 'nope', order_type: 'merger', jurisdiction_code: 'Delaware', details: [1] }))
      .thenInvalid(['entity_id', 'order_type', 'jurisdiction_code', 'details']);
    given([]).when(submit({})).thenInvalid(['entity_id', 'order_type']);
    given([])
      .when(submit({ order_type: 'other', entity_id: ENTITY, details: 'x' }))
      .thenInvalid(['details']);
    given([])
      .when(submit({ order_type: 'other', entity_id: ENTITY, status: 'completed' }))
      .thenInvalid(['status']);
  });

  it('bounds details at 16 KiB of JSON', () => {
    const fits = { text: 'x'.repeat(DETAILS_MAX_BYTES - '{"text":""}'.length) };
    given([])
      .when(submit({ entity_id: ENTITY, order_type: 'other', details: fits }))
      .then((events) => expect(events).toHaveLength(1));
    given([])
      .when(submit({ entity_id: ENTITY, order_type: 'other', details: { text: `${fits.text}x` } }))
      .thenInvalid(['details']);
    given([])
      .when(submit({ entity_id: ENTITY, order_type: 'other', details: { text: 'é'.repeat(DETAILS_MAX_BYTES / 2) } }))
      .thenInvalid(['details']);
  });

  it('refuses to submit an order that exists', () => {
    given(submitted)
      .when(submit({ entity_id: ENTITY, order_type: 'other' }))
      .thenThrows(ConflictError);
  });
});

describe('order: transitions', () => {
  // Every (status, action) pair: the lifecycle allows exactly two.
  const table: [from: OrderStatus, action: 'cancel' | 'complete', to: OrderStatus | null][] = [
    ['submitted', 'cancel', 'cancelled'],
    ['submitted', 'complete', 'completed'],
    ['cancelled', 'cancel', null],
    ['cancelled', 'complete', null],
    ['completed', 'cancel', null],
    ['completed', 'complete', null],
  ];

  it.each(table)('%s --%s--> %s', (from, action, to) => {
    const when = given(history[from]).when(action === 'cancel' ? cancel() : complete());
    if (to === null) {
      when.thenThrows(ConflictError, (e) =>
        expect(e.message).toBe(`Cannot ${action} an order whose status is ${from}`),
      );
      return;
    }
    when.then(([event]) => {
      expect(event.type).toBe(action === 'cancel' ? ORDER_CANCELLED : ORDER_COMPLETED);
      expect(event.data).toMatchObject({ order_id: ID, entity_id: ENTITY, order_type: 'formation', status: to });
    });
    when.thenState(
      (state) =>
        expect(state).toMatchObject({
          status: to,
          version: 1,
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-02T00:00:00.000Z',
        }),
      '2026-01-02T00:00:00.000Z',
    );
  });

  it('records the cancellation reason with the order after the event', () => {
    given(submitted)
      .when(cancel({ reason: 'Filed elsewhere' }))
      .then({ type: ORDER_CANCELLED, data: { ...order, status: 'cancelled', cancellation_reason: 'Filed elsewhere' } });
    given(submitted)
      .when(cancel())
      .thenState((state) => expect(state).toMatchObject({ status: 'cancelled', cancellation_reason: null }));
  });

  it('refuses a bad reason before looking at the status', () => {
    given(submitted)
      .when(cancel({ reason: 'x'.repeat(501) }))
      .thenInvalid(['reason']);
    given(history.completed)
      .when(cancel({ reason: ' ' }))
      .thenInvalid(['reason']);
    given(submitted)
      .when(cancel({ reason: 5 }))
      .thenInvalid(['reason']);
    given(submitted)
      .when(cancel({ reason: 'x'.repeat(500) }))
      .then((events) => expect(events).toHaveLength(1));
  });

  it("answers a missing order, or another account's, as not found, whatever version or status", () => {
    expectOwnershipBeforeIfMatch(
      given,
      [submitted],
      (account, expected_version) => cancel({ account, expected_version }),
      { owner: ACCOUNT, version: 0 },
    );
    given([]).when(complete()).thenThrows(NotFoundError);
    given(history.completed)
      .when(cancel({ account: 'acc-2' }))
      .thenThrows(NotFoundError);
    given(submitted)
      .when(complete({ account: 'acc-2' }))
      .thenThrows(NotFoundError);
  });

  it("lets an operator (no account) complete any account's order", () => {
    given(submitted)
      .when(complete({ account: null }))
      .then(completed);
    given(submitted)
      .when(complete({ account: ACCOUNT }))
      .then(completed);
  });

  it('checks If-Match after ownership and before the transition', () => {
    given(submitted)
      .when(cancel({ expected_version: 1 }))
      .thenThrows(PreconditionFailedError);
    given(submitted)
      .when(complete({ expected_version: 1 }))
      .thenThrows(PreconditionFailedError);
    given(history.cancelled)
      .when(cancel({ expected_version: 0 }))
      .thenThrows(PreconditionFailedError);
    given(history.cancelled)
      .when(cancel({ expected_version: 1 }))
      .thenThrows(ConflictError);
    given(submitted)
      .when(cancel({ expected_version: 0 }))
      .then(cancelled);
  });
});
