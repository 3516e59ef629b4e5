import {
  BearerErrorDto,
  IDEMPOTENCY_IGNORED_EXTENSION,
  IDEMPOTENCY_KEY_HEADER,
  PROBLEM_CONTENT_TYPE,
  ProblemDto,
} from '@filing/platform';
import {
  getSchemaPath,
  type OperationObject,
  type ParameterObject,
  type PathItemObject,
  type ResponseObject,
} from '@nestjs/swagger';

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
const PROBLEM = PROBLEM_CONTENT_TYPE.split(';')[0];
const problem = { [PROBLEM]: { schema: { $ref: getSchemaPath(ProblemDto) } } };
const bearerError = { 'application/json': { schema: { $ref: getSchemaPath(BearerErrorDto) } } };
const header = (description: string, example: string) => ({ description, schema: { type: 'string', example } });

/**
 * Adds what the shared HTTP layer answers besides success to every operation of one path, from
 * what the route itself declares (method, path parameters, query parameters, body, If-Match), so
 * a new route gets them without a list to update. Each rule names the code that makes the answer.
 * Route-specific causes (a 409 on a transition, a 503 on a read from the store) are declared on
 * the route (`@ApiConflictResponse`, `@ApiHistoryResponse`) and completed here.
 */
export function describeErrors(item: PathItemObject, bodyLimitBytes: number): PathItemObject {
  const described: PathItemObject = { ...item };
  for (const method of METHODS) {
    const op = item[method];
    if (op) described[method] = describeOperation(method, op, bodyLimitBytes);
  }
  return described;
}

/** What the error rules read of one operation: what its route declares, read once. */
interface OperationFacts {
  readonly method: (typeof METHODS)[number];
  readonly pathParams: readonly ParameterObject[];
  readonly hasQuery: boolean;
  readonly hasBody: boolean;
  readonly ifMatch: boolean;
  readonly write: boolean;
  /** IdempotencyGuard: every POST under /external-api/v1/ but those marked @SkipIdempotency(). */
  readonly idempotent: boolean;
  readonly scope: 'read' | 'write';
  /** The route declares a 409 of its own (`@ApiConflictResponse`). */
  readonly declaresConflict: boolean;
  readonly bodyLimitBytes: number;
}

/** One error answer of an operation: merged into what the route declared for that status. */
interface ErrorAnswer {
  readonly description: string;
  readonly content?: ResponseObject['content'];
  readonly headers?: ResponseObject['headers'];
}

const REALM = 'external-api';
const problemOrBearer = { ...problem, ...bearerError };

/**
 * ValidationPipe (body, query), ResourceIdPipe, parseIfMatch, IdempotencyGuard; and the guard's
 * RFC 6750 invalid_request (application/json) for a token sent outside the header, on any route.
 */
function invalidRequest(op: OperationFacts): ErrorAnswer {
  const invalid = [
    // JsonBodyGuard: a route without a body or query parameters refuses any by name.
    op.hasBody ? 'body fields (or a body that is not a JSON object)' : 'any body field (it takes none)',
    op.hasQuery ? 'query parameters (an unknown one too)' : 'any query parameter (it takes none)',
    ...op.pathParams.map((p) => `\`${p.name}\` (not a UUID)`),
    ...(op.ifMatch ? ['`If-Match` (not one entity tag or *)'] : []),
    ...(op.idempotent ? ['`Idempotency-Key`'] : []),
  ];
  return {
    description:
      `Invalid ${invalid.join(', ')}: problem+json listing every bad one in \`errors\`. ` +
      'An access token in the query or body: `invalid_request` (application/json, with WWW-Authenticate).',
    content: problemOrBearer,
    headers: {
      'WWW-Authenticate': header('On `invalid_request` only', `Bearer realm="${REALM}", error="invalid_request"`),
    },
  };
}

/**
 * An Idempotency-Key still in flight (IdempotencyGuard); handleCommand giving up after its
 * retries on concurrent writes to an existing resource (a create's stream is new).
 */
function conflict(op: OperationFacts): ErrorAnswer | null {
  const existing = op.write && !(op.method === 'post' && op.pathParams.length === 0);
  const conflicts = [
    ...(op.idempotent ? ['a request with the same Idempotency-Key is still being processed'] : []),
    ...(existing
      ? [`concurrent changes outlasted the retries${op.ifMatch ? ' (with If-Match: a 412)' : ''}; retry`]
      : []),
  ];
  return conflicts.length > 0 || op.declaresConflict ? { description: conflicts.join('; or ') } : null;
}

/**
 * HeadBarrierHooks: every request with a token first confirms the store's head (fails closed);
 * EventStoreUnavailableError: every write appends (nothing is half-written); HaltedReadModelHooks:
 * a read model the request needs (authentication's, on every route) is halted on an event.
 */
