import { ConflictError, NotFoundError, PreconditionFailedError } from '@filing/platform';
import { decideThenEvolve, validationFields } from '../../platform/src/testing/domain';
import { decide, DETAILS_MAX_BYTES, evolve, initialOrderState, type OrderCommand, type OrderState } from './order';
import { ORDER_CANCELLED, ORDER_COMPLETED, ORDER_SUBMITTED, type OrderStatus } from './order.events';

const ID = '0193a5b2-0000-7000-8000-000000000001';
const ENTITY = '0193a5b2-0000-7000-8000-0000000000e1';
const ACCOUNT = 'acc-1';

const run = decideThenEvolve({ decide, evolve }, `order-${ID}`, ACCOUNT);
const submit = (input: Record<string, unknown>): OrderCommand =>
  ({ kind: 'submit', order_id: ID, account_id: ACCOUNT, input }) as unknown as OrderCommand;
const cancel = (extra: { reason?: unknown; account?: string; expected_version?: number } = {}): OrderCommand =>
  ({ kind: 'cancel', order_id: ID, account_id: extra.account ?? ACCOUNT, reason: extra.reason, expected_version: extra.expected_version }) as OrderCommand;
const complete = (extra: { account?: string | null; expected_version?: number } = {}): OrderCommand => ({
  kind: 'complete',
  order_id: ID,
  account_id: extra.account === undefined ? null : extra.account,
  expected_version: extra.expected_version,
});

const submitted = () => run(initialOrderState, submit({ entity_id: ENTITY, order_type: 'formation' }));
const inStatus = (status: OrderStatus): OrderState =>
  status === 'submitted' ? submitted() : run(submitted(), status === 'cancelled' ? cancel() : complete());

