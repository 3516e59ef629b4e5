/**
 * The published OpenAPI document (/external-api/v1/openapi.json) is complete enough to generate a
 * client from: every operation declares its success answer, every write its body, every
 * collection its filters and page parameters, with the field lists of CONTRACT.md §3–§4; every
 * operation declares the errors it can answer (CONTRACT.md §1–§2) and the headers it reads
 * (If-Match, Idempotency-Key); and the real answers, success and error, have exactly the fields
 * and the content type the document declares.
 */
import { EVENT_STORE, type EventStore, EventStoreUnavailableError } from '@filing/event-store';
import { MISSING_ID, resourceApi, type Answer, type Resource } from '../support/api';
import { bearer, provisionAccount, provisionClient, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';

type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  [k: string]: any;
};
interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema: Schema;
}
interface Response {
  description: string;
  content?: Record<string, { schema: Schema }>;
  headers?: Record<string, { schema: Schema }>;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
}
interface OpenApi {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown> };
}

const V1 = '/external-api/v1';
const PAGE = ['limit', 'cursor'];

/** POST actions that take no body (CONTRACT.md §4); every other POST, PUT and PATCH has one. */
const BODYLESS_POSTS = [
  `POST ${V1}/webhook-endpoints/{id}/enable`,
  `POST ${V1}/webhook-endpoints/{id}/disable`,
  `POST ${V1}/webhook-endpoints/{id}/rotate-secret`,
  `POST ${V1}/webhook-deliveries/{id}/redeliver`,
];

/** Every collection and its query parameters (CONTRACT.md: list filters, limit/cursor); no other operation takes any. */
const COLLECTIONS: Record<string, string[]> = {
  [`GET ${V1}/entities`]: [...PAGE, 'status', 'entity_type', 'q'],
  [`GET ${V1}/jurisdictions`]: [...PAGE, 'entity_id', 'status'],
  [`GET ${V1}/documents`]: [...PAGE, 'entity_id', 'order_id'],
  [`GET ${V1}/tasks`]: [...PAGE, 'entity_id', 'status'],
  [`GET ${V1}/orders`]: [...PAGE, 'entity_id', 'status'],
  [`GET ${V1}/entities/{id}/history`]: PAGE,
  [`GET ${V1}/jurisdictions/{id}/history`]: PAGE,
  [`GET ${V1}/documents/{id}/history`]: PAGE,
  [`GET ${V1}/tasks/{id}/history`]: PAGE,
  [`GET ${V1}/orders/{id}/history`]: PAGE,
  [`GET ${V1}/webhook-endpoints`]: PAGE,
  [`GET ${V1}/webhook-endpoints/{id}/deliveries`]: [...PAGE, 'status'],
  [`GET ${V1}/events`]: [...PAGE, 'event_type', 'after_event_id'],
};

/** Request bodies, field by field (CONTRACT.md §3 create bodies and writable PATCH fields, §4). */
const BODIES: Record<string, string[]> = {
  [`POST ${V1}/entities`]: ['name', 'entity_type', 'formation_jurisdiction', 'formation_date'],
  [`PATCH ${V1}/entities/{id}`]: ['name', 'status', 'formation_jurisdiction', 'formation_date'],
  [`POST ${V1}/jurisdictions`]: ['entity_id', 'code', 'registration_type'],
  [`PATCH ${V1}/jurisdictions/{id}`]: ['registration_type', 'status'],
  [`POST ${V1}/documents`]: ['entity_id', 'order_id', 'title', 'document_type', 'content_type', 'content_base64'],
  [`PATCH ${V1}/documents/{id}`]: ['title', 'document_type'],
  [`POST ${V1}/tasks`]: ['entity_id', 'title', 'description', 'due_date'],
  [`PATCH ${V1}/tasks/{id}`]: ['title', 'description', 'due_date', 'status'],
  [`POST ${V1}/orders`]: ['entity_id', 'order_type', 'jurisdiction_code', 'details'],
  [`POST ${V1}/orders/{id}/cancel`]: ['reason'],
  [`POST ${V1}/webhook-endpoints`]: ['url', 'description', 'event_types', 'rate_limit_per_second'],
  [`PATCH ${V1}/webhook-endpoints/{id}`]: ['url', 'description', 'event_types', 'rate_limit_per_second'],
  [`PUT ${V1}/webhook-settings`]: ['notifications_enabled'],
  [`POST ${V1}/webhook-endpoints/{id}/recover`]: ['since'],
  [`POST ${V1}/webhook-endpoints/{id}/replay`]: ['since', 'until'],
};

const RESOURCE = ['id', 'created_at', 'updated_at', 'version'];
const ENDPOINT = [
  ...RESOURCE,
  'url',
  'description',
  'event_types',
  'enabled',
  'disabled_reason',
  'rate_limit_per_second',
];
const DELIVERY = [
  'id',
  'event_id',
  'event_type',
  'endpoint_id',
  'status',
  'attempt_count',
  'last_attempt_at',
  'next_attempt_at',
  'created_at',
];

