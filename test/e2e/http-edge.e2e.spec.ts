/**
 * The HTTP edge answers like the rest of the API (issue #13, item 8): what Fastify's router and
 * Node's HTTP parser refuse before any route runs (bad percent-encoding, an over-long path
 * parameter, oversized headers, malformed HTTP/1.1) is problem+json, or an RFC 6749 error on the
 * OAuth endpoints; a JSON body that is not an object (`null` included) is a 400 naming the body on
 * every operation, and every field the OpenAPI document declares non-nullable refuses null; the
 * sign-in form's CSRF token cannot be forged by planting an equal cookie/field pair.
 */
import { EVENT_STORE, type EventStore } from '@filing/event-store';
import { connect } from 'node:net';
import { expectProblem, MISSING_ID, PROBLEM, resourceApi } from '../support/api';
import { bearer, provisionAccount, provisionOperator, type ProvisionedClient } from '../support/auth';
import { startService, type TestService } from '../support/service';
import { csrfOf, HttpSession, provisionUser } from '../support/settings-screen';

const V1 = '/external-api/v1';
const OAUTH_ENDPOINTS = ['/o/token/', '/o/revoke_token/', '/o/introspect/'];

interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: any;
}

/**
 * Sends `chunks` as raw bytes on a new connection (a short pause between them, so a body can
 * follow its headers in another read) and reads the one answer until the server closes it.
 */
function rawRequest(url: string, chunks: readonly string[]): Promise<RawAnswer> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const received: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5000);
    socket.on('data', (data) => received.push(data));
    socket.on('error', (err) => (received.length > 0 ? undefined : reject(err)));
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(received).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`not an HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const body = text.slice(split + 4);
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : null });
    });
    void (async () => {
      for (const [i, chunk] of chunks.entries()) {
        if (i > 0) await new Promise((r) => setTimeout(r, 30));
        if (!socket.destroyed) socket.write(chunk);
      }
    })();
  });
}

const get = (path: string, headers = '') => [
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}Connection: close\r\n\r\n`,
];

/** An RFC 6749 error answer, as the token endpoint gives (`Cache-Control: no-store` like every /o/ answer). */
function expectOAuthError(res: RawAnswer, status: number): void {
  expect({ status: res.status, type: res.headers['content-type'], store: res.headers['cache-control'] }).toEqual({
    status,
    type: 'application/json; charset=utf-8',
    store: 'no-store',
  });
  expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
}

