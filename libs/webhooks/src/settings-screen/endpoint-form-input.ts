import { createValidationPipe, ValidationError } from '@filing/platform';
import type { Type } from '@nestjs/common';
import type { EndpointView } from '../endpoints/endpoint-views';
import type { EndpointFormValues, FieldErrors } from './views/endpoint-form';

/** A posted form, as Fastify's form body parser gives it. */
export type Form = Record<string, unknown>;

const pipe = createValidationPipe();

/** The form as the API's body, validated by the API's DTO (a ValidationError names the field). */
export async function validatedInput<T>(values: EndpointFormValues, metatype: Type<T>): Promise<T> {
  requireUrl(values);
  return (await pipe.transform(toInput(values), { type: 'body', metatype })) as T;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** The form as typed (to show it again on an error). Checkboxes arrive as one value or several. */
export function formValues(body: Form): EndpointFormValues {
  const types = body.event_types;
  const list = Array.isArray(types) ? types : types === undefined ? [] : [types];
  return {
    url: text(body.url),
    description: text(body.description),
    event_types: list.filter((t): t is string => typeof t === 'string'),
    rate_limit_per_second: text(body.rate_limit_per_second),
  };
}

/**
 * The API's body for the same change: an empty description is none; no box checked is every
 * event; an empty rate limit is none (a number as typed; anything else goes to the validator as is).
 */
function toInput(values: EndpointFormValues): {
  url: string;
  description: string | null;
  event_types: string[];
  rate_limit_per_second: number | string | null;
} {
  const limit = values.rate_limit_per_second;
  return {
    url: values.url,
    description: values.description || null,
    event_types: [...values.event_types],
    rate_limit_per_second: limit === '' ? null : /^\d{1,7}$/.test(limit) ? Number(limit) : limit,
  };
}

function requireUrl(values: EndpointFormValues): void {
  if (!values.url) throw ValidationError.field('url', 'Enter the endpoint URL (https://…)');
}

export function valuesOf(endpoint: EndpointView): EndpointFormValues {
  return {
    url: endpoint.url,
    description: endpoint.description ?? '',
    event_types: endpoint.event_types,
    rate_limit_per_second: endpoint.rate_limit_per_second === null ? '' : String(endpoint.rate_limit_per_second),
  };
}

/** `event_types[2]` → `event_types`: one message per form field. Anything else is not the form's fault: thrown on. */
export function fieldErrors(err: unknown): FieldErrors {
  if (!(err instanceof ValidationError)) throw err;
  const errors: Record<string, string> = {};
  for (const e of err.errors) {
    const field = e.field.split(/[.[]/, 1)[0] || 'url';
    errors[field] = errors[field] ? `${errors[field]} ${e.message}` : e.message;
  }
  return errors;
}