const STATS = ['delivered', 'failed', 'pending', 'p50_ms', 'p99_ms', 'last_success_at', 'failing_since'];
/** An Events API item: the webhook payload (every type's fields, CONTRACT.md §4 table) plus occurred_at. */
const EVENT = [
  'event_id',
  'event_type',
  'timestamp',
  'entity_id',
  'document_id',
  'jurisdiction_id',
  'task_id',
  'order_id',
  'endpoint_id',
  'reason',
  'status',
  'failing_since',
  'delivery_id',
  'failed_event_id',
  'failed_event_type',
  'resource_version',
  'occurred_at',
];

/** Success answers with fields CONTRACT.md lists exactly (§3 history, §4 webhooks). */
const ANSWERS: Record<string, string[]> = {
  [`POST ${V1}/webhook-endpoints`]: [...ENDPOINT, 'secret'],
  [`GET ${V1}/webhook-endpoints/{id}`]: ENDPOINT,
  [`PATCH ${V1}/webhook-endpoints/{id}`]: ENDPOINT,
  [`POST ${V1}/webhook-endpoints/{id}/enable`]: ENDPOINT,
  [`POST ${V1}/webhook-endpoints/{id}/disable`]: ENDPOINT,
  [`POST ${V1}/webhook-endpoints/{id}/rotate-secret`]: [...ENDPOINT, 'secret'],
  [`GET ${V1}/webhook-endpoints/{id}/secret`]: ['secret'],
  [`GET ${V1}/webhook-deliveries/{id}`]: [...DELIVERY, 'attempts'],
  [`POST ${V1}/webhook-deliveries/{id}/redeliver`]: [...DELIVERY, 'attempts'],
  [`GET ${V1}/webhook-settings`]: ['notifications_enabled'],
  [`PUT ${V1}/webhook-settings`]: ['notifications_enabled'],
  [`GET ${V1}/webhook-event-types`]: ['data'],
  [`POST ${V1}/webhook-endpoints/{id}/recover`]: ['deliveries'],
  [`POST ${V1}/webhook-endpoints/{id}/replay`]: ['deliveries'],
  [`GET ${V1}/events/{id}`]: [...EVENT, 'deliveries'],
  [`GET ${V1}/webhook-endpoints/{id}/stats`]: STATS,
};

/** Page items with exactly these fields. */
const ITEMS: Record<string, string[]> = {
  [`GET ${V1}/webhook-endpoints`]: ENDPOINT,
  [`GET ${V1}/webhook-endpoints/{id}/deliveries`]: DELIVERY,
  [`GET ${V1}/entities/{id}/history`]: ['type', 'occurred_at', 'actor', 'data'],
  [`GET ${V1}/events`]: EVENT,
};

const sorted = (list: readonly string[]) => [...list].sort();

/** Operations that honour If-Match (CONTRACT.md §3: PATCH, DELETE and actions); a delivery has no version to match. */
const takesIfMatch = (key: string) =>
  /^(PATCH|DELETE) /.test(key) || (/^POST .*\/\{id\}\/[a-z-]+$/.test(key) && !key.endsWith('/redeliver'));

/**
 * The error statuses an operation can answer (CONTRACT.md §1–§3, as the shared HTTP layer makes
 * them), and no other.
 */
const expectedErrors = (key: string): string[] => {
  const [method, path] = key.split(' ');
  const write = method !== 'GET';
  return sorted([
    // Validation, or a token outside the Authorization header; no or a bad token; the scope.
    '400',
    '401',
    '403',
    ...(path.includes('{id}') ? ['404'] : []),
    // An Idempotency-Key still in flight (POST), concurrent writes outlasting the retries, a transition.
    ...(write ? ['409'] : []),
    ...(takesIfMatch(key) ? ['412'] : []),
    ...(key in BODIES ? ['413', '415'] : []),
    ...(method === 'POST' ? ['422'] : []),
    // The account's rate limit (API_RATE_LIMIT), on every operation.
    '429',
    // The store's head not confirmed in time (every request with a token, issue #48); the event
    // store unreachable: every write appends, every history reads it; or a read model the request
    // needs halted on an event (authentication's, on every operation, issue #47).
    '503',
  ]);
};

const PROBLEM_FIELDS = ['type', 'title', 'status', 'detail', 'errors'];
const PROBLEM_JSON = 'application/problem+json';

