import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';

describe('GET /metrics', () => {
  let service: TestService;
  let pki: TestPki;
  const receivers: WebhookReceiver[] = [];
  beforeAll(async () => {
    pki = makeTestPki('Metrics');
    service = await startService({
      env: {
        WEBHOOK_CA_FILE: pki.caFile,
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        // Two quick retries, then failed; a long wait comes from a receiver's Retry-After.
        WEBHOOK_RETRY_DELAYS: '100ms,200ms',
        WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
  });
  afterAll(async () => {
    await service?.destroy();
    await Promise.all(receivers.map((r) => r.close()));
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  async function scrape(): Promise<string> {
    const res = await fetch(`${service.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    return res.text();
  }

  it('times requests by route pattern and status, never by raw URL', async () => {
    await fetch(`${service.url}/healthz`);
    await fetch(`${service.url}/no/such/${randomUUID()}`);
    const text = await scrape();
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/healthz",status_code="200"\} [1-9]/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="unmatched",status_code="404"\} [1-9]/,
    );
    expect(text).not.toContain('/no/such/');
  });

  it('counts appended events by stream category', async () => {
    const store = service.app.get<EventStore>(EVENT_STORE);
    await store.appendToStream(`metricsprobe-${randomUUID()}`, [
      { id: randomUUID(), type: 'probe.Happened', data: {} },
      { id: randomUUID(), type: 'probe.Happened', data: {} },
    ]);
    expect(await scrape()).toMatch(/events_appended_total\{category="metricsprobe"\} 2/);
  });

  it('reports process metrics', async () => {
    expect(await scrape()).toContain('process_resident_memory_bytes');
  });

  describe('webhook deliveries', () => {
    /** A receiver, and an account with the switch on and one enabled endpoint sending to it. */
    async function endpointTo(): Promise<{ api: Api; endpointId: string; receiver: WebhookReceiver }> {
      const receiver = await startReceiver(pki);
      receivers.push(receiver);
      const acc = await provisionAccount(service);
      const api = apiClient(service.url, acc.token);
      const ep = await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url });
      expect(ep.status).toBe(201);
      expect((await api('POST', `${V1}/webhook-endpoints/${ep.body.id}/enable`)).status).toBe(200);
      expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
      return { api, endpointId: ep.body.id, receiver };
    }

    async function notify(api: Api): Promise<void> {
      expect((await api('POST', `${V1}/entities`, { name: 'Metered LLC', entity_type: 'llc' })).status).toBe(201);
    }

    /** The endpoint's only delivery, once `until` holds for it. */
    const onlyDelivery = (api: Api, endpointId: string, until: (d: any) => boolean) =>
      eventually(async () => {
        const list = (await api('GET', `${V1}/webhook-endpoints/${endpointId}/deliveries`)).body.data;
        if (list.length !== 1) return undefined;
        const d = (await api('GET', `${V1}/webhook-deliveries/${list[0].id}`)).body;
        return until(d) ? d : undefined;
      });

    const outcomes = async () => {
      const text = await scrape();
      return {
        delivered: sample(text, 'webhook_deliveries_total', { outcome: 'delivered' }),
        failed: sample(text, 'webhook_deliveries_total', { outcome: 'failed' }),
        cancelled: sample(text, 'webhook_deliveries_total', { outcome: 'cancelled' }),
        attempts: sum(text, 'webhook_delivery_attempts_total'),
      };
    };

    /** The outcome counter once it has moved from `before`, waiting for the outcome event's append. */
    const outcomesAfter = (before: Awaited<ReturnType<typeof outcomes>>) =>
      eventually(async () => {
        const now = await outcomes();
        return now.delivered + now.failed + now.cancelled > before.delivered + before.failed + before.cancelled
          ? now
          : undefined;
      });

    it('exports every outcome from the start', async () => {
      expect(await outcomes()).toMatchObject({ delivered: 0, failed: 0, cancelled: 0 });
    });

    it('counts a delivery once when it is delivered, however many attempts it took', async () => {
      const { api, endpointId, receiver } = await endpointTo();
      receiver.script({ status: 503 });
      const before = await outcomes();
      await notify(api);
      const d = await onlyDelivery(api, endpointId, (x) => x.status === 'delivered');
      expect(d.attempt_count).toBeGreaterThanOrEqual(2);
      const after = await outcomesAfter(before);
      expect(after).toEqual({
        ...before,
        delivered: before.delivered + 1,
        attempts: before.attempts + d.attempt_count,
      });
    });

    it('counts a delivery once when its retries run out and it fails', async () => {
      const { api, endpointId, receiver } = await endpointTo();
      receiver.fallback = { status: 503 };
      const before = await outcomes();
      await notify(api);
      const d = await onlyDelivery(api, endpointId, (x) => x.status === 'failed');
      expect(d.attempt_count).toBe(3);
      const after = await outcomesAfter(before);
      expect(after).toEqual({ ...before, failed: before.failed + 1, attempts: before.attempts + 3 });
    });

    it('shows the queue while a delivery is in flight and waiting for a retry; disabling or deleting the endpoint empties it', async () => {
      const queue = async () => {
        const text = await scrape();
        return {
          due: sample(text, 'webhook_delivery_queue_depth', { state: 'due' }),
          waiting: sample(text, 'webhook_delivery_queue_depth', { state: 'waiting' }),
          oldest: sample(text, 'webhook_delivery_oldest_pending_age_seconds'),
        };
      };
      // Every earlier delivery has ended: nothing is pending.
      expect(await queue()).toEqual({ due: 0, waiting: 0, oldest: 0 });

      const { api, endpointId, receiver } = await endpointTo();
      // The first attempt hangs until the send timeout; the retry is told to come back in an hour.
      receiver.script('hang');
      receiver.fallback = { status: 503, headers: { 'retry-after': '3600' } };
      const written = Date.now();
      await notify(api);
      await receiver.waitFor(1);
      const inFlight = await queue();
      expect(inFlight).toMatchObject({ due: 1, waiting: 0 });
      expect(inFlight.oldest).toBeGreaterThan(0);

      const waiting = await onlyDelivery(api, endpointId, (x) => x.attempt_count === 2 && x.status === 'pending');
      expect(Date.parse(waiting.next_attempt_at) - Date.now()).toBeGreaterThan(3000_000);
      const scrapeFrom = Date.now();
      const first = await queue();
      const scrapeTo = Date.now();
      expect(first).toMatchObject({ due: 0, waiting: 1 });
      // Its age counts from the entity's event: after `written`, and no later than the delivery's scheduling.
      expect(first.oldest).toBeLessThanOrEqual((scrapeTo - written) / 1000);
      expect(first.oldest).toBeGreaterThanOrEqual((scrapeFrom - Date.parse(waiting.created_at)) / 1000);
      const later = await eventually(async () => {
        const q = await queue();
        return q.oldest > first.oldest ? q : undefined;
      }, 100);
      expect(later).toMatchObject({ due: 0, waiting: 1 });

      const before = await outcomes();
      expect((await api('POST', `${V1}/webhook-endpoints/${endpointId}/disable`)).status).toBe(200);
      await onlyDelivery(api, endpointId, (x) => x.status === 'cancelled');
      expect(await queue()).toEqual({ due: 0, waiting: 0, oldest: 0 });
      expect(await outcomesAfter(before)).toEqual({ ...before, cancelled: before.cancelled + 1 });
      expect(receiver.requests).toHaveLength(2);

      // A redelivery is a new wait: its age counts from the request, not from the event.
      expect((await api('POST', `${V1}/webhook-endpoints/${endpointId}/enable`)).status).toBe(200);
      const requested = Date.now();
      expect((await api('POST', `${V1}/webhook-deliveries/${waiting.id}/redeliver`)).status).toBe(202);
      await onlyDelivery(api, endpointId, (x) => x.attempt_count === 3 && x.status === 'pending');
      const again = await queue();
      expect(again).toMatchObject({ due: 0, waiting: 1 });
      expect(again.oldest).toBeLessThanOrEqual((Date.now() - requested) / 1000);

      const beforeDelete = await outcomes();
      expect((await api('DELETE', `${V1}/webhook-endpoints/${endpointId}`)).status).toBe(204);
      await eventually(async () =>
        (await api('GET', `${V1}/webhook-deliveries/${waiting.id}`)).body.status === 'cancelled' ? true : undefined,
      );
      expect(await queue()).toEqual({ due: 0, waiting: 0, oldest: 0 });
      expect(await outcomesAfter(beforeDelete)).toEqual({ ...beforeDelete, cancelled: beforeDelete.cancelled + 1 });
    });
  });
});

/** The value of one sample of the exposition text; labels must match exactly. Throws when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const prefix = wanted ? `${name}{${wanted}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  if (!line) throw new Error(`no sample ${prefix.trim()} in /metrics`);
  return Number(line.slice(prefix.length));
}

/** The sum of every sample of a metric, whatever its labels. */
function sum(text: string, name: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}
