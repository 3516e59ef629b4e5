import secureJson from 'secure-json-parse';
import { ValidationError } from '../errors/domain-errors';

/** Deeper bodies are refused before anything walks them (validation recurses per level). */
export const MAX_JSON_DEPTH = 32;

/**
 * The `application/json` body parser of the service, given to Nest in place of Fastify's
 * (`app.useBodyParser('application/json', options, parseJsonBody)`):
 * - an empty body is no body (clients often send `Content-Type: application/json` on body-less
 *   actions such as `POST /orders/{id}/cancel`);
 * - a body that is not a JSON object (`null`, `[]`, `1`, `"x"`) is a 400: every operation takes an
 *   object, and a literal `null` must not pass for "no body" (the validation pipe would read it
 *   as `{}`, so `null` cancelled an order);
 * - nesting deeper than MAX_JSON_DEPTH is a 400 (a few kilobytes of `[[[[…` would otherwise
 *   exhaust the stack in the validation pipe: a 500 for bad input);
 * - `__proto__` and `constructor.prototype` keys are a 400, as with Fastify's own parser;
 * - a number beyond double range (`1e400`) is a 400, not a silent Infinity → null.
 * Each refusal is a 400 problem naming `body`.
 */
export function parseJsonBody(
  _request: unknown,
  body: Buffer | string,
  done: (err: Error | null, value?: unknown) => void,
): void {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (text.trim() === '') return done(null, undefined);
  if (nestingDepth(text) > MAX_JSON_DEPTH) {
    return done(bodyError(`The body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`));
  }
  let value: unknown;
  try {
    value = secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
  } catch (err) {
    const poisoned = err instanceof SyntaxError && /prototype/i.test(err.message);
    return done(
      bodyError(
        poisoned ? 'The body may not use __proto__ or constructor.prototype keys' : 'The body is not valid JSON',
      ),
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return done(
      bodyError(`The body must be a JSON object, not ${describeJson(value)}; send no body at all where none is needed`),
    );
  }
  // JSON.parse reads 1e400 as Infinity, which would be stored as null: refuse it instead.
  if (!allNumbersFinite(value)) return done(bodyError('The body holds a number too large to represent'));
  done(null, value);
}

function bodyError(message: string): ValidationError {
  return ValidationError.field('body', message);
}

function describeJson(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/** Walks a parsed body (at most MAX_JSON_DEPTH deep, so recursion is safe). */
function allNumbersFinite(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (value === null || typeof value !== 'object') return true;
  return Object.values(value).every(allNumbersFinite);
}

/** The deepest nesting of `{`/`[` outside strings, in one pass and without recursion. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return deepest;
}