describe('OpenAPI document and /docs', () => {
  let service: TestService;
  let doc: OpenApi;
  beforeAll(async () => {
    // A webhook endpoint on 127.0.0.1 (nothing is sent: the account switch stays off).
    service = await startService({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const res = await fetch(`${service.url}${V1}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as OpenApi;
  });
  afterAll(async () => service?.destroy());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })),
    );
  const operation = (key: string): Operation => {
    const found = operations().find((o) => o.key === key);
    if (!found) throw new Error(`The document has no operation ${key}`);
    return found.op;
  };
  /** The schema itself, following a $ref. */
  const resolve = (schema: Schema): Schema =>
    schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
  const fieldsOf = (schema: Schema | undefined) =>
    sorted(Object.keys(schema ? (resolve(schema).properties ?? {}) : {}));
  /** The operation's success status and the schema of its JSON answer (undefined for none). */
  const success = (op: Operation) => {
    const status = Object.keys(op.responses).find((s) => /^2\d\d$/.test(s));
    return { status, content: status ? op.responses[status].content : undefined };
  };
  const answerSchema = (key: string) => success(operation(key)).content?.['application/json']?.schema;
  const bodySchema = (key: string) => operation(key).requestBody?.content['application/json']?.schema;

  it('serves the external API document without a token, generated from the validating DTOs', async () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining([`${V1}/entities`, `${V1}/entities/{id}`]));
    expect(Object.keys(doc.paths).every((p: string) => p.startsWith(`${V1}/`))).toBe(true);
    // The request schema carries the DTO's validation rules (class-validator → OpenAPI).
    const schema = resolve(bodySchema(`POST ${V1}/entities`)!);
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'entity_type']));
    expect(schema.properties!.entity_type.enum).toEqual(
      expect.arrayContaining(['llc', 'corporation', 'nonprofit', 'partnership', 'sole_proprietorship', 'other']),
    );
    expect(doc.components.securitySchemes.bearer).toEqual({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque' });
  });

  it('declares a success answer for every operation: a schema with fields, or no content for a 204', () => {
    const missing: string[] = [];
    for (const { key, op } of operations()) {
      const { status, content } = success(op);
      if (status === '204') {
        if (content) missing.push(`${key}: a 204 with content`);
        continue;
      }
      const json = content?.['application/json']?.schema;
      const other = Object.entries(content ?? {}).find(([type]) => type !== 'application/json')?.[1].schema;
      if (json ? fieldsOf(json).length === 0 : !other) missing.push(`${key}: ${status ?? 'no 2xx'} without a schema`);
    }
    expect(missing).toEqual([]);
    expect(operations().length).toBeGreaterThanOrEqual(42);
  });

  it('declares a request body with its fields for every POST, PUT and PATCH but the body-less actions', () => {
    const writes = operations().filter(({ key }) => /^(POST|PUT|PATCH) /.test(key));
    const withBody = writes.filter(({ op }) => op.requestBody).map(({ key }) => key);
    expect(sorted(writes.map(({ key }) => key).filter((key) => !withBody.includes(key)))).toEqual(
      sorted(BODYLESS_POSTS),
    );
    expect(sorted(withBody)).toEqual(sorted(Object.keys(BODIES)));
    for (const key of withBody) expect([key, fieldsOf(bodySchema(key))]).toEqual([key, sorted(BODIES[key])]);
  });

  it('declares the filters and page parameters of every collection, and no query parameter elsewhere', () => {
    for (const { key, op } of operations()) {
      const query = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      expect([key, sorted(query)]).toEqual([key, sorted(COLLECTIONS[key] ?? [])]);
    }
    // Each collection answers the page envelope {data, next_cursor}, with items that are resources.
    for (const key of Object.keys(COLLECTIONS)) {
      const schema = resolve(answerSchema(key)!);
      expect([key, sorted(Object.keys(schema.properties ?? {}))]).toEqual([key, ['data', 'next_cursor']]);
      expect([key, sorted(schema.required ?? [])]).toEqual([key, ['data', 'next_cursor']]);
      expect([key, schema.properties!.data.type, fieldsOf(schema.properties!.data.items).length > 0]).toEqual([
        key,
        'array',
        true,
      ]);
      expect(schema.properties!.next_cursor).toMatchObject({ type: 'string', nullable: true });
    }
  });

  it('describes the webhook answers with exactly the fields of CONTRACT.md §4', () => {
    for (const [key, fields] of Object.entries(ANSWERS))
      expect([key, fieldsOf(answerSchema(key))]).toEqual([key, sorted(fields)]);
    for (const [key, fields] of Object.entries(ITEMS)) {
      expect([key, fieldsOf(resolve(answerSchema(key)!).properties!.data.items)]).toEqual([key, sorted(fields)]);
    }
    const detail = resolve(answerSchema(`GET ${V1}/webhook-deliveries/{id}`)!);
    expect(fieldsOf(detail.properties!.attempts.items)).toEqual(
      sorted(['attempted_at', 'status_code', 'error', 'duration_ms']),
    );
    expect(detail.properties!.status.enum).toEqual(['pending', 'delivered', 'failed', 'cancelled']);
    const catalog = resolve(answerSchema(`GET ${V1}/webhook-event-types`)!);
    expect(fieldsOf(catalog.properties!.data.items)).toEqual(
      sorted(['category', 'label', 'name', 'description', 'schema', 'schema_version']),
    );
    const deliveries = operation(`GET ${V1}/webhook-endpoints/{id}/deliveries`).parameters!.find(
      (p) => p.name === 'status',
    ) as any;
    expect(deliveries.schema.enum).toEqual(['pending', 'delivered', 'failed', 'cancelled']);
  });

  it('describes each resource with id, times and version and every field its create body sets', () => {
    const families = ['entities', 'jurisdictions', 'documents', 'tasks', 'orders'];
    for (const family of families) {
      const resource = answerSchema(`GET ${V1}/${family}/{id}`)!;
      const written = BODIES[`POST ${V1}/${family}`].filter((f) => f !== 'content_base64');
      expect([family, fieldsOf(resource)]).toEqual([
        family,
        expect.arrayContaining([...RESOURCE, ...written, ...(family === 'documents' ? [] : ['status'])]),
      ]);
      // The same schema for the answer of every operation on one resource.
      for (const key of [`POST ${V1}/${family}`, `PATCH ${V1}/${family}/{id}`, `POST ${V1}/${family}/{id}/cancel`]) {
        if (operations().some((o) => o.key === key)) expect([key, answerSchema(key)]).toEqual([key, resource]);
      }
      expect(answerSchema(`GET ${V1}/${family}`)!.properties!.data.items).toEqual(resource);
    }
  });

  it('declares every error answer an operation can get, and no other', () => {
    const wrong = operations()
      .map(({ key, op }) => ({
        key,
        declared: sorted(Object.keys(op.responses).filter((s) => /^[45]/.test(s))),
        expected: expectedErrors(key),
      }))
      .filter(({ declared, expected }) => declared.join() !== expected.join());
    expect(wrong).toEqual([]);
  });

  it("says when creating a webhook endpoint is a 409: the account's endpoint cap", () => {
    const conflict = doc.paths['/external-api/v1/webhook-endpoints'].post.responses['409'];
    expect(conflict.description).toMatch(/WEBHOOK_MAX_ENDPOINTS_PER_ACCOUNT, default 16/);
    expect(Object.keys(conflict.content ?? {})).toEqual(['application/problem+json']);
  });

  it('describes errors as problem+json with the Problem schema, and bearer-token errors as RFC 6750 JSON, with their headers', () => {
    const problem = doc.components.schemas.Problem;
    expect(fieldsOf(problem)).toEqual(sorted(PROBLEM_FIELDS));
    expect(sorted(problem.required ?? [])).toEqual(sorted(['type', 'title', 'status', 'detail']));
    expect(fieldsOf(problem.properties!.errors.items)).toEqual(['field', 'message']);
    expect(fieldsOf(doc.components.schemas.BearerError)).toEqual(['error', 'error_description']);

    const wrong: string[] = [];
    for (const { key, op } of operations()) {
      const scope = key.startsWith('GET ') ? 'read' : 'write';
      for (const [status, response] of Object.entries(op.responses).filter(([s]) => /^[45]/.test(s))) {
        // The guard's RFC 6750 errors are application/json; every other error is problem+json.
        const types =
          // Every operation refuses some input (a query parameter at least) as problem+json; every 400 can also be a bearer `invalid_request`.
          status === '403'
            ? ['application/json']
            : status === '401' || status === '400'
              ? ['application/json', PROBLEM_JSON]
              : [PROBLEM_JSON];
        const content = response.content ?? {};
        if (sorted(Object.keys(content)).join() !== sorted(types).join())
          wrong.push(`${key} ${status}: content ${Object.keys(content).join()}`);
        for (const [type, { schema }] of Object.entries(content)) {
          const name = type === PROBLEM_JSON ? 'Problem' : 'BearerError';
          if (schema.$ref !== `#/components/schemas/${name}`) wrong.push(`${key} ${status} ${type}: ${schema.$ref}`);
        }
        const headers = Object.keys(response.headers ?? {});
        const expected = ['400', '401', '403'].includes(status)
          ? ['WWW-Authenticate']
          : status === '503' || status === '429'
            ? ['Retry-After']
            : [];
        if (headers.join() !== expected.join()) wrong.push(`${key} ${status}: headers ${headers.join()}`);
        if (!response.description) wrong.push(`${key} ${status}: no description`);
      }
      const challenge = op.responses['403']?.headers?.['WWW-Authenticate']?.schema.example;
      if (challenge !== `Bearer realm="external-api", error="insufficient_scope", scope="${scope}"`)
        wrong.push(`${key} 403: ${challenge}`);
    }
    expect(wrong).toEqual([]);
    // A cancel's body is optional (a reason), and says so.
    expect(operation(`POST ${V1}/orders/{id}/cancel`).requestBody).toMatchObject({ required: false });
    // The transitions that are a 409 say so.
    expect(operation(`POST ${V1}/orders/{id}/cancel`).responses['409'].description).toMatch(/submitted/);
    expect(operation(`POST ${V1}/webhook-deliveries/{id}/redeliver`).responses['409'].description).toMatch(/failed/);
  });

  it('declares If-Match, Idempotency-Key and UUID path ids exactly where the service reads them', () => {
    const wrong: string[] = [];
    for (const { key, op } of operations()) {
      const headers = sorted((op.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name));
      const expected = sorted([
        ...(takesIfMatch(key) ? ['If-Match'] : []),
        ...(key.startsWith('POST ') ? ['Idempotency-Key'] : []),
      ]);
      if (headers.join() !== expected.join()) wrong.push(`${key}: headers ${headers.join()}`);
      for (const p of (op.parameters ?? []).filter((p) => p.in === 'header'))
        if (p.required !== false) wrong.push(`${key}: ${p.name} required`);
      for (const p of (op.parameters ?? []).filter((p) => p.in === 'path')) {
        if (p.schema.format !== 'uuid' || p.schema.type !== 'string')
          wrong.push(`${key}: path ${p.name} ${JSON.stringify(p.schema)}`);
      }
    }
    expect(wrong).toEqual([]);
    const ifMatch = operation(`PATCH ${V1}/entities/{id}`).parameters!.find((p) => p.name === 'If-Match')!;
    expect(ifMatch.schema.example).toBe('"3"');
    const key = operation(`POST ${V1}/entities`).parameters!.find((p) => p.name === 'Idempotency-Key')!;
    expect(key.schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
    const pattern = new RegExp(key.schema.pattern);
    expect(['k', 'order-2026-11-22_0001', '~'.repeat(255)].map((k) => pattern.test(k))).toEqual([true, true, true]);
    expect(['', 'a b', 'é', 'k'.repeat(256)].map((k) => pattern.test(k))).toEqual([false, false, false, false]);
  });

  it('refers only to schemas it contains, and contains only schemas it refers to', () => {
    const refs = new Set<string>();
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (typeof node !== 'object' || node === null) return;
      for (const [k, v] of Object.entries(node))
        if (k === '$ref') refs.add(String(v).split('/').pop()!);
        else visit(v);
    };
    visit(doc.paths);
    visit(doc.components.schemas);
    // The webhook payloads (x-webhooks: what the service sends, not an operation).
    visit((doc as unknown as Record<string, unknown>)['x-webhooks']);
    expect(sorted([...refs])).toEqual(sorted(Object.keys(doc.components.schemas)));
  });

  describe('the real answers', () => {
    const api = resourceApi(() => service);
    let client: ProvisionedClient;
    beforeAll(async () => {
      client = await provisionAccount(service);
    });

    /** The JSON answer has exactly the fields its schema declares. */
    const expectDeclared = (
      key: string,
      body: Record<string, unknown>,
      schema: Schema | undefined = answerSchema(key),
    ) => expect([key, sorted(Object.keys(body))]).toEqual([key, fieldsOf(schema)]);

    it('have exactly the declared fields, resource by resource', async () => {
      const entity = await api.call(client, 'POST', '/entities', { name: 'Declared LLC', entity_type: 'llc' });
      expectDeclared(`POST ${V1}/entities`, entity.body);
      const id = entity.body.id as string;
      const order = await api.call(client, 'POST', '/orders', { entity_id: id, order_type: 'formation' });
      const created: [string, Resource][] = [
        ['entities', entity.body],
        [
          'jurisdictions',
          (
            await api.call(client, 'POST', '/jurisdictions', {
              entity_id: id,
              code: 'US-DE',
              registration_type: 'domestic',
            })
          ).body,
        ],
        ['tasks', (await api.call(client, 'POST', '/tasks', { entity_id: id, title: 'File' })).body],
        ['orders', order.body],
        [
          'documents',
          (
            await api.call(client, 'POST', '/documents', {
              entity_id: id,
              order_id: order.body.id,
              title: 'Certificate',
              document_type: 'certificate',
              content_type: 'text/plain',
              content_base64: Buffer.from('hello').toString('base64'),
            })
          ).body,
        ],
      ];
      for (const [family, resource] of created) {
        expectDeclared(`POST ${V1}/${family}`, resource);
        expectDeclared(`GET ${V1}/${family}/{id}`, (await api.call(client, 'GET', `/${family}/${resource.id}`)).body);
        const list = await api.call(client, 'GET', `/${family}`);
        expectDeclared(`GET ${V1}/${family}`, list.body);
        expectDeclared(
          `GET ${V1}/${family}`,
          list.body.data[0],
          answerSchema(`GET ${V1}/${family}`)!.properties!.data.items,
        );
        const history = await api.call(client, 'GET', `/${family}/${resource.id}/history`);
        expectDeclared(
          `GET ${V1}/${family}/{id}/history`,
          history.body.data[0],
          answerSchema(`GET ${V1}/${family}/{id}/history`)!.properties!.data.items,
        );
      }

      const endpoint = await api.call(client, 'POST', '/webhook-endpoints', { url: 'https://127.0.0.1:9/hook' });
      expect(endpoint.status).toBe(201);
      expectDeclared(`POST ${V1}/webhook-endpoints`, endpoint.body);
      expectDeclared(
        `GET ${V1}/webhook-endpoints/{id}`,
        (await api.call(client, 'GET', `/webhook-endpoints/${endpoint.body.id}`)).body,
      );
      expectDeclared(
        `GET ${V1}/webhook-endpoints/{id}/secret`,
        (await api.call(client, 'GET', `/webhook-endpoints/${endpoint.body.id}/secret`)).body,
      );
      expectDeclared(`GET ${V1}/webhook-settings`, (await api.call(client, 'GET', '/webhook-settings')).body);
      expectDeclared(
        `GET ${V1}/webhook-endpoints/{id}/stats`,
        (await api.call(client, 'GET', `/webhook-endpoints/${endpoint.body.id}/stats`)).body,
      );
      const recovered = await api.call(client, 'POST', `/webhook-endpoints/${endpoint.body.id}/recover`, {
        since: '2000-01-01T00:00:00Z',
      });
      expect(recovered.status).toBe(202);
      expectDeclared(`POST ${V1}/webhook-endpoints/{id}/recover`, recovered.body);
      // The account's notifications so far: each item's fields are among those declared (each type has its own).
      const events = await api.call(client, 'GET', '/events');
      expectDeclared(`GET ${V1}/events`, events.body);
      const declaredEvent = fieldsOf(answerSchema(`GET ${V1}/events`)!.properties!.data.items);
      expect(events.body.data.length).toBeGreaterThan(0);
      for (const item of events.body.data)
        expect(Object.keys(item).filter((f) => !declaredEvent.includes(f))).toEqual([]);
      const catalog = await api.call(client, 'GET', '/webhook-event-types');
      expectDeclared(
        `GET ${V1}/webhook-event-types`,
        catalog.body.data[0],
        resolve(answerSchema(`GET ${V1}/webhook-event-types`)!).properties!.data.items,
      );
    });
  });

  /** Each error the document declares, provoked for real: its status, content type, body fields and headers are the declared ones. */
  describe('the real error answers', () => {
    const api = resourceApi(() => service);
    let client: ProvisionedClient & { accountId: string };
    let reader: ProvisionedClient;
    let writer: ProvisionedClient;
    /** One resource of each kind, by the first path segment of the routes that take its id. */
    const ids: Record<string, string> = {};

    /** Valid bodies for the writes on an id, so only the id, If-Match or the token can refuse them. */
    const VALID: Record<string, Record<string, unknown>> = {
      [`PATCH ${V1}/entities/{id}`]: { name: 'Renamed LLC' },
      [`PATCH ${V1}/jurisdictions/{id}`]: { status: 'inactive' },
      [`PATCH ${V1}/documents/{id}`]: { title: 'Renamed' },
      [`PATCH ${V1}/tasks/{id}`]: { title: 'Renamed' },
      [`POST ${V1}/orders/{id}/cancel`]: { reason: 'Changed our mind' },
      [`PATCH ${V1}/webhook-endpoints/{id}`]: { description: 'Renamed' },
      [`POST ${V1}/webhook-endpoints/{id}/recover`]: { since: '2000-01-01T00:00:00.000Z' },
      [`POST ${V1}/webhook-endpoints/{id}/replay`]: { since: '2000-01-01T00:00:00.000Z' },
    };
    const withId = (path: string, id: string) => path.slice(V1.length).replace('{id}', id);
    const own = (path: string) => withId(path, ids[path.slice(V1.length + 1).split('/')[0]]);
    /** The GET that shows the resource an operation on `{id}` changes. */
    const resourceOf = (path: string) => own(path.replace(/(\{id\}).*$/, '$1'));

    /** A request without the test client's token: `authorization` as given (or none). */
    const raw = async (method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> => {
      const res = await fetch(`${service.url}${V1}${path}`, { method, headers });
      const text = await res.text();
      return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : null };
    };

    /** The answer is the declared error: status, a declared content type, that type's schema's fields, the declared headers. */
    const expectDeclaredError = (key: string, status: number, res: Answer, problems: string[]) => {
      const declared = operation(key).responses[String(status)];
      const media = (res.headers['content-type'] ?? '').split(';')[0];
      const schema = declared?.content?.[media] ? resolve(declared.content[media].schema) : undefined;
      const fields = Object.keys(res.body ?? {});
      const wrong =
        res.status !== status
          ? `answered ${res.status}`
          : !declared
            ? 'not declared'
            : !schema
              ? `${media} not declared`
              : fields.some((f) => !(f in schema.properties!)) ||
                  (schema.required ?? []).some((f: string) => !fields.includes(f))
                ? `fields ${sorted(fields).join()} against ${fieldsOf(schema).join()}`
                : (media === PROBLEM_JSON && res.body.status !== status) ||
                    (status !== 400 && Object.keys(declared.headers ?? {}).some((h) => !res.headers[h.toLowerCase()]))
                  ? 'status field or headers'
                  : undefined;
      if (wrong) problems.push(`${key} → ${status}: ${wrong}: ${JSON.stringify(res.body)?.slice(0, 200)}`);
    };

    beforeAll(async () => {
      client = await provisionAccount(service);
      [reader, writer] = await Promise.all([
        provisionClient(service, client.accountId, 'read'),
        provisionClient(service, client.accountId, 'write'),
      ]);
      const entity = await api.create(client, '/entities', { name: 'Errors LLC', entity_type: 'llc' });
      const order = await api.create(client, '/orders', { entity_id: entity.id, order_type: 'formation' });
      Object.assign(ids, {
        entities: entity.id,
        orders: order.id,
        jurisdictions: (
          await api.create(client, '/jurisdictions', {
            entity_id: entity.id,
            code: 'US-DE',
            registration_type: 'domestic',
          })
        ).id,
        tasks: (await api.create(client, '/tasks', { entity_id: entity.id, title: 'File' })).id,
        documents: (
          await api.create(client, '/documents', {
            entity_id: entity.id,
            title: 'Certificate',
            document_type: 'certificate',
            content_type: 'text/plain',
            content_base64: Buffer.from('hello').toString('base64'),
          })
        ).id,
        'webhook-endpoints': (await api.create(client, '/webhook-endpoints', { url: 'https://127.0.0.1:9/hook' })).id,
      });
    });

    it('a path id that is not a UUID is a 400 naming it, a missing one a 404, on every operation with an id', async () => {
      const problems: string[] = [];
      for (const { key } of operations().filter(({ key }) => key.includes('{id}'))) {
        const [method, path] = key.split(' ');
        const bad = await api.call(client, method, withId(path, 'not-a-uuid'), VALID[key]);
        expectDeclaredError(key, 400, bad, problems);
        // Every field of the schema: a 400 lists what was wrong.
        if (bad.status === 400 && sorted(Object.keys(bad.body)).join() !== sorted(PROBLEM_FIELDS).join())
          problems.push(`${key} 400: ${Object.keys(bad.body).join()}`);
        if (bad.status === 400 && !bad.body.errors.some((e: { field: string }) => e.field === 'id'))
          problems.push(`${key} 400 does not name id`);
        expectDeclaredError(key, 404, await api.call(client, method, withId(path, MISSING_ID), VALID[key]), problems);
      }
      expect(problems).toEqual([]);
    });

    it('a stale If-Match is a 412 that changes nothing, and a malformed one a 400, on every operation that declares it', async () => {
      const problems: string[] = [];
      const declaring = operations().filter(({ op }) => (op.parameters ?? []).some((p) => p.name === 'If-Match'));
      // Not vacuous: the four PATCHable families, orders, documents and webhook endpoints.
      expect(declaring.length).toBeGreaterThanOrEqual(11);
      for (const { key } of declaring) {
        const [method, path] = key.split(' ');
        const before = await api.call(client, 'GET', resourceOf(path));
        expectDeclaredError(
          key,
          412,
          await api.call(client, method, own(path), VALID[key], { 'if-match': '"999"' }),
          problems,
        );
        const malformed = await api.call(client, method, own(path), VALID[key], { 'if-match': 'three' });
        expectDeclaredError(key, 400, malformed, problems);
        if (malformed.status === 400 && malformed.body.errors?.[0]?.field !== 'If-Match')
          problems.push(`${key} 400 does not name If-Match`);
        const after = await api.call(client, 'GET', resourceOf(path));
        if (JSON.stringify(after.body) !== JSON.stringify(before.body))
          problems.push(`${key}: changed by a refused request`);
      }
      expect(problems).toEqual([]);
    });

    it('no token, a bad one, one without the scope and a token outside the header are answered as declared, on every operation', async () => {
      const problems: string[] = [];
      for (const { key } of operations()) {
        const [method, path] = key.split(' ');
        const url = withId(path, MISSING_ID);
        const none = await raw(method, url);
        expectDeclaredError(key, 401, none, problems);
        if (none.headers['www-authenticate'] !== 'Bearer realm="external-api"')
          problems.push(`${key} 401 challenge: ${none.headers['www-authenticate']}`);
        const invalid = await raw(method, url, bearer('not-a-token'));
        expectDeclaredError(key, 401, invalid, problems);
        if (invalid.body?.error !== 'invalid_token') problems.push(`${key} 401: ${JSON.stringify(invalid.body)}`);
        const scope = method === 'GET' ? 'read' : 'write';
        const other = await raw(method, url, bearer((method === 'GET' ? writer : reader).token));
        expectDeclaredError(key, 403, other, problems);
        if (!other.headers['www-authenticate']?.endsWith(`scope="${scope}"`))
          problems.push(`${key} 403 challenge: ${other.headers['www-authenticate']}`);
        const query = await raw(
          method,
          `${url}${url.includes('?') ? '&' : '?'}access_token=${client.token}`,
          bearer(client.token),
        );
        expectDeclaredError(key, 400, query, problems);
        if (query.body?.error !== 'invalid_request') problems.push(`${key} 400: ${JSON.stringify(query.body)}`);
      }
      expect(problems).toEqual([]);
    });

    it('a body that is not JSON is a 415 on every operation with a body, and one too large a 413', async () => {
      const problems: string[] = [];
      for (const key of Object.keys(BODIES)) {
        const [method, path] = key.split(' ');
        for (const type of ['application/x-www-form-urlencoded', 'application/xml']) {
          expectDeclaredError(
            key,
            415,
            await api.call(client, method, own(path), type.endsWith('xml') ? '<a/>' : 'a=1', { 'content-type': type }),
            problems,
          );
        }
      }
      const large = JSON.stringify({ name: 'x'.repeat(16 * 1024 * 1024), entity_type: 'llc' });
      expectDeclaredError(
        `POST ${V1}/entities`,
        413,
        await api.call(client, 'POST', '/entities', large, { 'content-type': 'application/json' }),
        problems,
      );
      expect(problems).toEqual([]);
    });

    it('an Idempotency-Key outside the declared rule is a 400 on every POST, and one reused with another body a 422', async () => {
      const problems: string[] = [];
      for (const { key } of operations().filter(({ key }) => key.startsWith('POST '))) {
        const path = withId(key.split(' ')[1], MISSING_ID);
        for (const bad of ['a b', 'k'.repeat(256)]) {
          const res = await api.call(client, 'POST', path, undefined, { 'idempotency-key': bad });
          expectDeclaredError(key, 400, res, problems);
          if (res.status === 400 && res.body.errors?.[0]?.field !== 'Idempotency-Key')
            problems.push(`${key} 400 does not name Idempotency-Key`);
        }
      }
      const idempotencyKey = { 'idempotency-key': `reuse-${Date.now()}` };
      expect(
        (await api.call(client, 'POST', '/entities', { name: 'First LLC', entity_type: 'llc' }, idempotencyKey)).status,
      ).toBe(201);
      const reused = await api.call(
        client,
        'POST',
        '/entities',
        { name: 'Second LLC', entity_type: 'llc' },
        idempotencyKey,
      );
      expectDeclaredError(`POST ${V1}/entities`, 422, reused, problems);
      expect(problems).toEqual([]);
    });

    it('cancelling an order that is not submitted is a 409', async () => {
      const problems: string[] = [];
      const order = await api.create(client, '/orders', { entity_id: ids.entities, order_type: 'annual_report' });
      expect((await api.call(client, 'POST', `/orders/${order.id}/cancel`, {})).status).toBe(200);
      expectDeclaredError(
        `POST ${V1}/orders/{id}/cancel`,
        409,
        await api.call(client, 'POST', `/orders/${order.id}/cancel`, {}),
        problems,
      );
      expect(problems).toEqual([]);
    });

    it('an unreachable event store is a 503 with Retry-After on a write and on a history read', async () => {
      const problems: string[] = [];
      const store = service.app.get<EventStore>(EVENT_STORE);
      const down = (streamId: string) => streamId.includes(ids.entities);
      const append = store.appendToStream.bind(store);
      const read = store.readStream.bind(store);
      const appendSpy = jest
        .spyOn(store, 'appendToStream')
        .mockImplementation((streamId, ...rest) =>
          down(streamId) ? Promise.reject(new EventStoreUnavailableError('down')) : append(streamId, ...rest),
        );
      try {
        expectDeclaredError(
          `PATCH ${V1}/entities/{id}`,
          503,
          await api.call(client, 'PATCH', own(`${V1}/entities/{id}`), { name: 'Unwritten LLC' }),
          problems,
        );
      } finally {
        appendSpy.mockRestore();
      }
      const readSpy = jest
        .spyOn(store, 'readStream')
        .mockImplementation((streamId, ...rest) =>
          down(streamId) ? Promise.reject(new EventStoreUnavailableError('down')) : read(streamId, ...rest),
        );
      try {
        expectDeclaredError(
          `GET ${V1}/entities/{id}/history`,
          503,
          await api.call(client, 'GET', own(`${V1}/entities/{id}/history`)),
          problems,
        );
      } finally {
        readSpy.mockRestore();
      }
      expect(problems).toEqual([]);
      expect((await api.call(client, 'GET', own(`${V1}/entities/{id}`))).body.name).not.toBe('Unwritten LLC');
    });
  });

  it('serves a browsable page at /docs', async () => {
    const res = await fetch(`${service.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('swagger-ui');
    // A file that is not there is a 404, not a 405 naming the methods of the /docs/* route.
    const missing = await fetch(`${service.url}/docs/no-such-file.js`);
    expect([missing.status, missing.headers.get('allow')]).toEqual([404, null]);
  });

  it('answers a method a path does not have with 405 and Allow', async () => {
    const { token } = await provisionAccount(service);
    const res = await fetch(`${service.url}/external-api/v1/webhook-event-types`, {
      method: 'DELETE',
      headers: bearer(token),
    });
    expect([res.status, res.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
  });
});
