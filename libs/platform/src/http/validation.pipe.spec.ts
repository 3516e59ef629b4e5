import { type Type, ValidationPipe } from '@nestjs/common';
import { IsIn, IsOptional } from 'class-validator';
import { ValidationError } from '../errors/domain-errors';
import { CursorCodec } from './cursor-codec';
import { PageQueryDto } from './page.dto';
import { createValidationPipe, flattenValidationErrors, VALIDATION_PIPE_OPTIONS } from './validation.pipe';

describe('flattenValidationErrors', () => {
  it("names nested fields by their JSON path and joins each field's messages", () => {
    expect(
      flattenValidationErrors([
        {
          property: 'name',
          constraints: { isString: 'name must be a string', isNotEmpty: 'name should not be empty' },
        },
        {
          property: 'details',
          children: [{ property: 'foo', constraints: { isString: 'foo must be a string' } }],
        },
        {
          property: 'items',
          children: [{ property: '2', children: [{ property: 'code', constraints: { matches: 'code is invalid' } }] }],
        },
      ]),
    ).toEqual([
      { field: 'name', message: 'name must be a string; name should not be empty' },
      { field: 'details.foo', message: 'foo must be a string' },
      { field: 'items[2].code', message: 'code is invalid' },
    ]);
  });
});

describe('the validation pipe on a list query', () => {
  class ListQuery extends PageQueryDto {
    @IsOptional() @IsIn(['open', 'done']) status?: string;
  }
  class RequiredFilterQuery extends PageQueryDto {
    @IsIn(['open', 'done']) status!: string;
  }
  const cursor = CursorCodec.random().encode('things', 'k1');
  const fast = createValidationPipe();
  /** The same pipe's class-validator path: what the shortcut must agree with. */
  const full = new ValidationPipe(VALIDATION_PIPE_OPTIONS);
  const outcome = (pipe: ValidationPipe, value: object, metatype: Type<unknown>) =>
    pipe.transform(value, { type: 'query', metatype }).then(
      (dto: object) => ({ dto, type: dto.constructor }),
      (err: ValidationError) => ({ errors: err.errors }),
    );

  it.each([
    [{}, ListQuery],
    [{ limit: '50' }, ListQuery],
    [{ limit: '200', cursor }, ListQuery],
    [{ cursor }, PageQueryDto],
    [{ limit: '0' }, ListQuery],
    [{ limit: ['1', '2'] }, ListQuery],
    [{ cursor: 'not a cursor' }, ListQuery],
    [{ limit: '5', status: 'open' }, ListQuery],
    [{ limit: '5', other: 'x' }, ListQuery],
    [{ limit: '5' }, RequiredFilterQuery],
  ])('answers %j as class-validator does', async (value, metatype) => {
    expect(await outcome(fast, { ...value }, metatype)).toEqual(await outcome(full, { ...value }, metatype));
  });
});
