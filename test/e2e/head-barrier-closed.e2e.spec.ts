/**
 * Issue #48: with EventStoreDB (over TLS, with credentials, as deployed) the per-request head
 * barrier fails closed for authentication. When the store's head cannot be read in time, this
 * instance cannot know whether a token, client or session was revoked elsewhere: a request that
 * could authenticate gets 503 problem+json with Retry-After, never an answer from possibly stale
 * read models. A request with no credentials at all is not held up.
 */
import { HEAD_BARRIER_TIMEOUT_MS } from '@filing/platform';
import { startEsdbTestServer } from '../esdb-test-server/harness';
import { bearer, provisionAccount, type ProvisionedClient } from '../support/auth';
import { ProbeModule } from '../support/probe.module';
import { startService, type TestService } from '../support/service';
import { eventually } from '../support/webhooks';

describe('the head barrier on a slow EventStoreDB (TLS, credentials)', () => {
  let service: TestService;
  let client: ProvisionedClient;

  beforeAll(async () => {
    const esdb = await startEsdbTestServer({ secure: true });
    service = await startService({ eventStore: 'esdb', reuse: { esdb }, imports: [ProbeModule] });
    client = await provisionAccount(service);
  }, 60_000);
  afterAll(async () => {
    await service?.esdb?.setReadDelay(0);
    await service?.destroy();
  });

  const probe = (headers: Record<string, string> = {}) =>
    fetch(`${service.url}/external-api/v1/_probe`, { headers: { ...bearer(client.token), ...headers } });
  const tokenRequest = () =>
    fetch(`${service.url}/o/token/`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });

  it('answers 503 to a bearer token and to a token request while the head cannot be read; 200 once it can', async () => {
    expect((await probe()).status).toBe(200);

    // Every read of the store now takes longer than the barrier waits.
    await service.esdb!.setReadDelay(HEAD_BARRIER_TIMEOUT_MS + 2_000);
    const refused = await probe();
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(await refused.json()).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect((await tokenRequest()).status).toBe(503);
    // No credentials, nothing to trust: the public route is not held to the store.
    expect((await fetch(`${service.url}/_probe`)).status).toBe(200);

    await service.esdb!.setReadDelay(0);
    await eventually(async () => ((await probe()).status === 200 ? true : undefined));
    expect((await tokenRequest()).status).toBe(200);
  }, 60_000);
});
