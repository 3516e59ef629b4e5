/**
 * Client-secret rotation with overlap (CONTRACT.md §1, issue #50) over real HTTP on both stores:
 * `previous_secret_expires_in` keeps the old secret and its tokens working until then, 0 is the
 * old at-once rotation, a second rotation replaces a pending previous secret, and
 * `expire-previous-secret` ends the overlap at once.
 */
import { FailedAuthThrottle } from '@filing/auth';
import { provisionAccount, provisionOperator } from '../support/auth';
import { expirePreviousSecret, getClient, rotateSecret, tokenRequest, tokenStatus } from '../support/client-secrets';
import { startService, type TestService } from '../support/service';
import { eventually } from '../support/webhooks';

describe.each(['sqlite', 'esdb'] as const)('client-secret rotation on the %s store', (eventStore) => {
  let service: TestService;
  let operatorToken: string;

  beforeAll(async () => {
    service = await startService({ eventStore });
    operatorToken = (await provisionOperator(service)).token;
  }, 60_000);
  afterAll(async () => service?.destroy());
  beforeEach(() => service.app.get(FailedAuthThrottle).reset());

  const rotate = (clientId: string, body?: unknown) => rotateSecret(service.url, operatorToken, clientId, body);
  const newToken = async (clientId: string, secret: string) => {
    const res = await tokenRequest(service.url, clientId, secret);
    expect(res.status).toBe(200);
    return res.body.access_token as string;
  };

  it('with previous_secret_expires_in: 5 both secrets get tokens until then; after it only the new one works', async () => {
    const c = await provisionAccount(service);
    const rotated = await rotate(c.clientId, { previous_secret_expires_in: 5 });
    expect(rotated.status).toBe(200);
    const expiresAt = Date.parse(rotated.body.previous_secret_expires_at as string);
    // Five seconds from the rotation (decided a moment before the event is stamped).
    const keptFor = expiresAt - Date.parse(rotated.body.updated_at as string);
    expect(keptFor).toBeGreaterThan(4_000);
    expect(keptFor).toBeLessThanOrEqual(5_000);
    const secret = rotated.body.client_secret as string;
    expect(secret).not.toBe(c.clientSecret);

    // Both secrets get tokens; one of the old secret ends with it (and says so in expires_in).
    const viaOld = await tokenRequest(service.url, c.clientId, c.clientSecret);
    expect(viaOld.status).toBe(200);
    expect(viaOld.body.expires_in).toBeLessThanOrEqual(5);
    const viaNew = await tokenRequest(service.url, c.clientId, secret);
    expect(viaNew).toMatchObject({ status: 200, body: { expires_in: 3600 } });
    const oldTokens = [c.token, viaOld.body.access_token as string];
    for (const token of [...oldTokens, viaNew.body.access_token as string])
      expect(await tokenStatus(service.url, token)).toBe(200);
    // Its owner sees that the old secret is still in use, and until when it works.
    const client = await getClient(service.url, operatorToken, c.clientId);
    expect(client.body).toMatchObject({
      secret_generation: 2,
      previous_secret_expires_at: rotated.body.previous_secret_expires_at,
      previous_secret_last_used_at: expect.any(String),
      secret_last_used_at: expect.any(String),
    });

    // Then the old secret is invalid_client, and its tokens are refused; never before the expiry.
    const refused = await eventually(async () => {
      const res = await tokenRequest(service.url, c.clientId, c.clientSecret);
      return res.status === 200 ? undefined : res;
    }, 200);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(refused).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    for (const token of oldTokens) expect(await tokenStatus(service.url, token)).toBe(401);
    expect(await tokenStatus(service.url, viaNew.body.access_token as string)).toBe(200);
    expect(await tokenStatus(service.url, await newToken(c.clientId, secret))).toBe(200);
    const after = await getClient(service.url, operatorToken, c.clientId);
    expect(after.body).toMatchObject({ previous_secret_expires_at: null, previous_secret_last_used_at: null });
  }, 30_000);

  it('with 0 (or no body) the old secret and its tokens stop at once, as before', async () => {
    for (const body of [{ previous_secret_expires_in: 0 }, undefined]) {
      const c = await provisionAccount(service);
      const rotated = await rotate(c.clientId, body);
      expect(rotated).toMatchObject({ status: 200, body: { previous_secret_expires_at: null } });
      expect(await tokenStatus(service.url, c.token)).toBe(401);
      expect(await tokenRequest(service.url, c.clientId, c.clientSecret)).toMatchObject({
        status: 401,
        body: { error: 'invalid_client' },
      });
      expect(await tokenStatus(service.url, await newToken(c.clientId, rotated.body.client_secret as string))).toBe(
        200,
      );
    }
  });

  it('expire-previous-secret ends the overlap at once; again, it changes nothing', async () => {
    const c = await provisionAccount(service);
    const rotated = await rotate(c.clientId, { previous_secret_expires_in: 3600 });
    const secret = rotated.body.client_secret as string;
    const oldToken = await newToken(c.clientId, c.clientSecret);
    const freshToken = await newToken(c.clientId, secret);
    expect(await tokenStatus(service.url, oldToken)).toBe(200);

    const expired = await expirePreviousSecret(service.url, operatorToken, c.clientId);
    expect(expired).toMatchObject({ status: 200, body: { version: 2, previous_secret_expires_at: null } });
    for (const token of [c.token, oldToken]) expect(await tokenStatus(service.url, token)).toBe(401);
    expect((await tokenRequest(service.url, c.clientId, c.clientSecret)).status).toBe(401);
    expect(await tokenStatus(service.url, freshToken)).toBe(200);
    const again = await expirePreviousSecret(service.url, operatorToken, c.clientId);
    expect(again).toMatchObject({ status: 200, body: { version: 2 } });
  });

  it('a second rotation replaces the pending previous secret: at most two secrets work', async () => {
    const c = await provisionAccount(service);
    const second = await rotate(c.clientId, { previous_secret_expires_in: 3600 });
    const third = await rotate(c.clientId, { previous_secret_expires_in: 3600 });
    expect(third.body).toMatchObject({ secret_generation: 3 });
    expect((await tokenRequest(service.url, c.clientId, c.clientSecret)).status).toBe(401);
    expect(await tokenStatus(service.url, c.token)).toBe(401);
    for (const secret of [second.body.client_secret, third.body.client_secret] as string[])
      expect(await tokenStatus(service.url, await newToken(c.clientId, secret))).toBe(200);
  });

  it('400 naming previous_secret_expires_in outside 0..604800 whole seconds; nothing changes', async () => {
    const c = await provisionAccount(service);
    for (const bad of [-1, 604_801, 1.5, '60', null]) {
      const res = await rotate(c.clientId, { previous_secret_expires_in: bad });
      expect(res.status).toBe(400);
      expect((res.body.errors as { field: string }[]).map((e) => e.field)).toEqual(['previous_secret_expires_in']);
    }
    expect((await getClient(service.url, operatorToken, c.clientId)).body).toMatchObject({ version: 0 });
    expect(await tokenStatus(service.url, c.token)).toBe(200);
    const unknown = await expirePreviousSecret(service.url, operatorToken, '0193a5b2-0000-7000-8000-000000000000');
    expect(unknown.status).toBe(404);
  });
});
