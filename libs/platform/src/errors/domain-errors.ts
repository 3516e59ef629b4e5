/**
 * Errors pure domain code throws (`decide`, validation of references, If-Match checks). No Nest
 * import on purpose: the domain is unit-tested without Nest, and the HTTP layer maps each class
 * to its status in `http/problem-details.filter.ts` (404, 409, 400, 412, 422).
 */
export abstract class DomainError extends Error {}

/** The resource does not exist, or belongs to another account (answered the same way: 404). */
export class NotFoundError extends DomainError {
  override readonly name = 'NotFoundError';
  constructor(message = 'The resource was not found') {
    super(message);
  }

  static of(resource: string, id: string): NotFoundError {
    return new NotFoundError(`No ${resource} with id ${id}`);
  }
}

/** The command conflicts with the resource's current state (409): a transition or a duplicate. */
export class ConflictError extends DomainError {
  override readonly name = 'ConflictError';

  /** e.g. `invalidTransition('order', 'cancel', 'completed')` → "Cannot cancel an order whose status is completed". */
  static invalidTransition(resource: string, action: string, currentStatus: string): ConflictError {
    const article = /^[aeiou]/i.test(resource) ? 'an' : 'a';
    return new ConflictError(`Cannot ${action} ${article} ${resource} whose status is ${currentStatus}`);
  }
}

export interface FieldError {
  /** The JSON name of the field, nested with dots (`details.foo`) and brackets (`items[0]`). */
  readonly field: string;
  readonly message: string;
}

/** Bad input (400); lists every bad field so a client can fix them all in one round trip. */
export class ValidationError extends DomainError {
  override readonly name = 'ValidationError';
  constructor(
    readonly errors: readonly FieldError[],
    message = errors.length === 1 ? `${errors[0].field}: ${errors[0].message}` : 'The request is invalid',
  ) {
    super(message);
  }

  static field(field: string, message: string): ValidationError {
    return new ValidationError([{ field, message }]);
  }
}

/** The client's `If-Match` version is not the resource's current version (412). */
export class PreconditionFailedError extends DomainError {
  override readonly name = 'PreconditionFailedError';
  constructor(message = 'The resource has changed since the version given in If-Match') {
    super(message);
  }
}

/** Well-formed but refused as a whole (422), e.g. an Idempotency-Key reused with another body. */
export class UnprocessableError extends DomainError {
  override readonly name = 'UnprocessableError';
}
