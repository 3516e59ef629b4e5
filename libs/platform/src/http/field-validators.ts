import { ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { isCalendarDate, isJurisdictionCode, isUuid } from '../domain/field-rules';

/*
 * class-validator decorators for the families' DTOs, made of the same predicates their decide()
 * uses (domain/field-rules.ts), so a 400 from the DTO and one from decide() say the same thing.
 */

/** A resource id (`entity_id`, or a list filter): a UUID. */
export const IsResourceId = (options?: ValidationOptions) =>
  ValidateBy(
    { name: 'isResourceId', validator: { validate: isUuid, defaultMessage: (a) => `${a?.property} must be a UUID` } },
    options,
  );

/** ISO 3166-2 subdivision code, e.g. `US-DE`. */
export const IsJurisdictionCode = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isJurisdictionCode',
      validator: {
        validate: isJurisdictionCode,
        defaultMessage: (a) => `${a?.property} must be an ISO 3166-2 subdivision code like US-DE`,
      },
    },
    options,
  );

/** `YYYY-MM-DD` naming a day that exists. */
export const IsCalendarDate = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isCalendarDate',
      validator: { validate: isCalendarDate, defaultMessage: (a) => `${a?.property} must be a date as YYYY-MM-DD` },
    },
    options,
  );

/**
 * A domain rule written as `(value) => problem | null` (e.g. `nameProblem`): valid when it
 * finds no problem, and the problem is the message.
 */
export const SatisfiesRule = (name: string, problem: (value: unknown) => string | null, options?: ValidationOptions) =>
  ValidateBy(
    { name, validator: { validate: (v) => problem(v) === null, defaultMessage: (a) => problem(a?.value) ?? '' } },
    options,
  );

/** Optional, but not nullable: `null` is checked (and refused) rather than skipped like `undefined`. */
export const IsOptionalNonNull = () => ValidateIf((_, value) => value !== undefined);
