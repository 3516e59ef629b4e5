/**
 * Client-secret rotation with overlap on three service processes on the EventStoreDB test server
 * (issue #50): the expiry is an instant the rotation event holds, so every instance lets both
 * secrets and their tokens in until then and refuses the old ones after it, whichever instance
 * rotated, issued or is asked; expire-previous-secret on one instance ends the overlap on all.
 */
import { provisionOperator, requestToken } from '../support/auth';
import { expirePreviousSecret, rotateSecret, tokenRequest, tokenStatus } from '../support/client-secrets';
import { startCluster, type Cluster } from '../support/cluster';
import { eventually } from '../support/webhooks';

interface Setup {
  readonly operator: { readonly clientId: string; readonly clientSecret: string };
}

describe('client-secret rotation on a cluster of three instances (EventStoreDB test server)', () => {
  let cluster: Cluster<Setup>;
  let operatorToken: string;
  let urls: string[];

  beforeAll(async () => {
    cluster = await startCluster<Setup>({
      size: 3,
      setup: async (service) => ({ operator: await provisionOperator(service) }),
    });
    urls = cluster.instances.map((i) => i.url);
    const { clientId, clientSecret } = cluster.setup.operator;
    operatorToken = await requestToken(urls[0], clientId, clientSecret);
  }, 120_000);
  afterAll(async () => cluster?.stop());

  /** A customer client made through the operator API on one instance, with a token from another. */
  async function customerClient() {
    const account = await fetch(`${urls[0]}/internal-api/v1/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rotating Co' }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const client = await fetch(`${urls[1]}/internal-api/v1/clients`, {
      method: 'POST',
      headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: account.id }),
    }).then((r) => r.json() as Promise<{ client_id: string; client_secret: string }>);
    return { clientId: client.client_id, secret: client.client_secret };
  }

  const tokenOn = async (url: string, clientId: string, secret: string) => {
    const res = await tokenRequest(url, clientId, secret);
    expect(res.status).toBe(200);
    return res.body.access_token as string;
  };
  const statusesOn = async (token: string) => Promise.all(urls.map((url) => tokenStatus(url, token)));

  it('with 5 s kept, every instance takes both secrets until then and only the new one after', async () => {
    const c = await customerClient();
    const rotated = await rotateSecret(urls[0], operatorToken, c.clientId, { previous_secret_expires_in: 5 });
    expect(rotated.status).toBe(200);
    const expiresAt = Date.parse(rotated.body.previous_secret_expires_at as string);
    const secret = rotated.body.client_secret as string;

    // Each instance issues a token for each secret; every token works on every instance.
    const oldTokens: string[] = [];
    const newTokens: string[] = [];
    for (const url of urls) {
      oldTokens.push(await tokenOn(url, c.clientId, c.secret));
      newTokens.push(await tokenOn(url, c.clientId, secret));
    }
    for (const token of [...oldTokens, ...newTokens]) expect(await statusesOn(token)).toEqual([200, 200, 200]);

    // After the expiry: refused on every instance, never before it.
    await eventually(async () => ((await tokenStatus(urls[2], oldTokens[0])) === 401 ? true : undefined), 200);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    for (const url of urls) {
      expect(await tokenRequest(url, c.clientId, c.secret)).toMatchObject({
        status: 401,
        body: { error: 'invalid_client' },
      });
    }
    for (const token of oldTokens) expect(await statusesOn(token)).toEqual([401, 401, 401]);
    for (const token of newTokens) expect(await statusesOn(token)).toEqual([200, 200, 200]);
  }, 60_000);

  it('expire-previous-secret on one instance ends the overlap on all of them', async () => {
    const c = await customerClient();
    const rotated = await rotateSecret(urls[1], operatorToken, c.clientId, { previous_secret_expires_in: 3600 });
    const secret = rotated.body.client_secret as string;
    const oldToken = await tokenOn(urls[2], c.clientId, c.secret);
    const newToken = await tokenOn(urls[0], c.clientId, secret);
    expect(await statusesOn(oldToken)).toEqual([200, 200, 200]);

    const expired = await expirePreviousSecret(urls[2], operatorToken, c.clientId);
    expect(expired).toMatchObject({ status: 200, body: { previous_secret_expires_at: null } });
    // In force on the instance that took it at once; the others within their catch-up.
    expect(await tokenStatus(urls[2], oldToken)).toBe(401);
    await eventually(async () => ((await statusesOn(oldToken)).every((s) => s === 401) ? true : undefined), 50);
    for (const url of urls) expect((await tokenRequest(url, c.clientId, c.secret)).status).toBe(401);
    expect(await statusesOn(newToken)).toEqual([200, 200, 200]);
  }, 60_000);
});
