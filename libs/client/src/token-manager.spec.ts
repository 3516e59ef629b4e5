import { inspect } from 'node:util';
import { FilingClient } from './client';
import { ApiError, NetworkError, OAuthError } from './errors';
import { deferred, FakeClock, fakeFetch, json, type RecordedRequest } from './testing/fake-fetch';
import { formEncode, TokenManager } from './token-manager';

const TOKEN_URL = 'https://auth.example.test/o/token/';
const CLIENT_ID = '0193a2b4-0000-7000-8000-000000000001';
const SECRET = 'se cret+/:=&%é';

function tokenServer(options: { expiresIn?: number; gate?: () => Promise<void> } = {}) {
  let issued = 0;
  const fetch = fakeFetch(async (req) => {
    if (req.url.pathname !== '/o/token/') return json(404, {});
    await options.gate?.();
    issued += 1;
    return json(200, {
      access_token: `token-${issued}`,
      token_type: 'Bearer',
      expires_in: options.expiresIn ?? 3600,
      scope: 'read write',
    });
  });
  return fetch;
}

function manager(
  fetch: ReturnType<typeof fakeFetch>,
  clock = new FakeClock(),
  extra: Partial<ConstructorParameters<typeof TokenManager>[0]> = {},
) {
  return new TokenManager({ tokenUrl: TOKEN_URL, clientId: CLIENT_ID, clientSecret: SECRET, fetch, clock, ...extra });
}

const tokenCalls = (requests: RecordedRequest[]) => requests.filter((r) => r.url.pathname === '/o/token/');

