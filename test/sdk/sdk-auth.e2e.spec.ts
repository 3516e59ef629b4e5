/**
 * The SDK's token manager against the real token endpoint and bearer guard: Basic client
 * authentication, refresh 60 s before expiry (service TTL 65 s, SDK clock advanced by hand),
 * one token request for concurrent calls, one retry after a 401 (token revoked, secret rotated
 * through the operator API), and typed OAuth errors.
 */
import { ApiError, FilingClient, OAuthError } from '@filing/client';
import { provisionAccount, provisionOperator, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { countingFetch, TestClock } from './sdk-support';

const TTL = 65;

describe('SDK token manager against the service', () => {
  let service: TestService;
  let operator: ProvisionedClient;

  beforeAll(async () => {
    service = await startService({ env: { TOKEN_TTL_SECONDS: String(TTL) } });
    operator = await provisionOperator(service);
  });
  afterAll(async () => {
    await service?.destroy();
  });

  async function sdk() {
    const creds = await provisionAccount(service);
    const counter = countingFetch();
    const clock = new TestClock();
    const client = new FilingClient({
      baseUrl: service.url,
      clientId: creds.clientId,
      clientSecret: creds.clientSecret,
      fetch: counter.fetch,
      clock,
    });
    return { client, counter, clock, creds };
  }

  async function introspect(creds: ProvisionedClient, token: string) {
    const res = await fetch(`${service.url}/o/introspect/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: creds.clientId, client_secret: creds.clientSecret, token }),
    });
    return (await res.json()) as { active: boolean; exp?: number };
  }

  async function operatorPost(path: string) {
    const res = await fetch(`${service.url}/internal-api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operator.token}` },
    });
    expect(res.status).toBeLessThan(300);
    return res.json() as Promise<Record<string, unknown>>;
  }

  it('gets a token with HTTP Basic and refreshes it 60 s before the expiry the service set', async () => {
    const { client, counter, clock, creds } = await sdk();
    await expect(client.entities.list()).resolves.toMatchObject({ data: [] });
    const first = client.tokens.peek()!;
    expect(first).toMatchObject({ tokenType: 'Bearer', expiresInSeconds: TTL, scope: 'read write' });

    // The service's own view of the token: the SDK plans to replace it a minute before it dies.
    const info = await introspect(creds, first.accessToken);
    expect(info.active).toBe(true);
    expect(first.expiresAt).toBeLessThanOrEqual(info.exp! * 1000 + 1000);
    expect(first.refreshAt).toBe(first.expiresAt - 60_000);

    clock.advance(TTL - 60 - 1); // 1 s before the refresh point: still the cached token
    await client.entities.list();
    expect(counter.count('/o/token/')).toBe(1);
    expect(client.tokens.peek()!.accessToken).toBe(first.accessToken);

    clock.advance(1); // the refresh point, while the service still accepts the old token
    expect((await introspect(creds, first.accessToken)).active).toBe(true);
    await client.entities.list();
    expect(counter.count('/o/token/')).toBe(2);
    const second = client.tokens.peek()!;
    expect(second.accessToken).not.toBe(first.accessToken);
    expect((await introspect(creds, second.accessToken)).active).toBe(true);
    // No call ever needed a retry: the SDK never sent a token the service refused.
    expect(counter.count('/external-api/')).toBe(3);
  });

  it('shares one token request among concurrent calls, at start and at refresh', async () => {
    const { client, counter, clock } = await sdk();
    const burst = () =>
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2 ? client.entities.list({ limit: 1 }) : client.webhookSettings.get(),
        ),
      );
    await burst();
    expect(counter.count('/o/token/')).toBe(1);
    clock.advance(TTL - 60);
    await burst();
    expect(counter.count('/o/token/')).toBe(2);
    expect(counter.count('/external-api/')).toBe(40);
  });

  it('retries once with a fresh token after the service revoked the cached one (401)', async () => {
    const { client, counter, creds } = await sdk();
    await client.entities.list();
    const revoked = client.tokens.peek()!.accessToken;
    const res = await fetch(`${service.url}/o/revoke_token/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${creds.clientId}:${creds.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: revoked }),
    });
    expect(res.status).toBe(200);
    expect((await introspect(creds, revoked)).active).toBe(false);

    const created = await client.entities.create({ name: 'After revocation LLC', entity_type: 'llc' });
    expect(created.name).toBe('After revocation LLC');
    // POST with the revoked token (401), token request, the same POST again: exactly one retry.
    expect(counter.log.slice(-3)).toEqual([
      'POST /external-api/v1/entities',
      'POST /o/token/',
      'POST /external-api/v1/entities',
    ]);
    expect(client.tokens.peek()!.accessToken).not.toBe(revoked);
    const list = await client.entities.list();
    expect(list.data.map((e) => e.id)).toEqual([created.id]); // created once, not twice
  });

  it('after the operator rotates the secret: the 401 is retried once, the refresh fails as OAuthError invalid_client', async () => {
    const { client, counter, creds } = await sdk();
    await client.entities.list();
    const rotated = await operatorPost(`/clients/${creds.clientId}/rotate-secret`);
    expect(rotated.client_secret).toEqual(expect.any(String));

    const before = counter.log.length;
    const err = await client.entities.list().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ status: 401, error: 'invalid_client' });
    expect(counter.log.slice(before)).toEqual(['GET /external-api/v1/entities', 'POST /o/token/']);

    // With the new secret the same account works again.
    const renewed = new FilingClient({
      baseUrl: service.url,
      clientId: creds.clientId,
      clientSecret: String(rotated.client_secret),
    });
    await expect(renewed.entities.list()).resolves.toMatchObject({ data: [] });
  });

  it('after the operator revokes the client: the 401 is retried once and the refresh is refused', async () => {
    const { client, counter, creds } = await sdk();
    await client.entities.list();
    await operatorPost(`/clients/${creds.clientId}/revoke`);
    const before = counter.log.length;
    await expect(client.webhookSettings.get()).rejects.toMatchObject({
      name: 'OAuthError',
      status: 401,
      error: 'invalid_client',
    });
    expect(counter.log.slice(before)).toEqual(['GET /external-api/v1/webhook-settings', 'POST /o/token/']);
  });

  it('revokes its own token at /o/revoke_token/ and gets a new one on the next call', async () => {
    const { client, counter, creds } = await sdk();
    await client.entities.list();
    const token = client.tokens.peek()!.accessToken;
    await client.tokens.revoke();
    expect((await introspect(creds, token)).active).toBe(false);
    expect(client.tokens.peek()).toBeNull();
    await client.entities.list();
    expect(counter.log.filter((l) => l.startsWith('POST /o/'))).toEqual([
      'POST /o/token/',
      'POST /o/revoke_token/',
      'POST /o/token/',
    ]);
    expect(counter.count('/external-api/')).toBe(2);
  });

  it('types token-endpoint refusals: wrong secret, scope beyond the client', async () => {
    const { creds } = await sdk();
    const wrong = new FilingClient({
      baseUrl: service.url,
      clientId: creds.clientId,
      clientSecret: `${creds.clientSecret}x`,
    });
    await expect(wrong.entities.list()).rejects.toMatchObject({
      name: 'OAuthError',
      status: 401,
      error: 'invalid_client',
    });
    const greedy = new FilingClient({
      baseUrl: service.url,
      clientId: creds.clientId,
      clientSecret: creds.clientSecret,
      scope: 'read write operator',
    });
    await expect(greedy.entities.list()).rejects.toMatchObject({
      status: 400,
      error: 'invalid_scope',
      errorDescription: expect.any(String),
    });
  });

  it('a read-only token gets a typed 403 on writes', async () => {
    const { creds } = await sdk();
    const reader = new FilingClient({
      baseUrl: service.url,
      clientId: creds.clientId,
      clientSecret: creds.clientSecret,
      scope: 'read',
    });
    await expect(reader.entities.list()).resolves.toMatchObject({ data: [] });
    const err = (await reader.entities.create({ name: 'Nope LLC', entity_type: 'llc' }).catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(403);
  });
});
