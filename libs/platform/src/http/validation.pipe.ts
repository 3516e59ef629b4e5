import { ValidationPipe, type ValidationError as ClassValidatorError } from '@nestjs/common';
import { type FieldError, ValidationError } from '../errors/domain-errors';

/**
 * The app-wide pipe for DTOs (class-validator + class-transformer). Unknown fields are refused
 * (CONTRACT.md §3: "Unknown fields are a 400"); every bad field is listed, named by its path in
 * the JSON body (`details.foo`, `items[0].name`). DTO property names are the JSON (snake_case)
 * names, so the property path is the JSON path.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationError(flattenValidationErrors(errors)),
  });
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
