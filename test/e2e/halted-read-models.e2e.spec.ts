/**
 * One bad event's blast radius is what it touches (issue 47), on the embedded store: events
 * appended behind the platform's back halt the read models that cannot apply them; requests
 * that need one answer a 503 naming it and the event, at once; everything else keeps working;
 * the read models authentication depends on fail closed; `processors:skip` resumes one.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { randomUUID } from 'node:crypto';
import { PROBLEM } from '../support/api';
import { bearer, provisionAccount, requestToken } from '../support/auth';
import { runCli } from '../support/cli';
import { startService, type TestService } from '../support/service';
import { apiClient, eventually } from '../support/webhooks';

const V1 = '/external-api/v1';

describe('halted read models on the sqlite store', () => {
  let service: TestService;
  let account: Awaited<ReturnType<typeof provisionAccount>>;
  let store: EventStore;

  beforeAll(async () => {
    service = await startService({ eventStore: 'sqlite' });
    account = await provisionAccount(service);
    store = service.app.get<EventStore>(EVENT_STORE);
  }, 60_000);
  afterAll(async () => service?.destroy());

  const readyz = async () => {
    const res = await fetch(`${service.url}/readyz`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const metrics = async () => (await fetch(`${service.url}/metrics`)).text();

  it('an order read model halted on a malformed event: orders answer 503 naming it; the rest is served', async () => {
    const api = apiClient(service.url, account.token);
    const entity = await api('POST', `${V1}/entities`, { name: 'Before Co', entity_type: 'llc' });
    expect(entity.status).toBe(201);
    // A writer that bypassed the platform: no metadata at all.
    const orderId = randomUUID();
    const bad = randomUUID();
    await store.appendToStream(`order-${orderId}`, [
      { id: bad, type: 'orders.OrderSubmitted', data: { order_id: orderId, entity_id: null, order_type: 42 } },
    ]);
    const ready = await eventually(async () => {
      const r = await readyz();
      return r.body.degraded?.some((d: any) => d.processor === 'projection:orders') ? r : undefined;
    }, 100);
    expect(ready.status).toBe(200);
    expect(ready.body.degraded).toContainEqual(
      expect.objectContaining({ processor: 'projection:orders', state: 'halted', event_id: bad }),
    );
    expect(await metrics()).toMatch(/^stream_processor_state\{processor="projection:orders",state="halted"\} 1$/m);

    const list = await fetch(`${service.url}${V1}/orders`, { headers: bearer(account.token) });
    expect(list.status).toBe(503);
    expect(list.headers.get('content-type')).toBe(PROBLEM);
    expect(await list.json()).toMatchObject({
      status: 503,
      read_model: 'orders',
      event_id: bad,
      event_type: 'orders.OrderSubmitted',
      detail: expect.stringContaining('orders'),
    });
    const write = await api('POST', `${V1}/orders`, { entity_id: entity.body.id, order_type: 'formation' });
    expect(write.status).toBe(503);
    expect(write.body).toMatchObject({ read_model: 'orders', event_id: bad });

    // Everything else: tokens, entity writes and reads.
    const token = await requestToken(service.url, account.clientId, account.clientSecret);
    const other = await apiClient(service.url, token)('POST', `${V1}/entities`, {
      name: 'After Co',
      entity_type: 'llc',
    });
    expect(other.status).toBe(201);
    expect((await api('GET', `${V1}/entities/${other.body.id}`)).status).toBe(200);

    // The CLI shows it too (halted lives in the instance, so it asks the instance).
    const status = await runCli(service.dataDir, ['processors:status', '--url', service.url]);
    expect(status).toMatchObject({ code: 0 });
    expect(JSON.parse(status.stdout)).toMatchObject({
      ready: true,
      degraded: expect.arrayContaining([expect.objectContaining({ processor: 'projection:orders', event_id: bad })]),
    });

    // An operator decides to skip it (recorded) for each read model halted on it: they resume past it.
    const haltedOnIt = ((await readyz()).body.degraded as any[])
      .filter((d) => d.event_id === bad)
      .map((d) => d.processor);
    expect(haltedOnIt).toContain('projection:orders');
    for (const processor of haltedOnIt) {
      const skipped = await runCli(service.dataDir, ['processors:skip', processor, bad]);
      expect(skipped).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(skipped.stdout)).toEqual({ processor, event_id: bad, skipped: true });
    }
    await eventually(async () => ((await readyz()).body.degraded ? undefined : true), 100);
    const after = await api('POST', `${V1}/orders`, { entity_id: entity.body.id, order_type: 'formation' });
    expect(after.status).toBe(201);
    expect((await api('GET', `${V1}/orders/${orderId}`)).status).toBe(404);
  }, 60_000);

  it('a halted token read model fails closed: every authenticated call is a 503, public probes still answer', async () => {
    const bad = randomUUID();
    await store.appendToStream(`token-${randomUUID()}`, [
      { id: bad, type: 'auth.TokenIssued', data: { client_id: account.clientId }, metadata: {} },
    ]);
    await eventually(async () => {
      const r = await readyz();
      return r.body.degraded?.some((d: any) => d.processor === 'projection:auth.tokens') ? true : undefined;
    }, 100);
    const call = await fetch(`${service.url}${V1}/entities`, { headers: bearer(account.token) });
    expect(call.status).toBe(503);
    expect(await call.json()).toMatchObject({ read_model: 'auth.tokens', event_id: bad });
    const token = await fetch(`${service.url}/o/token/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: account.clientId,
        client_secret: account.clientSecret,
      }),
    });
    expect(token.status).toBe(503);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    expect((await readyz()).status).toBe(200);

    // Skipped by an operator: authentication is back (and a rebuild skips it alike: the audit at the end).
    expect(await runCli(service.dataDir, ['processors:skip', 'projection:auth.tokens', bad])).toMatchObject({
      code: 0,
    });
    await eventually(async () => ((await readyz()).body.degraded ? undefined : true), 100);
    expect((await fetch(`${service.url}${V1}/entities`, { headers: bearer(account.token) })).status).toBe(200);
  }, 60_000);
});