describe('TokenManager', () => {
  it('asks for client_credentials with HTTP Basic of the form-urlencoded id and secret (RFC 6749 §2.3.1)', async () => {
    const fetch = tokenServer();
    const tokens = manager(fetch, new FakeClock(), { scope: 'read' });
    await expect(tokens.getToken()).resolves.toBe('token-1');

    const [req] = fetch.requests;
    expect(req.method).toBe('POST');
    expect(req.headers.get('content-type')).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'read',
    });
    const basic = Buffer.from(req.headers.get('authorization')!.replace(/^Basic /, ''), 'base64').toString();
    expect(basic).toBe(`${formEncode(CLIENT_ID)}:${formEncode(SECRET)}`);
    const [id, secret] = basic.split(':');
    const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, ' '));
    expect([decode(id), decode(secret)]).toEqual([CLIENT_ID, SECRET]);
    expect(secret).not.toContain(':');
  });

  it('caches the token and refreshes it 60 s before expires_in runs out', async () => {
    const clock = new FakeClock();
    const fetch = tokenServer({ expiresIn: 3600 });
    const tokens = manager(fetch, clock);
    expect(await tokens.getToken()).toBe('token-1');
    clock.advance(3539);
    expect(await tokens.getToken()).toBe('token-1');
    expect(tokens.tokenRequests).toBe(1);
    clock.advance(1); // exactly 60 s before expiry
    expect(await tokens.getToken()).toBe('token-2');
    expect(tokens.tokenRequests).toBe(2);
    expect(tokens.peek()).toMatchObject({
      expiresInSeconds: 3600,
      expiresAt: clock.now() + 3600_000,
      refreshAt: clock.now() + 3540_000,
    });
  });

  it('with a 65 s token, refreshes after 5 s; a token shorter than the margin at half its life', async () => {
    const clock = new FakeClock();
    const tokens = manager(tokenServer({ expiresIn: 65 }), clock);
    await tokens.getToken();
    clock.advance(4.999);
    expect(await tokens.getToken()).toBe('token-1');
    clock.advance(0.001);
    expect(await tokens.getToken()).toBe('token-2');

    const shortClock = new FakeClock();
    const short = manager(tokenServer({ expiresIn: 30 }), shortClock);
    await short.getToken();
    shortClock.advance(14);
    expect(await short.getToken()).toBe('token-1');
    shortClock.advance(1);
    expect(await short.getToken()).toBe('token-2');
  });

  it('shares one token request among concurrent callers (single flight), also at refresh time', async () => {
    const clock = new FakeClock();
    let gate = deferred<void>();
    const fetch = tokenServer({ gate: () => gate.promise });
    const tokens = manager(fetch, clock);
    const first = Array.from({ length: 20 }, () => tokens.getToken());
    gate.resolve();
    expect(new Set(await Promise.all(first))).toEqual(new Set(['token-1']));
    expect(tokenCalls(fetch.requests)).toHaveLength(1);

    clock.advance(3540);
    gate = deferred<void>();
    const second = Array.from({ length: 20 }, () => tokens.getToken());
    gate.resolve();
    expect(new Set(await Promise.all(second))).toEqual(new Set(['token-2']));
    expect(tokenCalls(fetch.requests)).toHaveLength(2);
  });

  it('after a failed refresh, the next call tries again (no poisoned cache)', async () => {
    let fail = true;
    const fetch = fakeFetch(() =>
      fail
        ? json(503, { error: 'temporarily_unavailable' })
        : json(200, { access_token: 'ok', token_type: 'Bearer', expires_in: 3600 }),
    );
    const tokens = manager(fetch);
    await expect(tokens.getToken()).rejects.toBeInstanceOf(OAuthError);
    fail = false;
    await expect(tokens.getToken()).resolves.toBe('ok');
  });

  it('keeps using the cached token while it is valid if the early refresh fails, then fails', async () => {
    const clock = new FakeClock();
    let down = false;
    let issued = 0;
    const fetch = fakeFetch(() =>
      down
        ? json(503, { error: 'temporarily_unavailable' })
        : json(200, { access_token: `t${++issued}`, token_type: 'Bearer', expires_in: 3600 }),
    );
    const tokens = manager(fetch, clock);
    await tokens.getToken();
    down = true;
    clock.advance(3540);
    await expect(tokens.getToken()).resolves.toBe('t1'); // refresh failed, token still valid
    clock.advance(59.999);
    await expect(tokens.getToken()).resolves.toBe('t1');
    expect(tokens.tokenRequests).toBe(3);
    clock.advance(0.001); // expired now
    await expect(tokens.getToken()).rejects.toMatchObject({ name: 'OAuthError', status: 503 });
    down = false;
    await expect(tokens.getToken()).resolves.toBe('t2');
  });

  it('turns an OAuth error body into an OAuthError with error and error_description', async () => {
    const fetch = fakeFetch(() =>
      json(
        401,
        { error: 'invalid_client', error_description: 'Client authentication failed' },
        { 'www-authenticate': 'Basic realm="token"' },
      ),
    );
    const err = (await manager(fetch)
      .getToken()
      .catch((e) => e)) as OAuthError;
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({
      status: 401,
      error: 'invalid_client',
      errorDescription: 'Client authentication failed',
    });
    expect(err.error_description).toBe('Client authentication failed');

    const throttled = fakeFetch(() => json(429, { error: 'too_many_requests' }, { 'retry-after': '7' }));
    await expect(manager(throttled).getToken()).rejects.toMatchObject({ status: 429, retryAfterSeconds: 7 });

    const html = fakeFetch(
      () => new Response('<html>bad gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } }),
    );
    await expect(manager(html).getToken()).rejects.toMatchObject({ status: 502, error: 'invalid_response' });

    const notBearer = fakeFetch(() => json(200, { access_token: 'x', token_type: 'mac', expires_in: 60 }));
    await expect(manager(notBearer).getToken()).rejects.toMatchObject({ error: 'invalid_response' });
  });

  it('reports an unreachable token endpoint as a NetworkError', async () => {
    const fetch = fakeFetch(() =>
      Promise.reject(
        Object.assign(new TypeError('fetch failed'), {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        }),
      ),
    );
    const err = (await manager(fetch)
      .getToken()
      .catch((e) => e)) as NetworkError;
    expect(err).toBeInstanceOf(NetworkError);
    expect(err.message).toContain('ECONNREFUSED');
    expect(err.timedOut).toBe(false);
  });

  it('never shows the secret or a token in inspect, JSON or error messages', async () => {
    // A plain fetch (the recording fake would itself hold the headers).
    const fetch = async (url: string) =>
      new URL(url).pathname === '/o/token/'
        ? json(200, { access_token: 'tok-SECRET-VALUE', token_type: 'Bearer', expires_in: 3600 })
        : json(500, {});
    const client = new FilingClient({
      baseUrl: 'https://auth.example.test',
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      fetch,
    });
    const err = await client.entities.get('x').catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    const shown = [
      inspect(client, { depth: 10, showHidden: true }),
      JSON.stringify(client.tokens),
      inspect(client.tokens),
      String(err),
      inspect(err, { depth: 5 }),
    ].join('\n');
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain(formEncode(SECRET));
    expect(shown).not.toContain('tok-SECRET-VALUE');
    expect(shown).toContain(CLIENT_ID);
  });

  it('revokes its token at /o/revoke_token/ and forgets it', async () => {
    const fetch = fakeFetch((req) =>
      req.url.pathname === '/o/revoke_token/'
        ? new Response(null, { status: 200 })
        : json(200, { access_token: `t${fetch.requests.length}`, token_type: 'Bearer', expires_in: 3600 }),
    );
    const tokens = manager(fetch);
    const token = await tokens.getToken();
    await tokens.revoke();
    const revoke = fetch.requests.find((r) => r.url.pathname === '/o/revoke_token/')!;
    expect(new URLSearchParams(revoke.body).get('token')).toBe(token);
    expect(revoke.headers.get('authorization')).toMatch(/^Basic /);
    expect(tokens.peek()).toBeNull();
    expect(await tokens.getToken()).not.toBe(token);
  });
});

