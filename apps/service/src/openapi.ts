import {
  BearerErrorDto,
  IDEMPOTENCY_IGNORED_EXTENSION,
  IDEMPOTENCY_KEY_HEADER,
  PROBLEM_CONTENT_TYPE,
  ProblemDto,
} from '@filing/platform';
import { ANY_NOTIFICATION, notificationComponents } from '@filing/webhooks';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  DocumentBuilder,
  getSchemaPath,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type PathItemObject,
  type ResponseObject,
  type SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';

export const OPENAPI_JSON_PATH = 'external-api/v1/openapi.json';

/** The document's title, description and security schemes. */
function documentConfig() {
  return (
    new DocumentBuilder()
      .setTitle('Filing Service external API')
      .setDescription(
        'Entities, jurisdictions, documents, tasks, orders and webhook endpoints. Authenticate with an OAuth 2.0 ' +
          'client-credentials token from POST /o/token/ (scopes `read` for GET/HEAD, `write` for the rest), sent as ' +
          '`Authorization: Bearer <token>`. Errors are application/problem+json (RFC 9457), except a bad ' +
          'token, a missing scope or a token outside the Authorization header: RFC 6750 `{error, error_description}` as ' +
          'application/json, with `WWW-Authenticate`.',
      )
      .setVersion('1')
      .addOAuth2(
        {
          type: 'oauth2',
          flows: { clientCredentials: { tokenUrl: '/o/token/', scopes: { read: 'Read', write: 'Write' } } },
        },
        'oauth2',
      )
      // Opaque tokens, not JWTs (Nest's default bearerFormat would say JWT).
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque' }, 'bearer')
      .addSecurityRequirements('bearer')
      .build()
  );
}

