/**
 * The same delivery path on the esdb adapter (EventStoreDB test server): the fan-out's filtered
 * `$all` subscription, idempotent DeliveryScheduled appends, retries recorded as events.
 */
import { rmSync } from 'node:fs';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually } from '../support/webhooks';

const V1 = '/external-api/v1';

describe('webhook delivery on the esdb store', () => {
  let pki: TestPki;
  let service: TestService;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
    service = await startService({
      eventStore: 'esdb',
      env: { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS: '100ms,200ms' },
    });
  }, 60_000);
  afterAll(async () => {
    await service?.destroy();
    await receiver?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  it('delivers entity.created after a 503, with one webhook-id, and logs both attempts', async () => {
    receiver.script({ status: 503 });
    const acc = await provisionAccount(service);
    const api = apiClient(service.url, acc.token);
    const ep = (await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url })).body;
    await api('POST', `${V1}/webhook-endpoints/${ep.id}/enable`);
    await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true });
    const entity = (await api('POST', `${V1}/entities`, { name: 'Esdb LLC', entity_type: 'corporation' })).body;
    const got = await receiver.waitFor(2);
    expect(got.map((g) => g.json.entity_id)).toEqual([entity.id, entity.id]);
    expect(got[0].headers['webhook-id']).toBe(got[1].headers['webhook-id']);
    const delivered = await eventually(async () => {
      const list = (await api('GET', `${V1}/webhook-endpoints/${ep.id}/deliveries?status=delivered`)).body.data;
      return list.length === 1 ? list[0] : undefined;
    });
    const one = (await api('GET', `${V1}/webhook-deliveries/${delivered.id}`)).body;
    expect(one.attempts.map((a: { status_code: number }) => a.status_code)).toEqual([503, 200]);
  });

  it('disables the endpoint on a 410 Gone (reason gone) and cancels its pending retry', async () => {
    const acc = await provisionAccount(service);
    const api = apiClient(service.url, acc.token);
    const ep = (await api('POST', `${V1}/webhook-endpoints`, { url: receiver.url.replace('/hook', '/gone') })).body;
    await api('POST', `${V1}/webhook-endpoints/${ep.id}/enable`);
    await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true });
    const list = async () =>
      (await api('GET', `${V1}/webhook-endpoints/${ep.id}/deliveries`)).body.data as Array<{
        status: string;
        attempt_count: number;
      }>;
    receiver.script({ status: 503, headers: { 'retry-after': '3600' } }, { status: 410 });
    await api('POST', `${V1}/entities`, { name: 'Waiting LLC', entity_type: 'llc' });
    await eventually(async () => ((await list())[0]?.attempt_count === 1 ? true : undefined));
    await api('POST', `${V1}/entities`, { name: 'Gone LLC', entity_type: 'llc' });
    const endpoint = await eventually(async () => {
      const res = await api('GET', `${V1}/webhook-endpoints/${ep.id}`);
      return res.body.enabled === false ? res.body : undefined;
    });
    expect(endpoint.disabled_reason).toBe('gone');
    const statuses = await eventually(async () => {
      const now = (await list()).map((d) => d.status);
      return now.includes('pending') ? undefined : now;
    });
    expect(statuses).toEqual(['cancelled', 'failed']);
  });
});
