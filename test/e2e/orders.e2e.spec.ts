/**
 * The orders family over real HTTP, on both event stores: submit, read, list, cancel (customer),
 * complete (operator API), the lifecycle's refusals (409 naming the status, nothing appended),
 * If-Match, Idempotency-Key, history, references, tenant isolation and a table of bad inputs.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { ReferenceChecker, ValidationError } from '@filing/platform';
import {
  type Answer,
  type BadInput,
  commonBadInputs,
  expectProblem,
  expectRefusedWithoutEvents,
  ISO_MS,
  MISSING_ID,
  type Resource,
  resourceApi,
  UUID_V7,
} from '../support/api';
import { bearer, provisionAccount, provisionOperator, type ProvisionedClient } from '../support/auth';
import { expectRebuildEqualsLive } from '../support/family';
import { startService, type TestService } from '../support/service';

interface Order extends Resource {
  readonly entity_id: string;
  readonly status: string;
}

describe.each(['sqlite', 'esdb'] as const)('orders over HTTP on the %s store', (eventStore) => {
  let service: TestService;
  let store: EventStore;
  let owner: ProvisionedClient;
  let other: ProvisionedClient;
  let operator: ProvisionedClient;
  /** An entity of `owner`, and one of `other`. */
  let entityId: string;
  let otherEntityId: string;

  const api = resourceApi(() => service);
  const { call, create, walk } = api;

  beforeAll(async () => {
    service = await startService({ eventStore });
    store = service.app.get<EventStore>(EVENT_STORE);
    [owner, other, operator] = await Promise.all([
      provisionAccount(service),
      provisionAccount(service),
      provisionOperator(service),
    ]);
    [entityId, otherEntityId] = await Promise.all(
      [owner, other].map(
        async (client) => (await create(client, '/entities', { name: 'Acme LLC', entity_type: 'llc' })).id,
      ),
    );
  }, 60_000);
  afterAll(async () => service?.destroy());

  const submitOrder = (client: ProvisionedClient, fields: Record<string, unknown> = {}, entity = entityId) =>
    create<Order>(client, '/orders', { entity_id: entity, order_type: 'formation', ...fields });

  /** `POST /internal-api/v1/orders/{id}/complete` with the operator's token (or another). */
  async function complete(id: string, headers: Record<string, string> = {}, token = operator.token): Promise<Answer> {
    const res = await fetch(`${service.url}/internal-api/v1/orders/${id}/complete`, {
      method: 'POST',
      headers: { ...bearer(token), ...headers },
    });
    const text = await res.text();
    return { status: res.status, headers: Object.fromEntries(res.headers), body: text ? JSON.parse(text) : null };
  }

  const historyTypes = async (id: string) =>
    (await call(owner, 'GET', `/orders/${id}/history`)).body.data.map((e: { type: string }) => e.type);

  describe('submit and read', () => {
    it('POST answers 201 with Location, ETag and the submitted order; GET and the list show it at once', async () => {
      const res = await call(owner, 'POST', '/orders', { entity_id: entityId, order_type: 'annual_report' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID_V7),
        entity_id: entityId,
        order_type: 'annual_report',
        jurisdiction_code: null,
        details: {},
        status: 'submitted',
        cancellation_reason: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: res.body.created_at,
        version: 0,
      });
      expect(res.headers.location).toBe(`/external-api/v1/orders/${res.body.id}`);
      expect(res.headers.etag).toBe('"0"');

      // Read-your-writes: the very next requests see it.
      const got = await fetch(`${service.url}${res.headers.location}`, { headers: bearer(owner.token) });
      expect(got.status).toBe(200);
      expect(got.headers.get('etag')).toBe('"0"');
      expect(await got.json()).toEqual(res.body);
      expect((await call(owner, 'GET', '/orders?limit=200')).body.data).toContainEqual(res.body);
    });

    it('keeps the jurisdiction code and the details object as sent', async () => {
      const details = {
        state_filing_number: '7654321',
        officers: [{ name: 'Ann Ö', share: 0.5 }],
        rush: true,
        note: null,
      };
      const order = await submitOrder(owner, {
        order_type: 'foreign_qualification',
        jurisdiction_code: 'US-NY',
        details,
      });
      expect(order).toMatchObject({ order_type: 'foreign_qualification', jurisdiction_code: 'US-NY', details });
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(order);
    });

    it('accepts every order type of the contract', async () => {
      const types = [
        'formation',
        'annual_report',
        'registered_agent',
        'amendment',
        'dissolution',
        'foreign_qualification',
        'certificate_of_good_standing',
        'other',
      ];
      const orders = await Promise.all(types.map((order_type) => submitOrder(owner, { order_type })));
      expect(orders.map((o) => o.order_type)).toEqual(types);
    });

    it("answers 400 naming entity_id for an unknown entity or another account's, appending nothing", async () => {
      const before = await store.headPosition();
      expectProblem(await call(owner, 'POST', '/orders', { entity_id: MISSING_ID, order_type: 'formation' }), 400, [
        'entity_id',
      ]);
      const res = await call(owner, 'POST', '/orders', { entity_id: otherEntityId, order_type: 'formation' });
      expectProblem(res, 400, ['entity_id']);
      expect(res.body.errors[0].message).toContain(otherEntityId);
      expect(await store.headPosition()).toEqual(before);
    });

    it('GET answers 400 naming id for a bad UUID and 404 for an unknown one', async () => {
      expectProblem(await call(owner, 'GET', '/orders/not-a-uuid'), 400, ['id']);
      expectProblem(await call(owner, 'GET', `/orders/${MISSING_ID}`), 404);
    });
  });

  describe('list', () => {
    let lister: ProvisionedClient;
    let entities: string[];
    let made: Order[];

    beforeAll(async () => {
      lister = await provisionAccount(service);
      entities = [];
      for (const name of ['One LLC', 'Two LLC'])
        entities.push((await create(lister, '/entities', { name, entity_type: 'llc' })).id);
      made = [];
      // One at a time: ids are time-ordered, so this is also the list order.
      for (const entity of [entities[0], entities[1], entities[0], entities[0], entities[1]])
        made.push(await submitOrder(lister, {}, entity));
      expect((await call(lister, 'POST', `/orders/${made[1].id}/cancel`)).status).toBe(200);
      expect((await complete(made[2].id)).status).toBe(200);
    });

    const ids = (res: Answer) => res.body.data.map((o: Order) => o.id);

    it("lists the account's orders oldest first, with next_cursor null at the end", async () => {
      const res = await call(lister, 'GET', '/orders');
      expect(res.status).toBe(200);
      expect(res.body.next_cursor).toBeNull();
      expect(ids(res)).toEqual(made.map((o) => o.id));
      expect(res.body.data.map((o: Order) => o.status)).toEqual([
        'submitted',
        'cancelled',
        'completed',
        'submitted',
        'submitted',
      ]);
    });

    it('filters by entity_id and status, alone and together', async () => {
      const [a, b, c, d, e] = made.map((o) => o.id);
      expect(ids(await call(lister, 'GET', `/orders?entity_id=${entities[0]}`))).toEqual([a, c, d]);
      expect(ids(await call(lister, 'GET', `/orders?entity_id=${entities[1].toUpperCase()}`))).toEqual([b, e]);
      expect(ids(await call(lister, 'GET', '/orders?status=submitted'))).toEqual([a, d, e]);
      expect(ids(await call(lister, 'GET', '/orders?status=cancelled'))).toEqual([b]);
      expect(ids(await call(lister, 'GET', `/orders?status=completed&entity_id=${entities[0]}`))).toEqual([c]);
      expect(ids(await call(lister, 'GET', `/orders?status=completed&entity_id=${entities[1]}`))).toEqual([]);
      expect(ids(await call(lister, 'GET', `/orders?entity_id=${MISSING_ID}`))).toEqual([]);
    });

    it('pages with opaque cursors: every order once, in order, across pages, with filters kept', async () => {
      const { items, pages } = await walk<Order>(lister, '/orders', 2);
      expect(pages).toBe(3);
      expect(items.map((o) => o.id)).toEqual(made.map((o) => o.id));
      const filtered = await walk<Order>(lister, '/orders?status=submitted', 1);
      expect(filtered.items.map((o) => o.id)).toEqual([made[0], made[3], made[4]].map((o) => o.id));
    });

    it('answers 400 naming each bad filter, limit or cursor', async () => {
      expectProblem(await call(lister, 'GET', '/orders?status=open&entity_id=x&limit=0&cursor=x'), 400, [
        'cursor',
        'entity_id',
        'limit',
        'status',
      ]);
      const entitiesCursor = (await call(lister, 'GET', '/entities?limit=1')).body.next_cursor;
      expectProblem(await call(lister, 'GET', `/orders?cursor=${entitiesCursor}`), 400, ['cursor']);
    });
  });

  describe('cancel (customer)', () => {
    it('cancels a submitted order with a reason: 200 with the order, new version and ETag; GET shows it at once', async () => {
      const order = await submitOrder(owner);
      const res = await call(owner, 'POST', `/orders/${order.id}/cancel`, { reason: 'Filed elsewhere' });
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe('"1"');
      expect(res.body).toEqual({
        ...order,
        status: 'cancelled',
        cancellation_reason: 'Filed elsewhere',
        updated_at: expect.stringMatching(ISO_MS),
        version: 1,
      });
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(res.body);
    });

    it('takes no body (also with Content-Type: application/json, as many clients send it), an empty object, or a null reason', async () => {
      for (const [body, headers] of [
        [undefined],
        ['', { 'content-type': 'application/json' }],
        [{}],
        [{ reason: null }],
      ] as const) {
        const order = await submitOrder(owner);
        const res = await call(owner, 'POST', `/orders/${order.id}/cancel`, body, headers);
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ status: 'cancelled', cancellation_reason: null });
      }
    });

    it('honours If-Match: another version is 412 and changes nothing; the current one passes', async () => {
      const order = await submitOrder(owner);
      expectProblem(await call(owner, 'POST', `/orders/${order.id}/cancel`, {}, { 'if-match': '"3"' }), 412);
      expectProblem(await call(owner, 'POST', `/orders/${order.id}/cancel`, {}, { 'if-match': 'nope' }), 400, [
        'If-Match',
      ]);
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(order);
      expect((await call(owner, 'POST', `/orders/${order.id}/cancel`, {}, { 'if-match': 'W/"0"' })).body).toMatchObject(
        { status: 'cancelled', version: 1 },
      );
    });

    it('replays a cancel sent again with the same Idempotency-Key instead of answering 409', async () => {
      const order = await submitOrder(owner);
      const key = `cancel-${order.id}`;
      const first = await call(
        owner,
        'POST',
        `/orders/${order.id}/cancel`,
        { reason: 'Twice' },
        { 'idempotency-key': key },
      );
      const again = await call(
        owner,
        'POST',
        `/orders/${order.id}/cancel`,
        { reason: 'Twice' },
        { 'idempotency-key': key },
      );
      expect(first.status).toBe(200);
      expect(again).toMatchObject({ status: 200, body: first.body, headers: { 'idempotent-replayed': 'true' } });
      expectProblem(await call(owner, 'POST', `/orders/${order.id}/cancel`, { reason: 'Twice' }), 409);
      expect(await historyTypes(order.id)).toEqual(['OrderSubmitted', 'OrderCancelled']);
    });
  });

  describe('complete (operator)', () => {
    it('completes a submitted order: 200 with the order and its account; the customer sees it at once', async () => {
      const order = await submitOrder(owner);
      const res = await complete(order.id);
      expect(res.status).toBe(200);
      expect(res.headers.etag).toBe('"1"');
      expect(res.body).toEqual({
        ...order,
        account_id: owner.accountId,
        status: 'completed',
        updated_at: expect.stringMatching(ISO_MS),
        version: 1,
      });
      const { account_id: _, ...view } = res.body;
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(view);
      expect((await call(owner, 'GET', '/orders?status=completed')).body.data).toContainEqual(view);
    });

    it('takes no body: fields sent to it are a 400 naming each, and change nothing; {} is fine', async () => {
      const order = await submitOrder(owner);
      const send = (body: string) =>
        fetch(`${service.url}/internal-api/v1/orders/${order.id}/complete`, {
          method: 'POST',
          headers: { ...bearer(operator.token), 'content-type': 'application/json' },
          body,
        });
      const refused = await send('{"status":"cancelled","bogus":1}');
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual([
        'status',
        'bogus',
      ]);
      expect((await send('[1]')).status).toBe(400);
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(order);
      expect((await send('{}')).status).toBe(200);
    });

    it('honours If-Match', async () => {
      const order = await submitOrder(owner);
      expectProblem(await complete(order.id, { 'if-match': '"1"' }), 412);
      expect((await complete(order.id, { 'if-match': '"0"' })).status).toBe(200);
    });

    it('is for operator tokens only, and answers 404 for an unknown order and 400 for a bad id', async () => {
      const order = await submitOrder(owner);
      const refused = await complete(order.id, {}, owner.token);
      expect(refused.status).toBe(403);
      expect(refused.headers['www-authenticate']).toContain('scope="operator"');
      // Operators have no account: the customer API is not theirs.
      expect((await call(operator, 'POST', `/orders/${order.id}/cancel`)).status).toBe(403);
      expectProblem(await complete(MISSING_ID), 404);
      expectProblem(await complete('123'), 400, ['id']);
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(order);
    });
  });

  describe('lifecycle refusals', () => {
    const refusals: [from: 'cancelled' | 'completed', action: 'cancel' | 'complete'][] = [
      ['cancelled', 'cancel'],
      ['cancelled', 'complete'],
      ['completed', 'cancel'],
      ['completed', 'complete'],
    ];

    it.each(refusals)('a %s order refuses %s with 409 naming its status, appending nothing', async (from, action) => {
      const order = await submitOrder(owner);
      const moved =
        from === 'cancelled' ? await call(owner, 'POST', `/orders/${order.id}/cancel`) : await complete(order.id);
      expect(moved.status).toBe(200);
      const before = await store.headPosition();
      const res =
        action === 'cancel'
          ? await call(owner, 'POST', `/orders/${order.id}/cancel`, { reason: 'again' })
          : await complete(order.id);
      expectProblem(res, 409);
      expect(res.body.detail).toBe(`Cannot ${action} an order whose status is ${from}`);
      expect(await store.headPosition()).toEqual(before);
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toMatchObject({ status: from, version: 1 });
    });

    it('lets one of a concurrent cancel and complete win; the other is 409', async () => {
      const order = await submitOrder(owner);
      const answers = await Promise.all([call(owner, 'POST', `/orders/${order.id}/cancel`), complete(order.id)]);
      expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
      const winner = answers.find((a) => a.status === 200)!;
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body.status).toBe(winner.body.status);
      expect(await historyTypes(order.id)).toHaveLength(2);
    });
  });

  describe('history', () => {
    it("lists the order's own events oldest first with type, time, actor and data, paginated", async () => {
      const order = await submitOrder(owner, { details: { a: 1 } });
      await complete(order.id);
      const res = await call(owner, 'GET', `/orders/${order.id}/history`);
      expect(res.body).toEqual({
        data: [
          {
            type: 'OrderSubmitted',
            occurred_at: order.created_at,
            actor: `client:${owner.clientId}`,
            data: {
              order_id: order.id,
              entity_id: entityId,
              order_type: 'formation',
              jurisdiction_code: null,
              details: { a: 1 },
              status: 'submitted',
              cancellation_reason: null,
            },
          },
          {
            type: 'OrderCompleted',
            occurred_at: expect.stringMatching(ISO_MS),
            actor: `operator:${operator.clientId}`,
            data: expect.objectContaining({ order_id: order.id, entity_id: entityId, status: 'completed' }),
          },
        ],
        next_cursor: null,
      });
      const { items, pages } = await walk(owner, `/orders/${order.id}/history`, 1);
      expect(pages).toBe(2);
      expect(items).toEqual(res.body.data);
      expectProblem(await call(owner, 'GET', `/orders/${MISSING_ID}/history`), 404);
    });

    it("records the operator's completion in the order's account", async () => {
      const order = await submitOrder(owner);
      await complete(order.id);
      const [, completed] = await store.readStream(`order-${order.id}`);
      expect(completed.metadata).toMatchObject({ account_id: owner.accountId, actor: `operator:${operator.clientId}` });
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer for the same key and body, and answers 422 for another body', async () => {
      const key = `submit-${Date.now()}`;
      const body = { entity_id: entityId, order_type: 'amendment', details: { ref: key } };
      const first = await call(owner, 'POST', '/orders', body, { 'idempotency-key': key });
      expect(first.status).toBe(201);
      const again = await call(owner, 'POST', '/orders', body, { 'idempotency-key': key });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers).toMatchObject({
        location: first.headers.location,
        etag: first.headers.etag,
        'idempotent-replayed': 'true',
      });
      expectProblem(
        await call(owner, 'POST', '/orders', { ...body, order_type: 'other' }, { 'idempotency-key': key }),
        422,
      );
      const all = await walk<Order>(owner, `/orders?entity_id=${entityId}`, 200);
      expect(all.items.filter((o) => (o.details as { ref?: string }).ref === key)).toHaveLength(1);
    });
  });

  describe('references from other families', () => {
    it('the ReferenceChecker knows order_id within the account only', async () => {
      const order = await submitOrder(owner);
      const references = service.app.get(ReferenceChecker);
      await expect(references.assertExist(owner.accountId!, { order_id: order.id })).resolves.toBeUndefined();
      const refused = await references
        .assertExist(other.accountId!, { order_id: order.id, entity_id: entityId })
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ValidationError);
      expect((refused as ValidationError).errors.map((e) => e.field)).toEqual(['order_id', 'entity_id']);
    });
  });

  describe('tenant isolation', () => {
    it("answers another account's order as missing on every route, and lists none of them", async () => {
      const stranger = await provisionAccount(service);
      const order = await submitOrder(owner);
      const before = await store.headPosition();
      expectProblem(await call(stranger, 'GET', `/orders/${order.id}`), 404);
      expectProblem(await call(stranger, 'POST', `/orders/${order.id}/cancel`), 404);
      expectProblem(await call(stranger, 'POST', `/orders/${order.id}/cancel`, {}, { 'if-match': '"0"' }), 404);
      expectProblem(await call(stranger, 'POST', `/orders/${order.id}/cancel`, {}, { 'if-match': '"4"' }), 404);
      expectProblem(await call(stranger, 'GET', `/orders/${order.id}/history`), 404);
      expect((await call(stranger, 'GET', '/orders')).body).toEqual({ data: [], next_cursor: null });
      expect((await call(stranger, 'GET', `/orders?entity_id=${entityId}`)).body).toEqual({
        data: [],
        next_cursor: null,
      });
      expect(await store.headPosition()).toEqual(before);
      expect((await call(owner, 'GET', `/orders/${order.id}`)).body).toEqual(order);
    });
  });

  describe('replay', () => {
    it('rebuilds the read model from the stream into exactly the live rows (submitted, cancelled, completed)', async () => {
      const [cancelled, completed] = await Promise.all([submitOrder(owner, { details: { n: 1 } }), submitOrder(owner)]);
      expect((await call(owner, 'POST', `/orders/${cancelled.id}/cancel`, { reason: 'No' })).status).toBe(200);
      expect((await complete(completed.id)).status).toBe(200);
      await expectRebuildEqualsLive(service, 'orders');
    });
  });

  describe('bad input', () => {
    let target: Order;
    beforeAll(async () => {
      target = await submitOrder(owner);
    });

    const valid = () => ({ entity_id: entityId, order_type: 'formation' });
    const id = () => target.id;
    const cancelPath = () => `/orders/${id()}/cancel`;
    const JSON_TYPE = { 'content-type': 'application/json' };

    it('answers every bad request with a 4xx problem listing the bad fields, never a 5xx, and appends nothing', async () => {
      const cases: BadInput[] = [
        // Orders have no PATCH: the shared PATCH rows do not apply (PATCH is a 405 here).
        ...commonBadInputs('/orders', valid(), id).filter(([, method]) => method !== 'PATCH'),
        ['PATCH is not allowed', 'PATCH', () => `/orders/${id()}`, {}, {}, 405],
        ['DELETE is not allowed', 'DELETE', () => `/orders/${id()}`, undefined, {}, 405],
        ['missing fields', 'POST', () => '/orders', {}, {}, 400, ['entity_id', 'order_type']],
        [
          'wrong types',
          'POST',
          () => '/orders',
          { entity_id: 5, order_type: ['formation'], jurisdiction_code: 7, details: 'x' },
          {},
          400,
          ['details', 'entity_id', 'jurisdiction_code', 'order_type'],
        ],
        ['unknown order type', 'POST', () => '/orders', { ...valid(), order_type: 'merger' }, {}, 400, ['order_type']],
        ['a bad entity UUID', 'POST', () => '/orders', { ...valid(), entity_id: 'acme' }, {}, 400, ['entity_id']],
        [
          'a bad jurisdiction code',
          'POST',
          () => '/orders',
          { ...valid(), jurisdiction_code: 'Delaware' },
          {},
          400,
          ['jurisdiction_code'],
        ],
        ['details an array', 'POST', () => '/orders', { ...valid(), details: [1, 2] }, {}, 400, ['details']],
        [
          'oversize details',
          'POST',
          () => '/orders',
          { ...valid(), details: { text: 'x'.repeat(17 * 1024) } },
          {},
          400,
          ['details'],
        ],
        [
          'a status on submit',
          'POST',
          () => '/orders',
          { ...valid(), status: 'completed', account_id: MISSING_ID },
          {},
          400,
          ['account_id', 'status'],
        ],
        [
          'nested prototype pollution',
          'POST',
          () => '/orders',
          `{"entity_id":"${entityId}","order_type":"other","details":{"__proto__":{"x":1}}}`,
          JSON_TYPE,
          400,
        ],
        ['cancel malformed JSON', 'POST', cancelPath, '{"reason": ', JSON_TYPE, 400],
        ['cancel text/plain', 'POST', cancelPath, 'because', { 'content-type': 'text/plain' }, 415],
        ['cancel a JSON array', 'POST', cancelPath, ['why'], {}, 400],
        ['cancel a reason of the wrong type', 'POST', cancelPath, { reason: 5 }, {}, 400, ['reason']],
        ['cancel a blank reason', 'POST', cancelPath, { reason: '  ' }, {}, 400, ['reason']],
        ['cancel an oversize reason', 'POST', cancelPath, { reason: 'x'.repeat(501) }, {}, 400, ['reason']],
        ['cancel unknown fields', 'POST', cancelPath, { status: 'completed' }, {}, 400, ['status']],
        ['cancel a bad UUID', 'POST', () => '/orders/nope/cancel', {}, {}, 400, ['id']],
        ['cancel a malformed If-Match', 'POST', cancelPath, {}, { 'if-match': 'v1' }, 400, ['If-Match']],
        ['list an unknown status', 'GET', () => '/orders?status=open', undefined, {}, 400, ['status']],
        ['list a bad entity_id', 'GET', () => '/orders?entity_id=acme', undefined, {}, 400, ['entity_id']],
        [
          'list a repeated entity_id',
          'GET',
          () => `/orders?entity_id=${entityId}&entity_id=${entityId}`,
          undefined,
          {},
          400,
          ['entity_id'],
        ],
      ];
      await expectRefusedWithoutEvents(service, api, owner, cases);
      expect((await call(owner, 'GET', `/orders/${target.id}`)).body).toEqual(target);
    });
  });
});