describe('401 handling', () => {
  /** Token endpoint + one API route that accepts only tokens in `valid`. */
  function service(valid: (token: string) => boolean) {
    let issued = 0;
    const fetch = fakeFetch((req) => {
      if (req.url.pathname === '/o/token/') {
        issued += 1;
        return json(200, { access_token: `token-${issued}`, token_type: 'Bearer', expires_in: 3600 });
      }
      const token = req.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
      if (!valid(token)) {
        return new Response(
          JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'invalid token' }),
          {
            status: 401,
            headers: {
              'content-type': 'application/problem+json',
              'www-authenticate': 'Bearer realm="external-api", error="invalid_token"',
            },
          },
        );
      }
      return json(200, { id: 'e1', name: 'Acme', version: 0 });
    });
    const client = new FilingClient({
      baseUrl: 'https://api.example.test',
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      fetch,
      clock: new FakeClock(),
    });
    const apiCalls = () => fetch.requests.filter((r) => r.url.pathname.startsWith('/external-api/'));
    return { client, fetch, apiCalls };
  }

  it('retries a 401 once with a fresh token', async () => {
    const { client, fetch, apiCalls } = service((t) => t !== 'token-1');
    await expect(client.entities.get('e1')).resolves.toMatchObject({ name: 'Acme' });
    expect(apiCalls().map((r) => r.headers.get('authorization'))).toEqual(['Bearer token-1', 'Bearer token-2']);
    expect(tokenCalls(fetch.requests)).toHaveLength(2);
  });

  it('retries exactly once: a second 401 is an ApiError', async () => {
    const { client, fetch, apiCalls } = service(() => false);
    const err = (await client.entities.get('e1').catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(401);
    expect(apiCalls()).toHaveLength(2);
    expect(tokenCalls(fetch.requests)).toHaveLength(2);
  });

  it('many calls failing with the same revoked token share one refresh', async () => {
    const { client, fetch, apiCalls } = service((t) => t !== 'token-1');
    await client.tokens.getToken();
    const results = await Promise.all(Array.from({ length: 10 }, () => client.entities.get('e1')));
    expect(results).toHaveLength(10);
    expect(tokenCalls(fetch.requests)).toHaveLength(2);
    expect(apiCalls()).toHaveLength(20);
  });

  it('replays the same request (body, If-Match, Idempotency-Key) on the retry', async () => {
    const { client, apiCalls } = service((t) => t !== 'token-1');
    await client.entities.update('e1', { name: 'New' }, { ifMatch: 3 });
    await client.orders.cancel('o1', { reason: 'dup' }, { idempotencyKey: 'k-1', ifMatch: '"4"' });
    const [a1, a2, b1] = apiCalls();
    expect([a1.body, a1.headers.get('if-match')]).toEqual([a2.body, a2.headers.get('if-match')]);
    expect(a2.headers.get('if-match')).toBe('"3"');
    expect(b1.headers.get('idempotency-key')).toBe('k-1');
    expect(b1.headers.get('if-match')).toBe('"4"');
  });
});