describe('the HTTP edge', () => {
  let service: TestService;
  let store: EventStore;
  const logs: string[] = [];

  beforeAll(async () => {
    service = await startService({ logDestination: { write: (line: string) => void logs.push(line) } });
    store = service.app.get<EventStore>(EVENT_STORE);
  });
  afterAll(() => service?.destroy());

  describe("what Fastify's router refuses", () => {
    it('a path with bad percent-encoding is a 400 problem naming the path (RFC 6749 on /o/)', async () => {
      const res = await rawRequest(service.url, get(`${V1}/entities/%zz`));
      expectProblem(res, 400, ['path']);
      for (const path of OAUTH_ENDPOINTS)
        expectOAuthError(
          await rawRequest(service.url, [
            `POST ${path}%zz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
          ]),
          400,
        );
    });

    it('a path parameter over 100 characters is a 414 problem naming the path; 100 is still routed (a 400 naming id)', async () => {
      expectProblem(await rawRequest(service.url, get(`${V1}/entities/${'a'.repeat(101)}`)), 414, ['path']);
      const { token } = await provisionAccount(service);
      expectProblem(
        await rawRequest(service.url, get(`${V1}/entities/${'a'.repeat(100)}`, `Authorization: Bearer ${token}\r\n`)),
        400,
        ['id'],
      );
    });
  });

  describe('oversized headers', () => {
    const big = (bytes: number) => `X-Padding: ${'a'.repeat(bytes)}\r\n`;

    it('headers over 16 KiB are a 431 problem on the APIs and an RFC 6749 invalid_request on /o/*; just under is served', async () => {
      const res = await rawRequest(service.url, get(`${V1}/entities`, big(17 * 1024)));
      expectProblem(res, 431);
      for (const path of OAUTH_ENDPOINTS) {
        expectOAuthError(
          await rawRequest(service.url, [
            `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${big(17 * 1024)}Content-Length: 0\r\nConnection: close\r\n\r\n`,
          ]),
          431,
        );
      }
      expect((await rawRequest(service.url, get('/healthz', big(15 * 1024)))).status).toBe(200);
    });

    it("headers beyond Node's own parser limit (64 KiB) are a 431 problem too, and the server keeps serving", async () => {
      expectProblem(await rawRequest(service.url, get(`${V1}/entities`, big(70 * 1024))), 431);
      expect((await rawRequest(service.url, get('/healthz'))).status).toBe(200);
    });
  });

  describe('malformed HTTP/1.1', () => {
    const post = (path: string, head: string, body: string) => [
      `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n${head}Connection: close\r\n\r\n`,
      body,
    ];

    it('a bad chunk size, two Content-Lengths or a bad request line is a 400 problem saying why; nothing is written or logged as an error', async () => {
      const { token } = await provisionAccount(service);
      const auth = `Authorization: Bearer ${token}\r\n`;
      const before = await store.headPosition();
      const errorsBefore = logs.filter((l) => /"level":(50|60)/.test(l)).length;
      const valid = JSON.stringify({ name: 'Chunked LLC', entity_type: 'llc' });
      const cases: [string, string[], RegExp][] = [
        [
          'bad chunk size',
          post(`${V1}/entities`, `${auth}Transfer-Encoding: chunked\r\n`, `zz\r\n${valid}\r\n0\r\n\r\n`),
          /chunk size/,
        ],
        [
          'two Content-Lengths',
          post(`${V1}/entities`, `${auth}Content-Length: ${valid.length}\r\nContent-Length: 3\r\n`, valid),
          /Content-Length/,
        ],
        ['a bad request line', ['HELLO THERE\r\n\r\n'], /not valid HTTP/],
      ];
      for (const [label, chunks, detail] of cases) {
        const res = await rawRequest(service.url, chunks);
        expect([label, res.status, res.headers['content-type'], res.headers.connection]).toEqual([
          label,
          400,
          PROBLEM,
          'close',
        ]);
        expect(res.body).toEqual({
          type: 'about:blank',
          title: 'Bad Request',
          status: 400,
          detail: expect.stringMatching(detail),
        });
      }
      expect(await store.headPosition()).toEqual(before);
      expect(logs.filter((l) => /"level":(50|60)/.test(l)).length).toBe(errorsBefore);
      expect((await rawRequest(service.url, get('/healthz'))).status).toBe(200);
    });

    it('a bad chunk size on /o/token/ is an RFC 6749 invalid_request', async () => {
      const form = 'grant_type=client_credentials';
      const res = await rawRequest(service.url, [
        'POST /o/token/ HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n',
        `zz\r\n${form}\r\n0\r\n\r\n`,
      ]);
      expectOAuthError(res, 400);
    });
  });

  describe('the sign-in form (login CSRF)', () => {
    const signIn = (session: HttpSession, csrf: string, user: { email: string; password: string }) =>
      session.post('/settings/sign-in', { _csrf: csrf, email: user.email, password: user.password });

    it('refuses a cookie and field pair the client chose itself, and a form token of another cookie; the page’s own works', async () => {
      const account = await provisionAccount(service);
      const user = await provisionUser(service, account.accountId);

      // The attacker plants a nonce of its choosing and sends it back in the form too.
      const planted = new HttpSession(service.url);
      planted.cookies.set('filing_signin_csrf', 'A'.repeat(43));
      const forged = await signIn(planted, 'A'.repeat(43), user);
      expect([forged.status, planted.cookies.has('filing_session')]).toEqual([403, false]);

      // A form token the attacker got for its own cookie does not go with another cookie.
      const attacker = new HttpSession(service.url);
      const harvested = csrfOf((await attacker.get('/settings/sign-in')).body);
      const victim = new HttpSession(service.url);
      await victim.get('/settings/sign-in');
      expect((await signIn(victim, harvested, user)).status).toBe(403);
      expect(victim.cookies.has('filing_session')).toBe(false);

      // The form as served: its token is not the cookie's value, and it signs in.
      const page = await victim.get('/settings/sign-in');
      expect(csrfOf(page.body)).not.toBe(victim.cookies.get('filing_signin_csrf'));
      expect((await signIn(victim, csrfOf(page.body), user)).status).toBe(303);
      expect(victim.cookies.has('filing_session')).toBe(true);
    });

    it('keeps its key across a restart on the same DATA_DIR: a page loaded before still signs in after', async () => {
      const own = await startService();
      let restarted: TestService | undefined;
      try {
        const account = await provisionAccount(own);
        const user = await provisionUser(own, account.accountId);
        const browser = new HttpSession(own.url);
        const token = csrfOf((await browser.get('/settings/sign-in')).body);
        await own.close();
        restarted = await startService({ reuse: own });
        const again = new HttpSession(restarted.url);
        for (const [name, value] of browser.cookies) again.cookies.set(name, value);
        expect((await signIn(again, token, user)).status).toBe(303);
      } finally {
        await (restarted ?? own).destroy();
      }
    });
  });
});

describe.each(['sqlite', 'esdb'] as const)('JSON bodies and nulls on the %s store', (eventStore) => {
  let service: TestService;
  let store: EventStore;
  let client: ProvisionedClient;
  const api = resourceApi(() => service);
  const JSON_TYPE = { 'content-type': 'application/json' };

  let doc: any;
  const resolve = (schema: any): any => (schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()] : schema);
  /** Every operation of the OpenAPI document: method, path (with {id} → a missing id) and its body schema. */
  const operations = () =>
    Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      Object.entries<any>(item).map(([method, op]) => ({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path: path.slice(V1.length).replace('{id}', MISSING_ID),
        body: op.requestBody ? resolve(op.requestBody.content['application/json'].schema) : undefined,
      })),
    );

  beforeAll(async () => {
    service = await startService({ eventStore });
    store = service.app.get<EventStore>(EVENT_STORE);
    client = await provisionAccount(service);
    doc = await (await fetch(`${service.url}${V1}/openapi.json`)).json();
  });
  afterAll(() => service?.destroy());

  it('a body of null, an array, a number, a string or a boolean is a 400 naming the body on every operation that can take one', async () => {
    const writes = operations().filter((op) => op.method !== 'GET');
    expect(writes.length).toBeGreaterThan(15);
    const before = await store.headPosition();
    const wrong: string[] = [];
    for (const { key, method, path } of writes) {
      for (const body of ['null', '[]', '[{}]', '1', '"x"', 'true']) {
        const res = await api.call(client, method, path, body, JSON_TYPE);
        const fields = (res.body?.errors ?? []).map((e: { field: string }) => e.field);
        if (res.status !== 400 || res.headers['content-type'] !== PROBLEM || fields.join() !== 'body')
          wrong.push(`${key} ${body}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await store.headPosition()).toEqual(before);
  });

  it('POST /orders/{id}/cancel with a null body does not cancel; no body, an empty one or {} still do', async () => {
    const entity = await api.create(client, '/entities', { name: 'Null LLC', entity_type: 'llc' });
    for (const [body, headers] of [
      [undefined, {}],
      ['', JSON_TYPE],
      ['{}', JSON_TYPE],
    ] as const) {
      const order = await api.create(client, '/orders', { entity_id: entity.id, order_type: 'formation' });
      expectProblem(await api.call(client, 'POST', `/orders/${order.id}/cancel`, 'null', JSON_TYPE), 400, ['body']);
      expect((await api.call(client, 'GET', `/orders/${order.id}`)).body).toEqual(order);
      const cancelled = await api.call(client, 'POST', `/orders/${order.id}/cancel`, body, headers);
      expect([cancelled.status, cancelled.body.status]).toEqual([200, 'cancelled']);
    }
  });

  it('details: null on POST /orders is a 400 naming details, and submits nothing', async () => {
    const entity = await api.create(client, '/entities', { name: 'Details LLC', entity_type: 'llc' });
    const before = await store.headPosition();
    expectProblem(
      await api.call(client, 'POST', '/orders', { entity_id: entity.id, order_type: 'formation', details: null }),
      400,
      ['details'],
    );
    expect(await store.headPosition()).toEqual(before);
    expect(
      (await api.call(client, 'POST', '/orders', { entity_id: entity.id, order_type: 'formation', details: {} }))
        .status,
    ).toBe(201);
  });

  it('every body field the document declares non-nullable refuses null by name, and every nullable one takes it', async () => {
    const before = await store.headPosition();
    const wrong: string[] = [];
    let checked = 0;
    for (const { key, method, path, body } of operations().filter((op) => op.body)) {
      for (const [field, schema] of Object.entries<any>(body.properties)) {
        // Alone in the body: other required fields may be listed too, and a PATCH of a missing id
        // is a 404 once the body is valid, so nothing is written either way.
        const res = await api.call(client, method, path, { [field]: null });
        const named = (res.body?.errors ?? []).some((e: { field: string }) => e.field === field);
        if (named === Boolean(schema.nullable))
          wrong.push(
            `${key} ${field} (nullable: ${Boolean(schema.nullable)}): ${res.status} ${JSON.stringify(res.body)}`,
          );
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(30);
    expect(wrong).toEqual([]);
    expect(await store.headPosition()).toEqual(before);
  });

  it("the operator API's optional client fields refuse null by name too", async () => {
    const operator = await provisionOperator(service);
    const res = await fetch(`${service.url}/internal-api/v1/clients`, {
      method: 'POST',
      headers: { ...bearer(operator.token), 'content-type': 'application/json' },
      body: JSON.stringify({ scope: 'operator', operator: null }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { field: string }[] }).errors.map((e) => e.field)).toEqual(['operator']);
  });
});
