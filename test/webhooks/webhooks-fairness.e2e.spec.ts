/**
 * CONTRACT.md §5: "One endpoint's backlog never delays another endpoint's due deliveries."
 * Endpoint A never answers (every attempt times out) and has 2,000 due deliveries; endpoint B,
 * of another account, must still get each of its notifications within 1 s of it being due. Then
 * the same with five such endpoints at once, each holding its whole per-endpoint share of
 * requests for as long as its timeout: the slots left overall must still serve B at once.
 */
import { ProjectionRunner } from '@filing/platform';
import { DISPATCHER_LIMITS } from '@filing/webhooks';
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
  /** Each its own origin, as separate customers' servers are. */
  let deadOnes: WebhookReceiver[] = [];
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
    await Promise.all([silent?.close(), healthy?.close(), ...deadOnes.map((r) => r.close())]);
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  /** A new account with one enabled endpoint per URL, its notifications on. */
  async function subscribed(
    on: TestService,
    ...urls: string[]
  ): Promise<{ token: string; accountId: string; endpointId: string }> {
    const acc = await provisionAccount(on);
    const api = apiClient(on.url, acc.token);
    const endpointIds: string[] = [];
    for (const url of urls) {
      const ep = await api('POST', `${V1}/webhook-endpoints`, { url });
      expect(ep.status).toBe(201);
      expect((await api('POST', `${V1}/webhook-endpoints/${ep.body.id}/enable`)).status).toBe(200);
      endpointIds.push(ep.body.id);
    }
    expect((await api('PUT', `${V1}/webhook-settings`, { notifications_enabled: true })).status).toBe(200);
    return { token: acc.token, accountId: acc.accountId, endpointId: endpointIds[0] };
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

  it("delivers endpoint B's notifications within 1 s while five endpoints that never answer hold every slot they may", async () => {
    await service?.destroy();
    service = undefined;
    const DEAD = 5;
    const dead = await Promise.all(Array.from({ length: DEAD }, (_, i) => startReceiver(pki, `/dead-${i}`)));
    deadOnes = dead;
    for (const r of dead) r.fallback = 'hang';
    // Longer than the test: a dead endpoint's requests keep their slots until it ends.
    const slowEnv = () => ({ ...env(), WEBHOOK_TIMEOUT_MS: '60000' });
    const setup = await startService({ env: slowEnv() });
    const a = await subscribed(setup, ...dead.map((r) => r.url));
    const b = await subscribed(setup, healthy.url);
    await setup.close();
    // Enough due deliveries for each dead endpoint to fill its share and its lane.
    const backlog = 2 * (DISPATCHER_LIMITS.perEndpoint + DISPATCHER_LIMITS.queuedPerEndpoint);
    await generateEntityEvents(setup.dataDir, backlog, [a.accountId]);
    service = await startService({ env: slowEnv(), reuse: setup });
    const api: Api = apiClient(service.url, b.token);
    const lateness: number[] = [];
    /** `promise`'s value, or null once `ms` have passed: a starved delivery fails the test, not its timeout. */
    const within = <T>(ms: number, promise: Promise<T>) =>
      Promise.race([promise, new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))]);
    try {
      // Every dead endpoint holds its whole share of requests, unanswered (as many as may be sent).
      await within(5000, Promise.all(dead.map((r) => r.waitFor(DISPATCHER_LIMITS.perEndpoint))));
      for (let i = 0; i < B_EVENTS; i++) {
        const created = await api('POST', `${V1}/entities`, { name: `Beside the dead ${i}`, entity_type: 'llc' });
        expect(created.status).toBe(201);
        const got = await within(
          2500,
          healthy.waitFor(1, (r) => r.json.entity_id === created.body.id),
        );
        lateness.push(got ? got[0].receivedAt - Date.parse(String(got[0].json.timestamp)) : Infinity);
      }
      // None of the dead endpoints' requests was over: B was served beside them, not after a timeout.
      expect(dead.map((r) => r.requests.filter((q) => q.answered !== null).length)).toEqual(dead.map(() => 0));
      expect(lateness.filter((ms) => ms >= 1000)).toEqual([]);
    } finally {
      // Their connections cut, the service's shutdown does not wait out the 60 s timeout.
      await Promise.all(dead.map((r) => r.close()));
    }
  }, 120_000);
});
