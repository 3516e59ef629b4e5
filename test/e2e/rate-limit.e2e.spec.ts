/**
 * The external API's per-account rate limit (API_RATE_LIMIT; CONTRACT.md §2 lists the 429):
 * every answer says what is left, the request over the budget is a 429 problem with
 * Retry-After that appends nothing, an account's clients share one budget, other accounts,
 * unauthenticated requests, the token endpoint and the operator API are not touched by it, and
 * the budget comes back once the window has passed.
 */
import { ApiError, FilingClient } from '@filing/client';
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { expectProblem, resourceApi } from '../support/api';
import { bearer, provisionAccount, provisionClient, provisionOperator, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';

const LIMIT = 5;
const WINDOW_S = 3;

describe('per-account rate limit on the external API', () => {
  let service: TestService;
  const api = resourceApi(() => service);

  beforeAll(async () => {
    service = await startService({ env: { API_RATE_LIMIT: `${LIMIT}/${WINDOW_S}s` } });
  });
  afterAll(async () => service?.destroy());

  /** Spends the whole budget of `client`'s account, checking the headers each answer carries. */
  async function spend(client: ProvisionedClient): Promise<void> {
    for (let used = 1; used <= LIMIT; used++) {
      const res = await api.call(client, 'GET', '/entities');
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(res.headers['x-ratelimit-remaining']).toBe(String(LIMIT - used));
      expect(Number(res.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(1);
      expect(Number(res.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(WINDOW_S);
    }
  }

  it('answers 429 problem+json with Retry-After over the budget, on any route, and appends nothing', async () => {
    const client = await provisionAccount(service);
    await spend(client);
    const store = service.app.get<EventStore>(EVENT_STORE);
    const head = await store.headPosition();

    const over = await api.call(client, 'POST', '/entities', { name: 'Over Budget LLC', entity_type: 'llc' });
    expectProblem(over, 429);
    expect(over.body.detail).toMatch(new RegExp(`more than ${LIMIT} requests in ${WINDOW_S} s`));
    const retryAfter = Number(over.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_S);
    expect([
      over.headers['x-ratelimit-limit'],
      over.headers['x-ratelimit-remaining'],
      over.headers['x-ratelimit-reset'],
    ]).toEqual([String(LIMIT), '0', String(retryAfter)]);
    expect(await store.headPosition()).toEqual(head);
    expectProblem(await api.call(client, 'GET', '/orders'), 429);
  });

  it('shares one budget among the clients of an account and leaves other accounts alone', async () => {
    const first = await provisionAccount(service);
    const second = await provisionClient(service, first.accountId);
    const other = await provisionAccount(service);
    await spend(first);
    expectProblem(await api.call(second, 'GET', '/tasks'), 429);
    const untouched = await api.call(other, 'GET', '/tasks');
    expect([untouched.status, untouched.headers['x-ratelimit-remaining']]).toEqual([200, String(LIMIT - 1)]);
  });

  it('counts only authenticated requests: no token or a bad one is a 401, and the token endpoint and operator API stay open', async () => {
    const client = await provisionAccount(service);
    await spend(client);
    for (const headers of [{}, bearer('not-a-token')]) {
      const res = await fetch(`${service.url}/external-api/v1/entities`, { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    // A new token for the same client, and the operator's calls, are not external API calls.
    const token = await fetch(`${service.url}/o/token/`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret,
      }),
    });
    expect(token.status).toBe(200);
    const operator = await provisionOperator(service);
    for (let i = 0; i <= LIMIT; i++) {
      const res = await fetch(`${service.url}/internal-api/v1/accounts/${client.accountId}`, {
        headers: bearer(operator.token),
      });
      expect(res.status).toBe(200);
    }
  });

  it('reaches an SDK caller as an ApiError with the wait in retryAfterSeconds', async () => {
    const client = await provisionAccount(service);
    await spend(client);
    const sdk = new FilingClient({
      baseUrl: service.url,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
    });
    const err = await sdk.entities.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(429);
    expect((err as ApiError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('gives the budget back once the window has passed', async () => {
    const client = await provisionAccount(service);
    await spend(client);
    const over = await api.call(client, 'GET', '/entities');
    expectProblem(over, 429);
    await new Promise((r) => setTimeout(r, Number(over.headers['retry-after']) * 1000 + 100));
    const again = await api.call(client, 'GET', '/entities');
    expect(again.status).toBe(200);
  }, 15_000);
});
