import { type Type, ValidationPipe } from '@nestjs/common';
import { plainToInstance, Type as TransformType } from 'class-transformer';
import {
  ArrayMaxSize,
  IsDefined,
  IsIn,
  IsOptional,
  IsString,
  MaxLength,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
  validateSync,
} from 'class-validator';
import { ValidationError } from '../errors/domain-errors';
import { compileBodyCheck, isPlainJsonTree } from './body-check';
import { IsOptionalNonNull, IsResourceId, SatisfiesRule } from './field-validators';
import { createValidationPipe, VALIDATION_PIPE_OPTIONS } from './validation.pipe';

class Order {
  @IsResourceId() entity_id!: string;
  @IsIn(['a', 'b']) kind!: string;
  @IsOptional() @IsString() @MaxLength(5) note?: string | null;
  @IsOptionalNonNull()
  @SatisfiesRule('isSmall', (v) => (typeof v === 'object' && v !== null ? null : 'must be an object'))
  details?: object;
  @IsOptional() @IsIn(['x', 'y'], { each: true }) @ArrayMaxSize(2) tags?: string[];
  @ValidateIf((o: { kind?: string }) => o.kind === 'b') @IsDefined() @IsString() reason?: string;
  @IsString({ validateIf: (_o: object, v: unknown) => v !== 'skip' }) label!: string;
}

class Child {
  @IsString() name!: string;
}
class WithNested {
  @ValidateNested() @TransformType(() => Child) child!: Child;
}
class WithGroups {
  @IsString({ groups: ['admin'] }) name!: string;
}
class WithAlways {
  @IsString({ always: true }) name!: string;
}
@ValidatorConstraint({ async: true })
class Later implements ValidatorConstraintInterface {
  validate(): Promise<boolean> {
    return Promise.resolve(true);
  }
}
class WithAsync {
  @Validate(Later) name!: string;
}
class Empty {}

const ID = '01a20f2d-5f2f-7475-a54d-3df6a8f22e81';
const RULES = { whitelist: true, forbidNonWhitelisted: true };
const valid = (metatype: Type<unknown>, body: object) =>
  validateSync(plainToInstance(metatype, body) as object, RULES).length === 0;

describe('compileBodyCheck', () => {
  const check = compileBodyCheck(Order)!;
  const verdict = (body: object) => check(plainToInstance(Order, body));

  it.each([
    [{ entity_id: ID, kind: 'a', label: 'l' }],
    [{ entity_id: ID, kind: 'a', label: 'l', note: null, details: { n: 1 }, tags: ['x', 'y'] }],
    [{ entity_id: ID, kind: 'b', label: 'l', reason: 'r' }],
    [{ entity_id: ID, kind: 'b', label: 'l' }],
    [{ entity_id: ID, kind: 'a', label: 'skip' }],
    [{ entity_id: ID, kind: 'a', label: 7 }],
    [{ entity_id: ID, kind: 'a', label: 'l', note: 'too long' }],
    [{ entity_id: ID, kind: 'a', label: 'l', details: null }],
    [{ entity_id: ID, kind: 'a', label: 'l', tags: ['x', 'z'] }],
    [{ entity_id: ID, kind: 'a', label: 'l', tags: ['x', 'y', 'x'] }],
    [{ entity_id: ID, kind: 'a', label: 'l', tags: 'x' }],
    [{ entity_id: 'nope', kind: 'a', label: 'l' }],
    [{ entity_id: ID, kind: 'c', label: 'l' }],
    [{ entity_id: ID, kind: 'a', label: 'l', extra: 1 }],
    [{ kind: 'a', label: 'l' }],
    [{}],
  ])('gives %j the verdict class-validator gives', (body) => {
    expect(verdict(body)).toBe(valid(Order, body));
  });

  it.each([
    ['nested DTOs', WithNested],
    ['groups', WithGroups],
    ['always', WithAlways],
    ['async validators', WithAsync],
    ['a class without rules', Empty],
  ])('leaves %s to class-validator', (_kind, metatype) => {
    expect(compileBodyCheck(metatype as Type<unknown>)).toBeNull();
  });
});

describe('isPlainJsonTree', () => {
  it.each([
    [{ a: [1, 'x', null, true, { b: [] }] }, true],
    [{ a: { constructor: 1 } }, false],
    [JSON.parse('{"a":{"__proto__":{"x":1}}}'), false],
    [{ prototype: 1 }, false],
    [{ a: [1, , 3] }, false], // eslint-disable-line no-sparse-arrays
    [{ a: Buffer.from('x') }, false],
    [{ a: new Date(0) }, false],
    [{ a: undefined }, false],
    [{ a: () => 1 }, false],
    [Object.assign(Object.create(null) as object, { a: 1 }), false],
  ])('%j → %s', (value, plain) => {
    expect(isPlainJsonTree(value)).toBe(plain);
  });
});

describe('the validation pipe on a body', () => {
  const fast = createValidationPipe();
  /** NestJS's own pipe with the same options: what the shortcut must agree with. */
  const full = new ValidationPipe(VALIDATION_PIPE_OPTIONS);
  /** As the JSON body parser hands it over (structuredClone's objects are of another realm under Jest). */
  const parsed = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
  const outcome = (pipe: ValidationPipe, value: unknown, metatype: Type<unknown>) =>
    pipe.transform(parsed(value), { type: 'body', metatype }).then(
      (dto: object) => ({ type: dto.constructor, dto: JSON.stringify(dto) }),
      (err: ValidationError) => ({ errors: err.errors }),
    );

  it('takes a body its check passes without running class-validator', async () => {
    const executor = jest.spyOn(ValidationPipe.prototype as unknown as { validate: () => unknown }, 'validate');
    try {
      const body = { entity_id: ID, kind: 'b', label: 'l', reason: 'r', tags: ['x'] };
      const dto = await fast.transform(parsed(body), { type: 'body', metatype: Order });
      expect(executor).not.toHaveBeenCalled();
      expect(dto).toBeInstanceOf(Order);
      expect(dto).toEqual(await full.transform(parsed(body), { type: 'body', metatype: Order }));
      await expect(fast.transform({ ...body, kind: 'c' }, { type: 'body', metatype: Order })).rejects.toThrow(
        ValidationError,
      );
      expect(executor).toHaveBeenCalledTimes(2);
    } finally {
      executor.mockRestore();
    }
  });

  it.each([
    [{ entity_id: ID, kind: 'a', label: 'l', details: { n: [1, { m: 'x' }] } }, Order],
    // The pipe deletes these keys before anything reads the body: a body holding one goes its way.
    [{ entity_id: ID, kind: 'a', label: 'l', details: { constructor: 1, n: 2 } }, Order],
    [{ entity_id: ID, kind: 'a', label: 'l', constructor: 'x' }, Order],
    [{ entity_id: ID, kind: 'c', label: 'l', extra: 1 }, Order],
    [{ child: { name: 'n' } }, WithNested],
    [{ child: { name: 1 } }, WithNested],
    [[{ entity_id: ID }], Order],
    [null, Order],
  ])('answers %j as NestJS does', async (value, metatype) => {
    expect(await outcome(fast, value, metatype)).toEqual(await outcome(full, value, metatype));
  });
});
