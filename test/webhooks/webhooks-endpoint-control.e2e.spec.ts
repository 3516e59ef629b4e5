/**
 * Issue #17 items 4–5 end to end, on both stores: an endpoint that keeps failing is disabled
 * (reason `failing`) and the account's endpoints that chose `webhook_endpoint.disabled` hear of
 * it (as they do of a 410's `gone`); `rate_limit_per_second` and a 429's `Retry-After` pace the
 * sends to an endpoint. Real HTTPS receivers; WEBHOOK_DISABLE_AFTER and retry delays compressed.
 * Every assertion waits for outcomes; the time bounds checked hold by construction (a pause only
 * ever delays, a limit only ever spaces out), never "faster than".
 */
import type { WebhookEndpointDisabledEvent } from '@filing/client';
import type { EventStore } from '@filing/event-store';
import { verifySignature } from '@filing/webhooks';
import type { TestService } from '../support/service';
import { webhookHarness } from '../support/webhook-harness';
import { HttpSession, provisionUser } from '../support/settings-screen';
import type { ReceivedRequest, Reply } from '../support/webhook-receiver';
import { accountWithEndpoints, type Api, type EndpointSpec, eventually, fanOutCaughtUp } from '../support/webhooks';
import { keysOf, shape } from '../sdk/sdk-support';

const V1 = '/external-api/v1';
const DISABLED = 'webhook_endpoint.disabled';
const DISABLE_AFTER_MS = 2_000;
const DISABLED_PAYLOAD = shape<WebhookEndpointDisabledEvent>()({
  event_id: 1,
  event_type: 1,
  timestamp: 1,
  endpoint_id: 1,
  reason: 1,
  status: 1,
  resource_version: 1,
});

interface Delivery {
  id: string;
  event_type: string;
  status: string;
  attempt_count: number;
}