function unavailable(op: OperationFacts): ErrorAnswer {
  return {
    description:
      [
        'This instance could not confirm in time that it holds the latest writes (the event store is slow or unreachable): nothing was done',
        ...(op.write ? ['the event store is unreachable: nothing was written'] : []),
        'a read model this request needs is halted on an event: `read_model`, `event_id` and `event_type` name it (operators are alerted; other requests are served)',
      ].join('; or ') + '; retry after Retry-After',
    headers: { 'Retry-After': header('Seconds to wait', '5') },
  };
}

/**
 * What the shared HTTP layer answers besides success, by status: each entry gives an operation's
 * answer, or null when that operation cannot get it. Each names the code that makes the answer.
 */
const ERROR_ANSWERS: Readonly<Record<number, (op: OperationFacts) => ErrorAnswer | null>> = {
  400: invalidRequest,
  // ApiAccessGuard (RFC 6750): no token is problem+json, a bad one an OAuth error.
  401: () => ({
    description:
      'No Authorization header (problem+json), or a token that is malformed, unknown, expired or revoked (`invalid_token`, application/json)',
    content: problemOrBearer,
    headers: {
      'WWW-Authenticate': header(
        'The bearer challenge: with `error="invalid_token"` for a bad token, without for none',
        `Bearer realm="${REALM}", error="invalid_token"`,
      ),
    },
  }),
  403: (op) => ({
    description: `The token lacks the \`${op.scope}\` scope (\`insufficient_scope\`)`,
    content: bearerError,
    headers: {
      'WWW-Authenticate': header(
        'The bearer challenge, naming the scope needed',
        `Bearer realm="${REALM}", error="insufficient_scope", scope="${op.scope}"`,
      ),
    },
  }),
  404: (op) =>
    op.pathParams.length > 0
      ? { description: "No such resource in the token's account (another account's is answered the same way)" }
      : null,
  409: conflict,
  412: (op) =>
    op.ifMatch ? { description: 'If-Match does not name the current version (its ETag): nothing is changed' } : null,
  // Fastify's bodyLimit and its parsers, then JsonBodyGuard.
  413: (op) =>
    op.hasBody ? { description: `The body is larger than ${op.bodyLimitBytes / (1024 * 1024)} MiB` } : null,
  415: (op) => (op.hasBody ? { description: 'The body is not JSON (application/json or a +json type)' } : null),
  422: (op) => (op.idempotent ? { description: 'This Idempotency-Key was already used with another request' } : null),
  // ApiRateLimitGuard: one budget per account (API_RATE_LIMIT); every answer carries X-RateLimit-*.
  429: () => ({
    description: "The account's rate limit is spent (X-RateLimit-Limit requests per window): retry after Retry-After",
    headers: { 'Retry-After': header('Seconds until the account may call again', '1') },
  }),
  503: unavailable,
};

function operationFacts(method: (typeof METHODS)[number], op: OperationObject, bodyLimitBytes: number): OperationFacts {
  const params = (op.parameters ?? []) as ParameterObject[];
  const write = method !== 'get';
  return {
    method,
    pathParams: params.filter((p) => p.in === 'path'),
    hasQuery: params.some((p) => p.in === 'query'),
    hasBody: op.requestBody !== undefined,
    ifMatch: params.some((p) => p.in === 'header' && p.name === 'If-Match'),
    write,
    idempotent: method === 'post' && !(IDEMPOTENCY_IGNORED_EXTENSION in op),
    scope: write ? 'write' : 'read',
    declaresConflict: Boolean((op.responses as Record<string, ResponseObject | undefined>)[409]),
    bodyLimitBytes,
  };
}

/** Merges `answer` into what the route declared itself: its description (a route-specific cause) comes first. */
function withAnswer(own: ResponseObject | undefined, answer: ErrorAnswer): ResponseObject {
  const { content = problem, headers } = answer;
  return {
    ...own,
    description: [own?.description, answer.description].filter(Boolean).join('; or '),
    content: { ...content, ...own?.content },
    ...(headers || own?.headers ? { headers: { ...headers, ...own?.headers } } : {}),
  };
}

function describeOperation(
  method: (typeof METHODS)[number],
  source: OperationObject,
  bodyLimitBytes: number,
): OperationObject {
  const facts = operationFacts(method, source, bodyLimitBytes);
  // Every path parameter is read through ResourceIdPipe: a UUID, else a 400 naming it.
  const parameters = ((source.parameters ?? []) as ParameterObject[]).map((p) =>
    p.in === 'path' ? { ...p, schema: { ...p.schema, type: 'string', format: 'uuid' } } : p,
  );
  if (facts.idempotent) parameters.push({ ...IDEMPOTENCY_KEY_HEADER, schema: { ...IDEMPOTENCY_KEY_HEADER.schema } });
  const responses = { ...source.responses } as Record<string, ResponseObject>;
  for (const [status, answerOf] of Object.entries(ERROR_ANSWERS)) {
    const answer = answerOf(facts);
    if (answer) responses[status] = withAnswer(responses[status], answer);
  }
  return { ...source, parameters, responses };
}
