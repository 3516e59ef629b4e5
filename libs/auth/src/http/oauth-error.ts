import { HttpException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';

/**
 * An RFC 6749 / 6750 error: thrown as the platform's OAuth pass-through HttpException (body
 * `{error, error_description}` sent as is), headers set on the reply first.
 */
export function oauthError(
  reply: FastifyReply,
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): HttpException {
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  return new HttpException({ error, error_description: description }, status);
}

/** Form fields: a parameter sent twice is an error (RFC 6749 §3.2), an empty one counts as absent. */
export class FormFields {
  constructor(private readonly body: unknown) {}

  has(name: string): boolean {
    return typeof this.body === 'object' && this.body !== null && Object.hasOwn(this.body, name);
  }

  /** undefined when absent or empty; throws `duplicate` when sent more than once. */
  get(name: string): string | undefined {
    if (!this.has(name)) return undefined;
    const value = (this.body as Record<string, unknown>)[name];
    if (Array.isArray(value)) throw new DuplicateParameterError(name);
    return typeof value === 'string' && value.length > 0 ? value : undefined;
  }
}

export class DuplicateParameterError extends Error {
  constructor(readonly parameter: string) {
    super(`${parameter} must not be sent more than once`);
  }
}
