/**
 * Tenant isolation across the whole external API (CONTRACT.md §1: "a resource of another account
 * is answered exactly like a missing one: 404"). The walk reads the service's own OpenAPI
 * document and calls EVERY operation with account B's token and account A's real ids: in the
 * path (404, with or without a stale If-Match), as list filters (an empty page), and as
 * references in create bodies (400 naming the field). Routes without an id show B its own,
 * empty, state. A's answers on every GET route are the same after the walk as before it, and
 * every event the walk appended is B's. An operation the walk does not know how to call fails
 * the test, so a new route cannot escape it.
 */
import { rmSync } from 'node:fs';
import { comparePositions, EVENT_STORE, type EventStore, type Position } from '@filing/event-store';
import { fromRecorded } from '@filing/platform';
import { expectProblem } from '../support/api';
import { bearer, provisionAccount, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { eventually } from '../support/webhooks';

const V1 = '/external-api/v1';
const EMPTY_PAGE = { data: [], next_cursor: null };

interface Operation {
  parameters?: { in: string; name: string }[];
  requestBody?: unknown;
  responses: Record<string, { content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }>;
}
interface Walked {
  readonly key: string;
  readonly method: string;
  readonly path: string;
  readonly op: Operation;
}
interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly text: string;
  readonly body: any;
}

/** A's resources, one of each kind, by the first path segment of the routes that take its id. */
type Owned = Record<
  | 'entities'
  | 'jurisdictions'
  | 'documents'
  | 'tasks'
  | 'orders'
  | 'webhook-endpoints'
  | 'webhook-deliveries'
  | 'events',
  string
>;

