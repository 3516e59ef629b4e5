import { validateSync } from 'class-validator';
import { IsCalendarDate, IsJurisdictionCode, IsOptionalNonNull, IsResourceId, SatisfiesRule } from './field-validators';

const titleProblem = (v: unknown) =>
  typeof v === 'string' && v.trim() !== '' ? null : 'title must be a non-blank string';

class Sample {
  @IsResourceId()
  entity_id: unknown;

  @IsJurisdictionCode()
  code: unknown;

  @IsCalendarDate()
  due_date: unknown;

  @IsOptionalNonNull()
  @SatisfiesRule('isTitle', titleProblem)
  title?: unknown;
}

function problems(values: Partial<Sample>): Record<string, string[]> {
  const sample = Object.assign(new Sample(), values);
  return Object.fromEntries(validateSync(sample).map((e) => [e.property, Object.values(e.constraints ?? {})]));
}

describe('field validators', () => {
  const valid = { entity_id: '0193a5b2-0000-7000-8000-000000000001', code: 'US-DE', due_date: '2024-02-29' };

  it('accept what the field rules accept; an absent optional field is skipped', () => {
    expect(problems(valid)).toEqual({});
    expect(problems({ ...valid, title: 'Renew' })).toEqual({});
  });

  it('refuse the rest with a message naming the field, and null for an optional non-nullable field', () => {
    expect(problems({ entity_id: 'x', code: 'us-de', due_date: '2023-02-29', title: null })).toEqual({
      entity_id: ['entity_id must be a UUID'],
      code: ['code must be an ISO 3166-2 subdivision code like US-DE'],
      due_date: ['due_date must be a date as YYYY-MM-DD'],
      title: ['title must be a non-blank string'],
    });
  });
});
