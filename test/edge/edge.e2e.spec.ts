/**
 * The shipped edge, as deployed: real Caddy running deploy/Caddyfile over HTTPS (its internal CA,
 * trusted by the test) in front of the service with TRUST_PROXY naming Caddy's address. Callers
 * are told apart by their source address on loopback (127.0.0.x): one caller's failures brake that
 * caller only, a caller reaching the service directly cannot choose its address with
 * X-Forwarded-For, plain HTTP is redirected, cookies are Secure and HSTS is sent.
 */
import { CreateAccountCommand, CreateClientCommand } from '@filing/auth';
import { type CommandContext, ReadYourWrites } from '@filing/platform';
import { CommandBus } from '@nestjs/cqrs';
import { randomUUID } from 'node:crypto';
import { type Agent, fetch as undiciFetch } from 'undici';
import { bearer, provisionAccount } from '../support/auth';
import { type CaddyEdge, startCaddy } from '../support/caddy';
import { startService, type TestService } from '../support/service';
import { HttpSession, provisionUser } from '../support/settings-screen';

/** Failed requests a caller makes: past the per-address limits (30 token, 20 sign-in), under 45. */
const FAILURES = 45;

const context = (): CommandContext => ({
  account_id: null,
  actor: 'operator:test',
  correlation_id: randomUUID(),
  causation_id: null,
});

