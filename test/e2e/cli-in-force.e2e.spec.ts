/**
 * Issue #48: what the operator CLI acknowledged is in force for the very next request (default
 * store). The CLI is another process appending to the same DATA_DIR; the service used to see its
 * appends on a 250 ms poll, so right after `clients:revoke` returned the token still worked. Now
 * every request checks the store's head first. No wait between the command and the request here,
 * and each case runs 20 times in a row.
 */
import { FailedAuthThrottle } from '@filing/auth';
import { bearer, provisionAccount, requestToken, type ProvisionedClient } from '../support/auth';
import { resourceApi } from '../support/api';
import { runCli } from '../support/cli';
import { ProbeModule } from '../support/probe.module';
import { startService, type TestService } from '../support/service';

const ROUNDS = 20;
/** A guard against a hung run, not an assertion: 20 CLI processes take a while on a loaded machine. */
const TIMEOUT_MS = 300_000;

describe('a CLI write is in force when the command returns (sqlite)', () => {
  let service: TestService;
  const { call, create } = resourceApi(() => service);

  beforeAll(async () => {
    // A minute between polls: what makes the CLI's write seen is the per-request head check.
    service = await startService({ imports: [ProbeModule], sqlitePollIntervalMs: 60_000 });
  }, 60_000);
  afterAll(async () => service?.destroy());
  // Each round below fails one token request on purpose: 20 of them, within the brake's 30 per address.
  beforeEach(() => service.app.get(FailedAuthThrottle).reset());

  async function cli(...args: string[]): Promise<void> {
    const res = await runCli(service.dataDir, args, 60_000);
    if (res.code !== 0) throw new Error(`${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  }
  const probe = async (token: string) =>
    (await fetch(`${service.url}/external-api/v1/_probe`, { headers: bearer(token) })).status;
  const tokenStatus = async (client: ProvisionedClient, secret = client.clientSecret) => {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: secret,
    });
    return (await fetch(`${service.url}/o/token/`, { method: 'POST', body: form })).status;
  };

  it(
    'clients:revoke: the live token is refused and no new token is issued, 20 of 20',
    async () => {
      const seen: Array<[number, number]> = [];
      for (let i = 0; i < ROUNDS; i++) {
        const client = await provisionAccount(service);
        expect(await probe(client.token)).toBe(200);
        await cli('clients:revoke', client.clientId);
        seen.push([await probe(client.token), await tokenStatus(client)]);
      }
      expect(seen).toEqual(Array.from({ length: ROUNDS }, () => [401, 401]));
    },
    TIMEOUT_MS,
  );

  it(
    'clients:rotate-secret: the old secret is refused, 20 of 20',
    async () => {
      const seen: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const client = await provisionAccount(service);
        await cli('clients:rotate-secret', client.clientId);
        seen.push(await tokenStatus(client));
      }
      expect(seen).toEqual(Array.from({ length: ROUNDS }, () => 401));
    },
    TIMEOUT_MS,
  );

  it(
    'orders:complete: the order reads completed, 20 of 20',
    async () => {
      const owner = await provisionAccount(service);
      const entity = await create(owner, '/entities', { name: 'Acme LLC', entity_type: 'llc' });
      const seen: string[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const order = await create<{ id: string }>(owner, '/orders', {
          entity_id: entity.id,
          order_type: 'annual_report',
          details: { year: 2026 },
        });
        await cli('orders:complete', order.id);
        seen.push((await call(owner, 'GET', `/orders/${order.id}`)).body.status);
      }
      expect(seen).toEqual(Array.from({ length: ROUNDS }, () => 'completed'));
    },
    TIMEOUT_MS,
  );

  it('a token of a client the CLI did not touch still works', async () => {
    const client = await provisionAccount(service);
    expect(await probe(client.token)).toBe(200);
    expect(await requestToken(service.url, client.clientId, client.clientSecret)).toEqual(expect.any(String));
  });
});
