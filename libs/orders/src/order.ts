import {
  assertCreatable,
  type CreateCommand,
  assertOwnedAtVersion,
  ConflictError,
  type FieldError,
  fieldProblems,
  jurisdictionCodeRule,
  oneOfRule,
  orNull,
  pickFields,
  type Resource,
  resourceEvolver,
  resourceIdRule,
  textRule,
  unknownFields,
  ValidationError,
  extend,
} from '@filing/platform';
import {
  ORDER_CANCELLED,
  ORDER_COMPLETED,
  ORDER_FIELDS,
  ORDER_SUBMITTED,
  ORDER_TYPES,
  type OrderDetails,
  type OrderEvent,
  type OrderEventData,
  type OrderFields,
  type OrderStatus,
  type OrderType,
} from './order.events';

/** Field rules (CONTRACT.md §3), shared by decide() and the HTTP DTOs. */
/** `details` is a JSON object of at most this many bytes (UTF-8) as compact JSON. */
export const DETAILS_MAX_BYTES = 16 * 1024;
export const REASON_MAX_LENGTH = 500;
const SUBMIT_FIELDS = ['entity_id', 'order_type', 'jurisdiction_code', 'details'] as const;

/**
 * The lifecycle (CONTRACT.md §3): submitted → cancelled by the customer, submitted → completed
 * by an operator. Nothing leaves cancelled or completed.
 */
export const ORDER_TRANSITIONS: Readonly<
  Record<'cancel' | 'complete', { readonly from: OrderStatus; readonly to: OrderStatus }>
> = {
  cancel: { from: 'submitted', to: 'cancelled' },
  complete: { from: 'submitted', to: 'completed' },
};

/** The order as its stream tells it; null until it is submitted. */
export type Order = Resource<OrderFields>;
export type OrderState = Order | null;
export const initialOrderState: OrderState = null;

export type SubmitOrderInput = Readonly<{
  entity_id: string;
  order_type: string;
  jurisdiction_code?: string | null;
  details?: OrderDetails | null;
}>;

export type OrderCommand =
  | CreateCommand<'submit', SubmitOrderInput>
  | {
      readonly kind: 'cancel';
      readonly id: string;
      readonly account_id: string;
      readonly reason?: string | null;
      /** The client's If-Match version, if any. */
      readonly expected_version?: number;
    }
  | {
      readonly kind: 'complete';
      readonly id: string;
      /** The order's account, or null for an operator acting on any account's order. */
      readonly account_id: string | null;
      readonly expected_version?: number;
    };

export const evolve = resourceEvolver<OrderFields, OrderEvent>(ORDER_SUBMITTED, 'order_id', ORDER_FIELDS);

export function decide(state: OrderState, command: OrderCommand): OrderEvent[] {
  if (command.kind === 'submit') {
    const { input } = command;
    assertCreatable(state, 'order', command.id, [...submitErrors(input), ...unknownFields(input, SUBMIT_FIELDS)]);
    const data: OrderEventData & { readonly status: 'submitted' } = {
      order_id: command.id,
      entity_id: input.entity_id,
      order_type: input.order_type as OrderType,
      jurisdiction_code: input.jurisdiction_code ?? null,
      details: input.details ?? {},
      status: 'submitted',
      cancellation_reason: null,
    };
    return [{ type: ORDER_SUBMITTED, data }];
  }

  // Ownership, then If-Match, so neither a 412 nor a 409 tells another account that the id
  // exists. An operator (no account) acts on the order's own account.
  const actingAccount = command.account_id ?? state?.account_id ?? '';
  assertOwnedAtVersion(
    state,
    { account_id: actingAccount, expected_version: command.expected_version },
    'order',
    command.id,
  );
  const current: OrderEventData = { order_id: state.id, ...pickFields(state, ORDER_FIELDS) };
  switch (command.kind) {
    case 'cancel': {
      const problem = reasonProblem(command.reason);
      if (problem) throw ValidationError.field('reason', problem);
      assertTransition(state, 'cancel');
      const reason = command.reason ?? null;
      return [
        {
          type: ORDER_CANCELLED,
          data: extend(current, { status: 'cancelled' as const, cancellation_reason: reason }),
        },
      ];
    }
    case 'complete':
      assertTransition(state, 'complete');
      return [{ type: ORDER_COMPLETED, data: extend(current, { status: 'completed' as const }) }];
  }
}

/** 409 naming the current status for anything the lifecycle does not allow. */
function assertTransition(state: Order, action: keyof typeof ORDER_TRANSITIONS): void {
  if (state.status !== ORDER_TRANSITIONS[action].from)
    throw ConflictError.invalidTransition('order', action, state.status);
}

/** Every rule broken by a submission: absent optional fields are fine, an absent required one is refused like a bad one. */
export function submitErrors(input: { readonly [K in keyof SubmitOrderInput]?: unknown }): FieldError[] {
  const { entity_id = null, order_type = null } = input;
  return fieldProblems(extend(input, { entity_id, order_type }), {
    entity_id: resourceIdRule('entity_id'),
    order_type: oneOfRule('order_type', ORDER_TYPES),
    jurisdiction_code: orNull(jurisdictionCodeRule('jurisdiction_code')),
    details: orNull(detailsProblem),
  });
}

/** `details`: a JSON object (not an array), at most DETAILS_MAX_BYTES as compact JSON. */
export function detailsProblem(details: unknown): string | null {
  if (typeof details !== 'object' || details === null || Array.isArray(details)) return 'details must be a JSON object';
  if (Buffer.byteLength(JSON.stringify(details), 'utf8') > DETAILS_MAX_BYTES) {
    return `details must be at most ${DETAILS_MAX_BYTES} bytes as JSON`;
  }
  return null;
}

const reasonRule = orNull(textRule('reason', REASON_MAX_LENGTH));

/** An optional cancellation reason: absent, null, or a non-blank string of at most 500 characters. */
export function reasonProblem(reason: unknown): string | null {
  return reason === undefined ? null : reasonRule(reason);
}