describe('the shipped edge (Caddy + deploy/Caddyfile, TRUST_PROXY)', () => {
  let service: TestService;
  let edge: CaddyEdge;

  beforeAll(async () => {
    // Caddy reaches the service from 127.0.0.1; callers come from other loopback addresses.
    service = await startService({ env: { TRUST_PROXY: '127.0.0.1' } });
    edge = await startCaddy({ upstreams: [service.url] });
  }, 60_000);

  afterAll(async () => {
    await edge?.stop();
    await service?.destroy();
  });

  /** fetch as one caller: through the edge (its CA trusted) or straight to the service, from `address`. */
  const caller = (address: string) => {
    const agent: Agent = edge.agent(address);
    return ((url: string, init: object = {}) => undiciFetch(url, { ...init, dispatcher: agent })) as typeof fetch;
  };

  /** A client whose secret was never verified, so nothing but the brake decides its first request. */
  async function freshClient(): Promise<{ clientId: string; clientSecret: string }> {
    const bus = service.app.get(CommandBus);
    const { accountId } = await bus.execute(new CreateAccountCommand(`Edge ${randomUUID().slice(0, 8)}`, context()));
    const client = await bus.execute(new CreateClientCommand({ accountId, kind: 'customer' }, context()));
    await service.app.get(ReadYourWrites).await(client.position);
    return { clientId: client.clientId, clientSecret: client.clientSecret };
  }

  function tokenRequest(
    fetchAs: typeof fetch,
    baseUrl: string,
    clientId: string,
    clientSecret: string,
    headers: Record<string, string> = {},
  ) {
    const body = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    });
    return fetchAs(`${baseUrl}/o/token/`, { method: 'POST', body, headers });
  }

  async function failTokens(fetchAs: typeof fetch, baseUrl: string, headers?: (i: number) => Record<string, string>) {
    const statuses: number[] = [];
    for (let i = 0; i < FAILURES; i++) {
      const res = await tokenRequest(fetchAs, baseUrl, randomUUID(), 'made-up', headers?.(i));
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    return statuses;
  }

  describe('the failed-authentication brake on the token endpoint', () => {
    it("brakes the caller whose requests fail, not another caller's fresh client behind the same proxy", async () => {
      // The brake's own caller even says it is someone else: Caddy replaces what it claims.
      const statuses = await failTokens(caller('127.0.0.2'), edge.url, () => ({ 'x-forwarded-for': '127.0.0.3' }));
      expect(statuses.slice(0, 30)).toEqual(Array(30).fill(401));
      expect(statuses.slice(30)).toEqual(Array(FAILURES - 30).fill(429));

      const other = caller('127.0.0.3');
      for (const client of [await freshClient(), await freshClient()]) {
        const res = await tokenRequest(other, edge.url, client.clientId, client.clientSecret);
        expect(res.status).toBe(200);
        expect(((await res.json()) as { access_token?: string }).access_token).toEqual(expect.any(String));
      }
      const braked = await freshClient();
      expect((await tokenRequest(caller('127.0.0.2'), edge.url, braked.clientId, braked.clientSecret)).status).toBe(
        429,
      );
    });

    it('brakes a caller reaching the service directly by its own address, whatever X-Forwarded-For it sends', async () => {
      const direct = caller('127.0.0.4');
      const statuses = await failTokens(direct, service.url, (i) => ({
        'x-forwarded-for': `198.51.100.${i}, 127.0.0.${10 + i}`,
        'x-forwarded-proto': 'https',
      }));
      expect(statuses.slice(30)).toEqual(Array(FAILURES - 30).fill(429));
      // The addresses it named were never counted: a caller coming from one through the edge is not braked.
      const client = await freshClient();
      expect((await tokenRequest(caller('127.0.0.10'), edge.url, client.clientId, client.clientSecret)).status).toBe(
        200,
      );
    });
  });

  describe("the settings screen's sign-in throttle", () => {
    async function failSignIns(session: HttpSession): Promise<number[]> {
      const statuses: number[] = [];
      for (let i = 0; i < FAILURES; i++) {
        statuses.push((await session.signIn(`nobody-${randomUUID().slice(0, 8)}@example.com`, 'wrong')).status);
      }
      return statuses;
    }

    it("brakes the caller whose sign-ins fail, not another caller's sign-in behind the same proxy", async () => {
      const { accountId } = await provisionAccount(service);
      const user = await provisionUser(service, accountId);
      const statuses = await failSignIns(new HttpSession(edge.url, {}, caller('127.0.0.5')));
      expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
      expect(statuses.slice(20)).toEqual(Array(FAILURES - 20).fill(429));

      const other = await new HttpSession(edge.url, {}, caller('127.0.0.6')).signIn(user.email, user.password);
      expect(other.status).toBe(303);
      expect(other.location).toBe('/settings/profile');
    });

    it('brakes a caller reaching the service directly by its own address, whatever X-Forwarded-For it sends', async () => {
      const { accountId } = await provisionAccount(service);
      const user = await provisionUser(service, accountId);
      const forged = { 'x-forwarded-for': '127.0.0.8' };
      const statuses = await failSignIns(new HttpSession(service.url, forged, caller('127.0.0.7')));
      expect(statuses.slice(20)).toEqual(Array(FAILURES - 20).fill(429));
      const named = await new HttpSession(edge.url, {}, caller('127.0.0.8')).signIn(user.email, user.password);
      expect(named.status).toBe(303);
    });
  });

  describe('HTTPS at the edge', () => {
    it('serves the token endpoint and the API over https, with HSTS', async () => {
      const client = await freshClient();
      const fetchAs = caller('127.0.0.9');
      const token = await tokenRequest(fetchAs, edge.url, client.clientId, client.clientSecret);
      expect(token.status).toBe(200);
      expect(token.headers.get('strict-transport-security')).toMatch(/^max-age=\d{8,}; includeSubDomains$/);
      const { access_token } = (await token.json()) as { access_token: string };
      const list = await fetchAs(`${edge.url}/external-api/v1/entities`, { headers: bearer(access_token) });
      expect(list.status).toBe(200);
      expect(list.headers.get('strict-transport-security')).toMatch(/^max-age=/);
      expect(await list.json()).toEqual({ data: [], next_cursor: null });
    });

    it('answers plain http with a redirect to the same path over https', async () => {
      for (const [method, path] of [
        ['GET', '/healthz'],
        ['POST', '/o/token/'],
        ['GET', '/settings/sign-in'],
      ]) {
        const res = await undiciFetch(`${edge.httpUrl}${path}`, { method, redirect: 'manual' });
        expect([301, 302, 307, 308]).toContain(res.status);
        // The port is the edge's HTTPS port as a browser reaches it: 443 (implied) in a deployment.
        const location = new URL(res.headers.get('location') ?? '');
        expect([location.protocol, location.hostname, location.pathname]).toEqual(['https:', 'localhost', path]);
        expect(res.headers.get('set-cookie')).toBeNull();
      }
    });

    it("marks the settings screen's cookies Secure (X-Forwarded-Proto from the trusted edge)", async () => {
      const { accountId } = await provisionAccount(service);
      const user = await provisionUser(service, accountId);
      const session = new HttpSession(edge.url, {}, caller('127.0.0.9'));
      const page = await session.get('/settings/sign-in');
      expect(page.headers.get('strict-transport-security')).toMatch(/^max-age=/);
      expect(page.setCookies[0]).toMatch(/^filing_signin_csrf=.*; HttpOnly; SameSite=Strict; Secure$/);
      const signedIn = await session.signIn(user.email, user.password);
      expect(signedIn.setCookies.find((c) => c.startsWith('filing_session='))).toMatch(
        /; HttpOnly; SameSite=Strict; Secure$/,
      );
      expect((await session.get('/settings/profile')).status).toBe(200);
    });
  });
});
