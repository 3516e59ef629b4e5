import {
  assertOwnedAtVersion,
  ConflictError,
  type FieldError,
  isJurisdictionCode,
  isUuid,
  type RecordedEnvelope,
  unknownFields,
  ValidationError,
} from '@filing/platform';
import {
  ORDER_CANCELLED,
  ORDER_COMPLETED,
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
export const ORDER_TRANSITIONS: Readonly<Record<'cancel' | 'complete', { readonly from: OrderStatus; readonly to: OrderStatus }>> = {
  cancel: { from: 'submitted', to: 'cancelled' },
  complete: { from: 'submitted', to: 'completed' },
};

/** The order as its stream tells it; null until it is submitted. */
export type OrderState = Order | null;
export interface Order extends OrderFields {
  readonly id: string;
  readonly account_id: string;
  readonly created_at: string;
  readonly updated_at: string;
  /** The stream revision of the last event. */
  readonly version: number;
}
export const initialOrderState: OrderState = null;

export interface SubmitOrderInput {
  readonly entity_id: string;
  readonly order_type: string;
  readonly jurisdiction_code?: string | null;
  readonly details?: OrderDetails | null;
}

export type OrderCommand =
  | { readonly kind: 'submit'; readonly order_id: string; readonly account_id: string; readonly input: SubmitOrderInput }
  | {
      readonly kind: 'cancel';
      readonly order_id: string;
      readonly account_id: string;
      readonly reason?: string | null;
      /** The client's If-Match version, if any. */
      readonly expected_version?: number;
    }
  | {
      readonly kind: 'complete';
      readonly order_id: string;
      /** The order's account, or null for an operator acting on any account's order. */
      readonly account_id: string | null;
      readonly expected_version?: number;
    };

export function evolve(state: OrderState, event: RecordedEnvelope<OrderEvent>): OrderState {
  const { metadata } = event;
  switch (event.type) {
    case ORDER_SUBMITTED:
      return {
        id: event.data.order_id,
        account_id: metadata.account_id ?? '',
        ...fieldsOf(event.data),
        created_at: metadata.occurred_at,
        updated_at: metadata.occurred_at,
        version: Number(event.revision),
      };
    case ORDER_CANCELLED:
    case ORDER_COMPLETED:
      if (state === null) return state;
      return { ...state, ...fieldsOf(event.data), updated_at: metadata.occurred_at, version: Number(event.revision) };
  }
}

export function decide(state: OrderState, command: OrderCommand): OrderEvent[] {
  if (command.kind === 'submit') {
    if (state !== null) throw new ConflictError(`An order with id ${command.order_id} already exists`);
    const { input } = command;
    const errors = [...submitErrors(input), ...unknownFields(input, SUBMIT_FIELDS)];
    if (errors.length > 0) throw new ValidationError(errors);
    const data: OrderEventData = {
      order_id: command.order_id,
      entity_id: input.entity_id,
      order_type: input.order_type as OrderType,
      jurisdiction_code: input.jurisdiction_code ?? null,
      details: input.details ?? {},
      status: 'submitted',
      cancellation_reason: null,
    };
    return [{ type: ORDER_SUBMITTED, data: { ...data, status: 'submitted' } }];
  }

  // Ownership, then If-Match, so neither a 412 nor a 409 tells another account that the id
  // exists. An operator (no account) acts on the order's own account.
  const actingAccount = command.account_id ?? state?.account_id ?? '';
  assertOwnedAtVersion(state, { account_id: actingAccount, expected_version: command.expected_version }, 'order', command.order_id);
  const current: OrderEventData = { order_id: state.id, ...fieldsOf(state) };
  switch (command.kind) {
    case 'cancel': {
      const problem = reasonProblem(command.reason);
      if (problem) throw ValidationError.field('reason', problem);
      assertTransition(state, 'cancel');
      const reason = command.reason ?? null;
      return [{ type: ORDER_CANCELLED, data: { ...current, status: 'cancelled', cancellation_reason: reason } }];
    }
    case 'complete':
      assertTransition(state, 'complete');
      return [{ type: ORDER_COMPLETED, data: { ...current, status: 'completed' } }];
  }
}

/** 409 naming the current status for anything the lifecycle does not allow. */
function assertTransition(state: Order, action: keyof typeof ORDER_TRANSITIONS): void {
  if (state.status !== ORDER_TRANSITIONS[action].from) throw ConflictError.invalidTransition('order', action, state.status);
}

/** Every rule broken by a submission (absent optional fields are fine). */
export function submitErrors(input: { readonly [K in keyof SubmitOrderInput]?: unknown }): FieldError[] {
  const errors: FieldError[] = [];
  if (!isUuid(input.entity_id)) errors.push({ field: 'entity_id', message: 'entity_id must be a UUID' });
  if (!isOrderType(input.order_type)) errors.push({ field: 'order_type', message: `order_type must be one of ${ORDER_TYPES.join(', ')}` });
  if (input.jurisdiction_code != null && !isJurisdictionCode(input.jurisdiction_code)) {
    errors.push({ field: 'jurisdiction_code', message: 'jurisdiction_code must be an ISO 3166-2 subdivision code like US-DE' });
  }
  const details = detailsProblem(input.details);
  if (input.details != null && details) errors.push({ field: 'details', message: details });
  return errors;
}

export function isOrderType(value: unknown): value is OrderType {
  return (ORDER_TYPES as readonly unknown[]).includes(value);
}

/** `details`: a JSON object (not an array), at most DETAILS_MAX_BYTES as compact JSON. */
export function detailsProblem(details: unknown): string | null {
  if (typeof details !== 'object' || details === null || Array.isArray(details)) return 'details must be a JSON object';
  if (Buffer.byteLength(JSON.stringify(details), 'utf8') > DETAILS_MAX_BYTES) {
    return `details must be at most ${DETAILS_MAX_BYTES} bytes as JSON`;
  }
  return null;
}

/** An optional cancellation reason: absent, null, or a non-blank string of at most 500 characters. */
export function reasonProblem(reason: unknown): string | null {
  if (reason === undefined || reason === null) return null;
  if (typeof reason !== 'string') return 'reason must be a string';
  if (reason.trim() === '') return 'reason must not be blank';
  if (reason.length > REASON_MAX_LENGTH) return `reason must be at most ${REASON_MAX_LENGTH} characters`;
  return null;
}

function fieldsOf(source: OrderFields): OrderFields {
  return {
    entity_id: source.entity_id,
    order_type: source.order_type,
    jurisdiction_code: source.jurisdiction_code,
    details: source.details,
    status: source.status,
    cancellation_reason: source.cancellation_reason,
  };
}
