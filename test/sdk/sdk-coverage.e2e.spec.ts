/**
 * The SDK has a method for every operation the real service publishes, and no other: every SDK
 * method is called once against a recording fetch, and the (method, path) pairs it sends must
 * equal the operations of the service's own OpenAPI document (/external-api/v1/openapi.json).
 * Where that document declares query parameters or body fields, the SDK's filter and body types
 * (all fields filled in, which the compiler checks through `Required<…>`) send exactly those.
 */
import {
  type CreateDocument,
  type CreateEntity,
  type CreateJurisdiction,
  type CreateOrder,
  type CreateTask,
  type DocumentFilters,
  type EntityFilters,
  type EventFilters,
  FilingClient,
  type JurisdictionFilters,
  type OrderFilters,
  type PageParams,
  type CancelOrder,
  type RecoverDeliveries,
  type ReplayNotifications,
  type TaskFilters,
  type UpdateDocument,
  type UpdateEntity,
  type UpdateJurisdiction,
  type UpdateTask,
  type UpdateWebhookEndpoint,
  type CreateWebhookEndpoint,
  type WebhookDeliveryFilters,
  collect,
} from '@filing/client';
import { startService, type TestService } from '../support/service';

interface Sent {
  readonly op: string;
  readonly query: string[];
  readonly body: string[];
}

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { in: string; name: string }[];
        requestBody?: { content: Record<string, { schema: { $ref?: string } }> };
      }
    >
  >;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
}

const ID = '0193a2b4-0000-7000-8000-0000000000aa';
const V1 = '/external-api/v1';
const page: Required<PageParams> = { limit: 10, cursor: 'c' };
const entityFilters: Required<EntityFilters> = { ...page, status: 'active', entity_type: 'llc', q: 'acme' };
const jurisdictionFilters: Required<JurisdictionFilters> = { ...page, entity_id: ID, status: 'active' };
const taskFilters: Required<TaskFilters> = { ...page, entity_id: ID, status: 'open' };
const orderFilters: Required<OrderFilters> = { ...page, entity_id: ID, status: 'submitted' };
const documentFilters: Required<DocumentFilters> = { ...page, entity_id: ID, order_id: ID };
const deliveryFilters: Required<WebhookDeliveryFilters> = { ...page, status: 'failed' };
const eventFilters: Required<EventFilters> = {
  ...page,
  event_type: ['entity.created', 'order.completed'],
  after_event_id: ID,
};
const recover: Required<RecoverDeliveries> = { since: '2026-11-22T10:00:00.000Z' };
const replay: Required<ReplayNotifications> = {
  since: '2026-11-22T10:00:00.000Z',
  until: '2026-11-23T10:00:00.000Z',
};
const createEntity: Required<CreateEntity> = {
  name: 'n',
  entity_type: 'llc',
  formation_jurisdiction: 'US-DE',
  formation_date: '2020-01-01',
};
const updateEntity: Required<UpdateEntity> = {
  name: 'n',
  status: 'active',
  formation_jurisdiction: null,
  formation_date: null,
};
const createJurisdiction: Required<CreateJurisdiction> = {
  entity_id: ID,
  code: 'US-DE',
  registration_type: 'domestic',
};
const updateJurisdiction: Required<UpdateJurisdiction> = { registration_type: 'foreign', status: 'active' };
const createTask: Required<CreateTask> = { entity_id: ID, title: 't', description: 'd', due_date: '2027-01-01' };
const updateTask: Required<UpdateTask> = { title: 't', description: null, due_date: null, status: 'completed' };
const createOrder: Required<CreateOrder> = {
  entity_id: ID,
  order_type: 'formation',
  jurisdiction_code: 'US-DE',
  details: {},
};
const cancelOrder: Required<CancelOrder> = { reason: 'r' };
const createDocument: Required<CreateDocument> = {
  entity_id: ID,
  order_id: ID,
  title: 't',
  document_type: 'd',
  content_type: 'text/plain',
  content_base64: 'eA==',
};
const updateDocument: Required<UpdateDocument> = { title: 't', document_type: 'd' };
const createEndpoint: Required<CreateWebhookEndpoint> = {
  url: 'https://example.com/h',
  description: 'd',
  event_types: [],
  rate_limit_per_second: 5,
};
const updateEndpoint: Required<UpdateWebhookEndpoint> = {
  url: 'https://example.com/h',
  description: null,
  event_types: [],
  rate_limit_per_second: null,
};

