/**
 * Replay-exact cancellations: the fan-out decides which deliveries a disable cancels from its own
 * view of the stream at the disable's position. Deleting `webhook-fanout.db` and letting it run
 * again over the same stream appends nothing: the same deliveries, the same cancellations, and a
 * delivery redelivered after an old disable stays pending (the live read model would have said
 * "pending, scheduled before the disable" and cancelled it).
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { provisionAccount } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, fanOutCaughtUp, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';

/** Every event of every delivery stream, as `stream type id` lines in log order. */
async function deliveryEvents(service: TestService): Promise<string[]> {
  const all = await service.app.get<EventStore>(EVENT_STORE).readAll({ maxCount: 1_000_000 });
  return all.filter((e) => e.streamId.startsWith('webhookdelivery-')).map((e) => `${e.streamId} ${e.type} ${e.id}`);
}

describe.each(['sqlite', 'esdb'] as const)('webhook fan-out replayed from scratch on the %s store', (eventStore) => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  let service: TestService;

  beforeAll(async () => {
    pki = makeTestPki();
    receiver = await startReceiver(pki);
    // Every attempt fails and the next one is a minute away: deliveries stay pending.
    receiver.fallback = { status: 503 };
  });
  afterAll(async () => {
    await service?.destroy();
    await receiver?.close();
    rmSync(pki.dir, { recursive: true, force: true });
  });

  it('appends nothing: same deliveries, same cancellations, redeliveries after a disable left pending', async () => {
    const env = { WEBHOOK_CA_FILE: pki.caFile, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS: '60s' };
    service = await startService({ eventStore, env });
    const { token } = await provisionAccount(service);
    let api: Api = apiClient(service.url, token);
    const ok = async (method: string, path: string, body?: unknown) => {
      const res = await api(method, `${V1}${path}`, body);
      expect(res.status).toBeLessThan(300);
      return res.body;
    };
    const endpoint = (await ok('POST', '/webhook-endpoints', { url: receiver.url })).id as string;
    await ok('POST', `/webhook-endpoints/${endpoint}/enable`);
    await ok('PUT', '/webhook-settings', { notifications_enabled: true });
    for (let i = 0; i < 3; i++) await ok('POST', '/entities', { name: `Replay ${i}`, entity_type: 'llc' });
    const deliveries = async (status: string) =>
      (await ok('GET', `/webhook-endpoints/${endpoint}/deliveries?status=${status}`)).data as Array<{
        id: string;
        attempt_count: number;
      }>;
    // First attempts made and failed: pending with a retry a minute away.
    await eventually(
      async () => ((await deliveries('pending')).filter((d) => d.attempt_count === 1).length === 3 ? true : undefined),
      50,
    );

    // The disable cancels all three; then two are redelivered and are pending again.
    await ok('POST', `/webhook-endpoints/${endpoint}/disable`);
    const cancelled = await eventually(async () => {
      const c = await deliveries('cancelled');
      return c.length === 3 ? c : undefined;
    }, 50);
    await ok('POST', `/webhook-endpoints/${endpoint}/enable`);
    for (const d of cancelled.slice(0, 2))
      expect((await api('POST', `${V1}/webhook-deliveries/${d.id}/redeliver`)).status).toBe(202);
    await eventually(
      async () => ((await deliveries('pending')).filter((d) => d.attempt_count === 2).length === 2 ? true : undefined),
      50,
    );
    await fanOutCaughtUp(service);
    const before = await deliveryEvents(service);

    // The fan-out starts over from the first event.
    await service.close();
    for (const suffix of ['', '-wal', '-shm'])
      rmSync(join(service.dataDir, `webhook-fanout.db${suffix}`), { force: true });
    service = await startService({ eventStore, env, reuse: service });
    api = apiClient(service.url, token);
    await fanOutCaughtUp(service);

    expect(await deliveryEvents(service)).toEqual(before);
    expect((await deliveries('pending')).map((d) => d.id).sort()).toEqual(
      cancelled
        .slice(0, 2)
        .map((d) => d.id)
        .sort(),
    );
    expect((await deliveries('cancelled')).map((d) => d.id)).toEqual([cancelled[2].id]);
  }, 90_000);
});
