import { type Type, ValidationPipe } from '@nestjs/common';
import {
  compileBodyCheck,
  createValidationPipe,
  VALIDATION_PIPE_OPTIONS,
  type ValidationError,
} from '@filing/platform';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
// Loads every module, so that every DTO of the service has registered its rules.
import './app.module';

/**
 * The validation pipe's shortcut for bodies (platform/http/body-check.ts) against NestJS's own
 * pipe, on every DTO class the service declares: bodies made of values each rule of the class
 * takes or refuses, mixed, must get the same answer — the same DTO, or the same 400.
 */
const ID = '01a20f2d-5f2f-7475-a54d-3df6a8f22e81';
const POOL: unknown[] = [
  null,
  '',
  'x',
  ' padded ',
  'x'.repeat(201),
  'x'.repeat(5000),
  ID,
  'not-a-uuid',
  'US-DE',
  'us-de',
  '2024-02-29',
  '2023-02-29',
  'https://hooks.example.com/filing',
  'http://hooks.example.com/filing',
  'entity.created',
  'pending',
  'articles_of_incorporation',
  'application/pdf',
  'JVBERi0xLjQK',
  '2026-11-22T10:00:00.000Z',
  '2026-11-22T10:00:00+01:00',
  0,
  1,
  -1,
  1.5,
  100,
  1e6,
  true,
  false,
  [],
  ['x'],
  [ID],
  ['entity.created', 'order.created'],
  {},
  { state_filing_number: '7654321' },
  { nested: { list: [1, 'two', null] } },
];

type Metadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];

/** Values the class's own rules name: an IsIn's choices (and lists of them), lengths at a limit and past it. */
function namedValues(rules: readonly Metadata[]): unknown[] {
  const values: unknown[] = [];
  for (const rule of rules) {
    const [first] = (rule.constraints ?? []) as unknown[];
    if (Array.isArray(first)) values.push(...(first as unknown[]), first.slice(0, 2), [first[0], 'unknown']);
    if (typeof first === 'number') values.push('y'.repeat(first), 'y'.repeat(first + 1), Array(first + 1).fill('x'));
  }
  return values;
}

/** A small deterministic generator (mulberry32), so a failure names a body that can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function dtoClasses(): Type<unknown>[] {
  const storage = getMetadataStorage() as unknown as { validationMetadatas: Map<Type<unknown>, unknown[]> };
  return [...storage.validationMetadatas.keys()].filter((target) => typeof target === 'function');
}

describe('the validation pipe on every body DTO of the service', () => {
  const fast = createValidationPipe();
  const full = new ValidationPipe(VALIDATION_PIPE_OPTIONS);
  const outcome = (pipe: ValidationPipe, body: object, metatype: Type<unknown>) =>
    pipe.transform(JSON.parse(JSON.stringify(body)), { type: 'body', metatype }).then(
      (dto: object) => ({ type: dto.constructor, dto: JSON.stringify(dto) }),
      (err: ValidationError) => ({ errors: err.errors }),
    );
  const classes = dtoClasses();

  it('finds the DTOs (orders, entities, webhooks, …)', () => {
    expect(classes.map((c) => c.name)).toEqual(
      expect.arrayContaining(['SubmitOrderDto', 'CancelOrderDto', 'CreateEntityDto']),
    );
  });

  it.each(classes.map((c) => [c.name, c]))('%s: the same answers as NestJS', async (_name, metatype) => {
    const rules = getMetadataStorage().getTargetValidationMetadatas(metatype, '', false, false, undefined);
    const names = [...new Set(rules.map((r) => r.propertyName))];
    // Per property, the values its rules take when alone (rules of one property may look at others).
    const pools = new Map<string, { all: unknown[]; taken: unknown[] }>();
    for (const name of names) {
      const all = [...POOL, ...namedValues(rules.filter((r) => r.propertyName === name))];
      const taken = all.filter(
        (value) =>
          !validateSync(plainToInstance(metatype, { [name]: value }) as object).some((e) => e.property === name),
      );
      pools.set(name, { all, taken: [undefined, ...taken] });
    }
    const next = random(names.length * 7919 + metatype.name.length);
    const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)];
    const check = compileBodyCheck(metatype);
    let accepted = 0;
    for (let n = 0; n < 150; n++) {
      const body: Record<string, unknown> = {};
      for (const name of names) {
        const { all, taken } = pools.get(name)!;
        const value = next() < 0.85 ? pick(taken) : pick(all);
        if (value !== undefined) body[name] = value;
      }
      if (next() < 0.05) body.unexpected = 'x';
      const answer = await outcome(fast, body, metatype);
      expect({ body, answer }).toEqual({ body, answer: await outcome(full, body, metatype) });
      if ('dto' in answer) accepted++;
      if (check && 'dto' in answer) expect(check(plainToInstance(metatype, body) as object)).toBe(true);
    }
    // Bodies of taken values are mostly whole valid bodies: the comparison covers both answers.
    if (check) expect(accepted).toBeGreaterThan(0);
  });
});
