/**
 * CONTRACT.md §5: "One endpoint's backlog never delays another endpoint's due deliveries."
 * Endpoint A never answers (every attempt times out) and has 2,000 due deliveries; endpoint B,
 * of another account, must still get each of its notifications within 1 s of it being due.
 */
import { ProjectionRunner } from '@filing/platform';
import { rmSync } from 'node:fs';
import { provisionAccount } from '../support/auth';
import { generateEntityEvents } from '../support/generate-events';
import { startService, type TestService } from '../support/service';
import { makeTestPki, type TestPki } from '../support/tls-certs';
import { startReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { apiClient, eventually, type Api } from '../support/webhooks';

const V1 = '/external-api/v1';
const BACKLOG = 2000;
const B_EVENTS = 5;

describe('webhook dispatch fairness', () => {
  let pki: TestPki;
  let service: TestService | undefined;
  let silent: WebhookReceiver;
  let healthy: WebhookReceiver;
  const env = () => ({
    WEBHOOK_CA_FILE: pki.caFile,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    // Short, so A's slots turn over while B is measured; A's retries come back only much later.
    WEBHOOK_TIMEOUT_MS: '500',
    WEBHOOK_RETRY_DELAYS: '1h',
  });

  beforeAll(async () => {
    pki = makeTestPki('Fairness');
    silent = await startReceiver(pki, '/silent');
    silent.fallback = 'hang';
    healthy = await startReceiver(pki, '/healthy');
  });
  afterAll(async () => {
    await service?.destroy();
    await Promise.all([silent?.close(), healthy?.close()]);
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  async function subscribed(
    on: TestService,
    url: string,
  ): Promise<{ token: string; accountId: string; endpointId: string }> {
    const acc = await provisionAccount(on);
    const api = apiClient(on.url, acc.token);
    const ep = await api('POST', `${V1}/webhook-endpoints`, { url });
    expect(ep.status).toBe(201);
    expect((await api('POST', `${V1}/webhook-endpoints/${ep.body.id}/enable`)).status).toBe(200);
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
    return { token: acc.token, accountId: acc.accountId, endpointId: ep.body.id };
  }

  const count = (sql: string, ...params: unknown[]): number =>
    (
      service!.app
        .get(ProjectionRunner)
        .db.prepare(`SELECT count(*) AS n FROM webhook_deliveries WHERE ${sql}`)
        .get(...params) as { n: number }
    ).n;
  /** The endpoint's deliveries whose attempt is due now (not those waiting for a retry). */
  const dueFor = (endpointId: string) =>
    count("endpoint_id = ? AND status = 'pending' AND next_attempt_at <= ?", endpointId, new Date().toISOString());

  it("delivers endpoint B's notifications within 1 s of being due while endpoint A times out on a 2,000-delivery backlog", async () => {
    const setup = await startService({ env: env() });
    const a = await subscribed(setup, silent.url);
    const b = await subscribed(setup, healthy.url);
    await setup.close();
    // A's backlog: 1,000 entities of A's account, created and updated, written to the store
    // while the service is down (the API is not what is tested); the fan-out finds them at start.
    await generateEntityEvents(setup.dataDir, BACKLOG, [a.accountId]);
    service = await startService({ env: env(), reuse: setup });
    const api: Api = apiClient(service.url, b.token);
    await eventually(() => (count('endpoint_id = ?', a.endpointId) === BACKLOG ? true : undefined), 50);
    const lateness: number[] = [];
    for (let i = 0; i < B_EVENTS; i++) {
      // Each of B's events while A's slots hold requests that will time out, a new round of them each time.
      await silent.waitFor(16 * (i + 1));
      const created = await api('POST', `${V1}/entities`, { name: `Healthy ${i}`, entity_type: 'llc' });
      expect(created.status).toBe(201);
      const [got] = await healthy.waitFor(1, (r) => r.json.entity_id === created.body.id);
      // Due at the event's time (its payload `timestamp`); received by the same clock.
      lateness.push(got.receivedAt - Date.parse(String(got.json.timestamp)));
    }
    // A's backlog was still there all along: B was served beside it, not after it.
    expect(dueFor(a.endpointId)).toBeGreaterThan(BACKLOG / 2);
    expect(lateness.filter((ms) => ms >= 1000)).toEqual([]);
  }, 120_000);
});