describe.each(['sqlite', 'esdb'] as const)(
  'tenant isolation over every published operation on the %s store',
  (eventStore) => {
    let pki: TestPki;
    let receiver: WebhookReceiver;
    let service: TestService;
    let a: ProvisionedClient & { accountId: string };
    let b: ProvisionedClient & { accountId: string };
    let owned: Owned;
    let operations: Walked[];

    const request = async (
      client: ProvisionedClient,
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const res = await fetch(`${service.url}${path}`, {
        method,
        headers: {
          ...bearer(client.token),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      const json = /json/.test(res.headers.get('content-type') ?? '') && text ? JSON.parse(text) : null;
      return { status: res.status, headers: Object.fromEntries(res.headers), text, body: json } satisfies Answer;
    };
    const created = async (client: ProvisionedClient, path: string, body: Record<string, unknown>): Promise<string> => {
      const res = await request(client, 'POST', `${V1}${path}`, body);
      if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${res.text}`);
      return res.body.id as string;
    };

    beforeAll(async () => {
      pki = makeTestPki('Isolation');
      // A receiver that refuses (400): A's delivery ends `failed` at once, so a redeliver that
      // wrongly reached it would show as a change.
      receiver = await startReceiver(pki);
      receiver.fallback = { status: 400 };
      service = await startService({
        eventStore,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_CA_FILE: pki.caFile },
      });
      [a, b] = await Promise.all([provisionAccount(service), provisionAccount(service)]);

      // A: a webhook endpoint for entity.created, enabled, the switch on; then one resource of each family.
      const endpoint = await created(a, '/webhook-endpoints', { url: receiver.url, event_types: ['entity.created'] });
      expect((await request(a, 'POST', `${V1}/webhook-endpoints/${endpoint}/enable`)).status).toBe(200);
      expect((await request(a, 'PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
      const entity = await created(a, '/entities', { name: 'Alpha LLC', entity_type: 'llc' });
      const order = await created(a, '/orders', { entity_id: entity, order_type: 'formation' });
      owned = {
        entities: entity,
        orders: order,
        jurisdictions: await created(a, '/jurisdictions', {
          entity_id: entity,
          code: 'US-DE',
          registration_type: 'domestic',
        }),
        tasks: await created(a, '/tasks', { entity_id: entity, title: 'File the annual report' }),
        documents: await created(a, '/documents', {
          entity_id: entity,
          order_id: order,
          title: 'Certificate of Formation',
          document_type: 'certificate',
          content_type: 'text/plain',
          content_base64: Buffer.from('Alpha only').toString('base64'),
        }),
        'webhook-endpoints': endpoint,
        'webhook-deliveries': await eventually(async () => {
          const res = await request(a, 'GET', `${V1}/webhook-endpoints/${endpoint}/deliveries?status=failed`);
          return res.body.data[0]?.id as string | undefined;
        }),
        // A's notification: GET /events/{id} (issue 50).
        events: (await request(a, 'GET', `${V1}/events`)).body.data[0].event_id as string,
      };

      const doc = (await (await fetch(`${service.url}${V1}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, Operation>>;
      };
      operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.entries(ops).map(([method, op]) => ({
          key: `${method.toUpperCase()} ${path}`,
          method: method.toUpperCase(),
          path,
          op,
        })),
      );
    }, 120_000);
    afterAll(async () => {
      await service?.destroy();
      await receiver?.close();
      if (pki) rmSync(pki.dir, { recursive: true, force: true });
    });

    /** `{id}` → A's id of that kind; undefined for a path the walk does not know. */
    const pathFor = (path: string): string | undefined => {
      const params = path.match(/\{[^}]+\}/g) ?? [];
      if (params.length === 0) return path;
      const kind = path.slice(V1.length + 1).split('/')[0] as keyof Owned;
      if (params.length !== 1 || params[0] !== '{id}' || !(kind in owned)) return undefined;
      return path.replace('{id}', owned[kind]);
    };
    /** A's ids as the list filters the operation declares. */
    const filtersFor = (op: Operation): string => {
      const ids: Record<string, string> = { entity_id: owned.entities, order_id: owned.orders };
      const query = (op.parameters ?? [])
        .filter((p) => p.in === 'query' && p.name in ids)
        .map((p) => `${p.name}=${ids[p.name]}`);
      return query.length > 0 ? `?${query.join('&')}` : '';
    };
    const isPage = (op: Operation) => {
      const ok = Object.entries(op.responses).find(([status]) => /^2/.test(status))?.[1];
      return Object.keys(ok?.content?.['application/json']?.schema.properties ?? {}).includes('next_cursor');
    };

    /** Valid bodies for writes on A's ids: only ownership can refuse them. */
    const idBodies = (): Record<string, unknown> => ({
      [`PATCH ${V1}/entities/{id}`]: { name: 'Taken by B' },
      [`PATCH ${V1}/jurisdictions/{id}`]: { status: 'inactive' },
      [`PATCH ${V1}/documents/{id}`]: { title: 'Taken by B' },
      [`PATCH ${V1}/tasks/{id}`]: { status: 'completed' },
      [`POST ${V1}/orders/{id}/cancel`]: { reason: 'B says so' },
      [`PATCH ${V1}/webhook-endpoints/{id}`]: { description: 'Taken by B' },
      [`POST ${V1}/webhook-endpoints/{id}/recover`]: { since: '2000-01-01T00:00:00.000Z' },
      [`POST ${V1}/webhook-endpoints/{id}/replay`]: { since: '2000-01-01T00:00:00.000Z' },
    });

    /** Routes without an id: what B sends and what it must get (its own state, or a 400 on A's references). */
    const otherRoutes = (): Record<string, { body?: unknown; expect: (res: Answer) => void }> => ({
      [`GET ${V1}/webhook-event-types`]: {
        expect: (res) =>
          expect({ status: res.status, count: res.body.data.length }).toEqual({ status: 200, count: 14 }),
      },
      [`GET ${V1}/webhook-settings`]: {
        expect: (res) => expect([res.status, res.body]).toEqual([200, { notifications_enabled: false }]),
      },
      [`PUT ${V1}/webhook-settings`]: {
        body: { notifications_enabled: false },
        expect: (res) => expect([res.status, res.body]).toEqual([200, { notifications_enabled: false }]),
      },
      [`POST ${V1}/entities`]: {
        body: { name: 'Beta LLC', entity_type: 'llc' },
        expect: (res) => expect(res.status).toBe(201),
      },
      [`POST ${V1}/webhook-endpoints`]: { body: { url: receiver.url }, expect: (res) => expect(res.status).toBe(201) },
      [`POST ${V1}/jurisdictions`]: {
        body: { entity_id: owned.entities, code: 'US-NY', registration_type: 'foreign' },
        expect: (res) => expectProblem(res, 400, ['entity_id']),
      },
      [`POST ${V1}/tasks`]: {
        body: { entity_id: owned.entities, title: 'B task' },
        expect: (res) => expectProblem(res, 400, ['entity_id']),
      },
      [`POST ${V1}/orders`]: {
        body: { entity_id: owned.entities, order_type: 'annual_report' },
        expect: (res) => expectProblem(res, 400, ['entity_id']),
      },
      [`POST ${V1}/documents`]: {
        body: {
          entity_id: owned.entities,
          order_id: owned.orders,
          title: 'B document',
          document_type: 'certificate',
          content_type: 'text/plain',
          content_base64: Buffer.from('B').toString('base64'),
        },
        expect: (res) => expectProblem(res, 400, ['entity_id', 'order_id']),
      },
    });

    /** What A sees on every GET route, with its ids and filters. */
    const snapshot = async () => {
      const seen: Record<string, { status: number; etag: string | null; text: string }> = {};
      for (const { key, method, path, op } of operations.filter((o) => o.method === 'GET')) {
        const res = await request(a, method, `${pathFor(path)}${filtersFor(op)}`);
        seen[key] = { status: res.status, etag: res.headers.etag ?? null, text: res.text };
      }
      return seen;
    };

    it('knows how to walk every operation of the document', () => {
      const ids = idBodies();
      const others = otherRoutes();
      const unknown = operations
        .filter(({ key, path, op }) => {
          const mapped = pathFor(path);
          if (mapped === undefined) return true;
          if (mapped === path) return !(key in others) && !(key.startsWith('GET ') && isPage(op));
          return op.requestBody !== undefined && !(key in ids);
        })
        .map(({ key }) => key);
      expect(unknown).toEqual([]);
      // Not vacuous: 42 operations, the five families and the webhooks among them.
      expect(operations.length).toBeGreaterThanOrEqual(42);
    });

    it("answers every operation on A's ids with 404 (or an empty page), gives B only its own state, and leaves A untouched", async () => {
      const store = service.app.get<EventStore>(EVENT_STORE);
      const before = await snapshot();
      // A sees its own resources on every GET route (so the comparison below is not of 404s).
      expect(Object.entries(before).filter(([, seen]) => seen.status !== 200)).toEqual([]);
      for (const key of [
        `GET ${V1}/jurisdictions`,
        `GET ${V1}/documents`,
        `GET ${V1}/webhook-endpoints/{id}/deliveries`,
      ]) {
        expect([key, JSON.parse(before[key].text).data.length]).toEqual([key, 1]);
      }
      const head = (await store.headPosition()) as Position;
      const aIds = [a.accountId, ...Object.values(owned)];

      const ids = idBodies();
      const others = otherRoutes();
      const failures: string[] = [];
      // Reads first, so B's lists are looked at before B creates anything of its own.
      const ordered = [
        ...operations.filter((o) => o.method === 'GET'),
        ...operations.filter((o) => o.method !== 'GET'),
      ];
      for (const { key, method, path, op } of ordered) {
        const mapped = pathFor(path)!;
        const attempts: Answer[] = [];
        try {
          if (mapped !== path) {
            attempts.push(await request(b, method, mapped, ids[key]));
            // A stale If-Match must not turn the 404 into a 412 (that would tell B the id exists).
            if (method !== 'GET') attempts.push(await request(b, method, mapped, ids[key], { 'if-match': '"99"' }));
            for (const res of attempts) expectProblem(res, 404);
          } else if (key in others) {
            attempts.push(await request(b, method, path, others[key].body));
            others[key].expect(attempts[0]);
          } else {
            attempts.push(await request(b, method, `${path}${filtersFor(op)}`));
            expect([attempts[0].status, attempts[0].body]).toEqual([200, EMPTY_PAGE]);
          }
          // Whatever B got, none of A's ids is in a successful answer.
          for (const res of attempts.filter((r) => r.status < 300))
            expect(aIds.filter((id) => res.text.includes(id))).toEqual([]);
        } catch (err) {
          failures.push(
            `${key}: ${attempts.map((r) => `${r.status} ${r.text.slice(0, 300)}`).join(' | ')}\n${(err as Error).message}`,
          );
        }
      }
      expect(failures).toEqual([]);

      expect(await snapshot()).toEqual(before);
      const appended = (await store.readAll({ from: head, maxCount: 10_000 }))
        .filter((e) => comparePositions(e.position, head) > 0)
        .map((e) => ({ stream: e.streamId, type: e.type, account: fromRecorded(e).metadata.account_id }));
      // B's own writes only (its entity, endpoint, maybe its settings), nothing on A's streams.
      expect(appended.filter((e) => e.account !== b.accountId || aIds.some((id) => e.stream.includes(id)))).toEqual([]);
      expect(appended.length).toBeGreaterThan(0);
    });
  },
);
