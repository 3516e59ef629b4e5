import { NotFoundError, PreconditionFailedError } from '../errors/domain-errors';
import { assertOwnedAtVersion, definedOnly, isCalendarDate, isJurisdictionCode, missingFields, unknownFields } from './field-rules';

describe('field rules', () => {
  it.each(['US-DE', 'GB-ENG', 'FR-75', 'CA-ON'])('%s is a jurisdiction code', (code) => expect(isJurisdictionCode(code)).toBe(true));
  it.each(['us-de', 'US', 'USA-DE', 'US-DELA', 'US_DE', '', 7])('%j is not', (code) => expect(isJurisdictionCode(code)).toBe(false));
  it.each(['2024-02-29', '1999-12-31'])('%s is a date', (date) => expect(isCalendarDate(date)).toBe(true));
  it.each(['2023-02-29', '2024-13-01', '2024-1-1', '2024-01-01T00:00:00Z', 20240101, null])('%j is not', (date) =>
    expect(isCalendarDate(date)).toBe(false),
  );

  it('names the required fields that are absent (undefined), not those that are null', () => {
    expect(missingFields({ a: 1, b: undefined, c: null }, ['a', 'b', 'c', 'd'])).toEqual([
      { field: 'b', message: 'b is required' },
      { field: 'd', message: 'd is required' },
    ]);
  });

  it('drops undefined properties and names the ones that may not be set', () => {
    expect(definedOnly({ a: 1, b: undefined, c: null })).toEqual({ a: 1, c: null });
    expect(unknownFields({ a: 1, b: undefined, id: 'x', c: null }, ['a'])).toEqual([
      { field: 'id', message: 'id cannot be set' },
      { field: 'c', message: 'c cannot be set' },
    ]);
  });

  it('checks ownership before the version', () => {
    const state = { account_id: 'a', version: 2 };
    expect(() => assertOwnedAtVersion(null, { account_id: 'a' }, 'task', 't1')).toThrow(new NotFoundError('No task with id t1'));
    expect(() => assertOwnedAtVersion(state, { account_id: 'b', expected_version: 1 }, 'task', 't1')).toThrow(NotFoundError);
    expect(() => assertOwnedAtVersion(state, { account_id: 'a', expected_version: 1 }, 'task', 't1')).toThrow(PreconditionFailedError);
    expect(() => assertOwnedAtVersion(state, { account_id: 'a', expected_version: 2 }, 'task', 't1')).not.toThrow();
    expect(() => assertOwnedAtVersion(state, { account_id: 'a' }, 'task', 't1')).not.toThrow();
  });
});