describe.each(['sqlite', 'esdb'] as const)('webhook endpoint control on the %s store', (eventStore) => {
  const h = webhookHarness({
    eventStore,
    env: {
      // Failures keep coming for ~4 s: longer than WEBHOOK_DISABLE_AFTER.
      WEBHOOK_RETRY_DELAYS: Array(16).fill('250ms').join(','),
      WEBHOOK_DISABLE_AFTER: `${DISABLE_AFTER_MS / 1000}s`,
    },
  });
  let service: TestService;
  let store: EventStore;
  beforeAll(() => {
    service = h.service;
    store = h.store;
  });
  const receiver = (fallback?: Reply, ...script: Reply[]) => h.receiver(fallback, ...script);

  /** A new account, the switch on, one enabled endpoint per spec; its API and the endpoints (with their secrets). */
  const account = (specs: EndpointSpec[]) => accountWithEndpoints(service, specs);

  const createEntity = async (api: Api, name: string) => {
    const res = await api('POST', `${V1}/entities`, { name, entity_type: 'llc' });
    expect(res.status).toBe(201);
    return res.body as { id: string };
  };
  const deliveries = async (api: Api, endpointId: string): Promise<Delivery[]> =>
    (await api('GET', `${V1}/webhook-endpoints/${endpointId}/deliveries?limit=200`)).body.data;
  const disabledEndpoint = (api: Api, id: string) =>
    eventually(async () => {
      const res = await api('GET', `${V1}/webhook-endpoints/${id}`);
      return res.body.enabled === false ? res.body : undefined;
    });
  const disables = async (endpointId: string) =>
    (await store.readStream(`webhookendpoint-${endpointId}`)).filter((e) => e.type === 'webhooks.EndpointDisabled');

  /** The notification a watcher got, checked against its signature, the SDK's type and the disable event. */
  async function expectNotified(req: ReceivedRequest, secret: string, endpointId: string, reason: 'gone' | 'failing') {
    const id = String(req.headers['webhook-id']);
    expect(
      verifySignature(
        secret,
        String(req.headers['webhook-signature']),
        id,
        Number(req.headers['webhook-timestamp']),
        req.body,
      ),
    ).toBe(true);
    const [disable] = (await disables(endpointId)).slice(-1);
    expect(req.json).toEqual({
      event_id: disable.id,
      event_type: DISABLED,
      timestamp: disable.metadata.occurred_at,
      endpoint_id: endpointId,
      reason,
      status: 'disabled',
      resource_version: Number(disable.revision),
    });
    expect(keysOf(req.json)).toEqual(DISABLED_PAYLOAD);
    expect(id).toBe(disable.id);
  }

  it('disables an endpoint whose every attempt failed for WEBHOOK_DISABLE_AFTER (reason failing), cancels its pending deliveries and tells only the endpoints that chose it', async () => {
    // The first event's delivery waits an hour for its retry (pending at the disable); every other attempt answers 500.
    const failing = await receiver({ status: 500 }, { status: 503, headers: { 'retry-after': '3600' } });
    const watcher = await receiver();
    const everything = await receiver();
    const { api, accountId, endpoints } = await account([
      { url: failing.url },
      { url: watcher.url, event_types: [DISABLED] },
      { url: everything.url },
      { url: everything.url.replace('/hook', '/orders'), event_types: ['order.submitted'] },
    ]);
    const [bad, watching, all, orders] = endpoints.map((e) => e.id);
    await createEntity(api, 'Waiting LLC');
    await eventually(async () => ((await deliveries(api, bad))[0]?.attempt_count === 1 ? true : undefined));
    await createEntity(api, 'Failing LLC');

    const disabled = await disabledEndpoint(api, bad);
    expect(disabled.disabled_reason).toBe('failing');
    const [event] = await disables(bad);
    expect(event).toMatchObject({
      data: { endpoint_id: bad, reason: 'failing' },
      metadata: { actor: 'system:webhooks', account_id: accountId },
    });
    // The evidence: failed attempts spanning WEBHOOK_DISABLE_AFTER, none succeeding.
    const { failing_since: since, last_failure_at: last } = event.data as {
      failing_since: string;
      last_failure_at: string;
    };
    expect(Date.parse(last) - Date.parse(since)).toBeGreaterThanOrEqual(DISABLE_AFTER_MS);
    const attempts = failing.requests.map((q) => q.answered);
    expect(attempts.every((status) => status === 500 || status === 503)).toBe(true);

    const statuses = await eventually(async () => {
      const list = await deliveries(api, bad);
      return list.some((d) => d.status === 'pending') ? undefined : list.map((d) => d.status);
    });
    expect(statuses[0]).toBe('cancelled');

    const [notified] = await watcher.waitFor(1);
    await expectNotified(notified, endpoints[1].secret, bad, 'failing');
    // Nothing goes to an endpoint that takes all events or other types: decided once the fan-out has passed the disable.
    await fanOutCaughtUp(service);
    for (const id of [all, orders])
      expect((await deliveries(api, id)).map((d) => d.event_type)).not.toContain(DISABLED);
    expect((await deliveries(api, all)).map((d) => d.event_type)).toEqual(['entity.created', 'entity.created']);
    expect(watcher.requests).toHaveLength(1);
    // The receiver has it; its outcome is recorded just after.
    const watched = await eventually(async () => {
      const list = (await deliveries(api, watching)).map((d) => [d.event_type, d.status]);
      return list.some(([, status]) => status === 'pending') ? undefined : list;
    });
    expect(watched).toEqual([[DISABLED, 'delivered']]);

    // The Events API lists it only when asked for by name, like an endpoint's selection.
    const listed = (await api('GET', `${V1}/events?event_type=${DISABLED}`)).body.data;
    expect(listed).toEqual([{ ...notified.json, occurred_at: event.metadata.occurred_at }]);
    expect(
      (await api('GET', `${V1}/events?limit=200`)).body.data.map((e: { event_type: string }) => e.event_type),
    ).toEqual(['entity.created', 'entity.created']);

    // The settings screen says why and since when.
    const user = await provisionUser(service, accountId);
    const session = new HttpSession(service.url);
    expect((await session.signIn(user.email, user.password)).status).toBe(303);
    const page = (await session.get(`/settings/profile/webhook-endpoints/${bad}`)).body;
    expect(page).toContain(
      `Disabled automatically: every delivery attempt failed, since <time datetime="${event.metadata.occurred_at as string}">`,
    );
  });

  it('re-enabling clears the reason, and the failing count starts again from the enable', async () => {
    const failing = await receiver({ status: 500 });
    const watcher = await receiver();
    const { api, endpoints } = await account([{ url: failing.url }, { url: watcher.url, event_types: [DISABLED] }]);
    const bad = endpoints[0].id;
    await createEntity(api, 'First LLC');
    await disabledEndpoint(api, bad);

    const enabled = await api('POST', `${V1}/webhook-endpoints/${bad}/enable`);
    expect(enabled.body).toMatchObject({ enabled: true, disabled_reason: null });
    const enabledAt = (await store.readStream(`webhookendpoint-${bad}`))
      .filter((e) => e.type === 'webhooks.EndpointEnabled')
      .at(-1)!.metadata.occurred_at as string;
    await createEntity(api, 'Second LLC');
    expect((await disabledEndpoint(api, bad)).disabled_reason).toBe('failing');
    // Judged only on failures after the enable, however old the first streak was.
    const second = (await disables(bad))[1].data as { failing_since: string; last_failure_at: string };
    expect(Date.parse(second.failing_since)).toBeGreaterThan(Date.parse(enabledAt));
    expect(Date.parse(second.last_failure_at) - Date.parse(second.failing_since)).toBeGreaterThanOrEqual(
      DISABLE_AFTER_MS,
    );
    const got = await watcher.waitForEvents(2);
    expect(got.map((r) => r.json.reason)).toEqual(['failing', 'failing']);
  });

  it('a 410 Gone disable (reason gone) is notified the same way', async () => {
    const gone = await receiver({ status: 410 });
    const watcher = await receiver();
    const { api, endpoints } = await account([
      { url: gone.url },
      { url: watcher.url, event_types: [DISABLED, 'order.submitted'] },
    ]);
    await createEntity(api, 'Gone LLC');
    expect((await disabledEndpoint(api, endpoints[0].id)).disabled_reason).toBe('gone');
    const [notified] = await watcher.waitFor(1);
    await expectNotified(notified, endpoints[1].secret, endpoints[0].id, 'gone');
  });

  it("rate_limit_per_second: 5 — no second of the receiver's log holds more than 5, and nothing is dropped", async () => {
    const limited = await receiver();
    const { api, endpoints } = await account([{ url: limited.url, rate_limit_per_second: 5 }]);
    const created = [];
    for (let i = 0; i < 16; i++) created.push((await createEntity(api, `Paced ${i} LLC`)).id);
    const got = await limited.waitForEvents(created.length);
    expect(new Set(got.map((r) => r.json.entity_id))).toEqual(new Set(created));
    const perSecond = new Map<number, number>();
    for (const r of limited.requests)
      perSecond.set(Math.floor(r.receivedAt / 1000), (perSecond.get(Math.floor(r.receivedAt / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThanOrEqual(5);
    const log = await eventually(async () => {
      const list = await deliveries(api, endpoints[0].id);
      return list.length === created.length && list.every((d) => d.status === 'delivered') ? list : undefined;
    });
    expect(log).toHaveLength(16);
  });

  it('a 429 with Retry-After: 2 pauses every delivery to the endpoint for 2 s, not only that one', async () => {
    const busy = await receiver({ status: 200 }, { status: 429, headers: { 'retry-after': '2' } });
    const { api, endpoints } = await account([{ url: busy.url }]);
    await createEntity(api, 'Busy LLC');
    // The 429 is recorded (the pause is set before the record is written); then three more events.
    await eventually(async () => ((await deliveries(api, endpoints[0].id))[0]?.attempt_count === 1 ? true : undefined));
    for (const name of ['After 1 LLC', 'After 2 LLC', 'After 3 LLC']) await createEntity(api, name);
    // Four events, each delivered (the first on its retry): nothing dropped.
    await busy.waitFor(4, (r) => r.answered === 200);
    const [tooMany, ...rest] = busy.requests;
    expect(tooMany.answered).toBe(429);
    expect(new Set(rest.map((r) => r.headers['webhook-id'])).size).toBe(4);
    for (const r of rest) expect(r.receivedAt - tooMany.receivedAt).toBeGreaterThanOrEqual(2_000);
  });
});
