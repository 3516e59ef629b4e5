/**
 * The SDK's three error types. Every failure a call can produce is one of them, so callers can
 * branch with `instanceof` and never parse messages.
 */

/** One entry of a problem's `errors`: the field (or header, e.g. `If-Match`) and what is wrong. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** An RFC 9457 problem+json body as the service sends it (CONTRACT.md §2). */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly FieldError[];
  readonly [extension: string]: unknown;
}

/** Base class: `instanceof FilingError` catches everything the SDK throws on purpose. */
export class FilingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The API answered with an error status (4xx/5xx). `problem` is the problem+json body; when the
 * body was not problem+json (a proxy's HTML page, say) a problem is made up from the status so
 * the fields are always there.
 */
export class ApiError extends FilingError {
  readonly status: number;
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  readonly errors: readonly FieldError[];
  /** The HTTP method and path of the failed call (no query string: it may carry filters). */
  readonly method: string;
  readonly path: string;
  /** `Retry-After` in seconds, when the service sent one (429, 503). */
  readonly retryAfterSeconds: number | null;
  /** The `x-request-id` of the answer, if any: quote it to support. */
  readonly requestId: string | null;

  constructor(
    readonly problem: Problem,
    init: { method: string; path: string; retryAfterSeconds?: number | null; requestId?: string | null },
  ) {
    const fields = problem.errors?.length
      ? ` (${problem.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})`
      : '';
    super(`${init.method} ${init.path} → ${problem.status} ${problem.title}: ${problem.detail}${fields}`);
    this.status = problem.status;
    this.type = problem.type;
    this.title = problem.title;
    this.detail = problem.detail;
    this.errors = problem.errors ?? [];
    this.method = init.method;
    this.path = init.path;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.requestId = init.requestId ?? null;
  }

  /** The message for one field, e.g. `err.fieldError('entity_id')`. */
  fieldError(field: string): string | undefined {
    return this.errors.find((e) => e.field === field)?.message;
  }
}

/** The token endpoint refused (RFC 6749 §5.2): `invalid_client`, `invalid_scope`, … */
export class OAuthError extends FilingError {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly errorDescription: string | null,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(`Token request failed: ${status} ${error}${errorDescription ? `: ${errorDescription}` : ''}`);
  }

  /** The RFC 6749 field name, for code that mirrors the JSON. */
  get error_description(): string | null {
    return this.errorDescription;
  }
}

/**
 * No usable HTTP answer: DNS, connection, TLS, timeout, or a body that could not be read.
 * `cause` holds the underlying error. Whether the request reached the service is unknown, so
 * only retry writes that carry an `Idempotency-Key`.
 */
export class NetworkError extends FilingError {
  /** True when the SDK's own timeout (or the caller's signal) ended the request. */
  readonly timedOut: boolean;

  constructor(
    message: string,
    readonly method: string,
    readonly url: string,
    options?: { cause?: unknown; timedOut?: boolean },
  ) {
    super(message, { cause: options?.cause });
    this.timedOut = options?.timedOut ?? false;
  }
}
