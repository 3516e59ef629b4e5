import {
  ConflictError,
  DomainError,
  NotFoundError,
  PreconditionFailedError,
  UnprocessableError,
  ValidationError,
} from './domain-errors';

describe('domain errors', () => {
  it('are plain Errors with readable names and messages', () => {
    const errors = [
      NotFoundError.of('entity', 'e1'),
      ConflictError.invalidTransition('order', 'complete', 'cancelled'),
      ValidationError.field('entity_id', 'entity_id does not exist'),
      new PreconditionFailedError(),
      new UnprocessableError('Idempotency-Key reused'),
    ];
    for (const e of errors) expect(e).toBeInstanceOf(DomainError);
    expect(errors.map((e) => `${e.name}: ${e.message}`)).toEqual([
      'NotFoundError: No entity with id e1',
      'ConflictError: Cannot complete an order whose status is cancelled',
      'ValidationError: entity_id: entity_id does not exist',
      'PreconditionFailedError: The resource has changed since the version given in If-Match',
      'UnprocessableError: Idempotency-Key reused',
    ]);
    expect(ConflictError.invalidTransition('task', 'reopen', 'open').message).toBe(
      'Cannot reopen a task whose status is open',
    );
  });

  it('keeps every field of a validation error', () => {
    const e = new ValidationError([
      { field: 'a', message: 'bad a' },
      { field: 'b', message: 'bad b' },
    ]);
    expect(e.message).toBe('The request is invalid');
    expect(e.errors).toHaveLength(2);
  });
});