describe('order: submit', () => {
  it('submits an order with version 0, empty details and null optional fields', () => {
    expect(decide(initialOrderState, submit({ entity_id: ENTITY, order_type: 'formation' }))).toEqual([
      {
        type: ORDER_SUBMITTED,
        data: {
          order_id: ID,
          entity_id: ENTITY,
          order_type: 'formation',
          jurisdiction_code: null,
          details: {},
          status: 'submitted',
          cancellation_reason: null,
        },
      },
    ]);
    expect(submitted()).toEqual({
      id: ID,
      account_id: ACCOUNT,
      entity_id: ENTITY,
      order_type: 'formation',
      jurisdiction_code: null,
      details: {},
      status: 'submitted',
      cancellation_reason: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
      version: 0,
    });
  });

  it('keeps the jurisdiction and the details', () => {
    const details = { state_filing_number: 'X-1', officers: [{ name: 'Ann', share: 0.5 }], rush: true, note: null };
    const state = run(null, submit({ entity_id: ENTITY, order_type: 'annual_report', jurisdiction_code: 'US-DE', details }));
    expect(state).toMatchObject({ order_type: 'annual_report', jurisdiction_code: 'US-DE', details });
  });

  it('lists every broken rule at once', () => {
    expect(
      validationFields(() => decide(null, submit({ entity_id: 'nope', order_type: 'merger', jurisdiction_code: 'Delaware', details: [1] }))),
    ).toEqual(['entity_id', 'order_type', 'jurisdiction_code', 'details']);
    expect(validationFields(() => decide(null, submit({ order_type: 'other', entity_id: ENTITY, details: 'x' })))).toEqual(['details']);
    expect(validationFields(() => decide(null, submit({ order_type: 'other', entity_id: ENTITY, status: 'completed' })))).toEqual(['status']);
  });

  it('bounds details at 16 KiB of JSON', () => {
    const fits = { text: 'x'.repeat(DETAILS_MAX_BYTES - '{"text":""}'.length) };
    expect(decide(null, submit({ entity_id: ENTITY, order_type: 'other', details: fits }))).toHaveLength(1);
    const over = { text: `${fits.text}x` };
    expect(validationFields(() => decide(null, submit({ entity_id: ENTITY, order_type: 'other', details: over })))).toEqual(['details']);
    const multibyte = { text: 'é'.repeat(DETAILS_MAX_BYTES / 2) };
    expect(validationFields(() => decide(null, submit({ entity_id: ENTITY, order_type: 'other', details: multibyte })))).toEqual(['details']);
  });

  it('refuses to submit an order that exists', () => {
    expect(() => decide(submitted(), submit({ entity_id: ENTITY, order_type: 'other' }))).toThrow(ConflictError);
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
    const state = inStatus(from);
    const command = action === 'cancel' ? cancel() : complete();
    if (to === null) {
      expect(() => decide(state, command)).toThrow(ConflictError);
      expect(() => decide(state, command)).toThrow(`Cannot ${action} an order whose status is ${from}`);
      return;
    }
    const [event] = decide(state, command);
    expect(event.type).toBe(action === 'cancel' ? ORDER_CANCELLED : ORDER_COMPLETED);
    expect(event.data).toMatchObject({ order_id: ID, entity_id: ENTITY, order_type: 'formation', status: to });
    expect(run(state, command, '2026-01-02T00:00:00.000Z')).toMatchObject({
      status: to,
      version: 1,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-02T00:00:00.000Z',
    });
  });

  it('records the cancellation reason with the order after the event', () => {
    expect(decide(submitted(), cancel({ reason: 'Filed elsewhere' }))).toEqual([
      {
        type: ORDER_CANCELLED,
        data: {
          order_id: ID,
          entity_id: ENTITY,
          order_type: 'formation',
          jurisdiction_code: null,
          details: {},
          status: 'cancelled',
          cancellation_reason: 'Filed elsewhere',
        },
      },
    ]);
    expect(run(submitted(), cancel())).toMatchObject({ status: 'cancelled', cancellation_reason: null });
  });

  it('refuses a bad reason before looking at the status', () => {
    expect(validationFields(() => decide(submitted(), cancel({ reason: 'x'.repeat(501) })))).toEqual(['reason']);
    expect(validationFields(() => decide(inStatus('completed'), cancel({ reason: ' ' })))).toEqual(['reason']);
    expect(validationFields(() => decide(submitted(), cancel({ reason: 5 })))).toEqual(['reason']);
    expect(decide(submitted(), cancel({ reason: 'x'.repeat(500) }))).toHaveLength(1);
  });

  it('answers a missing order, or another account\'s, as not found, whatever version or status', () => {
    expect(() => decide(null, cancel())).toThrow(NotFoundError);
    expect(() => decide(null, complete())).toThrow(NotFoundError);
    expect(() => decide(submitted(), cancel({ account: 'acc-2' }))).toThrow(NotFoundError);
    expect(() => decide(submitted(), cancel({ account: 'acc-2', expected_version: 9 }))).toThrow(NotFoundError);
    expect(() => decide(inStatus('completed'), cancel({ account: 'acc-2' }))).toThrow(NotFoundError);
    expect(() => decide(submitted(), complete({ account: 'acc-2' }))).toThrow(NotFoundError);
  });

  it('lets an operator (no account) complete any account\'s order', () => {
    expect(decide(submitted(), complete({ account: null }))).toHaveLength(1);
    expect(decide(submitted(), complete({ account: ACCOUNT }))).toHaveLength(1);
  });

  it('checks If-Match after ownership and before the transition', () => {
    expect(() => decide(submitted(), cancel({ expected_version: 1 }))).toThrow(PreconditionFailedError);
    expect(() => decide(submitted(), complete({ expected_version: 1 }))).toThrow(PreconditionFailedError);
    expect(() => decide(inStatus('cancelled'), cancel({ expected_version: 0 }))).toThrow(PreconditionFailedError);
    expect(() => decide(inStatus('cancelled'), cancel({ expected_version: 1 }))).toThrow(ConflictError);
    expect(decide(submitted(), cancel({ expected_version: 0 }))).toHaveLength(1);
  });
});
