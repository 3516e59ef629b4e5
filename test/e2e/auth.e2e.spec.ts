/**
 * CONTRACT.md §1 over real HTTP: every row of the token endpoint's table and of the bearer
 * table, revocation, introspection, rotation, restart, and the operator API (§3) — on both
 * stores. The whole run's logs (at trace level) and every stored event are then searched for
 * each secret and token the run used.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { FailedAuthThrottle } from '@filing/auth';
import { bearer, provisionAccount, provisionClient, provisionOperator, requestToken } from '../support/auth';
import { ProbeModule } from '../support/probe.module';
import { startService, type TestService, type TestServiceOptions } from '../support/service';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe.each(['sqlite', 'esdb'] as const)('authentication on the %s store', (eventStore) => {
  let service: TestService;
  const logs: string[] = [];
  /** Every secret and token this run saw: none may appear in a log line or an event. */
  const secrets = new Set<string>();
  const options = (extra: Partial<TestServiceOptions> = {}): TestServiceOptions => ({
    eventStore,
    imports: [ProbeModule],
    env: { LOG_LEVEL: 'trace' },
    logDestination: { write: (line: string) => void logs.push(line) },
    ...extra,
  });

  beforeAll(async () => {
    service = await startService(options());
  }, 60_000);
  afterAll(async () => service?.destroy());
  beforeEach(() => service.app.get(FailedAuthThrottle).reset());

  const keep = <T extends { clientSecret: string; token: string }>(c: T): T => {
    secrets.add(c.clientSecret);
    secrets.add(c.token);
    return c;
  };
  const customer = async (scope?: string) => keep(await provisionAccount(service, { scope }));
  const operator = async () => keep(await provisionOperator(service));

  async function call(method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) {
    const res = await fetch(`${service.url}${path}`, { method, headers: init.headers, body: init.body });
    const text = await res.text();
    let body: unknown = undefined;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    return { status: res.status, headers: res.headers, body: body as Record<string, unknown> };
  }
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const postForm = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    call('POST', path, { headers: { ...FORM, ...headers }, body: form(fields) });
  const basic = (id: string, secret: string) => ({
    authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`,
  });
  const json = (token: string, body?: unknown) =>
    body === undefined
      ? { headers: bearer(token) }
      : { headers: { ...bearer(token), 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const tokenFor = async (clientId: string, clientSecret: string, scope?: string) => {
    const token = await requestToken(service.url, clientId, clientSecret, scope);
    secrets.add(token);
    return token;
  };
  function expectNoStore(res: { headers: Headers }) {
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
  }

  describe('POST /o/token/', () => {
    it('issues a Bearer token for the client credentials in the form', async () => {
      const c = await customer();
      const res = await postForm('/o/token/', {
        grant_type: 'client_credentials',
        client_id: c.clientId,
        client_secret: c.clientSecret,
      });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
      expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read write' });
      const token = res.body.access_token as string;
      secrets.add(token);
      expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(32);
      expectNoStore(res);
      // Usable on the very next call.
      expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(token) })).status).toBe(200);
    });

    it('accepts HTTP Basic with a form-urlencoded client_id and secret', async () => {
      const c = await customer();
      const everyCharEncoded = [...c.clientSecret]
        .map((ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)
        .join('');
      const header = `Basic ${Buffer.from(`${c.clientId}:${everyCharEncoded}`).toString('base64')}`;
      const res = await postForm('/o/token/', { grant_type: 'client_credentials' }, { authorization: header });
      expect(res.status).toBe(200);
      secrets.add(res.body.access_token as string);
      expectNoStore(res);
    });

    it('narrows the grant to the scope asked for', async () => {
      const c = await customer();
      const res = await postForm(
        '/o/token',
        { grant_type: 'client_credentials', scope: 'read' },
        basic(c.clientId, c.clientSecret),
      );
      expect(res.status).toBe(200);
      expect(res.body.scope).toBe('read');
      const token = res.body.access_token as string;
      secrets.add(token);
      expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(token) })).status).toBe(200);
      expect((await call('POST', '/external-api/v1/_probe', { headers: bearer(token) })).status).toBe(403);
    });

    it('400 invalid_request when the body is not a form', async () => {
      const c = await customer();
      for (const [type, body] of [
        [
          'application/json',
          JSON.stringify({ grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }),
        ],
        ['text/plain', 'grant_type=client_credentials'],
        [undefined, undefined],
      ] as const) {
        const res = await call('POST', '/o/token/', { headers: type ? { 'content-type': type } : {}, body });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
        expectNoStore(res);
      }
    });

    it('400 invalid_request without grant_type, 400 unsupported_grant_type for another grant', async () => {
      const c = await customer();
      const missing = await postForm('/o/token/', { client_id: c.clientId, client_secret: c.clientSecret });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toBe('invalid_request');
      expectNoStore(missing);
      const other = await postForm('/o/token/', {
        grant_type: 'password',
        client_id: c.clientId,
        client_secret: c.clientSecret,
      });
      expect(other.status).toBe(400);
      expect(other.body.error).toBe('unsupported_grant_type');
      expectNoStore(other);
    });

    it('400 invalid_request when the client authenticates both in the body and by HTTP Basic', async () => {
      const c = await customer();
      const res = await postForm(
        '/o/token/',
        { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret },
        basic(c.clientId, c.clientSecret),
      );
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expectNoStore(res);
    });

    it('401 invalid_client for an unknown client or a wrong secret; Basic gets a Basic challenge', async () => {
      const c = await customer();
      const cases: Array<{ client_id: string; client_secret?: string }> = [
        { client_id: '01900000-0000-7000-8000-000000000000', client_secret: c.clientSecret },
        { client_id: 'not-a-client', client_secret: 'x' },
        { client_id: c.clientId, client_secret: c.clientSecret.slice(1) },
        { client_id: c.clientId },
      ];
      for (const fields of cases) {
        const inBody = await postForm('/o/token/', { grant_type: 'client_credentials', ...fields });
        expect(inBody.status).toBe(401);
        expect(inBody.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
        expect(inBody.headers.get('www-authenticate')).toBeNull();
        expectNoStore(inBody);
        if (!fields.client_secret) continue;
        const byBasic = await postForm(
          '/o/token/',
          { grant_type: 'client_credentials' },
          basic(fields.client_id, fields.client_secret),
        );
        expect(byBasic.status).toBe(401);
        expect(byBasic.body.error).toBe('invalid_client');
        expect(byBasic.headers.get('www-authenticate')).toBe('Basic realm="token"');
        expectNoStore(byBasic);
      }
    });

    it('401 invalid_client for a revoked client, and its tokens stop working at once', async () => {
      const c = await customer();
      const op = await operator();
      // Used first, so the guard has a verdict for it to forget.
      expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(c.token) })).status).toBe(200);
      const revoked = await call('POST', `/internal-api/v1/clients/${c.clientId}/revoke`, json(op.token));
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ client_id: c.clientId, status: 'revoked' });
      const res = await postForm('/o/token/', { grant_type: 'client_credentials' }, basic(c.clientId, c.clientSecret));
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="token"');
      const probe = await call('GET', '/external-api/v1/_probe', { headers: bearer(c.token) });
      expect(probe.status).toBe(401);
      expect(probe.headers.get('www-authenticate')).toBe('Bearer realm="external-api", error="invalid_token"');
    });

    it('400 invalid_scope for a scope beyond what the client is allowed', async () => {
      const readOnly = await customer('read');
      const op = await operator();
      for (const [c, scope] of [
        [readOnly, 'write'],
        [readOnly, 'read write'],
        [op, 'read'],
      ] as const) {
        const res = await postForm(
          '/o/token/',
          { grant_type: 'client_credentials', scope },
          basic(c.clientId, c.clientSecret),
        );
        expect(res.status).toBe(400);
        expect(res.body.error).toBe('invalid_scope');
        expectNoStore(res);
      }
      const customerAsksOperator = await customer();
      const res = await postForm(
        '/o/token/',
        { grant_type: 'client_credentials', scope: 'operator' },
        basic(customerAsksOperator.clientId, customerAsksOperator.clientSecret),
      );
      expect(res.body.error).toBe('invalid_scope');
    });

    if (eventStore === 'sqlite') {
      it('429 with Retry-After after too many failures for one client_id; its verified secret still works', async () => {
        const c = await customer();
        const wrong = { grant_type: 'client_credentials', client_id: c.clientId, client_secret: 'wrong' };
        for (let i = 0; i < 10; i++) expect((await postForm('/o/token/', wrong)).status).toBe(401);
        const limited = await postForm('/o/token/', { ...wrong, client_secret: 'still wrong' });
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(limited.body).toEqual({ error: 'too_many_requests', error_description: expect.any(String) });
        expectNoStore(limited);
        // The secret was verified when the client was provisioned: its owner is not locked out.
        expect((await postForm('/o/token/', { ...wrong, client_secret: c.clientSecret })).status).toBe(200);
      });

      it('429 with Retry-After after too many failures from one address, whatever the client_id', async () => {
        const attempts = Array.from({ length: 30 }, (_, i) =>
          postForm('/o/token/', { grant_type: 'client_credentials', client_id: `unknown-${i}`, client_secret: 'x' }),
        );
        expect((await Promise.all(attempts)).map((r) => r.status)).toEqual(Array(30).fill(401));
        const limited = await postForm('/o/token/', {
          grant_type: 'client_credentials',
          client_id: 'unknown-x',
          client_secret: 'x',
        });
        expect(limited.status).toBe(429);
        expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      });
    }
  });

  describe('bearer tokens on /external-api/v1', () => {
    it('401 with a realm-only challenge without Authorization', async () => {
      for (const method of ['GET', 'POST']) {
        const res = await call(method, '/external-api/v1/_probe');
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="external-api"');
      }
    });

    it('401 invalid_token for an unknown or malformed token', async () => {
      const c = await customer();
      for (const authorization of [
        'Bearer unknown',
        `Bearer ${c.token.slice(1)}`,
        `Bearer ${c.token} extra`,
        'Bearer',
        `Basic ${Buffer.from('a:b').toString('base64')}`,
        c.token,
      ]) {
        const res = await call('GET', '/external-api/v1/_probe', { headers: { authorization } });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="external-api", error="invalid_token"');
        expect(res.body.error).toBe('invalid_token');
      }
    });

    it('403 insufficient_scope naming the scope: GET/HEAD need read, other methods write', async () => {
      const readOnly = await customer('read');
      const writeOnly = await customer('write');
      for (const method of ['GET', 'HEAD']) {
        const res = await call(method, '/external-api/v1/_probe', { headers: bearer(writeOnly.token) });
        expect(res.status).toBe(403);
        expect(res.headers.get('www-authenticate')).toBe(
          'Bearer realm="external-api", error="insufficient_scope", scope="read"',
        );
        expect((await call(method, '/external-api/v1/_probe', { headers: bearer(readOnly.token) })).status).toBe(200);
      }
      for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) {
        const res = await call(method, '/external-api/v1/_probe', { headers: bearer(readOnly.token) });
        expect(res.status).toBe(403);
        expect(res.headers.get('www-authenticate')).toBe(
          'Bearer realm="external-api", error="insufficient_scope", scope="write"',
        );
        expect(res.body.error).toBe('insufficient_scope');
        expect((await call(method, '/external-api/v1/_probe', { headers: bearer(writeOnly.token) })).status).toBe(200);
      }
    });

    it('puts the principal and command context on the request', async () => {
      const c = await customer();
      const res = await call('GET', '/external-api/v1/_probe', {
        headers: { ...bearer(c.token), 'x-request-id': 'req-42' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        principal: { kind: 'client', accountId: c.accountId, subjectId: c.clientId, scopes: ['read', 'write'] },
        context: {
          account_id: c.accountId,
          actor: `client:${c.clientId}`,
          correlation_id: 'req-42',
          causation_id: null,
        },
      });
    });

    it('400 invalid_request for a token in the query string or the body', async () => {
      const c = await customer();
      const inQuery = await call('GET', `/external-api/v1/_probe?access_token=${c.token}`);
      expect(inQuery.status).toBe(400);
      expect(inQuery.headers.get('www-authenticate')).toBe('Bearer realm="external-api", error="invalid_request"');
      expect(inQuery.body.error).toBe('invalid_request');
      const inBody = await call('POST', '/external-api/v1/_probe', {
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ access_token: c.token }),
      });
      expect(inBody.status).toBe(400);
      expect(inBody.headers.get('www-authenticate')).toBe('Bearer realm="external-api", error="invalid_request"');
    });

    it('/internal-api/v1 needs the operator scope', async () => {
      const c = await customer();
      const op = await operator();
      const res = await call('GET', '/internal-api/v1/_probe', { headers: bearer(c.token) });
      expect(res.status).toBe(403);
      expect(res.headers.get('www-authenticate')).toBe(
        'Bearer realm="internal-api", error="insufficient_scope", scope="operator"',
      );
      const none = await call('GET', '/internal-api/v1/accounts');
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="internal-api"');
      const ok = await call('POST', '/internal-api/v1/_probe', { headers: bearer(op.token) });
      expect(ok.status).toBe(200);
      expect(ok.body.principal).toEqual({
        kind: 'operator',
        accountId: null,
        subjectId: op.clientId,
        scopes: ['operator'],
      });
    });

    it('public paths need no token', async () => {
      expect((await call('GET', '/_probe')).status).toBe(200);
      expect((await call('GET', '/healthz')).status).toBe(200);
    });
  });

  describe('rotation, revocation, introspection', () => {
    it('rotating the secret invalidates the old secret and every token issued with it, at once', async () => {
      const c = await customer();
      const op = await operator();
      const rotated = await call('POST', `/internal-api/v1/clients/${c.clientId}/rotate-secret`, json(op.token));
      expect(rotated.status).toBe(200);
      const newSecret = rotated.body.client_secret as string;
      secrets.add(newSecret);
      expect(newSecret).not.toBe(c.clientSecret);
      expect(rotated.body).toMatchObject({ client_id: c.clientId, secret_generation: 2, status: 'active' });

      const old = await call('GET', '/external-api/v1/_probe', { headers: bearer(c.token) });
      expect(old.status).toBe(401);
      expect(old.headers.get('www-authenticate')).toBe('Bearer realm="external-api", error="invalid_token"');
      const oldSecret = await postForm(
        '/o/token/',
        { grant_type: 'client_credentials' },
        basic(c.clientId, c.clientSecret),
      );
      expect(oldSecret.status).toBe(401);
      const token = await tokenFor(c.clientId, newSecret);
      expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(token) })).status).toBe(200);
    });

    it('introspection: active with its fields for a live own token; inactive for unknown, revoked or foreign ones', async () => {
      const c = await customer();
      const other = keep(await provisionClient(service, c.accountId));
      const auth = basic(c.clientId, c.clientSecret);
      const before = Math.floor(Date.now() / 1000);
      const live = await postForm('/o/introspect/', { token: c.token }, auth);
      expect(live.status).toBe(200);
      expect(live.body).toEqual({
        active: true,
        scope: 'read write',
        client_id: c.clientId,
        token_type: 'Bearer',
        exp: expect.any(Number),
        iat: expect.any(Number),
      });
      expect(live.body.exp).toBe((live.body.iat as number) + 3600);
      expect(live.body.iat).toBeLessThanOrEqual(before);
      expectNoStore(live);

      for (const token of ['unknown', other.token]) {
        const res = await postForm('/o/introspect/', { token }, auth);
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ active: false });
      }
      const unauthenticated = await postForm('/o/introspect/', { token: c.token });
      expect(unauthenticated.status).toBe(401);
      expect(unauthenticated.body.error).toBe('invalid_client');
      const noToken = await postForm('/o/introspect/', {}, auth);
      expect(noToken.status).toBe(400);
      expect(noToken.body.error).toBe('invalid_request');
    });

    it("revocation (RFC 7009): 200 for any token, but only the client's own tokens are revoked", async () => {
      const c = await customer();
      const other = keep(await provisionClient(service, c.accountId));
      const auth = basic(c.clientId, c.clientSecret);

      const foreign = await postForm('/o/revoke_token/', { token: other.token }, auth);
      expect(foreign.status).toBe(200);
      expectNoStore(foreign);
      expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(other.token) })).status).toBe(200);

      expect(
        (await postForm('/o/revoke_token/', { token: 'unknown', token_type_hint: 'access_token' }, auth)).status,
      ).toBe(200);

      expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(c.token) })).status).toBe(200);
      const own = await postForm('/o/revoke_token/', { token: c.token }, auth);
      expect(own.status).toBe(200);
      const res = await call('GET', '/external-api/v1/_probe', { headers: bearer(c.token) });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="external-api", error="invalid_token"');
      expect((await postForm('/o/introspect/', { token: c.token }, auth)).body).toEqual({ active: false });
      expect((await postForm('/o/revoke_token/', { token: c.token }, auth)).status).toBe(200);

      const unauthenticated = await postForm('/o/revoke_token/', { token: other.token });
      expect(unauthenticated.status).toBe(401);
    });
  });

  describe('operator API', () => {
    it('accounts: create (201, Location, ETag), get, list with pagination, 404, 400 naming fields', async () => {
      const op = await operator();
      const created = await call('POST', '/internal-api/v1/accounts', json(op.token, { name: 'Acme LLC' }));
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      expect(created.body).toEqual({
        id,
        name: 'Acme LLC',
        created_at: expect.any(String),
        updated_at: expect.any(String),
        version: 0,
      });
      expect(created.headers.get('location')).toBe(`/internal-api/v1/accounts/${id}`);
      expect(created.headers.get('etag')).toBe('"0"');

      const got = await call('GET', `/internal-api/v1/accounts/${id}`, json(op.token));
      expect(got.status).toBe(200);
      expect(got.body).toEqual(created.body);

      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof call>> = await call(
          'GET',
          `/internal-api/v1/accounts?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
          json(op.token),
        );
        expect(page.status).toBe(200);
        ids.push(...(page.body.data as Array<{ id: string }>).map((a) => a.id));
        cursor = page.body.next_cursor as string | null;
      } while (cursor);
      expect(ids).toContain(id);
      expect([...ids].sort()).toEqual(ids);

      expect(
        (await call('GET', '/internal-api/v1/accounts/01900000-0000-7000-8000-000000000000', json(op.token))).status,
      ).toBe(404);
      const bad = await call('POST', '/internal-api/v1/accounts', json(op.token, { name: '', extra: 1 }));
      expect(bad.status).toBe(400);
      expect(bad.headers.get('content-type')).toContain('application/problem+json');
      expect((bad.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(['extra', 'name']);
      const badLimit = await call('GET', '/internal-api/v1/accounts?limit=0&cursor=nope', json(op.token));
      expect(badLimit.status).toBe(400);
      expect((badLimit.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual([
        'cursor',
        'limit',
      ]);
    });

    it('clients: a customer client (secret shown once) and an operator client, both usable', async () => {
      const op = await operator();
      const account = await call('POST', '/internal-api/v1/accounts', json(op.token, { name: 'Beta Inc' }));
      const accountId = account.body.id as string;
      const created = await call(
        'POST',
        '/internal-api/v1/clients',
        json(op.token, { account_id: accountId, scope: 'read' }),
      );
      expect(created.status).toBe(201);
      const secret = created.body.client_secret as string;
      const clientId = created.body.client_id as string;
      secrets.add(secret);
      expect(created.body).toMatchObject({
        account_id: accountId,
        kind: 'customer',
        scope: 'read',
        status: 'active',
        version: 0,
      });
      expect(created.headers.get('location')).toBe(`/internal-api/v1/clients/${clientId}`);
      expect(created.headers.get('cache-control')).toBe('no-store');
      const shown = await call('GET', `/internal-api/v1/clients/${clientId}`, json(op.token));
      expect(shown.status).toBe(200);
      expect(shown.body).not.toHaveProperty('client_secret');
      expect(JSON.stringify(shown.body)).not.toContain('scrypt');
      const token = await tokenFor(clientId, secret);
      const probe = await call('GET', '/external-api/v1/_probe', { headers: bearer(token) });
      expect((probe.body.principal as { accountId: string }).accountId).toBe(accountId);

      const opClient = await call('POST', '/internal-api/v1/clients', json(op.token, { operator: true }));
      expect(opClient.status).toBe(201);
      expect(opClient.body).toMatchObject({ account_id: null, kind: 'operator', scope: 'operator' });
      secrets.add(opClient.body.client_secret as string);
      const opToken = await tokenFor(opClient.body.client_id as string, opClient.body.client_secret as string);
      expect((await call('GET', '/internal-api/v1/accounts', json(opToken))).status).toBe(200);
    });

    it('honours Idempotency-Key on its POSTs, except where the answer holds a secret shown once', async () => {
      const op = await operator();
      const keyed = (key: string, body: unknown, path = '/internal-api/v1/accounts') => {
        const request = json(op.token, body);
        return call('POST', path, { ...request, headers: { ...request.headers, 'idempotency-key': key } });
      };
      const first = await keyed('op-account-1', { name: 'Keyed LLC' });
      const again = await keyed('op-account-1', { name: 'Keyed LLC' });
      expect([again.status, again.headers.get('idempotent-replayed'), again.body]).toEqual([201, 'true', first.body]);
      expect((await keyed('op-account-1', { name: 'Other LLC' })).status).toBe(422);
      // A client's secret is shown once and never stored, so the key is not kept there: each call makes a client.
      const clientBody = { account_id: first.body.id };
      const [one, two] = [
        await keyed('op-client-1', clientBody, '/internal-api/v1/clients'),
        await keyed('op-client-1', clientBody, '/internal-api/v1/clients'),
      ];
      secrets.add(one.body.client_secret as string).add(two.body.client_secret as string);
      expect([one.status, two.status, two.headers.get('idempotent-replayed')]).toEqual([201, 201, null]);
      expect(two.body.client_id).not.toBe(one.body.client_id);
    });

    it('clients: 400 naming account_id or scope; 404 for an unknown client; revoking twice is fine', async () => {
      const op = await operator();
      const missing = await call(
        'POST',
        '/internal-api/v1/clients',
        json(op.token, { account_id: '01900000-0000-7000-8000-000000000000' }),
      );
      expect(missing.status).toBe(400);
      expect(missing.body.errors).toEqual([{ field: 'account_id', message: expect.any(String) }]);
      const none = await call('POST', '/internal-api/v1/clients', json(op.token, {}));
      expect(none.status).toBe(400);
      const c = await customer();
      const badScope = await call(
        'POST',
        '/internal-api/v1/clients',
        json(op.token, { account_id: c.accountId, scope: 'operator' }),
      );
      expect(badScope.status).toBe(400);
      expect(badScope.body.errors).toEqual([{ field: 'scope', message: expect.any(String) }]);
      for (const action of ['rotate-secret', 'revoke']) {
        const res = await call(
          'POST',
          `/internal-api/v1/clients/01900000-0000-7000-8000-000000000000/${action}`,
          json(op.token),
        );
        expect(res.status).toBe(404);
      }
      expect((await call('POST', `/internal-api/v1/clients/${c.clientId}/revoke`, json(op.token))).status).toBe(200);
      expect((await call('POST', `/internal-api/v1/clients/${c.clientId}/revoke`, json(op.token))).status).toBe(200);
      const rotateRevoked = await call('POST', `/internal-api/v1/clients/${c.clientId}/rotate-secret`, json(op.token));
      expect(rotateRevoked.status).toBe(409);
    });

    it('users: created without the password in the answer; 409 on a duplicate email; 400 naming fields', async () => {
      const op = await operator();
      const c = await customer();
      const password = `pw-${Date.now()}-secret`;
      secrets.add(password);
      const email = `Ann.${Date.now()}@Example.com`;
      const created = await call(
        'POST',
        '/internal-api/v1/users',
        json(op.token, { account_id: c.accountId, email, password }),
      );
      expect(created.status).toBe(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        account_id: c.accountId,
        email: email.toLowerCase(),
        created_at: expect.any(String),
        updated_at: expect.any(String),
        version: 0,
      });
      expect(created.headers.get('location')).toBe(`/internal-api/v1/users/${created.body.id as string}`);
      const dup = await call(
        'POST',
        '/internal-api/v1/users',
        json(op.token, { account_id: c.accountId, email: email.toUpperCase(), password }),
      );
      expect(dup.status).toBe(409);
      const bad = await call(
        'POST',
        '/internal-api/v1/users',
        json(op.token, { account_id: c.accountId, email: 'nope', password: 'short' }),
      );
      expect(bad.status).toBe(400);
      expect((bad.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(['email', 'password']);
      const noAccount = await call(
        'POST',
        '/internal-api/v1/users',
        json(op.token, { account_id: '01900000-0000-7000-8000-000000000000', email: 'x@y.io', password }),
      );
      expect(noAccount.status).toBe(400);
      expect(noAccount.body.errors).toEqual([{ field: 'account_id', message: expect.any(String) }]);
    });
  });

  it('a live token stays live across a restart', async () => {
    const c = await customer();
    await service.close();
    service = await startService(options({ reuse: { dataDir: service.dataDir, esdb: service.esdb } }));
    const res = await call('GET', '/external-api/v1/_probe', { headers: bearer(c.token) });
    expect(res.status).toBe(200);
    const live = await postForm('/o/introspect/', { token: c.token }, basic(c.clientId, c.clientSecret));
    expect(live.body.active).toBe(true);
  }, 60_000);

  if (eventStore === 'sqlite') {
    it('an expired token is refused and introspects as inactive (TOKEN_TTL_SECONDS=1)', async () => {
      const short = await startService(options({ env: { LOG_LEVEL: 'trace', TOKEN_TTL_SECONDS: '1' } }));
      try {
        const c = keep(await provisionAccount(short));
        const issued = await fetch(`${short.url}/o/token/`, {
          method: 'POST',
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: c.clientId,
            client_secret: c.clientSecret,
          }),
        });
        expect(((await issued.json()) as { expires_in: number }).expires_in).toBe(1);
        // Two services in one process each check their own tokens (passport's registry is global).
        const mine = await customer();
        expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(mine.token) })).status).toBe(200);
        expect((await call('GET', '/external-api/v1/_probe', { headers: bearer(c.token) })).status).toBe(401);
        expect((await fetch(`${short.url}/external-api/v1/_probe`, { headers: bearer(mine.token) })).status).toBe(401);
        // Once its second has passed, the token must fail.
        await new Promise((resolve) => setTimeout(resolve, 1100));
        const expired = await fetch(`${short.url}/external-api/v1/_probe`, { headers: bearer(c.token) });
        expect(expired.status).toBe(401);
        expect(expired.headers.get('www-authenticate')).toBe('Bearer realm="external-api", error="invalid_token"');
        const introspected = await fetch(`${short.url}/o/introspect/`, {
          method: 'POST',
          headers: basic(c.clientId, c.clientSecret),
          body: new URLSearchParams({ token: c.token }),
        });
        expect(await introspected.json()).toEqual({ active: false });
      } finally {
        await short.destroy();
      }
    }, 30_000);
  }

  it('no secret, token or password used in this run is in any log line or stored event', async () => {
    expect(secrets.size).toBeGreaterThan(20);
    const logText = logs.join('');
    expect(logText.length).toBeGreaterThan(0);
    const store = service.app.get<EventStore>(EVENT_STORE);
    const eventsText = JSON.stringify(await store.readAll({ maxCount: 100_000 }), (_, v: unknown) =>
      typeof v === 'bigint' ? v.toString() : v,
    );
    expect(eventsText).toContain('auth.TokenIssued');
    const leaked = [...secrets].filter((s) => logText.includes(s) || eventsText.includes(s));
    expect(leaked).toEqual([]);
  });
});
