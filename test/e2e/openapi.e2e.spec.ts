/**
 * The published OpenAPI document (/external-api/v1/openapi.json) is complete enough to generate a
 * client from: every operation declares its success answer, every write its body, every
 * collection its filters and page parameters, with the field lists of CONTRACT.md §3–§4; and the
 * real answers have exactly the fields the document declares.
 */
import { resourceApi } from '../support/api';
import { provisionAccount, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Schema = { $ref?: string; type?: string; properties?: Record<string, Schema>; items?: Schema; required?: string[]; [k: string]: any };
interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
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
  [`POST ${V1}/webhook-endpoints`]: ['url', 'description', 'event_types'],
  [`PATCH ${V1}/webhook-endpoints/{id}`]: ['url', 'description', 'event_types'],
  [`PUT ${V1}/webhook-settings`]: ['notifications_enabled'],
};

const RESOURCE = ['id', 'created_at', 'updated_at', 'version'];
const ENDPOINT = [...RESOURCE, 'url', 'description', 'event_types', 'enabled'];
const DELIVERY = ['id', 'event_id', 'event_type', 'endpoint_id', 'status', 'attempt_count', 'last_attempt_at', 'next_attempt_at', 'created_at'];

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
};

/** Page items with exactly these fields. */
const ITEMS: Record<string, string[]> = {
  [`GET ${V1}/webhook-endpoints`]: ENDPOINT,
  [`GET ${V1}/webhook-endpoints/{id}/deliveries`]: DELIVERY,
  [`GET ${V1}/entities/{id}/history`]: ['type', 'occurred_at', 'actor', 'data'],
};

