import {
  type ArgumentMetadata,
  type Type,
  ValidationPipe,
  type ValidationPipeOptions,
  type ValidationError as ClassValidatorError,
} from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync } from 'class-validator';
import { type FieldError, ValidationError } from '../errors/domain-errors';
import { type BodyCheck, compileBodyCheck, isPlainJsonTree } from './body-check';
import { isPageOnlyQuery, PAGE_QUERY_FIELDS, PageQueryDto } from './page.dto';

/**
 * The app-wide pipe for DTOs (class-validator + class-transformer). Unknown fields are refused
 * (CONTRACT.md §3: "Unknown fields are a 400"); every bad field is listed, named by its path in
 * the JSON body (`details.foo`, `items[0].name`). DTO property names are the JSON (snake_case)
 * names, so the property path is the JSON path.
 */
export function createValidationPipe(): ValidationPipe {
  return new DtoValidationPipe(VALIDATION_PIPE_OPTIONS);
}

/** The app's pipe options; NestJS's own ValidationPipe made with them is what the shortcuts must agree with (tests). */
export const VALIDATION_PIPE_OPTIONS: ValidationPipeOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  transform: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => new ValidationError(flattenValidationErrors(errors)),
};

/**
 * ValidationPipe with two shortcuts that give its answer without running class-validator's
 * executor, and fall back to it for anything else, so every 400 is unchanged.
 *
 * A JSON body: built into its DTO as the pipe builds it (class-transformer), then checked by the
 * DTO's own rules compiled once per class (body-check.ts); a body that passes is the pipe's
 * answer, one that does not (or holds what the pipe would strip first) goes through the pipe.
 *
 * The commonest query of all, a collection's page with no
 * filter (`?limit=50`, `?cursor=…`): when it holds only valid `limit`/`cursor` values, of a list
 * DTO that keeps PageQueryDto's rules for them and whose filters are all optional, the answer
 * class-validator would give is known (valid; a DTO holding those values) without running it.
 * Anything else, including every invalid query, goes through class-validator as before, so the
 * 400s are unchanged. Filters are validated each on its own value (no rule of this code base
 * looks at another field), which is what makes "all optional" hold for a query without them.
 */
class DtoValidationPipe extends ValidationPipe {
  private readonly pageOnly = new WeakMap<Type<unknown>, boolean>();
  private readonly bodyChecks = new WeakMap<Type<unknown>, BodyCheck | null>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { metatype } = metadata;
    if (metadata.type === 'query' && metatype && isPageOnlyQuery(value) && this.takesPageOnly(metatype)) {
      return Object.assign(new metatype(), value);
    }
    if (metadata.type === 'body' && metatype && isPlainObject(value)) {
      const check = this.bodyCheckOf(metatype);
      if (check && isPlainJsonTree(value)) {
        const dto = plainToInstance(metatype, value, this.transformOptions) as object;
        if (check(dto)) return dto;
      }
    }
    return super.transform(value, metadata);
  }

  private bodyCheckOf(metatype: Type<unknown>): BodyCheck | null {
    let check = this.bodyChecks.get(metatype);
    if (check === undefined) this.bodyChecks.set(metatype, (check = compileBodyCheck(metatype)));
    return check;
  }

  /** Whether `metatype` is a list DTO that a query of only valid page fields satisfies (cached per class). */
  private takesPageOnly(metatype: Type<unknown>): boolean {
    let known = this.pageOnly.get(metatype);
    if (known === undefined) {
      const isList = metatype === PageQueryDto || metatype.prototype instanceof PageQueryDto;
      known =
        isList &&
        getMetadataStorage()
          .getTargetValidationMetadatas(metatype, '', true, false)
          .filter((rule) => PAGE_QUERY_FIELDS.includes(rule.propertyName))
          .every((rule) => rule.target === PageQueryDto) &&
        validateSync(new metatype() as object, { whitelist: true, forbidNonWhitelisted: true }).length === 0;
      this.pageOnly.set(metatype, known);
    }
    return known;
  }
}

function isPlainObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function flattenValidationErrors(errors: readonly ClassValidatorError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = joinPath(parent, error.property);
    const own = error.constraints ? [{ field, message: Object.values(error.constraints).join('; ') }] : [];
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent && property ? `${parent}.${property}` : parent || property;
}
