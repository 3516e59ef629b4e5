import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FilingClient } from './client';
import { ApiError, NetworkError } from './errors';
import { collect } from './pagination';
import { FakeClock, fakeFetch, json, problem, type Route } from './testing/fake-fetch';
import type { Entity, Page } from './types';

const BASE = 'https://api.example.test';

function clientWith(route: Route) {
  const fetch = fakeFetch((req) =>
    req.url.pathname === '/o/token/'
      ? json(200, { access_token: 't', token_type: 'Bearer', expires_in: 3600 })
      : route(req),
  );
  const client = new FilingClient({
    baseUrl: `${BASE}/`,
    clientId: 'id',
    clientSecret: 'secret',
    fetch,
    clock: new FakeClock(),
  });
  const api = () => fetch.requests.filter((r) => r.url.pathname !== '/o/token/');
  return { client, api };
}

const entity = (n: number): Entity => ({
  id: `e${n}`,
  name: `Entity ${n}`,
  entity_type: 'llc',
  status: 'active',
  formation_jurisdiction: null,
  formation_date: null,
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T10:00:00.000Z',
  version: 0,
});

describe('FilingClient requests', () => {
  it('sends each operation to its route with JSON, filters, If-Match and Idempotency-Key', async () => {
    const { client, api } = clientWith((req) =>
      req.method === 'DELETE' ? new Response(null, { status: 204 }) : json(200, { data: [], next_cursor: null }),
    );
    await client.entities.create({ name: 'Acme', entity_type: 'llc' }, { idempotencyKey: 'key-1' });
    await client.entities.list({ status: 'active', q: 'ac me', limit: 10, entity_type: undefined });
    await client.jurisdictions.update('j/1', { status: 'active' }, { ifMatch: 2 });
    await client.documents.delete('d1', { ifMatch: 'W/"5"' });
    await client.orders.cancel('o1');
    await client.tasks.history('t1', { limit: 5 });
    await client.webhookEndpoints.deliveries('w1', { status: 'failed' });
    await client.webhookEndpoints.rotateSecret('w1');
    await client.webhookDeliveries.redeliver('dl1');
    await client.webhookSettings.update({ notifications_enabled: true });

    const seen = api().map((r) => `${r.method} ${r.url.pathname}${r.url.search}`);
    expect(seen).toEqual([
      'POST /external-api/v1/entities',
      'GET /external-api/v1/entities?status=active&q=ac+me&limit=10',
      'PATCH /external-api/v1/jurisdictions/j%2F1',
      'DELETE /external-api/v1/documents/d1',
      'POST /external-api/v1/orders/o1/cancel',
      'GET /external-api/v1/tasks/t1/history?limit=5',
      'GET /external-api/v1/webhook-endpoints/w1/deliveries?status=failed',
      'POST /external-api/v1/webhook-endpoints/w1/rotate-secret',
      'POST /external-api/v1/webhook-deliveries/dl1/redeliver',
      'PUT /external-api/v1/webhook-settings',
    ]);
    const [create, , patch, del, cancel] = api();
    expect(create.headers.get('idempotency-key')).toBe('key-1');
    expect(create.headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(create.body!)).toEqual({ name: 'Acme', entity_type: 'llc' });
    expect(patch.headers.get('if-match')).toBe('"2"');
    expect(del.headers.get('if-match')).toBe('W/"5"');
    expect(JSON.parse(cancel.body!)).toEqual({});
    expect(api().every((r) => r.headers.get('authorization') === 'Bearer t')).toBe(true);
  });

  it('returns document content as bytes with its content type, and DELETE 204 as undefined', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const { client } = clientWith((req) =>
      req.method === 'DELETE'
        ? new Response(null, { status: 204 })
        : new Response(bytes, { status: 200, headers: { 'content-type': 'application/pdf' } }),
    );
    const content = await client.documents.content('d1');
    expect(content.content_type).toBe('application/pdf');
    expect(Buffer.compare(content.data, bytes)).toBe(0);
    await expect(client.documents.delete('d1')).resolves.toBeUndefined();
  });

  it('lists events with several types comma-separated and after_event_id; recovers from a Date; reads stats', async () => {
    const { client, api } = clientWith((req) =>
      req.url.pathname.endsWith('/recover') ? json(202, { deliveries: 3 }) : json(200, { data: [], next_cursor: null }),
    );
    await client.events.list({ event_type: ['entity.created', 'order.completed'], after_event_id: 'ev1', limit: 20 });
    await client.events.list({ event_type: 'task.created' });
    await collect(client.events.listAll({ after_event_id: 'ev2' }));
    expect(
      await client.webhookEndpoints.recover(
        'w1',
        { since: new Date('2026-11-22T10:00:00.000Z') },
        { idempotencyKey: 'k' },
      ),
    ).toEqual({ deliveries: 3 });
    await client.webhookEndpoints.stats('w1');
    expect(api().map((r) => `${r.method} ${r.url.pathname}${decodeURIComponent(r.url.search)}`)).toEqual([
      'GET /external-api/v1/events?after_event_id=ev1&limit=20&event_type=entity.created,order.completed',
      'GET /external-api/v1/events?event_type=task.created',
      'GET /external-api/v1/events?after_event_id=ev2',
      'POST /external-api/v1/webhook-endpoints/w1/recover',
      'GET /external-api/v1/webhook-endpoints/w1/stats',
    ]);
    expect(JSON.parse(api()[3].body!)).toEqual({ since: '2026-11-22T10:00:00.000Z' });
    expect(api()[3].headers.get('idempotency-key')).toBe('k');
  });

  it('unwraps the event-type catalog', async () => {
    const { client } = clientWith(() =>
      json(200, { data: [{ name: 'entity.created', label: 'New Entity', category: 'Entities' }] }),
    );
    await expect(client.webhookEventTypes.list()).resolves.toEqual([
      { name: 'entity.created', label: 'New Entity', category: 'Entities' },
    ]);
  });
});