const sorted = (list: readonly string[]) => [...list].sort();

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
    Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op })));
  const operation = (key: string): Operation => {
    const found = operations().find((o) => o.key === key);
    if (!found) throw new Error(`The document has no operation ${key}`);
    return found.op;
  };
  /** The schema itself, following a $ref. */
  const resolve = (schema: Schema): Schema => (schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema);
  const fieldsOf = (schema: Schema | undefined) => sorted(Object.keys(schema ? (resolve(schema).properties ?? {}) : {}));
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
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
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
    expect(sorted(writes.map(({ key }) => key).filter((key) => !withBody.includes(key)))).toEqual(sorted(BODYLESS_POSTS));
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
      expect([key, schema.properties!.data.type, fieldsOf(schema.properties!.data.items).length > 0]).toEqual([key, 'array', true]);
      expect(schema.properties!.next_cursor).toMatchObject({ type: 'string', nullable: true });
    }
  });

  it('describes the webhook answers with exactly the fields of CONTRACT.md §4', () => {
    for (const [key, fields] of Object.entries(ANSWERS)) expect([key, fieldsOf(answerSchema(key))]).toEqual([key, sorted(fields)]);
    for (const [key, fields] of Object.entries(ITEMS)) {
      expect([key, fieldsOf(resolve(answerSchema(key)!).properties!.data.items)]).toEqual([key, sorted(fields)]);
    }
    const detail = resolve(answerSchema(`GET ${V1}/webhook-deliveries/{id}`)!);
    expect(fieldsOf(detail.properties!.attempts.items)).toEqual(sorted(['attempted_at', 'status_code', 'error', 'duration_ms']));
    expect(detail.properties!.status.enum).toEqual(['pending', 'delivered', 'failed', 'cancelled']);
    const catalog = resolve(answerSchema(`GET ${V1}/webhook-event-types`)!);
    expect(fieldsOf(catalog.properties!.data.items)).toEqual(['category', 'label', 'name']);
    const deliveries = operation(`GET ${V1}/webhook-endpoints/{id}/deliveries`).parameters!.find((p) => p.name === 'status') as any;
    expect(deliveries.schema.enum).toEqual(['pending', 'delivered', 'failed', 'cancelled']);
  });

  it('describes each resource with id, times and version and every field its create body sets', () => {
    const families = ['entities', 'jurisdictions', 'documents', 'tasks', 'orders'];
    for (const family of families) {
      const resource = answerSchema(`GET ${V1}/${family}/{id}`)!;
      const written = BODIES[`POST ${V1}/${family}`].filter((f) => f !== 'content_base64');
      expect([family, fieldsOf(resource)]).toEqual([family, expect.arrayContaining([...RESOURCE, ...written, ...(family === 'documents' ? [] : ['status'])])]);
      // The same schema for the answer of every operation on one resource.
      for (const key of [`POST ${V1}/${family}`, `PATCH ${V1}/${family}/{id}`, `POST ${V1}/${family}/{id}/cancel`]) {
        if (operations().some((o) => o.key === key)) expect([key, answerSchema(key)]).toEqual([key, resource]);
      }
      expect(answerSchema(`GET ${V1}/${family}`)!.properties!.data.items).toEqual(resource);
    }
  });

  it('refers only to schemas it contains, and contains only schemas it refers to', () => {
    const refs = new Set<string>();
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (typeof node !== 'object' || node === null) return;
      for (const [k, v] of Object.entries(node)) if (k === '$ref') refs.add(String(v).split('/').pop()!);
      else visit(v);
    };
    visit(doc.paths);
    visit(doc.components.schemas);
    expect(sorted([...refs])).toEqual(sorted(Object.keys(doc.components.schemas)));
  });

  describe('the real answers', () => {
    const api = resourceApi(() => service);
    let client: ProvisionedClient;
    beforeAll(async () => {
      client = await provisionAccount(service);
    });

    /** The JSON answer has exactly the fields its schema declares. */
    const expectDeclared = (key: string, body: Record<string, unknown>, schema: Schema | undefined = answerSchema(key)) =>
      expect([key, sorted(Object.keys(body))]).toEqual([key, fieldsOf(schema)]);

    it('have exactly the declared fields, resource by resource', async () => {
      const entity = await api.call(client, 'POST', '/entities', { name: 'Declared LLC', entity_type: 'llc' });
      expectDeclared(`POST ${V1}/entities`, entity.body);
      const id = entity.body.id as string;
      const order = await api.call(client, 'POST', '/orders', { entity_id: id, order_type: 'formation' });
      const created: [string, Record<string, unknown>][] = [
        ['entities', entity.body],
        ['jurisdictions', (await api.call(client, 'POST', '/jurisdictions', { entity_id: id, code: 'US-DE', registration_type: 'domestic' })).body],
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
        expectDeclared(`GET ${V1}/${family}`, list.body.data[0], answerSchema(`GET ${V1}/${family}`)!.properties!.data.items);
        const history = await api.call(client, 'GET', `/${family}/${resource.id}/history`);
        expectDeclared(`GET ${V1}/${family}/{id}/history`, history.body.data[0], answerSchema(`GET ${V1}/${family}/{id}/history`)!.properties!.data.items);
      }

      const endpoint = await api.call(client, 'POST', '/webhook-endpoints', { url: 'https://127.0.0.1:9/hook' });
      expect(endpoint.status).toBe(201);
      expectDeclared(`POST ${V1}/webhook-endpoints`, endpoint.body);
      expectDeclared(`GET ${V1}/webhook-endpoints/{id}`, (await api.call(client, 'GET', `/webhook-endpoints/${endpoint.body.id}`)).body);
      expectDeclared(`GET ${V1}/webhook-endpoints/{id}/secret`, (await api.call(client, 'GET', `/webhook-endpoints/${endpoint.body.id}/secret`)).body);
      expectDeclared(`GET ${V1}/webhook-settings`, (await api.call(client, 'GET', '/webhook-settings')).body);
      const catalog = await api.call(client, 'GET', '/webhook-event-types');
      expectDeclared(`GET ${V1}/webhook-event-types`, catalog.body.data[0], resolve(answerSchema(`GET ${V1}/webhook-event-types`)!).properties!.data.items);
    });
  });

  it('serves a browsable page at /docs', async () => {
    const res = await fetch(`${service.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toContain('swagger-ui');
  });
});