/** Every SDK operation, called once. */
async function callEverything(c: FilingClient): Promise<void> {
  await c.entities.create(createEntity);
  await c.entities.list(entityFilters);
  await c.entities.get(ID);
  await c.entities.update(ID, updateEntity);
  await c.entities.history(ID, page);
  await c.jurisdictions.create(createJurisdiction);
  await c.jurisdictions.list(jurisdictionFilters);
  await c.jurisdictions.get(ID);
  await c.jurisdictions.update(ID, updateJurisdiction);
  await c.jurisdictions.history(ID, page);
  await c.tasks.create(createTask);
  await c.tasks.list(taskFilters);
  await c.tasks.get(ID);
  await c.tasks.update(ID, updateTask);
  await c.tasks.history(ID, page);
  await c.orders.create(createOrder);
  await c.orders.list(orderFilters);
  await c.orders.get(ID);
  await c.orders.cancel(ID, cancelOrder);
  await c.orders.history(ID, page);
  await c.documents.create(createDocument);
  await c.documents.list(documentFilters);
  await c.documents.get(ID);
  await c.documents.update(ID, updateDocument);
  await c.documents.delete(ID);
  await c.documents.content(ID);
  await c.documents.history(ID, page);
  await c.webhookEventTypes.list();
  await c.webhookEndpoints.create(createEndpoint);
  await c.webhookEndpoints.list(page);
  await c.webhookEndpoints.get(ID);
  await c.webhookEndpoints.update(ID, updateEndpoint);
  await c.webhookEndpoints.delete(ID);
  await c.webhookEndpoints.enable(ID);
  await c.webhookEndpoints.disable(ID);
  await c.webhookEndpoints.rotateSecret(ID);
  await c.webhookEndpoints.secret(ID);
  await c.webhookEndpoints.deliveries(ID, deliveryFilters);
  await c.webhookEndpoints.recover(ID, recover);
  await c.webhookEndpoints.replay(ID, replay);
  await c.webhookEndpoints.stats(ID);
  await c.events.list(eventFilters);
  await c.events.get(ID);
  await c.webhookDeliveries.get(ID);
  await c.webhookDeliveries.redeliver(ID);
  await c.webhookSettings.get();
  await c.webhookSettings.update({ notifications_enabled: true });
  // The iterators use the same routes as list/history/deliveries.
  await collect(c.entities.listAll({ status: 'active' }));
  await collect(c.orders.historyAll(ID));
  await collect(c.webhookEndpoints.deliveriesAll(ID));
  await collect(c.webhookEndpoints.listAll());
  await collect(c.events.listAll({ event_type: 'task.created' }));
}

function recordingClient(): { client: FilingClient; sent: Sent[] } {
  const sent: Sent[] = [];
  const client = new FilingClient({
    baseUrl: 'https://api.example.test',
    clientId: 'id',
    clientSecret: 'secret',
    fetch: async (input, init) => {
      const url = new URL(input);
      if (url.pathname === '/o/token/')
        return Response.json({ access_token: 't', token_type: 'Bearer', expires_in: 3600 });
      const path = url.pathname.replaceAll(ID, '{id}');
      sent.push({
        op: `${init.method} ${path}`,
        query: [...url.searchParams.keys()].sort(),
        body: typeof init.body === 'string' ? Object.keys(JSON.parse(init.body) as object).sort() : [],
      });
      if (init.method === 'DELETE') return new Response(null, { status: 204 });
      if (path.endsWith('/content')) return new Response('bytes', { headers: { 'content-type': 'text/plain' } });
      return Response.json({ data: [], next_cursor: null });
    },
  });
  return { client, sent };
}

describe('SDK coverage of the published API', () => {
  let service: TestService;
  let doc: OpenApi;

  beforeAll(async () => {
    service = await startService();
    const res = await fetch(`${service.url}${V1}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as OpenApi;
  });
  afterAll(async () => {
    await service?.destroy();
  });

  const published = () =>
    Object.entries(doc.paths)
      .filter(([path]) => path.startsWith(V1))
      .flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({ op: `${method.toUpperCase()} ${path}`, spec: op })),
      );

  it('has a method for every operation of /external-api/v1, and none the service does not have', async () => {
    const { client, sent } = recordingClient();
    await callEverything(client);
    const sdkOps = [...new Set(sent.map((s) => s.op))].sort();
    expect(sdkOps).toEqual(
      published()
        .map((p) => p.op)
        .sort(),
    );
    expect(sdkOps).toHaveLength(47);
  });

  it('sends exactly the query parameters and body fields the service declares', async () => {
    const { client, sent } = recordingClient();
    await callEverything(client);
    let compared = 0;
    for (const { op, spec } of published()) {
      const call = sent.find((s) => s.op === op)!;
      const declared = (spec.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      const query = [...declared].sort();
      if (query.length > 0) {
        expect([op, call.query]).toEqual([op, query]);
        compared += 1;
      }
      const ref = spec.requestBody?.content['application/json']?.schema.$ref;
      const fields = ref ? Object.keys(doc.components.schemas[ref.split('/').pop()!].properties ?? {}).sort() : [];
      if (fields.length > 0) {
        expect([op, call.body]).toEqual([op, fields]);
        compared += 1;
      }
    }
    // 5 collections, 5 histories, endpoint list and deliveries (query); 5 creates, 4 PATCHes, cancel,
    // endpoint create and PATCH, settings PUT, recover (body); events (query).
    expect(compared).toBeGreaterThanOrEqual(27);
  });
});