describe('errors', () => {
  it('types a problem+json answer as ApiError with every field error', async () => {
    const { client } = clientWith(() =>
      problem(400, 'The request has invalid fields', [
        { field: 'name', message: 'name must be a string' },
        { field: 'entity_type', message: 'entity_type must be one of llc, …' },
      ]),
    );
    const err = (await client.entities
      .create({ name: 1 as unknown as string, entity_type: 'llc' })
      .catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 400,
      type: 'about:blank',
      title: 'Bad Request',
      detail: 'The request has invalid fields',
      method: 'POST',
      path: '/entities',
    });
    expect(err.errors).toHaveLength(2);
    expect(err.fieldError('entity_type')).toMatch(/one of/);
    expect(err.problem.status).toBe(400);
    expect(err.message).toContain('name: name must be a string');
  });

  it('keeps status, Retry-After and request id of 409/412/429/503', async () => {
    for (const status of [404, 409, 412, 422, 429, 503]) {
      const { client } = clientWith(
        () =>
          new Response(JSON.stringify({ type: 'about:blank', title: 'x', status, detail: `d${status}` }), {
            status,
            headers: { 'content-type': 'application/problem+json', 'retry-after': '5', 'x-request-id': 'req-1' },
          }),
      );
      const err = (await client.orders.get('o1').catch((e) => e)) as ApiError;
      expect(err).toMatchObject({ status, detail: `d${status}`, retryAfterSeconds: 5, requestId: 'req-1', errors: [] });
    }
  });

  it('makes a problem of a non-JSON error page', async () => {
    const { client } = clientWith(
      () =>
        new Response('<h1>Bad gateway</h1>', {
          status: 502,
          statusText: 'Bad Gateway',
          headers: { 'content-type': 'text/html' },
        }),
    );
    const err = (await client.tasks.get('t1').catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 502, title: 'Bad Gateway', type: 'about:blank' });
  });

  it('treats a redirect as an error (never followed)', async () => {
    const { client } = clientWith(
      () => new Response(null, { status: 302, headers: { location: 'https://elsewhere.test/' } }),
    );
    await expect(client.entities.get('e1')).rejects.toMatchObject({ status: 302 });
  });

  it('reports a refused connection and a timeout as NetworkError', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    await new Promise((r) => server.close(r));
    const refused = new FilingClient({
      baseUrl: `http://127.0.0.1:${port}`,
      clientId: 'id',
      clientSecret: 'secret',
    });
    const err = (await refused.entities.list().catch((e) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.url).toBe(`http://127.0.0.1:${port}/o/token/`);

    // A server that never answers: the SDK's timeout, or the caller's signal, ends the call.
    const { client } = clientWith(
      (req) =>
        new Promise<Response>((_, reject) => req.signal!.addEventListener('abort', () => reject(req.signal!.reason))),
    );
    const timedOut = (await client.entities.list(undefined, { timeoutMs: 20 }).catch((e) => e)) as NetworkError;
    expect(timedOut).toBeInstanceOf(NetworkError);
    expect(timedOut.timedOut).toBe(true);
    expect(timedOut.message).toContain('timed out after 20 ms');
    const aborted = (await client.entities
      .list(undefined, { signal: AbortSignal.abort() })
      .catch((e) => e)) as NetworkError;
    expect(aborted).toBeInstanceOf(NetworkError);
    expect(aborted.timedOut).toBe(false);
    expect(aborted.message).toContain('aborted');
  });
});

describe('pagination', () => {
  function pagedService(total: number, pageSize: number) {
    return clientWith((req) => {
      const cursor = req.url.searchParams.get('cursor');
      const start = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
      const end = Math.min(total, start + pageSize);
      const page: Page<Entity> = {
        data: Array.from({ length: end - start }, (_, i) => entity(start + i)),
        next_cursor: end < total ? Buffer.from(String(end)).toString('base64url') : null,
      };
      return json(200, page);
    });
  }

  it('iterates every item over every page, passing filters and next_cursor', async () => {
    const { client, api } = pagedService(7, 3);
    const all = await collect(client.entities.listAll({ status: 'active', limit: 3 }));
    expect(all.map((e) => e.id)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6']);
    expect(api()).toHaveLength(3);
    expect(api().map((r) => r.url.searchParams.get('status'))).toEqual(['active', 'active', 'active']);
    expect(api()[0].url.searchParams.has('cursor')).toBe(false);
    expect(api()[2].url.searchParams.get('cursor')).toBe(Buffer.from('6').toString('base64url'));
  });

  it('fetches lazily: breaking out stops fetching', async () => {
    const { client, api } = pagedService(100, 10);
    let seen = 0;
    for await (const item of client.entities.listAll()) {
      void item;
      if (++seen === 15) break;
    }
    expect(api()).toHaveLength(2);
  });

  it('handles an empty collection and history pages', async () => {
    const { client } = pagedService(0, 10);
    expect(await collect(client.entities.listAll())).toEqual([]);
    const history = clientWith(() =>
      json(200, {
        data: [{ type: 'OrderSubmitted', occurred_at: 'x', actor: 'client:1', data: {} }],
        next_cursor: null,
      }),
    );
    const events = await collect(history.client.orders.historyAll('o1'));
    expect(events[0].type).toBe('OrderSubmitted');
  });

  it('stops on a cursor the service repeats instead of looping', async () => {
    const { client } = clientWith(() => json(200, { data: [entity(1)], next_cursor: 'same' }));
    await expect(collect(client.entities.listAll())).rejects.toThrow(/already returned/);
  });
});
