/**
 * An endpoint's stats and the recovery of its failed deliveries (CONTRACT.md §4), on both
 * stores, against a real HTTPS receiver. Retries wait an hour here, so a delivery answered 5xx
 * stays pending for the whole spec.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { rmSync } from 'node:fs';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';

interface Delivery {
  id: string;
  event_id: string;
  status: string;
  attempt_count: number;
  attempts: Array<{ attempted_at: string; status_code: number | null; duration_ms: number }>;
}

describe.each(['sqlite', 'esdb'] as const)('endpoint stats and recovery on the %s store', (eventStore) => {
  let pki: TestPki;
  let service: TestService;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    pki = makeTestPki('Health');
    service = await startService({
      eventStore,
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS: '1h' },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.destroy();
    await Promise.all(receivers.map((r) => r.close()));
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  /** A new account with the switch on and one enabled endpoint on its own receiver. */
  async function account() {
    const receiver = await startReceiver(pki);
    receivers.push(receiver);
    const acc = await provisionAccount(service);
    const api = apiClient(service.url, acc.token);
    const endpoint = (await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url })).body as { id: string };
    expect((await api('POST', `${V1}/webhook-endpoints/${endpoint.id}/enable`)).status).toBe(200);
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
    return { api, receiver, endpointId: endpoint.id };
  }

  /** Creates an entity and waits until its delivery has had its first answer; the delivery. */
  async function notify(api: Api, endpointId: string, name: string): Promise<Delivery> {
    const entity = (await api('POST', `${V1}/entities`, { name, entity_type: 'llc' })).body as { id: string };
    const [created] = await service.app.get<EventStore>(EVENT_STORE).readStream(`entity-${entity.id}`);
    return eventually(async () => {
      const list = (await api('GET', `${V1}/webhook-endpoints/${endpointId}/deliveries?limit=200`)).body
        .data as Delivery[];
      const found = list.find((d) => d.event_id === created.id);
      if (!found || found.attempt_count === 0) return undefined;
      const detail = (await api('GET', `${V1}/webhook-deliveries/${found.id}`)).body as Delivery;
      return detail.status !== 'pending' || detail.attempts.length > 0 ? detail : undefined;
    });
  }

  const stats = async (api: Api, endpointId: string) => {
    const res = await api('GET', `${V1}/webhook-endpoints/${endpointId}/stats`);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('reports delivered, failed, pending, response times, the last success and failing since, as the deliveries were made', async () => {
    const { api, receiver, endpointId } = await account();
    expect(await stats(api, endpointId)).toEqual({
      delivered: 0,
      failed: 0,
      pending: 0,
      p50_ms: null,
      p99_ms: null,
      last_success_at: null,
      failing_since: null,
    });

    const made: Delivery[] = [];
    for (const [i, status] of [200, 204, 400, 503].entries()) {
      receiver.script({ status });
      made.push(await notify(api, endpointId, `Stats ${i}`));
    }
    expect(made.map((d) => d.status)).toEqual(['delivered', 'delivered', 'failed', 'pending']);
    const attempts = made.map((d) => d.attempts[0]);
    const durations = attempts.map((a) => a.duration_ms).sort((x, y) => x - y);
    expect(await stats(api, endpointId)).toEqual({
      delivered: 2,
      failed: 1,
      pending: 1,
      // Nearest rank of four answered attempts: the 2nd and the 4th.
      p50_ms: durations[1],
      p99_ms: durations[3],
      last_success_at: attempts[1].attempted_at,
      failing_since: attempts[2].attempted_at,
    });

    receiver.script({ status: 200 });
    const recovered = await notify(api, endpointId, 'Stats 4');
    expect(await stats(api, endpointId)).toMatchObject({
      delivered: 3,
      failed: 1,
      pending: 1,
      last_success_at: recovered.attempts[0].attempted_at,
      failing_since: null,
    });
  });

  it('sends again exactly the failed deliveries whose event happened at or after since: new attempts, the same webhook-id', async () => {
    const { api, receiver, endpointId } = await account();
    receiver.fallback = { status: 400 };
    const failed: Delivery[] = [];
    for (let i = 0; i < 20; i++) {
      failed.push(await notify(api, endpointId, `Recover ${i}`));
      // A few milliseconds apart, so `since` can fall between two events.
      await new Promise((r) => setTimeout(r, 3));
    }
    expect(failed.every((d) => d.status === 'failed')).toBe(true);
    const store = service.app.get<EventStore>(EVENT_STORE);
    const eventTime = new Map<string, string>();
    for (const e of await store.readAll())
      if (typeof e.metadata.occurred_at === 'string') eventTime.set(e.id, e.metadata.occurred_at);
    const since = eventTime.get(failed[10].event_id)!;
    const later = failed.filter((d) => eventTime.get(d.event_id)! >= since);
    expect(later.length).toBeGreaterThanOrEqual(10);
    expect(later.length).toBeLessThan(20);

    receiver.fallback = { status: 200 };
    const before = receiver.requests.length;
    const res = await api(
      'POST',
      `${V1}/webhook-endpoints/${endpointId}/recover`,
      { since },
      { 'idempotency-key': `recover-${eventStore}` },
    );
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ deliveries: later.length });
    const resent = await receiver.waitFor(before + later.length);
    expect(
      resent
        .slice(before)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual(later.map((d) => d.event_id).sort());
    for (const d of failed) {
      const again = later.includes(d);
      const now = await eventually(async () => {
        const detail = (await api('GET', `${V1}/webhook-deliveries/${d.id}`)).body as Delivery;
        return !again || detail.status === 'delivered' ? detail : undefined;
      });
      expect({ id: d.event_id, status: now.status, attempts: now.attempt_count }).toEqual({
        id: d.event_id,
        status: again ? 'delivered' : 'failed',
        attempts: again ? 2 : 1,
      });
    }

    // The same Idempotency-Key replays the answer and sends nothing; a new recovery finds nothing failed since.
    const replay = await api(
      'POST',
      `${V1}/webhook-endpoints/${endpointId}/recover`,
      { since },
      { 'idempotency-key': `recover-${eventStore}` },
    );
    expect([replay.status, replay.body, replay.headers.get('idempotent-replayed')]).toEqual([
      202,
      { deliveries: later.length },
      'true',
    ]);
    expect((await api('POST', `${V1}/webhook-endpoints/${endpointId}/recover`, { since })).body).toEqual({
      deliveries: 0,
    });
    const all = await api('POST', `${V1}/webhook-endpoints/${endpointId}/recover`, {
      since: '2000-01-01T00:00:00+01:00',
    });
    expect(all.body).toEqual({ deliveries: 20 - later.length });
    const resentIds = () => new Set(receiver.requests.slice(before).map((r) => String(r.headers['webhook-id'])));
    await eventually(() => (resentIds().size === 20 ? true : undefined));
    expect([...resentIds()].sort()).toEqual(failed.map((d) => d.event_id).sort());
  });

  it("refuses a bad since (400 naming it), a stale If-Match (412), a disabled endpoint (409) and another account's endpoint (404)", async () => {
    const { api, receiver, endpointId } = await account();
    receiver.fallback = { status: 400 };
    await notify(api, endpointId, 'Refusals');
    const path = `${V1}/webhook-endpoints/${endpointId}/recover`;
    for (const [body, fields] of [
      [{}, ['since']],
      [{ since: '2026-11-22' }, ['since']],
      [{ since: '2026-02-30T10:00:00Z' }, ['since']],
      [{ since: 1764000000 }, ['since']],
      [{ since: '2026-11-22T10:00:00Z', until: 'now' }, ['until']],
    ] as const) {
      const res = await api('POST', path, body);
      expect({
        body,
        status: res.status,
        fields: (res.body.errors ?? []).map((e: { field: string }) => e.field),
      }).toEqual({ body, status: 400, fields });
    }
    const since = '2000-01-01T00:00:00.000Z';
    expect((await api('POST', path, { since }, { 'if-match': '"99"' })).status).toBe(412);
    const version = (await api('GET', `${V1}/webhook-endpoints/${endpointId}`)).body.version as number;
    const disabled = await api('POST', `${V1}/webhook-endpoints/${endpointId}/disable`);
    expect(disabled.status).toBe(200);
    expect((await api('POST', path, { since }, { 'if-match': `"${version}"` })).status).toBe(412);
    const refused = await api('POST', path, { since }, { 'if-match': `"${disabled.body.version}"` });
    expect([refused.status, refused.body.detail]).toEqual([409, expect.stringMatching(/disabled: enable it first/)]);
    const list = (await api('GET', `${V1}/webhook-endpoints/${endpointId}/deliveries`)).body.data as Delivery[];
    expect(list.map((d) => [d.status, d.attempt_count])).toEqual([['failed', 1]]);

    const stranger = await account();
    for (const [method, suffix] of [
      ['POST', 'recover'],
      ['GET', 'stats'],
    ] as const) {
      const res = await stranger.api(
        method,
        `${V1}/webhook-endpoints/${endpointId}/${suffix}`,
        method === 'POST' ? { since } : undefined,
      );
      expect([suffix, res.status]).toEqual([suffix, 404]);
    }
    expect((await api('GET', `${V1}/webhook-endpoints/${endpointId}/stats?window=1h`)).status).toBe(400);
  });
});
