import { NotFoundError, PreconditionFailedError } from '../errors/domain-errors';
import {
  assertOwnedAtVersion,
  calendarDateRule,
  definedOnly,
  fieldProblems,
  isCalendarDate,
  isJurisdictionCode,
  jurisdictionCodeRule,
  missingFields,
  oneOfRule,
  orNull,
  resourceIdRule,
  textRule,
  unknownFields,
} from './field-rules';

describe('field rules', () => {
  it.each(['US-DE', 'GB-ENG', 'FR-75', 'CA-ON'])('%s is a jurisdiction code', (code) =>
    expect(isJurisdictionCode(code)).toBe(true),
  );
  it.each(['us-de', 'US', 'USA-DE', 'US-DELA', 'US_DE', '', 7])('%j is not', (code) =>
    expect(isJurisdictionCode(code)).toBe(false),
  );
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
    expect(() => assertOwnedAtVersion(null, { account_id: 'a' }, 'task', 't1')).toThrow(
      new NotFoundError('No task with id t1'),
    );
    expect(() => assertOwnedAtVersion(state, { account_id: 'b', expected_version: 1 }, 'task', 't1')).toThrow(
      NotFoundError,
    );
    expect(() => assertOwnedAtVersion(state, { account_id: 'a', expected_version: 1 }, 'task', 't1')).toThrow(
      PreconditionFailedError,
    );
    expect(() => assertOwnedAtVersion(state, { account_id: 'a', expected_version: 2 }, 'task', 't1')).not.toThrow();
    expect(() => assertOwnedAtVersion(state, { account_id: 'a' }, 'task', 't1')).not.toThrow();
  });
});

describe('field rule makers', () => {
  it('checks only the fields present, in the order of the rules, with the messages the DTOs use', () => {
    const rules = {
      name: textRule('name', 5),
      kind: oneOfRule('kind', ['a', 'b']),
      code: orNull(jurisdictionCodeRule('code')),
      day: calendarDateRule('day'),
      entity_id: resourceIdRule('entity_id'),
    };
    expect(fieldProblems({}, rules)).toEqual([]);
    expect(fieldProblems({ entity_id: 'e1', day: '2023-02-29', code: 'DE', kind: 'c', name: ' ' }, rules)).toEqual([
      { field: 'name', message: 'name must not be blank' },
      { field: 'kind', message: 'kind must be one of a, b' },
      { field: 'code', message: 'code must be an ISO 3166-2 subdivision code like US-DE' },
      { field: 'day', message: 'day must be a date as YYYY-MM-DD' },
      { field: 'entity_id', message: 'entity_id must be a UUID' },
    ]);
    expect(fieldProblems({ name: 'abcdef', code: null, day: null }, rules).map((e) => e.message)).toEqual([
      'name must be at most 5 characters',
      'day must be a date as YYYY-MM-DD',
    ]);
    expect(textRule('title', 5)(7)).toBe('title must be a string');
    expect(
      fieldProblems(
        {
          name: 'abcde',
          kind: 'b',
          code: 'US-DE',
          day: '2024-02-29',
          entity_id: '0193a5b2-0000-7000-8000-000000000001',
        },
        rules,
      ),
    ).toEqual([]);
  });
});