/** What the service sends to a webhook endpoint (OpenAPI 3.1's `webhooks`, as a 3.0 extension). */
const WEBHOOKS_EXTENSION = {
  notification: {
    post: {
      summary: 'A notification, signed per Standard Webhooks (webhook-id = event_id)',
      requestBody: {
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${ANY_NOTIFICATION}` } } },
      },
      responses: { '2XX': { description: 'Received (any 2xx); anything else is retried' } },
    },
  },
};

/**
 * The OpenAPI document of the external API, generated from the same controllers and DTOs that
 * validate requests, at `/external-api/v1/openapi.json`, browsable at `/docs`. Both are public.
 */
export function setupOpenApi(app: NestFastifyApplication, options: { bodyLimitBytes: number }): OpenAPIObject {
  const config = documentConfig();
  const full = SwaggerModule.createDocument(app, config, { extraModels: [ProblemDto, BearerErrorDto] });
  // Only the customer-facing API: operator routes, health and the settings screen stay out, and
  // so do the schemas only they use.
  const paths = Object.fromEntries(
    Object.entries(full.paths)
      .filter(([path]) => path.startsWith('/external-api/v1/'))
      .map(([path, item]) => [path, describeErrors(item, options.bodyLimitBytes)]),
  );
  const schemas = full.components?.schemas ?? {};
  const used = referencedSchemas(paths, schemas);
  const document: OpenAPIObject & { 'x-webhooks': unknown } = {
    ...full,
    paths,
    components: {
      ...full.components,
      schemas: {
        ...Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))),
        // The webhook payloads, from the notification table (3.0 has no `webhooks` section).
        ...(notificationComponents() as Record<string, SchemaObject>),
      },
    },
    // What the service sends to a webhook endpoint: a 3.1 `webhooks` entry, as an extension of 3.0.
    'x-webhooks': WEBHOOKS_EXTENSION,
  };
  SwaggerModule.setup('docs', app, document, {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    customSiteTitle: 'Filing Service API',
  });
  return document;
}

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
function describeErrors(item: PathItemObject, bodyLimitBytes: number): PathItemObject {
  const described: PathItemObject = { ...item };
  for (const method of METHODS) {
    const op = item[method];
    if (op) described[method] = describeOperation(method, op, bodyLimitBytes);
  }
  return described;
}

function describeOperation(
  method: (typeof METHODS)[number],
  source: OperationObject,
  bodyLimitBytes: number,
): OperationObject {
  const op: OperationObject = {
    ...source,
    parameters: [...(source.parameters ?? [])],
    responses: { ...source.responses },
  };
  const params = op.parameters as ParameterObject[];
  const pathParams = params.filter((p) => p.in === 'path');
  const hasQuery = params.some((p) => p.in === 'query');
  const hasBody = op.requestBody !== undefined;
  const ifMatch = params.some((p) => p.in === 'header' && p.name === 'If-Match');
  const write = method !== 'get';
  // IdempotencyGuard: every POST under /external-api/v1/ but those marked @SkipIdempotency().
  const idempotent = method === 'post' && !(IDEMPOTENCY_IGNORED_EXTENSION in op);
  const realm = 'external-api';
  const scope = write ? 'write' : 'read';

  // Every path parameter is read through ResourceIdPipe: a UUID, else a 400 naming it.
  for (const [i, p] of params.entries())
    if (p.in === 'path') params[i] = { ...p, schema: { ...p.schema, type: 'string', format: 'uuid' } };
  if (idempotent) params.push({ ...IDEMPOTENCY_KEY_HEADER, schema: { ...IDEMPOTENCY_KEY_HEADER.schema } });

  const responses = op.responses as Record<string, ResponseObject>;
  /** Merges into what the route declared itself: its description (a route-specific cause) comes first. */
  const add = (
    status: number,
    description: string,
    content: ResponseObject['content'] = problem,
    headers?: ResponseObject['headers'],
  ) => {
    const own = responses[status];
    responses[status] = {
      ...own,
      description: [own?.description, description].filter(Boolean).join('; or '),
      content: { ...content, ...own?.content },
      ...(headers || own?.headers ? { headers: { ...headers, ...own?.headers } } : {}),
    };
  };

  // ValidationPipe (body, query), ResourceIdPipe, parseIfMatch, IdempotencyGuard; and the
  // guard's RFC 6750 invalid_request (application/json) for a token sent outside the header, on any route.
  const invalid = [
    // JsonBodyGuard: a route without a body or query parameters refuses any by name.
    hasBody ? 'body fields (or a body that is not a JSON object)' : 'any body field (it takes none)',
    hasQuery ? 'query parameters (an unknown one too)' : 'any query parameter (it takes none)',
    ...pathParams.map((p) => `\`${p.name}\` (not a UUID)`),
    ...(ifMatch ? ['`If-Match` (not one entity tag or *)'] : []),
    ...(idempotent ? ['`Idempotency-Key`'] : []),
  ];
  add(
    400,
    `Invalid ${invalid.join(', ')}: problem+json listing every bad one in \`errors\`. ` +
      'An access token in the query or body: `invalid_request` (application/json, with WWW-Authenticate).',
    { ...problem, ...bearerError },
    { 'WWW-Authenticate': header('On `invalid_request` only', `Bearer realm="${realm}", error="invalid_request"`) },
  );
  // ApiAccessGuard (RFC 6750): no token is problem+json, a bad one an OAuth error.
  add(
    401,
    'No Authorization header (problem+json), or a token that is malformed, unknown, expired or revoked (`invalid_token`, application/json)',
    { ...problem, ...bearerError },
    {
      'WWW-Authenticate': header(
        'The bearer challenge: with `error="invalid_token"` for a bad token, without for none',
        `Bearer realm="${realm}", error="invalid_token"`,
      ),
    },
  );
  add(403, `The token lacks the \`${scope}\` scope (\`insufficient_scope\`)`, bearerError, {
    'WWW-Authenticate': header(
      'The bearer challenge, naming the scope needed',
      `Bearer realm="${realm}", error="insufficient_scope", scope="${scope}"`,
    ),
  });
  if (pathParams.length > 0)
    add(404, "No such resource in the token's account (another account's is answered the same way)");

  // 409: an Idempotency-Key still in flight (IdempotencyGuard); handleCommand giving up
  // after its retries on concurrent writes to an existing resource (a create's stream is new).
  const existing = write && !(method === 'post' && pathParams.length === 0);
  const conflicts = [
    ...(idempotent ? ['a request with the same Idempotency-Key is still being processed'] : []),
    ...(existing ? [`concurrent changes outlasted the retries${ifMatch ? ' (with If-Match: a 412)' : ''}; retry`] : []),
  ];
  if (conflicts.length > 0 || responses[409]) add(409, conflicts.join('; or '));
  if (ifMatch) add(412, 'If-Match does not name the current version (its ETag): nothing is changed');
  // Fastify's bodyLimit and its parsers, then JsonBodyGuard.
  if (hasBody) {
    add(413, `The body is larger than ${bodyLimitBytes / (1024 * 1024)} MiB`);
    add(415, 'The body is not JSON (application/json or a +json type)');
  }
  if (idempotent) add(422, 'This Idempotency-Key was already used with another request');
  // ApiRateLimitGuard: one budget per account (API_RATE_LIMIT); every answer carries X-RateLimit-*.
  add(
    429,
    "The account's rate limit is spent (X-RateLimit-Limit requests per window): retry after Retry-After",
    problem,
    {
      'Retry-After': header('Seconds until the account may call again', '1'),
    },
  );
  // HeadBarrierHooks: every request with a token first confirms the store's head (fails closed);
  // EventStoreUnavailableError: every write appends (nothing is half-written); HaltedReadModelHooks:
  // a read model the request needs (authentication's, on every route) is halted on an event.
  const unavailable = { 'Retry-After': header('Seconds to wait', '5') };
  add(
    503,
    [
      'This instance could not confirm in time that it holds the latest writes (the event store is slow or unreachable): nothing was done',
      ...(write ? ['the event store is unreachable: nothing was written'] : []),
      'a read model this request needs is halted on an event: `read_model`, `event_id` and `event_type` name it (operators are alerted; other requests are served)',
    ].join('; or ') + '; retry after Retry-After',
    problem,
    unavailable,
  );
  return op;
}

/** The names of the component schemas `root` refers to, directly or through other schemas. */
function referencedSchemas(root: unknown, schemas: Record<string, unknown>): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && value.startsWith('#/components/schemas/')) {
        const name = value.slice('#/components/schemas/'.length);
        if (!found.has(name)) {
          found.add(name);
          visit(schemas[name]);
        }
      } else visit(value);
    }
  };
  visit(root);
  return found;
}
